//! The daemon's own state: the host of every session, each session's journal, the open
//! permission requests, the state directory, the peer registry when this daemon is a hub, and
//! the token that stops it.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use tokio_util::sync::CancellationToken;

use super::approvals::{Approvals, Asking};
use super::journal::Journals;
use super::peers::Registry;
use super::state::{HostedSession, StateDir};
use crate::acp::host::{Host, HostOptions};

/// How many sessions a daemon hosts at most, unless `--max-sessions` says otherwise.
pub const DEFAULT_MAX_SESSIONS: usize = 256;

pub struct Daemon {
    pub host: Arc<Host>,
    pub journals: Arc<Journals>,
    pub approvals: Arc<Approvals>,
    /// Drawn at start: the first half of every cursor.
    pub epoch: String,
    pub state: StateDir,
    pub max_sessions: usize,
    /// The project a `session/new` without `cwd` opens (a peer's session).
    pub default_root: PathBuf,
    pub peers: Option<Arc<Registry>>,
    /// The sessions waiting for a wake.
    pub sleepers: super::wakes::Sleepers,
    /// The transport RFD's connections (`Acp-Connection-Id`).
    pub connections: super::connections::Connections,
    /// Cancelled to stop the daemon.
    pub stop: CancellationToken,
    pub started: Instant,
}

impl Daemon {
    pub fn new(
        options: HostOptions,
        state: StateDir,
        max_sessions: usize,
        default_root: PathBuf,
        peers: Option<Arc<Registry>>,
    ) -> Daemon {
        let journals = Arc::new(Journals::default());
        let approvals = Arc::new(Approvals::new(journals.clone()));
        let host = Arc::new(Host::new(
            options,
            journals.clone(),
            Arc::new(Asking(approvals.clone())),
        ));
        Daemon {
            host,
            journals,
            approvals,
            epoch: tackle_runtime::unguessable::unguessable_id("e")[2..14].to_owned(),
            state,
            max_sessions,
            default_root,
            peers,
            sleepers: super::wakes::Sleepers::default(),
            connections: super::connections::Connections::default(),
            stop: CancellationToken::new(),
            started: Instant::now(),
        }
    }

    /// Records that session `id` is hosted here, so a restart resumes it.
    pub fn remember(&self, id: &str) {
        let Some(state) = self.host.states().into_iter().find(|s| s.id == id) else {
            return;
        };
        if let Err(e) = self.state.add_hosted(HostedSession {
            id: state.id,
            root: state.root,
        }) {
            eprintln!("tackle daemon: {e:#}; a restart will not resume session {id}");
        }
    }

    /// Resumes every session `sessions.json` names; those that cannot be resumed are said on
    /// standard error and dropped from it. Returns the ids resumed.
    pub fn resume_hosted(&self) -> anyhow::Result<Vec<String>> {
        let hosted = self.state.hosted()?;
        let mut kept = Vec::new();
        for session in hosted {
            match self.host.open(&session.root, Some(&session.id), Vec::new()) {
                Ok(_) => kept.push(session),
                Err(e) => eprintln!(
                    "tackle daemon: session {} in {} is not resumed: {e:#}",
                    session.id,
                    session.root.display()
                ),
            }
        }
        self.state.keep_hosted(&kept)?;
        Ok(kept.into_iter().map(|s| s.id).collect())
    }
}
