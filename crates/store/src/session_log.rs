//! Opening a session's log through the installed backend ([`crate::backend`]): with none, the
//! file alone; with one, the session is created in it or taken from it first, and the working
//! copy rewritten from what it holds.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use crate::backend::{BackendError, LogBackend, log_backend};
use crate::fsutil::sync_dir;
use crate::{Durability, EventLog, EventLogError, LogSeal, Recovery};

/// Whether the session is new or is being resumed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Opening {
    /// A session no one has written yet.
    New,
    /// A session that exists (in the file, the backend, or both).
    Existing,
}

/// Opens session `id`'s log at `path` for appending, its lines tagged with `seal` when given.
///
/// With a backend installed, a new session is registered in it and an existing one taken
/// for this process; the working copy is then rewritten from the backend's records (a
/// record the file had and the backend did not was never acknowledged), and every later
/// record is acknowledged only once the backend holds it ([`EventLog::replicate_to`]).
pub fn open_session_log(
    path: &Path,
    id: &str,
    seal: Option<LogSeal>,
    opening: Opening,
) -> Result<(EventLog, Recovery), EventLogError> {
    let Some(backend) = log_backend() else {
        return open_file(path, seal);
    };
    let backend_error = |source| EventLogError::Backend {
        path: path.to_path_buf(),
        source,
    };
    match opening {
        Opening::New => {
            let replica = backend.create(id).map_err(backend_error)?;
            let (log, recovery) = open_file(path, seal)?;
            log.replicate_to(replica);
            Ok((log, recovery))
        }
        Opening::Existing => {
            let (replica, events) = backend.take(id).map_err(|e| match e {
                BackendError::UnknownSession { id, backend } if path.is_file() => {
                    backend_error(BackendError::NotMigrated { id, backend })
                }
                e => backend_error(e),
            })?;
            rewrite(path, seal.clone(), &events)?;
            let (log, recovery) = open_file(path, seal)?;
            log.replicate_to(replica);
            Ok((log, recovery))
        }
    }
}

/// Whether the installed backend holds session logs (a resume must then ask it, not the
/// working copy, whether a session exists).
pub fn logs_are_backed() -> bool {
    log_backend().is_some()
}

/// Copies into `store_dir` every descendant of session `root` (its subagents, theirs, …) that
/// the installed backend holds and the store has no working copy of, each tagged by
/// `seal_for(id)`; returns how many. A present copy is left alone: a process here may be
/// writing it, and any process that opens a session takes it afresh anyway. These copies are
/// for reading (a tree rebuilt on another machine reports its children); nothing is taken.
pub fn copy_descendants(
    store_dir: &Path,
    root: &str,
    seal_for: &dyn Fn(&str) -> Option<LogSeal>,
) -> Result<usize, EventLogError> {
    let Some(backend) = log_backend() else {
        return Ok(0);
    };
    let failed = |source| EventLogError::Backend {
        path: store_dir.to_path_buf(),
        source,
    };
    let mut copied = 0;
    let mut frontier = vec![root.to_owned()];
    let mut seen = std::collections::HashSet::new();
    while let Some(parent) = frontier.pop() {
        for child in backend.children(&parent).map_err(failed)? {
            // An id is a path component here: only the characters session ids are made of.
            let plain = !child.is_empty()
                && child
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
            if !plain || !seen.insert(child.clone()) {
                continue;
            }
            let path = crate::session_log_path(store_dir, &child);
            if !path.exists() {
                let events = backend.read(&child).map_err(failed)?;
                rewrite(&path, seal_for(&child), &events)?;
                copied += 1;
            }
            frontier.push(child);
        }
    }
    Ok(copied)
}

/// The installed log backend, for a caller that lists or moves sessions.
pub fn installed_log_backend() -> Option<Arc<dyn LogBackend>> {
    log_backend()
}

/// Whether `e` says the backend has no such session.
pub fn is_unknown_session(e: &EventLogError) -> bool {
    matches!(
        e,
        EventLogError::Backend {
            source: BackendError::UnknownSession { .. },
            ..
        }
    )
}

fn open_file(path: &Path, seal: Option<LogSeal>) -> Result<(EventLog, Recovery), EventLogError> {
    match seal {
        Some(seal) => EventLog::open_sealed(path, seal),
        None => EventLog::open(path),
    }
}

/// Replaces the file at `path` with a log of `events` (seqs from 1), each line tagged with
/// `seal` when given: written beside it, synced, renamed over it, the directory synced, so a
/// crash leaves the old copy or the new.
pub fn write_working_copy(
    path: &Path,
    seal: Option<LogSeal>,
    events: &[Value],
) -> Result<(), EventLogError> {
    rewrite(path, seal, events)
}

fn rewrite(path: &Path, seal: Option<LogSeal>, events: &[Value]) -> Result<(), EventLogError> {
    let beside = beside(path);
    match std::fs::remove_file(&beside) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(EventLogError::io("remove", &beside)(e)),
    }
    {
        let (log, _) = open_file(&beside, seal)?;
        for event in events {
            log.append_with(event, Durability::Written)?;
        }
        log.sync()?;
    }
    std::fs::rename(&beside, path).map_err(EventLogError::io("rename over", path))?;
    if let Some(dir) = path.parent() {
        sync_dir(dir).map_err(EventLogError::io("fsync its directory", path))?;
    }
    Ok(())
}

fn beside(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".taking");
    path.with_file_name(name)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_rewrite_replaces_the_working_copy_whole_and_numbers_from_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = crate::session_log_path(dir.path(), "s1");
        {
            let (log, _) = EventLog::open(&path).unwrap();
            for n in 0..5 {
                log.append(&json!({"stale": n})).unwrap();
            }
        }
        rewrite(&path, None, &[json!({"a": 1}), json!({"b": 2})]).unwrap();
        let records = EventLog::read_records(&path).unwrap();
        let got: Vec<_> = records.iter().map(|r| (r.seq, r.event.clone())).collect();
        assert_eq!(got, vec![(1, json!({"a": 1})), (2, json!({"b": 2}))]);
        assert!(!beside(&path).exists());
        let (log, recovery) = open_file(&path, None).unwrap();
        assert_eq!(recovery.last_seq, 2);
        assert_eq!(log.append(&json!("next")).unwrap(), 3);
    }

    /// Records what it is handed; refuses once `fenced` is set.
    #[derive(Debug, Default)]
    struct Recording {
        shipped: std::sync::Mutex<Vec<(u64, Value)>>,
        fenced: std::sync::atomic::AtomicBool,
    }

    impl crate::backend::LogReplica for Recording {
        fn replicate(&self, first_seq: u64, events: &[&[u8]]) -> Result<(), BackendError> {
            if self.fenced.load(std::sync::atomic::Ordering::SeqCst) {
                return Err(BackendError::Fenced {
                    id: "s1".into(),
                    holder: "daemon-b".into(),
                });
            }
            let mut shipped = self.shipped.lock().unwrap();
            for (i, bytes) in events.iter().enumerate() {
                shipped.push((first_seq + i as u64, serde_json::from_slice(bytes).unwrap()));
            }
            Ok(())
        }
    }

    #[test]
    fn a_replicated_log_acknowledges_only_what_the_replica_took_and_a_fence_poisons_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = crate::session_log_path(dir.path(), "s1");
        let (log, _) = EventLog::open(&path).unwrap();
        let replica = Arc::new(Recording::default());
        log.replicate_to(replica.clone());
        assert_eq!(log.append(&json!({"n": 1})).unwrap(), 1);
        log.append_with(&json!({"n": 2}), Durability::Written)
            .unwrap();
        log.append_with(&json!({"n": 3}), Durability::Written)
            .unwrap();
        log.sync().unwrap();
        let shipped = replica.shipped.lock().unwrap().clone();
        let want: Vec<_> = (1..=3).map(|n| (n, json!({"n": n}))).collect();
        assert_eq!(shipped, want, "every record once, in order");
        replica
            .fenced
            .store(true, std::sync::atomic::Ordering::SeqCst);
        let refused = log.append(&json!({"n": 4})).unwrap_err().to_string();
        assert!(refused.contains("taken over by daemon-b"), "{refused}");
        let after = log.append(&json!({"n": 5})).unwrap_err().to_string();
        assert!(
            after.contains("earlier write or sync failed (session s1 was taken over"),
            "{after}"
        );
        assert_eq!(log.last_durable_seq(), 3);
    }
}
