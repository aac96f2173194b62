//! The goal book: `.agents/store/goals/events.jsonl`, one [`GoalEvent`] a record, with seq
//! and CRC-32C like a session's log ([`tackle_store::EventLog`]).
//!
//! Reading replays the whole log (a torn tail, an append still in progress, is ignored; damage
//! anywhere else is reported). Every change takes the exclusive `flock` of `goals/lock` first,
//! then opens the log (recovering a torn tail only under the lock, so no writer's append is
//! ever cut), replays it, decides, and appends with `fdatasync` before it answers.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use tackle_store::{Durability, EventLog};

use crate::GoalError;
use crate::history::{
    ChecklistItem, Control, Goal, GoalEvent, Replay, decide_checklist, decide_control,
};

/// The book's directory inside the store.
pub const GOALS_DIR: &str = "goals";
const LOG_NAME: &str = "events.jsonl";
const LOCK_NAME: &str = "lock";

/// The project's goal, durable across processes and restarts.
#[derive(Clone, Debug)]
pub struct GoalBook {
    /// `<project>/.agents/store`.
    store_dir: PathBuf,
}

impl GoalBook {
    /// The book of the store at `store_dir` (`<project>/.agents/store`). Nothing is created
    /// until the first change.
    pub fn new(store_dir: &Path) -> Self {
        Self {
            store_dir: store_dir.to_path_buf(),
        }
    }

    fn dir(&self) -> PathBuf {
        self.store_dir.join(GOALS_DIR)
    }

    /// The log file.
    pub fn log_path(&self) -> PathBuf {
        self.dir().join(LOG_NAME)
    }

    /// The current goal, whole, as the last accepted change left it.
    pub fn current(&self) -> Result<Option<Goal>, GoalError> {
        Ok(self.replay()?.current)
    }

    /// Every recorded event, in order.
    pub fn history(&self) -> Result<Vec<GoalEvent>, GoalError> {
        let path = self.log_path();
        match std::fs::symlink_metadata(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            _ => {}
        }
        EventLog::read_records(&path)?
            .into_iter()
            .map(|r| {
                serde_json::from_value(r.event)
                    .map_err(|source| GoalError::Unreadable { seq: r.seq, source })
            })
            .collect()
    }

    fn replay(&self) -> Result<Replay, GoalError> {
        let mut replay = Replay::default();
        for event in self.history()? {
            replay.apply(&event);
        }
        Ok(replay)
    }

    /// Set a new objective: a new active goal with an empty checklist, replacing the current
    /// one whatever its state.
    pub fn set(&self, objective: &str) -> Result<Goal, GoalError> {
        let objective = objective.trim();
        if objective.is_empty() {
            return Err(GoalError::EmptyObjective);
        }
        self.change(|replay| {
            Ok(GoalEvent::GoalSet {
                goal_id: replay.next_goal_id(),
                objective: objective.to_owned(),
                at_ms: now_ms(),
            })
        })
    }

    /// Pause, resume or cancel the current goal, which must be `goal_id` at
    /// `expected_revision`.
    pub fn control(
        &self,
        control: Control,
        goal_id: &str,
        expected_revision: u64,
    ) -> Result<Goal, GoalError> {
        self.change(|replay| {
            decide_control(
                replay.current.as_ref(),
                control,
                goal_id,
                expected_revision,
                now_ms(),
            )
        })
    }

    /// Replace the current goal's checklist (the model's `goal_update`).
    pub fn replace_checklist(&self, items: Vec<ChecklistItem>) -> Result<Goal, GoalError> {
        self.change(|replay| decide_checklist(replay.current.as_ref(), items, now_ms()))
    }

    /// Read, decide and append under the book's lock; the goal as the change left it.
    fn change(
        &self,
        decide: impl FnOnce(&Replay) -> Result<GoalEvent, GoalError>,
    ) -> Result<Goal, GoalError> {
        let dir = self.dir();
        ensure_real_dirs(&self.store_dir, &dir)?;
        let lock = open_lock(&dir.join(LOCK_NAME))?;
        lock.lock().map_err(|source| GoalError::Io {
            action: "lock",
            path: dir.join(LOCK_NAME),
            source,
        })?;
        let (log, _recovery) = EventLog::open(&self.log_path())?;
        let mut replay = self.replay()?;
        let event = decide(&replay)?;
        log.append_with(&event, Durability::Synced)?;
        replay.apply(&event);
        drop(log);
        // Closing the lock's descriptor releases the flock.
        drop(lock);
        replay.current.ok_or(GoalError::NoGoal)
    }
}

/// `.agents`, `.agents/store` and `.agents/store/goals` as real directories, created where
/// missing; a symlink or a file in their place is refused, never followed.
fn ensure_real_dirs(store_dir: &Path, goals_dir: &Path) -> Result<(), GoalError> {
    let mut chain: Vec<&Path> = Vec::new();
    if let Some(agents) = store_dir.parent() {
        chain.push(agents);
    }
    chain.push(store_dir);
    chain.push(goals_dir);
    for dir in chain {
        match std::fs::symlink_metadata(dir) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => {
                return Err(GoalError::Io {
                    action: "check it is a real directory",
                    path: dir.to_path_buf(),
                    source: std::io::Error::other(
                        "a symbolic link or a file stands where tackle's state directory belongs; remove it",
                    ),
                });
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => std::fs::DirBuilder::new()
                .mode(0o700)
                .create(dir)
                .or_else(|e| match e.kind() {
                    std::io::ErrorKind::AlreadyExists => Ok(()),
                    _ => Err(e),
                })
                .map_err(|source| GoalError::Io {
                    action: "create",
                    path: dir.to_path_buf(),
                    source,
                })?,
            Err(source) => {
                return Err(GoalError::Io {
                    action: "stat",
                    path: dir.to_path_buf(),
                    source,
                });
            }
        }
    }
    Ok(())
}

fn open_lock(path: &Path) -> Result<File, GoalError> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(|source| GoalError::Io {
            action: "open",
            path: path.to_path_buf(),
            source,
        })
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GoalStatus;

    fn item(description: &str, finished: bool) -> ChecklistItem {
        ChecklistItem {
            description: description.to_owned(),
            finished,
        }
    }

    #[test]
    fn a_goal_and_its_checklist_survive_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join(".agents/store");
        let book = GoalBook::new(&store);
        assert_eq!(book.current().unwrap(), None);
        let g = book.set("ship the release").unwrap();
        assert_eq!((g.goal_id.as_str(), g.revision), ("goal-1", 1));
        book.replace_checklist(vec![item("tag", true), item("publish", false)])
            .unwrap();
        let paused = book.control(Control::Pause, "goal-1", 2).unwrap();
        assert_eq!(paused.status, GoalStatus::Paused);
        // A new book over the same directory (a restart) sees exactly the same goal.
        let again = GoalBook::new(&store).current().unwrap().unwrap();
        assert_eq!(again, paused);
        assert_eq!(again.checklist.len(), 2);
        assert_eq!(again.revision, 3);
        // All finished completes it, even while paused; afterwards nothing changes it.
        let done = book
            .replace_checklist(vec![item("tag", true), item("publish", true)])
            .unwrap();
        assert_eq!(done.status, GoalStatus::Complete);
        assert_eq!(
            book.replace_checklist(Vec::new()).unwrap_err().code(),
            "goal_closed"
        );
        let next = book.set("the next one").unwrap();
        assert_eq!((next.goal_id.as_str(), next.revision), ("goal-2", 1));
    }

    #[test]
    fn a_symlinked_store_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".agents")).unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), dir.path().join(".agents/store")).unwrap();
        let book = GoalBook::new(&dir.path().join(".agents/store"));
        assert_eq!(book.set("x").unwrap_err().code(), "goal_store");
        assert!(
            std::fs::read_dir(elsewhere.path())
                .unwrap()
                .next()
                .is_none()
        );
    }
}
