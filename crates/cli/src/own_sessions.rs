//! Sessions as this user's tackle keeps them: every session is opened with the user's log key
//! (`$XDG_CONFIG_HOME/tackle/log-key`), so each line of its log is tagged, and a session is
//! resumed only when every line of its log is (`tackle run --resume ID --trust-log` resumes a
//! foreign one on the user's word). A repository can ship a log; it cannot ship the key.
//!
//! Without a key (no config directory, or a key file that is not the user's alone) a session
//! still opens, untagged, with a warning: its log is then foreign to every later resume.
//! Refusing to open would stop `tackle serve` and `tackle call` where nothing is ever resumed.

use std::path::Path;

use anyhow::anyhow;
use tackle_runtime::{ForeignLogs, LogKey, LogOrigin, RuntimeError, Session, SessionOptions};

use crate::commands::Failure;

/// The user's log key, or why there is none.
pub fn key() -> Result<LogKey, String> {
    tackle_config::user_log_key().map_err(|e| e.to_string())
}

/// A new session under `root`, its log tagged with the user's key.
pub fn open(root: &Path) -> anyhow::Result<Session> {
    open_as(root, tackle_runtime::Posture::Standard)
}

/// A new session under `root` in `posture`, its log tagged with the user's key.
pub fn open_as(root: &Path, posture: tackle_runtime::Posture) -> anyhow::Result<Session> {
    let options = SessionOptions {
        posture,
        ..SessionOptions::default()
    };
    let opened = match key() {
        Ok(key) => Session::open_sealed(root, options, &key),
        Err(why) => {
            eprintln!(
                "tackle: this session's log is not tagged as yours ({why}), so it cannot be resumed without --trust-log"
            );
            Session::open_with(root, options)
        }
    };
    opened.map_err(|e| anyhow!("opening the session: {e}"))
}

/// Session `id` under `root`, named by `flag`. A foreign log is refused (a usage error naming
/// `--trust-log`) unless `trust_log`; resumed anyway, it is said on stderr.
pub fn resume(root: &Path, id: &str, flag: &str, trust_log: bool) -> Result<Session, Failure> {
    let key = key().map_err(|why| {
        Failure::Engine(anyhow!(
            "{flag}: cannot tell whether session {id}'s log is yours: {why}"
        ))
    })?;
    let foreign = if trust_log {
        ForeignLogs::Accept
    } else {
        ForeignLogs::Refuse
    };
    let resumed = Session::resume(root, id, &key, foreign).map_err(|e| match e {
        RuntimeError::UnknownSession { .. } => {
            Failure::Usage(anyhow!("{flag}: {e}{}", nearest_sessions(root, id)))
        }
        RuntimeError::ForeignLog { .. } => Failure::Usage(anyhow!(
            "{flag}: {e}; if you do, resume it with: tackle run --resume {id} --trust-log"
        )),
        other => Failure::Engine(anyhow!("{flag}: {other}")),
    })?;
    if let LogOrigin::Foreign(first) = &resumed.origin {
        eprintln!(
            "tackle: resuming session {id}, whose log this user's tackle did not write ({first}), because --trust-log says you trust it; its new lines are tagged, the older ones stay foreign"
        );
    }
    Ok(resumed.session)
}

/// `"; the nearest session ids: …"` for an id that names no session, or nothing when no
/// session's id is near it (a truncated id, a typo).
pub fn nearest_sessions(root: &Path, id: &str) -> String {
    let dir = Session::store_dir_for(root).join("sessions");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return String::new();
    };
    let ids: Vec<String> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_owned))
        .collect();
    let near = tackle_tools::nearest::nearest_names(id, ids.iter().map(String::as_str));
    if near.is_empty() {
        return String::new();
    }
    format!("; the nearest session ids: {}", near.join(", "))
}

/// Whose log session `id`'s is: `None` when it is the user's own, else why not (a foreign line,
/// a damaged log, or no key to tell by).
pub fn foreign_reason(key: Option<&LogKey>, id: &str, log: &Path) -> Option<String> {
    let Some(key) = key else {
        return Some("no log key to check it with".to_owned());
    };
    match origin(key, id, log) {
        Ok(LogOrigin::Own) => None,
        Ok(LogOrigin::Foreign(first)) => Some(first.to_string()),
        Err(e) => Some(e.to_string()),
    }
}

/// Whose log session `id`'s is under `key` ([`tackle_store::EventLog::origin`]).
pub fn origin(
    key: &LogKey,
    id: &str,
    log: &Path,
) -> Result<LogOrigin, tackle_store::EventLogError> {
    tackle_store::EventLog::origin(log, &tackle_store::LogSeal::new(key, id))
}
