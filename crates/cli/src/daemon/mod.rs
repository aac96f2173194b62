//! `tackle daemon`: agent sessions hosted by a long-lived process, reached over HTTP with the
//! Agent Client Protocol and tackle's `_tackle/` extensions.
//!
//! - [`hosted`] the daemon's state: one [`crate::acp::host::Host`] for every session (the same
//!   sessions `tackle acp` opens, with prompts queued instead of refused), the [`journal`] of
//!   what each session told its clients, the open permission requests ([`approvals`]), the
//!   [`state`] directory that lets a restart resume every session, and the [`peers`] registry
//!   of a hub.
//! - [`http`] the front door, [`methods`] its JSON-RPC methods, [`peers_http`] the registry's
//!   routes.
//! - [`client`] the client side, used by [`remote`] (`tackle run --daemon`), [`attach`]
//!   (`tackle attach`), `daemon status|stop`, the heartbeat to a hub, and `call_peer`.

pub mod approvals;
pub mod attach;
pub mod call_peer;
pub mod client;
pub mod connected_http;
pub mod connections;
pub mod fleet_peers;
pub mod hosted;
pub mod http;
pub mod journal;
pub mod methods;
pub mod peers;
pub mod peers_http;
pub mod remote;
pub mod state;
pub mod wakes;
pub mod websocket;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, anyhow};
use serde_json::{Value, json};

use crate::args::{DaemonAddress, DaemonArgs, DaemonCommand};
use crate::commands::Failure;
use crate::exit;
use crate::settings::Flags;

/// Serves until stopped (`tackle daemon stop`, SIGTERM or Ctrl-C).
pub fn serve(
    root: Option<&Path>,
    flags: Flags,
    models: crate::run::ModelFlags,
    args: DaemonArgs,
) -> Result<u8, Failure> {
    let configured = token_from(args.token_env.as_deref()).map_err(Failure::Usage)?;
    tackle_net::server_guard::check_listen(args.listen, configured.as_deref())
        .map_err(|e| Failure::Usage(e.into()))?;
    if args.hub.is_some() && args.name.is_none() {
        return Err(Failure::Usage(anyhow!(
            "--hub needs --name: the name callers use"
        )));
    }
    if let Some(name) = &args.name {
        peers::check_name(name).map_err(|e| Failure::Usage(anyhow!(e)))?;
    }
    if let Some(env) = &args.peer_token_env {
        let Some(name) = &args.name else {
            return Err(Failure::Usage(anyhow!(
                "--peer-token-env needs --name: the variable is registered under this daemon's name"
            )));
        };
        peers::check_token_env(env, name)
            .map_err(|e| Failure::Usage(anyhow!("--peer-token-env: {e}")))?;
    }
    let dir = match &args.state_dir {
        Some(dir) => dir.clone(),
        None => state::default_dir().map_err(Failure::Usage)?,
    };
    let state = state::StateDir::take(&dir).map_err(Failure::Usage)?;
    let cwd = std::env::current_dir().context("reading the working directory")?;
    let default_root = crate::root::find(root, &cwd).unwrap_or(cwd);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let registry = args.peer_hub.then(|| Arc::new(peers::Registry::default()));
    let config = tackle_config::load_with(
        &default_root,
        &flags,
        tackle_config::trust::TrustStore::user().as_ref(),
        &tackle_config::trust::consent::NeverAsk,
    )
    .map_err(|e| Failure::Usage(anyhow!("{e}")))?;
    let fleet_peers = install_storage(&config, args.name.as_deref())?;
    let directory = match (&registry, &args.hub, &fleet_peers) {
        (Some(registry), _, _) => Some(call_peer::Directory::Local(registry.clone())),
        (None, Some(hub), _) => Some(call_peer::Directory::Hub(
            client::DaemonClient::new(
                hub,
                token_from(args.hub_token_env.as_deref()).map_err(Failure::Usage)?,
            )
            .map_err(|e| Failure::Usage(anyhow!("--hub: {e}")))?,
        )),
        (None, None, Some(fleet)) => Some(call_peer::Directory::Fleet(fleet.clone())),
        (None, None, None) => None,
    };
    refuse_call_peer_without_hub(&config, directory.is_some())?;
    // Where this daemon registers itself: the hub it names, else the fleet's registry.
    let beat_to = match (&args.hub, &args.name, &fleet_peers) {
        (Some(hub), Some(_), _) => Some(BeatTo::Hub(
            client::DaemonClient::new(
                hub,
                token_from(args.hub_token_env.as_deref()).map_err(Failure::Usage)?,
            )
            .map_err(|e| Failure::Usage(anyhow!("--hub: {e}")))?,
        )),
        (None, Some(_), Some(fleet)) if !args.peer_hub => Some(BeatTo::Fleet(fleet.clone())),
        _ => None,
    };
    // Taken out of the fleet's registry on a clean stop.
    let fleet_left = match &beat_to {
        Some(BeatTo::Fleet(fleet)) => Some(fleet.clone()),
        _ => None,
    };
    let daemon = Arc::new(hosted::Daemon::new(
        crate::acp::host::HostOptions {
            flags: flags.clone(),
            models,
            queue_prompts: true,
            wakes: true,
            peers: directory,
        },
        state,
        args.max_sessions,
        default_root,
        registry,
    ));
    let served = rt.block_on(async {
        let resumed = tokio::task::block_in_place(|| daemon.resume_hosted())?;
        for id in &resumed {
            wakes::resume(&daemon, id);
        }
        let resumed = resumed.len();
        let listener = tokio::net::TcpListener::bind(args.listen)
            .await
            .with_context(|| format!("binding {}", args.listen))?;
        let bound = listener.local_addr().context("reading the bound address")?;
        // Without a configured token the daemon draws one and leaves it where only this user
        // reads it: any local user can reach a port on loopback.
        let token = match configured {
            Some(token) => token,
            None => {
                let drawn = tackle_runtime::unguessable::unguessable_id("tackle");
                daemon.state.write_token(&drawn)?;
                drawn
            }
        };
        let url = http::url_of(bound);
        daemon.state.write_running(&state::Running {
            pid: std::process::id(),
            url: url.clone(),
            epoch: daemon.epoch.clone(),
            started_at: tackle_tool::time::rfc3339_utc(now_s()),
            token_env: args.token_env.clone(),
        })?;
        eprintln!(
            "tackle daemon: state in {}, {resumed} session(s) resumed",
            daemon.state.path().display()
        );
        if let (Some(to), Some(name)) = (beat_to, &args.name) {
            let heartbeat = Heartbeat {
                to,
                registration: peers::Registration {
                    name: name.clone(),
                    url: args.advertise.clone().unwrap_or_else(|| url.clone()),
                    token_env: args.peer_token_env.clone(),
                    ttl_seconds: Some(peers::DEFAULT_TTL.as_secs()),
                },
            };
            // Registered before the address is announced: a caller that reads the address can
            // find this daemon in the registry.
            let first = tokio::time::timeout(Duration::from_secs(5), heartbeat.register()).await;
            let said = match first {
                Ok(Ok(())) => false,
                Ok(Err(e)) => heartbeat.say(&e),
                Err(_) => heartbeat.say("it did not answer within 5 s"),
            };
            tokio::spawn(heartbeat.run(said, daemon.stop.clone()));
        }
        // The first line: scripts and tests read the address from it.
        println!("tackle daemon listening on {url}");
        let guard = tackle_net::server_guard::ServerGuard::new(bound, Some(token));
        let stop = daemon.stop.clone();
        tokio::spawn(async move {
            wait_for_signal().await;
            stop.cancel();
        });
        http::serve(daemon.clone(), listener, guard).await;
        eprintln!("tackle daemon: stopping");
        daemon.host.wind_down().await;
        // Out of the fleet's registry at once, and the sessions kept in its database let go,
        // for another daemon to take at once.
        if let (Some(fleet), Some(name)) = (&fleet_left, &args.name) {
            tokio::task::block_in_place(|| fleet.leave(name));
        }
        if let Some(backend) = tackle_store::backend::backend() {
            tokio::task::block_in_place(|| backend.close());
        }
        daemon.state.clear_running();
        anyhow::Ok(())
    });
    rt.shutdown_timeout(Duration::from_secs(2));
    served.map_err(Failure::Engine)?;
    Ok(exit::OK)
}

/// The user's `[store]` and `[artifacts]`, installed before any session is opened: every
/// session this daemon hosts is then durable there (see `crate::storage`).
/// The fleet's peer registry, when sessions are kept in a fleet database.
fn install_storage(
    config: &tackle_config::Config,
    name: Option<&str>,
) -> Result<Option<Arc<fleet_peers::FleetPeers>>, Failure> {
    let installed = crate::storage::install(&config.storage, name)
        .map_err(|e| Failure::Usage(anyhow!("{e:#}")))?;
    Ok(installed.map(|installed| {
        eprintln!(
            "tackle daemon: sessions and artifacts kept in {}",
            installed.described
        );
        Arc::new(fleet_peers::FleetPeers::new(installed.io, installed.peers))
    }))
}

/// `[tools.call_peer]` enabled for the daemon's own project without a hub is a start-up
/// error, not a tool that fails every call.
fn refuse_call_peer_without_hub(config: &tackle_config::Config, hub: bool) -> Result<(), Failure> {
    if !hub && config.call_peer.is_some() {
        return Err(Failure::Usage(anyhow!(
            "[tools.call_peer] is enabled for {}, and call_peer needs a peer hub: start the daemon with --peer-hub, or with --hub URL --name NAME, or keep sessions in a fleet database ([store] backend = \"postgres\") whose registry it reads",
            config.root.display()
        )));
    }
    Ok(())
}

async fn wait_for_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let Ok(mut term) = signal(SignalKind::terminate()) else {
        let _ = tokio::signal::ctrl_c().await;
        return;
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
}

/// Where a daemon with `--name` registers itself.
enum BeatTo {
    Hub(client::DaemonClient),
    Fleet(Arc<fleet_peers::FleetPeers>),
}

/// Registers with the hub or the fleet's registry, and again at a third of the entry's time
/// to live, until stopped.
struct Heartbeat {
    to: BeatTo,
    registration: peers::Registration,
}

impl Heartbeat {
    async fn register(&self) -> Result<(), String> {
        match &self.to {
            BeatTo::Hub(hub) => hub
                .post(
                    "/peers",
                    &serde_json::to_value(&self.registration).unwrap_or_default(),
                )
                .await
                .map(drop)
                .map_err(|e| e.to_string()),
            BeatTo::Fleet(fleet) => fleet.beat(&self.registration).await,
        }
    }

    /// Says why a registration failed; true, so the same failure is said once.
    fn say(&self, why: &str) -> bool {
        let registry = match &self.to {
            BeatTo::Hub(hub) => format!("with the hub {}", hub.base()),
            BeatTo::Fleet(_) => "in the fleet's peer registry".to_owned(),
        };
        eprintln!("tackle daemon: registering {registry}: {why}");
        true
    }

    /// Registers again every third of the entry's time to live; a failure is said once until a
    /// registration succeeds again.
    async fn run(self, mut said: bool, stop: tokio_util::sync::CancellationToken) {
        let every = peers::DEFAULT_TTL / 3;
        loop {
            tokio::select! {
                () = tokio::time::sleep(every) => {}
                () = stop.cancelled() => return,
            }
            match self.register().await {
                Ok(()) => said = false,
                Err(e) if !said => said = self.say(&e),
                Err(_) => {}
            }
        }
    }
}

/// The token in the environment variable `name`; an error when it is named but unset.
pub fn token_from(name: Option<&str>) -> anyhow::Result<Option<String>> {
    let Some(name) = name else {
        return Ok(None);
    };
    match std::env::var(name) {
        Ok(token) if !token.is_empty() => Ok(Some(token)),
        _ => Err(anyhow!(
            "the environment variable {name} (named for the token) is not set or empty"
        )),
    }
}

fn now_s() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// The daemon an address names: `--daemon`, else the one running from the state directory;
/// its token from `--daemon-token-env`, else, for the daemon the state directory describes,
/// from the variable it was started with or the one it drew (the directory's `token`).
pub fn locate(address: &DaemonAddress) -> anyhow::Result<client::DaemonClient> {
    let dir = match &address.state_dir {
        Some(dir) => dir.clone(),
        None => state::default_dir()?,
    };
    let running = state::read_running(&dir);
    let url = match (&address.daemon, &running) {
        (Some(url), _) => url.clone(),
        (None, Some(running)) => running.url.clone(),
        (None, None) => {
            return Err(anyhow!(
                "no daemon runs from {} (no daemon.json there); start one with `tackle daemon`, or name it with --daemon URL",
                dir.display()
            ));
        }
    };
    // What the state directory says about a token goes only to the daemon it describes: a
    // --daemon URL elsewhere gets none of it.
    let same = |a: &str, b: &str| a.trim_end_matches('/') == b.trim_end_matches('/');
    let described = running.filter(|r| same(&r.url, &url));
    let token = match (&address.daemon_token_env, described) {
        (Some(env), _) => token_from(Some(env))?,
        (None, Some(running)) => match &running.token_env {
            Some(env) => token_from(Some(env))?,
            None => state::read_token(&dir),
        },
        (None, None) => None,
    };
    client::DaemonClient::new(&url, token).map_err(|e| anyhow!("{e}"))
}

/// `tackle daemon status|stop`.
pub fn manage(command: DaemonCommand) -> Result<u8, Failure> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    match command {
        DaemonCommand::Status { daemon, json } => {
            let client = locate(&daemon).map_err(Failure::Usage)?;
            let answered = rt.block_on(async {
                let health = client.call("_tackle/health", Value::Null).await?;
                let sessions = client.call("_tackle/sessions/list", Value::Null).await?;
                Ok::<_, client::ClientError>((health, sessions))
            });
            let (health, sessions) = answered.map_err(|e| {
                Failure::Engine(anyhow!(
                    "the daemon at {} does not answer: {e}",
                    client.base()
                ))
            })?;
            if json {
                println!(
                    "{}",
                    json!({"url": client.base().as_str(), "health": health, "sessions": sessions["sessions"]})
                );
            } else {
                println!(
                    "daemon at {} (pid {}, version {}), up {} s, {} session(s)",
                    client.base(),
                    health["pid"],
                    health["version"].as_str().unwrap_or("?"),
                    health["uptimeSeconds"],
                    health["sessions"]
                );
                for s in sessions["sessions"].as_array().into_iter().flatten() {
                    println!(
                        "  {}  {:<8}  {}",
                        s["sessionId"].as_str().unwrap_or("?"),
                        s["state"].as_str().unwrap_or("?"),
                        s["cwd"].as_str().unwrap_or("?")
                    );
                }
            }
            Ok(exit::OK)
        }
        DaemonCommand::Stop { daemon } => {
            let client = locate(&daemon).map_err(Failure::Usage)?;
            rt.block_on(client.call("_tackle/daemon/stop", Value::Null))
                .map_err(|e| {
                    Failure::Engine(anyhow!("stopping the daemon at {}: {e}", client.base()))
                })?;
            // Stopped once its state says so (it takes daemon.json away last).
            let dir: Option<PathBuf> = daemon
                .state_dir
                .clone()
                .or_else(|| state::default_dir().ok());
            if daemon.daemon.is_none()
                && let Some(dir) = dir
            {
                let deadline = std::time::Instant::now() + Duration::from_secs(15);
                while state::read_running(&dir).is_some() && std::time::Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
            println!("stopped the daemon at {}", client.base());
            Ok(exit::OK)
        }
    }
}
