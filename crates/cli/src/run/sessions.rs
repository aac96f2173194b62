//! Which session `tackle run` continues: `--resume <id>`, or with `--continue` the latest
//! agent session of the root (session ids sort by their start time) whose log this user's
//! tackle wrote.

use std::path::Path;

use anyhow::anyhow;
use tackle_runtime::Session;

use crate::commands::Failure;

/// `--resume`'s session; an id that is not there, or a foreign log without `--trust-log`, is a
/// bad command line.
pub fn resume(root: &Path, id: &str, trust_log: bool) -> Result<Session, Failure> {
    crate::own_sessions::resume(root, id, "--resume", trust_log)
}

/// The latest session of `root` that holds a conversation, is no subagent's (a child is
/// continued through its parent) and whose log is the user's own. Foreign logs are skipped,
/// however recent they say they are, and counted on stderr.
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
    let key = crate::own_sessions::key().map_err(|why| {
        Failure::Engine(anyhow!(
            "--continue: no log key to tell your sessions by: {why}"
        ))
    })?;
    let store_dir = Session::store_dir_for(root);
    let mut foreign = 0;
    for id in ids {
        let log = tackle_store::session_log_path(&store_dir, &id);
        if tackle_agent::delegate::rebuild::parent_of(&log).is_some() {
            continue;
        }
        if !tackle_agent::rebuild(&log).is_ok_and(|r| r.is_agent_session) {
            continue;
        }
        if crate::own_sessions::foreign_reason(Some(&key), &id, &log).is_some() {
            foreign += 1;
            continue;
        }
        if foreign > 0 {
            eprintln!("tackle: --continue {}", skipped(foreign));
        }
        return resume(root, &id, false);
    }
    if foreign > 0 {
        return Err(Failure::Usage(anyhow!(
            "--continue: this project has no earlier `tackle run` session of yours; {}",
            skipped(foreign)
        )));
    }
    Err(Failure::Usage(anyhow!(
        "--continue: this project has no earlier `tackle run` session; start one with tackle run \"<task>\""
    )))
}

fn skipped(foreign: usize) -> String {
    format!(
        "skipped {foreign} foreign session log(s) that this user's tackle did not write (`tackle sessions ls` marks them); resume one you trust with tackle run --resume ID --trust-log"
    )
}
