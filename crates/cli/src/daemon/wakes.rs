//! A hosted session's wake (schedule_next_turn, seed 003) under the daemon: when a prompt ends
//! with the model asking to be woken, the wait is recorded (`wake_pending`, every time
//! absolute) and armed here, on a task that holds nothing else; when it comes (the time, the
//! file's change, a message in the session's inbox) it is recorded (`wake_ended`) and the
//! session's next prompt starts with what woke it. A prompt or a message sent through the daemon
//! ends the wait first and becomes the next input instead. After a restart, a wait the log left
//! open is armed again for the moment it was set to end, and a prompt stopped while a call
//! waited for approval is taken up again, so the model asks again.
//!
//! Wakes in a row without a person's input are bounded by [`MOST_WAKES_IN_A_ROW`].

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use tackle_agent::autonomous::{Scheduler as _, Woken};
use tackle_agent::{Inbox, SleepScheduler, WakeRequest};
use tackle_protocol::{Event, WakeEnded, WakePending};
use tokio_util::sync::CancellationToken;

use super::hosted::Daemon;
use crate::acp::update::Update;

/// The most wakes a session takes in a row without a prompt or message from a person.
pub const MOST_WAKES_IN_A_ROW: u32 = 20;

/// No wait outlasts this, whatever was asked.
const LONGEST_WAIT: Duration = Duration::from_secs(366 * 24 * 3600);

struct Sleeping {
    cancel: CancellationToken,
}

/// The sessions waiting for a wake, and how many wakes each took in a row.
#[derive(Default)]
pub struct Sleepers {
    sleeping: Mutex<HashMap<String, Sleeping>>,
    in_a_row: Mutex<HashMap<String, u32>>,
}

impl Sleepers {
    fn sleeping(&self) -> std::sync::MutexGuard<'_, HashMap<String, Sleeping>> {
        self.sleeping.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether session `id` waits for a wake.
    pub fn is_sleeping(&self, id: &str) -> bool {
        self.sleeping().contains_key(id)
    }

    fn streak(&self, id: &str, reset: bool) -> u32 {
        let mut in_a_row = self.in_a_row.lock().unwrap_or_else(|p| p.into_inner());
        let n = in_a_row.entry(id.to_owned()).or_default();
        if reset {
            *n = 0;
        } else {
            *n += 1;
        }
        *n
    }
}

/// Before a person's prompt or message runs in `id`, or it is closed: a wait it was in ends
/// (recorded with `why`), and the count of wakes in a row starts again.
pub async fn interrupt(daemon: &Arc<Daemon>, id: &str, why: &str) {
    daemon.sleepers.streak(id, true);
    let sleeping = daemon.sleepers.sleeping().remove(id);
    if let Some(sleeping) = sleeping {
        sleeping.cancel.cancel();
        let ended = Event::WakeEnded(WakeEnded {
            why: why.to_owned(),
            at_ms: now_ms(),
        });
        if let Err(e) = daemon.host.record(id, &ended).await {
            eprintln!("tackle daemon: {e:#}");
        }
    }
}

/// After a prompt of `id` ended: the wake its model asked for, recorded and armed.
pub async fn after_prompt(daemon: &Arc<Daemon>, id: &str) {
    let Some(WakeRequest { wake, reason }) = daemon.host.take_wake(id) else {
        return;
    };
    let pending = WakePending {
        wake: tackle_agent::wake_record::record(&wake, SystemTime::now()),
        reason: reason.clone(),
        at_ms: now_ms(),
    };
    if let Err(e) = daemon.host.record(id, &Event::WakePending(pending)).await {
        say(daemon, id, &format!("the wake was not armed: {e:#}"));
        return;
    }
    arm(daemon, id, WakeRequest { wake, reason });
}

/// After a restart: what the log of resumed session `id` left open, taken up again.
pub fn resume(daemon: &Arc<Daemon>, id: &str) {
    let Some(resumed) = daemon.host.take_resumed(id) else {
        return;
    };
    if let Some(pending) = resumed.wake {
        let root = match daemon.host.root(id) {
            Ok(root) => root,
            Err(_) => return,
        };
        match tackle_agent::wake_record::restore(&pending.wake, &root, SystemTime::now()) {
            Ok(wake) => arm(
                daemon,
                id,
                WakeRequest {
                    wake,
                    reason: pending.reason,
                },
            ),
            Err(e) => say(daemon, id, &format!("its wait cannot be resumed: {e}")),
        }
    } else if resumed.awaiting_approval > 0 {
        // The prompt stopped while a call waited for approval: it goes on, the model is told
        // the call never ran, and calling it again asks again.
        let daemon = daemon.clone();
        let id = id.to_owned();
        tokio::spawn(async move {
            if let Err(e) = daemon.host.prompt_input(&id, None).await {
                say(&daemon, &id, &format!("{e:#}"));
            }
            after_prompt(&daemon, &id).await;
        });
    }
}

fn arm(daemon: &Arc<Daemon>, id: &str, request: WakeRequest) {
    let dir = match daemon.host.dir(id) {
        Ok(dir) => dir,
        Err(_) => return,
    };
    let n = daemon.sleepers.streak(id, false);
    if n > MOST_WAKES_IN_A_ROW {
        say(
            daemon,
            id,
            &format!(
                "the model asked to be woken {} after {MOST_WAKES_IN_A_ROW} wakes in a row; send it a message to go on",
                request.wake.describe()
            ),
        );
        return;
    }
    let cancel = CancellationToken::new();
    // Listed as sleeping before any client is told it sleeps.
    daemon.sleepers.sleeping().insert(
        id.to_owned(),
        Sleeping {
            cancel: cancel.clone(),
        },
    );
    say(
        daemon,
        id,
        &format!(
            "sleeping until woken {}: {}",
            request.wake.describe(),
            request.reason
        ),
    );
    let daemon = daemon.clone();
    let id = id.to_owned();
    tokio::spawn(async move {
        let scheduler = SleepScheduler {
            inbox: Inbox::of_session(&dir),
        };
        let woken = scheduler
            .wait(&request.wake, Instant::now() + LONGEST_WAIT, &cancel)
            .await;
        if matches!(woken, Woken::Cancelled) {
            // Ended by a prompt, which recorded it.
            return;
        }
        daemon.sleepers.sleeping().remove(&id);
        let (why, text) =
            tackle_agent::woken_input(&request.wake, &request.reason, &woken, LONGEST_WAIT);
        let ended = Event::WakeEnded(WakeEnded {
            why: why.clone(),
            at_ms: now_ms(),
        });
        if let Err(e) = daemon.host.record(&id, &ended).await {
            say(&daemon, &id, &format!("{e:#}"));
            return;
        }
        if text.is_empty() {
            return;
        }
        if matches!(woken, Woken::Message(_)) {
            daemon.sleepers.streak(&id, true);
        }
        daemon.host.tell(&id, Update::UserText(text.clone()));
        if let Err(e) = daemon.host.prompt(&id, text).await {
            say(&daemon, &id, &format!("{e:#}"));
        }
        after_prompt(&daemon, &id).await;
    });
}

/// Tells every client of `id` something the daemon did.
fn say(daemon: &Daemon, id: &str, text: &str) {
    let text = format!("\n[tackle: {}]\n", crate::safe_text::safe_line(text));
    daemon.host.tell(id, Update::AgentText(text));
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}
