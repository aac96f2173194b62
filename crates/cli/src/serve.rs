//! `tackle serve`: the configured catalog, gate and session, published over MCP.
//!
//! Standard output belongs to the protocol on stdio: the posture line and every diagnostic go
//! to standard error. Clients log a server's stderr as errors (Claude Code: `[ERROR] MCP server
//! "tackle" Server stderr: …`), so the posture line is printed only when stderr is a terminal or
//! with `--verbose`; clients read it through MCP logging (info), and `tackle config` shows it. The server stops when the client
//! closes stdin (stdio) or on Ctrl-C.

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::{Context, anyhow};
use tackle_mcp::{HttpOptions, McpServer, ServerOptions};
use tackle_runtime::Runtime;

use crate::commands::{Failure, catalog};
use crate::config::Config;
use crate::exit;

/// What `tackle serve` was asked for on its command line.
pub struct ServeArgs {
    /// Streamable HTTP on this address instead of stdio.
    pub http: Option<SocketAddr>,
    /// The variable holding the HTTP bearer token.
    pub token_env: Option<String>,
    /// `--no-token`: serve loopback HTTP without a token.
    pub no_token: bool,
    /// Refuse approvals instead of asking the client.
    pub headless: bool,
    /// Print the posture line even when stderr is not a terminal.
    pub verbose: bool,
    /// `--approvals client`: the client's confirmation of a mutating call stands for the
    /// user's answer.
    pub client_confirms: bool,
}

pub fn run(mut config: Config, args: ServeArgs) -> Result<u8, Failure> {
    let ServeArgs {
        http,
        token_env,
        no_token,
        headless,
        verbose,
        client_confirms,
    } = args;
    // The server's own token is a secret no command or MCP child may see.
    if let Some(var) = &token_env {
        config.withhold(var);
    }
    let config = &config;
    let mut posture = crate::posture::line(config);
    if client_confirms {
        posture.push_str(
             " · approvals: the client's confirmation of a mutating call stands for the user's (--approvals client)",
        );
    }
    if config.agent_loop.posture == tackle_runtime::Posture::Sealed {
        // The sealed surface is the agent's (run, chat): a client's model gets the standard
        // catalog, behind the same gate, and should not be thought sealed.
        posture.push_str(
            " · [posture] mode = \"sealed\" applies to tackle run and chat; serve offers the standard catalog",
        );
    }
    if verbose || std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        eprintln!("tackle serve: {posture}");
    }
    let token = match http {
        Some(addr) => Some(
            crate::serve_token::choose(token_env.as_deref(), no_token, addr)
                .map_err(Failure::Usage)?,
        ),
        None => None,
    };
    if let Some(token) = &token {
        eprintln!("tackle serve: {}", token.said());
    }
    let bearer_token = token.as_ref().and_then(|t| t.token()).map(str::to_owned);
    let runtime = Runtime::new(
        catalog(config)?,
        crate::commands::gate(config),
        config.runtime.clone(),
    );
    let session = crate::own_sessions::open(&config.root)?;
    // The store swept its own temps on open; these are the worktree's.
    crate::leftovers::sweep_writes(&config.root, tackle_fs::SweepMode::Remove);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let store = session.store.clone();
    let root = config.root.clone();
    let prompts = crate::skill_prompts::skill_prompts(config);
    let outcome = rt.block_on(async move {
        tokio::spawn(janitor(store, root, JANITOR_FIRST, JANITOR_EVERY));
        let server = McpServer::new(
            runtime,
            session,
            ServerOptions {
                elicitation: !headless,
                client_confirms,
            },
        )
        .with_prompts(prompts);
        server.announce(posture);
        match http {
            None => tackle_mcp::serve_stdio(server)
                .await
                .context("serving MCP on stdio"),
            Some(addr) => {
                let shutdown = tokio_util::sync::CancellationToken::new();
                let on_ctrl_c = shutdown.clone();
                tokio::spawn(async move {
                    if tokio::signal::ctrl_c().await.is_ok() {
                        on_ctrl_c.cancel();
                    }
                });
                tackle_mcp::serve_http(
                    server,
                    HttpOptions {
                        addr,
                        bearer_token,
                        sessions: tackle_mcp::SessionLimits::DEFAULT,
                    },
                    shutdown,
                    |bound| eprintln!("tackle serve: listening on http://{bound}/mcp"),
                )
                .await
                .map_err(|e| anyhow!("{e}"))
            }
        }
    });
    // Calls still running when the client left are abandoned with the runtime.
    rt.shutdown_background();
    match outcome {
        Ok(()) => Ok(exit::OK),
        Err(e) => Err(Failure::Engine(e)),
    }
}

const JANITOR_FIRST: std::time::Duration = std::time::Duration::from_secs(60);
const JANITOR_EVERY: std::time::Duration = std::time::Duration::from_secs(600);

/// The idle janitor of a long-lived server (seed 000): a pass a minute after start-up, then every
/// ten minutes. A pass sweeps the temps killed writers left (in the store and, through the write
/// intents, in the worktree under `root`), then collects artifacts; the collection does nothing
/// while any call holds a publication guard, and removes only unreferenced artifacts past the
/// one-hour grace, so it never races a call's output.
async fn janitor(
    store: Arc<tackle_store::ArtifactStore>,
    root: std::path::PathBuf,
    first: std::time::Duration,
    every: std::time::Duration,
) {
    let mut next = first;
    loop {
        tokio::time::sleep(next).await;
        next = every;
        let store = store.clone();
        let root = root.clone();
        let pass = tokio::task::spawn_blocking(move || {
            let writes = crate::leftovers::sweep_writes(&root, tackle_fs::SweepMode::Remove);
            tackle_store::Janitor::new(&store, tackle_store::DEFAULT_GRACE)
                .collect(std::time::SystemTime::now(), false)
                .map(|report| (report, writes))
        })
        .await;
        match pass {
            Ok(Ok((report, writes))) => {
                if !report.removed.is_empty() {
                    eprintln!(
                        "tackle serve: janitor removed {} unreferenced artifact(s)",
                        report.removed.len()
                    );
                }
                let temps = report.temps.files + writes.files;
                if temps > 0 {
                    eprintln!(
                        "tackle serve: janitor removed {temps} abandoned temp file(s) ({} bytes)",
                        report.temps.bytes + writes.bytes
                    );
                }
            }
            Ok(Err(e)) => eprintln!("tackle serve: janitor pass failed: {e}"),
            Err(e) => eprintln!("tackle serve: janitor pass stopped: {e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Virtual time: the passes are driven by tokio's paused clock, not by waiting.
    #[tokio::test(start_paused = true)]
    async fn the_server_janitor_collects_old_unreferenced_artifacts() {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(tackle_store::ArtifactStore::open(dir.path()).unwrap());
        let old = store.put(b"nobody refers to me\n").unwrap();
        let young = store.put(b"fresh\n").unwrap();
        let two_hours_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(7200);
        std::fs::File::options()
            .write(true)
            .open(store.artifact_path(old.id))
            .unwrap()
            .set_modified(two_hours_ago)
            .unwrap();
        let task = tokio::spawn(janitor(
            store.clone(),
            dir.path().to_path_buf(),
            JANITOR_FIRST,
            JANITOR_EVERY,
        ));
        assert!(store.contains(old.id), "nothing runs before the first pass");
        for _ in 0..100 {
            if !store.contains(old.id) {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_secs(30)).await;
        }
        task.abort();
        assert!(
            !store.contains(old.id),
            "the old unreferenced artifact was collected"
        );
        assert!(
            store.contains(young.id),
            "a young one is kept inside the grace"
        );
    }
}
