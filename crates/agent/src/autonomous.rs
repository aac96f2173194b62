//! Autonomous runs (seed 003, schedule_next_turn): a session that goes on across turns. After
//! each run the runner takes the wake the model asked for ([`crate::schedule::Wakes`]), waits
//! for it through a [`Scheduler`], and starts the next run with what woke the model as its
//! input. It ends when the model ends a run without asking to be woken, when a run ends any
//! other way than finished, or at a bound: [`AutonomyBounds::max_wakes`] wakes, or
//! [`AutonomyBounds::max_total`] of wall clock across runs and waits.
//!
//! Each wait is a pair of records in the session's log (`wake_pending`, `wake_ended`); a wait
//! the process died in is rebuilt as [`crate::Rebuilt::pending_wake`] and taken up again by
//! `tackle run --autonomous --continue` ([`crate::wake_record`]).
//!
//! [`Scheduler`] is the seam a daemon replaces (one process waiting for many sessions);
//! [`SleepScheduler`] waits in this process. Every wait also ends early when a message for the
//! session arrives in its inbox (`Inbox`), which becomes the next input.

use std::collections::BTreeSet;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use tackle_fs::{OwnFile, Root};
use tackle_protocol::{Event, RunOutcome, WakeEnded, WakePending};
use tokio_util::sync::CancellationToken;

use crate::events::{AgentEvent, Observer};
use crate::record::now_ms;
use crate::run::{Agent, RunEnd};
use crate::schedule::{FileState, Wake, WakeRequest, Wakes};

/// How often [`SleepScheduler`] looks at a watched file and the inbox.
pub const POLL: Duration = Duration::from_millis(100);

/// What ended a wait.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Woken {
    /// The wake came; the text says what happened, for the model.
    Wake(String),
    /// A message for the session: the user's words.
    Message(String),
    /// The total time ran out first.
    Deadline,
    Cancelled,
}

pub type WaitFuture<'a> = Pin<Box<dyn Future<Output = Woken> + Send + 'a>>;

/// Waits for a wake. `deadline` is the autonomous run's end: a wait never outlasts it.
pub trait Scheduler: Send + Sync {
    fn wait<'a>(
        &'a self,
        wake: &'a Wake,
        deadline: Instant,
        cancel: &'a CancellationToken,
    ) -> WaitFuture<'a>;
}

/// A session's inbox: one file per message, taken oldest first (by name) and removed once read.
/// Senders write `<name>.tmp` and rename it to `<name>.msg`, so a half-written message is never
/// read.
#[derive(Clone, Debug)]
pub struct Inbox {
    dir: PathBuf,
    /// Names refused once, so each is reported once rather than at every poll.
    refused: Arc<Mutex<BTreeSet<String>>>,
}

impl Inbox {
    pub fn new(dir: PathBuf) -> Self {
        Self {
            dir,
            refused: Arc::default(),
        }
    }

    /// The inbox of a session whose log directory is `session_dir`.
    pub fn of_session(session_dir: &Path) -> Self {
        Self::new(session_dir.join("inbox"))
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Leaves a message (what `tackle sessions message` does).
    pub fn send(&self, text: &str) -> std::io::Result<PathBuf> {
        std::fs::create_dir_all(&self.dir)?;
        let nanos = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let name = format!("{nanos:039}-{}", std::process::id());
        let tmp = self.dir.join(format!("{name}.tmp"));
        std::fs::write(&tmp, text)?;
        let done = self.dir.join(format!("{name}.msg"));
        std::fs::rename(&tmp, &done)?;
        Ok(done)
    }

    /// The oldest message, removed; `None` when there is none.
    ///
    /// Messages are read as tackle reads its own files ([`OwnFile::INBOX_MESSAGE`]: beneath the
    /// inbox directory's handle, regular files only, capped, never blocking). One that is not
    /// such a file (a FIFO, a link out, over the cap) is not a message: it is left where it is
    /// with a note on stderr, and the next one is taken.
    pub fn take(&self) -> Option<String> {
        let mut names: Vec<String> = std::fs::read_dir(&self.dir)
            .ok()?
            .flatten()
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| n.ends_with(".msg"))
            .collect();
        names.sort();
        let inbox = Root::open(&self.dir).ok()?;
        for name in names {
            let kind = OwnFile::INBOX_MESSAGE;
            let text = match kind
                .read_in(&inbox, &name)
                .and_then(|r| r.map(|b| b.into_text(kind, &name)).transpose())
            {
                Ok(Some(text)) => text,
                Ok(None) => continue,
                Err(e) => {
                    if self
                        .refused
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .insert(name)
                    {
                        eprintln!("tackle: {e} (in {})", self.dir.display());
                    }
                    continue;
                }
            };
            if std::fs::remove_file(self.dir.join(&name)).is_ok() {
                return Some(text);
            }
        }
        None
    }
}

/// Waits in this process: sleeps, a wall-clock time, a file polled every [`POLL`], and the
/// session's inbox throughout.
pub struct SleepScheduler {
    pub inbox: Inbox,
}

impl Scheduler for SleepScheduler {
    fn wait<'a>(
        &'a self,
        wake: &'a Wake,
        deadline: Instant,
        cancel: &'a CancellationToken,
    ) -> WaitFuture<'a> {
        Box::pin(async move {
            let started = Instant::now();
            let until = match wake {
                Wake::After(d) => Some(started + *d),
                Wake::At(t) => Some(
                    started
                        + t.duration_since(SystemTime::now())
                            .unwrap_or(Duration::ZERO),
                ),
                Wake::FileChange { limit, .. } | Wake::Message { limit } => {
                    limit.map(|l| started + l)
                }
            };
            loop {
                if let Some(text) = self.inbox.take() {
                    return Woken::Message(text);
                }
                if let Wake::FileChange {
                    path,
                    absolute,
                    before,
                    ..
                } = wake
                {
                    let now = FileState::of(absolute);
                    if now != *before {
                        let what = match (before, now) {
                            (None, Some(_)) => "was created",
                            (Some(_), None) => "was removed",
                            _ => "changed",
                        };
                        return Woken::Wake(format!("{path} {what}"));
                    }
                }
                let now = Instant::now();
                if until.is_some_and(|u| now >= u) {
                    return Woken::Wake(match wake {
                        Wake::After(_) | Wake::At(_) => {
                            format!("the wait {} is over", wake.describe())
                        }
                        _ => format!(
                            "nothing happened {}; the time limit is over",
                            wake.describe()
                        ),
                    });
                }
                if now >= deadline {
                    return Woken::Deadline;
                }
                let next = [until, Some(deadline), Some(now + POLL)]
                    .into_iter()
                    .flatten()
                    .min()
                    .unwrap_or(now + POLL);
                tokio::select! {
                    () = tokio::time::sleep_until(next.into()) => {}
                    () = cancel.cancelled() => return Woken::Cancelled,
                }
            }
        })
    }
}

/// What ended a wait, as the log's `wake_ended` says it, and the model's next input (empty
/// when the wait ended without one: a deadline or a cancel). `max_total` is the bound a
/// deadline names.
pub fn woken_input(
    wake: &Wake,
    reason: &str,
    what: &Woken,
    max_total: Duration,
) -> (String, String) {
    match what {
        Woken::Wake(happened) => (
            happened.clone(),
            format!(
                "[woken] {happened}. You asked to be woken {} to: {reason}",
                wake.describe()
            ),
        ),
        Woken::Message(text) => ("a message arrived".to_owned(), text.clone()),
        Woken::Deadline => (
            format!(
                "the autonomous run reached its total time of {} s (--max-total) while waiting {}",
                max_total.as_secs(),
                wake.describe()
            ),
            String::new(),
        ),
        Woken::Cancelled => (
            format!("cancelled while waiting {}", wake.describe()),
            String::new(),
        ),
    }
}

/// The bounds of an autonomous run, beyond each run's own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AutonomyBounds {
    pub max_wakes: u32,
    pub max_total: Duration,
}

impl Default for AutonomyBounds {
    fn default() -> Self {
        Self {
            max_wakes: 20,
            max_total: Duration::from_secs(3600),
        }
    }
}

/// Runs `agent` on `input`, then on every wake the model asks for, until one of the ends in
/// the module's header. The returned end is the last run's, or the bound's.
///
/// Each wait is recorded (`wake_pending` before it, `wake_ended` after), so a process that dies
/// in one leaves it in the log; `resumed` is such a wait, taken up again before any run (and
/// `input` is then ignored).
#[allow(clippy::too_many_arguments)]
pub async fn run_autonomous(
    agent: &mut Agent,
    wakes: Arc<Wakes>,
    input: Option<&str>,
    resumed: Option<WakeRequest>,
    scheduler: &dyn Scheduler,
    bounds: AutonomyBounds,
    observer: Arc<dyn Observer>,
    cancel: CancellationToken,
) -> RunEnd {
    let deadline = Instant::now() + bounds.max_total;
    let session = agent.session().id().clone();
    let mut next: Option<String> = input.map(str::to_owned);
    let mut woken = 0u32;
    let mut pending = resumed;
    loop {
        let (request, last_message) = match pending.take() {
            Some(request) => (request, None),
            None => {
                let end = agent.run(next.as_deref(), cancel.clone()).await;
                let Some(request) = wakes.take(&session) else {
                    return end;
                };
                if end.outcome != RunOutcome::Finished {
                    return end;
                }
                (request, end.last_message)
            }
        };
        let WakeRequest { wake, reason } = request;
        let bound = |reason: String| RunEnd {
            outcome: RunOutcome::BoundHit,
            reason,
            last_message: last_message.clone(),
        };
        if woken >= bounds.max_wakes {
            return bound(format!(
                "the model asked to be woken {} after {woken} wake(s); the limit is {} (--max-wakes)",
                wake.describe(),
                bounds.max_wakes
            ));
        }
        let pending_record = Event::WakePending(WakePending {
            wake: crate::wake_record::record(&wake, SystemTime::now()),
            reason: reason.clone(),
            at_ms: now_ms(),
        });
        if let Err(e) = agent.session().append_event(&pending_record).await {
            return RunEnd {
                outcome: RunOutcome::Error,
                reason: format!("recording the wait in the session log: {e}"),
                last_message,
            };
        }
        observer.on_event(&AgentEvent::Sleeping {
            wake: wake.describe(),
            reason: reason.clone(),
        });
        let what = scheduler.wait(&wake, deadline, &cancel).await;
        let (why, text) = woken_input(&wake, &reason, &what, bounds.max_total);
        let ended = Event::WakeEnded(WakeEnded {
            why: why.clone(),
            at_ms: now_ms(),
        });
        if let Err(e) = agent.session().append_event(&ended).await {
            return RunEnd {
                outcome: RunOutcome::Error,
                reason: format!("recording the end of the wait in the session log: {e}"),
                last_message,
            };
        }
        match what {
            Woken::Deadline => return bound(why),
            Woken::Cancelled => {
                return RunEnd {
                    outcome: RunOutcome::Cancelled,
                    reason: why,
                    last_message,
                };
            }
            Woken::Wake(_) | Woken::Message(_) => {}
        }
        observer.on_event(&AgentEvent::Woken { why });
        woken += 1;
        next = Some(text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_inbox_entry_that_is_not_a_regular_file_is_passed_over_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let inbox = Inbox::new(dir.path().join("inbox"));
        inbox.send("real").unwrap();
        let secret = dir.path().join("secret");
        std::fs::write(&secret, "outside").unwrap();
        let at = |name: &str| inbox.dir().join(name);
        // Every name sorts before the real message, so each is tried first.
        std::os::unix::fs::symlink("/dev/zero", at("0-zero.msg")).unwrap();
        std::os::unix::fs::symlink(&secret, at("1-out.msg")).unwrap();
        let fifo =
            std::ffi::CString::new(at("2-fifo.msg").into_os_string().into_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        std::fs::create_dir(at("3-dir.msg")).unwrap();
        let big = std::fs::File::create(at("4-big.msg")).unwrap();
        big.set_len(OwnFile::INBOX_MESSAGE.cap + 1).unwrap();
        assert_eq!(inbox.take().as_deref(), Some("real"));
        assert_eq!(inbox.take(), None);
        assert_eq!(std::fs::read_to_string(&secret).unwrap(), "outside");
    }

    #[test]
    fn the_inbox_hands_out_messages_oldest_first_and_never_a_half_written_one() {
        let dir = tempfile::tempdir().unwrap();
        let inbox = Inbox::new(dir.path().join("inbox"));
        assert_eq!(inbox.take(), None);
        inbox.send("first").unwrap();
        inbox.send("second").unwrap();
        std::fs::write(inbox.dir().join("zzz.tmp"), "half").unwrap();
        assert_eq!(inbox.take().as_deref(), Some("first"));
        assert_eq!(inbox.take().as_deref(), Some("second"));
        assert_eq!(inbox.take(), None);
    }

    #[tokio::test]
    async fn waits_end_on_a_message_a_file_the_deadline_or_a_cancel() {
        let dir = tempfile::tempdir().unwrap();
        let scheduler = SleepScheduler {
            inbox: Inbox::new(dir.path().join("inbox")),
        };
        let cancel = CancellationToken::new();
        let far = Instant::now() + Duration::from_secs(600);
        let long = Wake::After(Duration::from_secs(600));

        scheduler.inbox.send("wake up").unwrap();
        let woken = scheduler.wait(&long, far, &cancel).await;
        assert_eq!(woken, Woken::Message("wake up".into()));

        let flag = dir.path().join("flag");
        let watch = Wake::FileChange {
            path: "flag".into(),
            absolute: flag.clone(),
            before: FileState::of(&flag),
            limit: None,
        };
        std::fs::write(&flag, "x").unwrap();
        let woken = scheduler.wait(&watch, far, &cancel).await;
        assert_eq!(woken, Woken::Wake("flag was created".into()));

        let message = Wake::Message { limit: None };
        let now = Instant::now();
        assert_eq!(
            scheduler.wait(&message, now, &cancel).await,
            Woken::Deadline
        );

        cancel.cancel();
        assert_eq!(scheduler.wait(&long, far, &cancel).await, Woken::Cancelled);

        let at = Wake::At(SystemTime::now() - Duration::from_secs(5));
        let woken = scheduler.wait(&at, far, &CancellationToken::new()).await;
        assert!(matches!(woken, Woken::Wake(w) if w.starts_with("the wait at ")));
    }
}
