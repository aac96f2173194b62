//! The sessions an editor opened, in tackle's terms: each is a project root with its own
//! configuration (folder trust decides without asking: stdio is the protocol, there is no
//! terminal to ask on), runtime, gate in the session's mode, and agent. One prompt runs at a
//! time per session; a cancel ends the turn and every process it started.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::{Context, anyhow};
use tackle_agent::{Agent, Observer, RunEnd};
use tackle_config::Config;
use tackle_protocol::RunOutcome;
use tackle_runtime::{CancellationToken, Runtime};

use super::approve::{Asker, EditorApprover, Running};
use super::modes::ModeGate;
use super::observe::Forward;
use super::update::{Sink, Turn, Update};
use crate::settings::Flags;

/// The most sessions `session/list` names.
const MOST_LISTED: usize = 200;

/// A stored session as an editor lists it.
pub struct Listed {
    pub id: String,
    pub root: PathBuf,
    /// The first line of its first input, at most 80 characters.
    pub title: Option<String>,
    /// When its log last changed (RFC 3339).
    pub updated: Option<String>,
}

/// How long a departing editor's prompts get to stop before the process exits regardless.
const WIND_DOWN: std::time::Duration = std::time::Duration::from_secs(10);

/// How a prompt ended, as the editor is told.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    EndTurn,
    /// A bound of turns, tokens, cost or time was reached.
    MaxTurns,
    Cancelled,
    /// The run ended on an error (the text says it); reported as the end of the turn.
    Failed,
}

/// What the host needs from the command line: the flags every session's configuration is
/// loaded with, and the model.
pub struct HostOptions {
    pub flags: Flags,
    pub models: crate::run::ModelFlags,
    /// A prompt sent while another runs waits its turn (a daemon, where several clients share
    /// a session) rather than being refused (an editor, which sends one at a time).
    pub queue_prompts: bool,
    /// The model may call schedule_next_turn, and the host keeps the wake it asks for until
    /// the front end (a daemon) takes it ([`Host::take_wake`]).
    pub wakes: bool,
    /// Where call_peer resolves peer names: set only in a daemon with a hub.
    pub peers: Option<crate::daemon::call_peer::Directory>,
}

/// One open session.
struct Open {
    root: PathBuf,
    agent: tokio::sync::Mutex<Agent>,
    gate: Arc<ModeGate>,
    /// The running prompt's cancel, while one runs (shared with the session's approver).
    running: Running,
    /// Words for the running prompt, taken at its next boundary.
    steering: tackle_agent::Steering,
    /// The wakes the model asks for, when the host keeps them.
    wakes: Option<Arc<tackle_agent::Wakes>>,
    /// The session's directory (its log, its inbox).
    dir: PathBuf,
    /// What a resumed session's log left open, until the front end takes it.
    resumed: Mutex<Option<Resumed>>,
}

/// What a resumed session's log left open when its last process stopped.
#[derive(Default)]
pub struct Resumed {
    /// The wait it was in (`wake_pending` without its end).
    pub wake: Option<tackle_protocol::WakePending>,
    /// Calls that were waiting for approval: the model is told to call them again.
    pub awaiting_approval: usize,
}

/// An open session as a daemon lists it.
pub struct State {
    pub id: String,
    pub root: PathBuf,
    /// A prompt is running.
    pub running: bool,
}

/// Every session of one editor connection.
pub struct Host {
    options: HostOptions,
    sink: Arc<dyn Sink>,
    asker: Arc<dyn Asker>,
    sessions: Mutex<HashMap<String, Arc<Open>>>,
}

/// A session as opened: its id, its mode and the modes it offers.
pub struct Opened {
    pub id: String,
    pub mode: tackle_gate::Mode,
    pub modes: Vec<tackle_gate::Mode>,
    /// What the editor's user should know (folder trust left things out, the model chosen).
    pub notes: Vec<String>,
}

impl Host {
    pub fn new(options: HostOptions, sink: Arc<dyn Sink>, asker: Arc<dyn Asker>) -> Host {
        Host {
            options,
            sink,
            asker,
            sessions: Mutex::new(HashMap::new()),
        }
    }

    /// A new session in `cwd`, or the stored session `resume` of that project. The editor's
    /// MCP servers (`editor_servers`) join its catalog only where the user trusted the
    /// folder, as a project's own servers do.
    pub fn open(
        &self,
        cwd: &Path,
        resume: Option<&str>,
        editor_servers: Vec<tackle_mcp::client::ServerConfig>,
    ) -> anyhow::Result<Opened> {
        if !cwd.is_absolute() {
            return Err(anyhow!(
                "the working directory {} is not absolute; the protocol requires absolute paths",
                cwd.display()
            ));
        }
        if let Some(id) = resume
            && let Ok(open) = self.session(id)
        {
            // Loaded again on the same connection: the open session is the stored one.
            return Ok(Opened {
                id: id.to_owned(),
                mode: open.gate.current(),
                modes: open.gate.modes(),
                notes: Vec::new(),
            });
        }
        let root = crate::root::find(None, cwd).unwrap_or_else(|_| cwd.to_path_buf());
        let mut config = tackle_config::load_with(
            &root,
            &self.options.flags,
            tackle_config::trust::TrustStore::user().as_ref(),
            &tackle_config::trust::consent::NeverAsk,
        )
        .map_err(|e| anyhow!("{e}"))?;
        let editor_notes = super::editor_mcp::take(&mut config, editor_servers);
        if config.agent_loop.posture == tackle_runtime::Posture::Sealed {
            return Err(anyhow!(
                "this project runs in the sealed posture, which editors are not served; use tackle run or tackle chat there"
            ));
        }
        let mut notes: Vec<String> = config.trust.notice().into_iter().collect();
        notes.extend(editor_notes);
        let session = match resume {
            Some(id) => crate::own_sessions::resume(&config.root, id, "session/load", false)
                .map_err(failure)?,
            None => crate::own_sessions::open_as(&config.root, config.agent_loop.posture)?,
        };
        let id = session.id().0.clone();
        let dir = session
            .event_log_path()
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| config.root.clone());
        let resumed_state = match resume {
            Some(_) if self.options.wakes => {
                let rebuilt = tackle_agent::rebuild(&session.event_log_path())
                    .map_err(|e| anyhow!("reading session {id}'s log: {e}"))?;
                Some(Resumed {
                    wake: rebuilt.pending_wake,
                    awaiting_approval: rebuilt.awaiting_approval.len(),
                })
            }
            _ => None,
        };
        let choice =
            crate::chat::setup::choose(&config.models, self.options.models.model.as_deref())?;
        notes.extend(choice.notes.iter().cloned());
        let observer: Arc<dyn Observer> = Arc::new(Forward {
            session: id.clone(),
            root: config.root.clone(),
            sink: self.sink.clone(),
        });
        let gate = Arc::new(ModeGate::new(&config));
        let running: Running = Arc::default();
        let approver = Arc::new(EditorApprover {
            session: id.clone(),
            asker: self.asker.clone(),
            running: running.clone(),
        });
        let wakes = self.options.wakes.then(tackle_agent::Wakes::new);
        let (runtime, boundaries, tree) = runtime(
            &config,
            gate.clone(),
            approver,
            observer.clone(),
            &self.options,
            wakes.clone(),
        )?;
        let agent = crate::chat::setup::agent(
            &config,
            runtime,
            boundaries,
            tree,
            session,
            &choice,
            observer,
            resume.is_some(),
            None,
        )?;
        let opened = Opened {
            id: id.clone(),
            mode: gate.current(),
            modes: gate.modes(),
            notes,
        };
        let open = Arc::new(Open {
            root: config.root.clone(),
            steering: agent.steering(),
            agent: tokio::sync::Mutex::new(agent),
            gate,
            running,
            wakes,
            dir,
            resumed: Mutex::new(resumed_state),
        });
        self.sessions_lock().insert(id, open);
        Ok(opened)
    }

    fn sessions_lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Open>>> {
        self.sessions.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn session(&self, id: &str) -> anyhow::Result<Arc<Open>> {
        self.sessions_lock().get(id).cloned().ok_or_else(|| {
            anyhow!("no session {id} is open on this connection; open it with session/new or session/load")
        })
    }

    /// The stored sessions of the project `cwd` is in that an editor can load: the agent's
    /// own (no subagents' and no `tackle call`'s), written by this user, newest first, at most
    /// [`MOST_LISTED`].
    pub fn list(&self, cwd: &Path) -> anyhow::Result<Vec<Listed>> {
        let root = crate::root::find(None, cwd).unwrap_or_else(|_| cwd.to_path_buf());
        let config = tackle_config::load_with(
            &root,
            &self.options.flags,
            tackle_config::trust::TrustStore::user().as_ref(),
            &tackle_config::trust::consent::NeverAsk,
        )
        .map_err(|e| anyhow!("{e}"))?;
        let store = tackle_runtime::Session::store_dir_for(&config.root);
        let listed = crate::sessions::summaries(&config)?
            .into_iter()
            .filter(|s| s.agent && s.parent.is_none() && !s.foreign)
            .take(MOST_LISTED)
            .map(|s| {
                let log = tackle_store::session_log_path(&store, &s.id);
                let updated = std::fs::metadata(&log)
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map(|d| tackle_tool::time::rfc3339_utc(d.as_secs() as i64));
                Listed {
                    id: s.id,
                    root: config.root.clone(),
                    title: s.task.map(|t| {
                        let line = t.lines().next().unwrap_or_default();
                        crate::safe_text::safe_line(&line.chars().take(80).collect::<String>())
                    }),
                    updated,
                }
            })
            .collect();
        Ok(listed)
    }

    /// Tells the editor `update` about session `id`.
    pub fn tell(&self, id: &str, update: Update) {
        self.sink.send(id, update);
    }

    /// The stored conversation of `id`, told again as updates (for `session/load`).
    pub async fn replay(&self, id: &str) -> anyhow::Result<()> {
        let open = self.session(id)?;
        let agent = open.agent.lock().await;
        for update in super::replay::updates(&open.root, &agent.conversation().messages) {
            self.sink.send(id, update);
        }
        Ok(())
    }

    /// The open sessions, in no particular order.
    pub fn states(&self) -> Vec<State> {
        self.sessions_lock()
            .iter()
            .map(|(id, open)| State {
                id: id.clone(),
                root: open.root.clone(),
                running: open
                    .running
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .is_some(),
            })
            .collect()
    }

    /// Whether session `id` is open.
    pub fn is_open(&self, id: &str) -> bool {
        self.sessions_lock().contains_key(id)
    }

    /// The stored conversation of `id` as updates, to tell a client that attaches; `None` while
    /// a prompt holds it (never waited for: what the prompt said is in the daemon's journal).
    pub async fn retold(&self, id: &str) -> anyhow::Result<Option<Vec<Update>>> {
        let open = self.session(id)?;
        let Ok(agent) = open.agent.try_lock() else {
            return Ok(None);
        };
        Ok(Some(super::replay::updates(
            &open.root,
            &agent.conversation().messages,
        )))
    }

    /// Hands `text` to the running prompt of `id`, taken at its next boundary; false when no
    /// prompt runs there.
    pub fn steer(&self, id: &str, text: &str) -> anyhow::Result<bool> {
        let open = self.session(id)?;
        let running = open
            .running
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_some();
        Ok(running && open.steering.send(text))
    }

    /// The wake the model of `id` asked for in its last prompt, taken.
    pub fn take_wake(&self, id: &str) -> Option<tackle_agent::WakeRequest> {
        let open = self.session(id).ok()?;
        open.wakes
            .as_ref()?
            .take(&tackle_protocol::SessionId(id.to_owned()))
    }

    /// What the log of resumed session `id` left open, taken (once).
    pub fn take_resumed(&self, id: &str) -> Option<Resumed> {
        let open = self.session(id).ok()?;
        open.resumed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }

    /// The directory of session `id` (its log and its inbox).
    pub fn dir(&self, id: &str) -> anyhow::Result<PathBuf> {
        Ok(self.session(id)?.dir.clone())
    }

    /// The project root of session `id`.
    pub fn root(&self, id: &str) -> anyhow::Result<PathBuf> {
        Ok(self.session(id)?.root.clone())
    }

    /// Appends `event` to the log of `id` (after a running prompt ends).
    pub async fn record(&self, id: &str, event: &tackle_protocol::Event) -> anyhow::Result<()> {
        let open = self.session(id)?;
        let agent = open.agent.lock().await;
        agent
            .session()
            .append_event(event)
            .await
            .map(drop)
            .map_err(|e| anyhow!("recording in session {id}'s log: {e}"))
    }

    /// Runs one prompt to the end of the model's turn.
    pub async fn prompt(&self, id: &str, text: String) -> anyhow::Result<(Stop, RunEnd)> {
        self.prompt_input(id, Some(text)).await
    }

    /// Runs the model's turn on `input`, or, with none, goes on with the conversation as its
    /// log left it (a resumed session owed results).
    pub async fn prompt_input(
        &self,
        id: &str,
        input: Option<String>,
    ) -> anyhow::Result<(Stop, RunEnd)> {
        let open = self.session(id)?;
        let cancel = CancellationToken::new();
        // Queued: the prompt before this one holds the agent until it ends.
        let queued = if self.options.queue_prompts {
            let agent = open.agent.lock().await;
            // Closed while this prompt waited its turn: it does not run.
            if !self
                .sessions_lock()
                .get(id)
                .is_some_and(|o| Arc::ptr_eq(o, &open))
            {
                return Err(anyhow!(
                    "session {id} was closed before this prompt's turn came"
                ));
            }
            Some(agent)
        } else {
            None
        };
        {
            let mut running = open.running.lock().unwrap_or_else(|p| p.into_inner());
            if running.is_some() {
                return Err(anyhow!(
                    "a prompt is already running in session {id}; wait for it to end or cancel it"
                ));
            }
            *running = Some(cancel.clone());
        }
        self.sink.turn(
            id,
            Turn::Started {
                input: input.clone(),
            },
        );
        let end = {
            let mut agent = match queued {
                Some(agent) => agent,
                None => open.agent.lock().await,
            };
            agent.run(input.as_deref(), cancel.clone()).await
        };
        *open.running.lock().unwrap_or_else(|p| p.into_inner()) = None;
        if !matches!(end.outcome, RunOutcome::Finished | RunOutcome::Cancelled) {
            // Said where the person reads: the prompt's answer carries only a stop reason.
            let why = crate::safe_text::safe_line(&end.reason);
            self.sink
                .send(id, Update::AgentText(format!("\n[tackle: {why}]\n")));
        }
        let stop = match end.outcome {
            RunOutcome::Finished => Stop::EndTurn,
            RunOutcome::BoundHit => Stop::MaxTurns,
            RunOutcome::Cancelled => Stop::Cancelled,
            _ if cancel.is_cancelled() => Stop::Cancelled,
            RunOutcome::Error | RunOutcome::ProviderFailed => Stop::Failed,
        };
        self.sink.turn(id, Turn::Ended { stop });
        Ok((stop, end))
    }

    /// Ends the running prompt of `id`, if one runs: the model stream, or the batch and every
    /// process it started. The prompt then answers `cancelled`.
    pub fn cancel(&self, id: &str) {
        if let Ok(open) = self.session(id)
            && let Some(cancel) = open
                .running
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .as_ref()
        {
            cancel.cancel();
        }
    }

    /// Closes session `id`: its running prompt is cancelled and waited for (at most
    /// [`WIND_DOWN`]), and it is let go; its log stays, for `session/load`. False when no such
    /// session is open.
    pub async fn close(&self, id: &str) -> bool {
        self.cancel(id);
        let Some(open) = self.sessions_lock().remove(id) else {
            return false;
        };
        // A prompt holds its agent until it returns.
        let _ = tokio::time::timeout(WIND_DOWN, open.agent.lock()).await;
        true
    }

    /// Ends every running prompt (the editor has gone) and waits, at most [`WIND_DOWN`], for
    /// each to stop with the processes it started; the sessions' logs hold the rest.
    pub async fn wind_down(&self) {
        let open: Vec<Arc<Open>> = self.sessions_lock().values().cloned().collect();
        for session in &open {
            if let Some(cancel) = session
                .running
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .as_ref()
            {
                cancel.cancel();
            }
        }
        let stopped = async {
            for session in &open {
                // A prompt holds its agent until it returns.
                drop(session.agent.lock().await);
            }
        };
        let _ = tokio::time::timeout(WIND_DOWN, stopped).await;
    }

    /// Switches the permission mode of `id`.
    pub fn set_mode(&self, id: &str, mode: &str) -> anyhow::Result<()> {
        let open = self.session(id)?;
        let mode = open.gate.set(mode).map_err(|e| anyhow!(e))?;
        self.sink.send(id, Update::Mode(mode.as_str().to_owned()));
        Ok(())
    }
}

/// A session's runtime: the configuration's catalog (no ask_user: the editor's questions
/// are permission requests only), the mode gate, the editor's approver.
fn runtime(
    config: &Config,
    gate: Arc<ModeGate>,
    approver: Arc<dyn tackle_runtime::Approver>,
    observer: Arc<dyn Observer>,
    options: &HostOptions,
    wakes: Option<Arc<tackle_agent::Wakes>>,
) -> anyhow::Result<(
    Arc<Runtime>,
    Arc<tackle_agent::TaskBoundaries>,
    Arc<tackle_agent::delegate::Tree>,
)> {
    let small = crate::run::agentic::small_model(config, options.models.small_replay.as_deref())
        .map_err(failure)?;
    let tree = tackle_agent::delegate::Tree::new(
        config.delegation,
        config.agent_types.iter().cloned().collect(),
        observer.clone(),
    );
    let (catalog, boundaries) = crate::run::loop_tools::catalog(
        config,
        None,
        wakes,
        Some(&tree),
        small.as_ref(),
        call_peer(config, options)?,
    )
    .context("building the tool catalog")?;
    let runtime = Runtime::new(catalog, gate, config.runtime.clone())
        .with_approver(approver)
        .with_event_observer(Arc::new(tackle_agent::CallEvents(observer)));
    Ok((Arc::new(runtime), boundaries, tree))
}

/// The call_peer tool, when the configuration enables it and the host has a hub to resolve
/// names in (the catalog refuses an enabled call_peer without it).
fn call_peer(
    config: &Config,
    options: &HostOptions,
) -> anyhow::Result<Vec<Arc<dyn tackle_tool::DynTool>>> {
    Ok(match (config.call_peer, &options.peers) {
        (Some(settings), Some(directory)) => vec![Arc::new(
            crate::daemon::call_peer::CallPeer::new(directory.clone(), settings),
        )],
        _ => Vec::new(),
    })
}

/// A command-line failure as an error the editor is shown.
fn failure(e: crate::commands::Failure) -> anyhow::Error {
    match e {
        crate::commands::Failure::Usage(e) | crate::commands::Failure::Engine(e) => e,
    }
}
