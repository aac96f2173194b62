//! Which session `tackle run` continues: `--resume <id>`, or with `--continue` the latest
//! agent session of the root (session ids sort by their start time).

use std::path::Path;

use anyhow::anyhow;
use tackle_runtime::{RuntimeError, Session};

use crate::commands::Failure;

/// `--resume`'s session; an id that is not there is a bad command line.
pub fn resume(root: &Path, id: &str) -> Result<Session, Failure> {
    Session::resume(root, id).map_err(|e| match e {
        RuntimeError::UnknownSession { .. } => Failure::Usage(anyhow!("--resume: {e}")),
        other => Failure::Engine(anyhow!("--resume: {other}")),
    })
}

/// The latest session of `root` that holds a conversation.
pub fn latest(root: &Path) -> Result<Session, Failure> {
    let dir = Session::store_dir_for(root).join("sessions");
    let mut ids: Vec<String> = match std::fs::read_dir(&dir) {
        Ok(entries) => entries
            .filter_map(|e| e.ok())
            .filter_map(|e| e.file_name().into_string().ok())
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(Failure::Engine(anyhow!("listing {}: {e}", dir.display()))),
    };
    ids.sort_unstable_by(|a, b| b.cmp(a));
    let store_dir = Session::store_dir_for(root);
    for id in ids {
        let log = tackle_store::session_log_path(&store_dir, &id);
        if tackle_agent::rebuild(&log).is_ok_and(|r| r.is_agent_session) {
            return resume(root, &id);
        }
    }
    Err(Failure::Usage(anyhow!(
        "--continue: this project has no earlier `tackle run` session; start one with tackle run \"<task>\""
    )))
}
