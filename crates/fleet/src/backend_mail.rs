//! `FleetMail`: the fleet's mailbox behind `tackle-store`'s seam ([`MailBackend`]), for
//! messages to sessions another daemon holds.
//!
//! **Key decision:** one LISTEN connection per process, opened when the first subscriber
//! arrives, rings every subscriber with the recipient a post named, and after a reconnect and
//! every [`POLL`] with each recipient this process holds that has messages waiting (one query
//! for them all, so an idle daemon's poll costs one statement, not one per session it holds),
//! so a lost notification delays a message by one poll at most. Posts and reads go through
//! the pool; a post carries the sender's lease, so a daemon fenced out of its session cannot
//! post in its name.

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde_json::Value;
use tackle_store::backend::{BackendError, MailBackend, OnRing, Posted, Waiting};

use crate::backend::{Shared, unavailable};
use crate::{FleetDb, FleetError, Mailbox, MailboxWatch, Sent, Wake};

/// The floor under the doorbell: how often every subscriber scans anyway.
pub const POLL: Duration = Duration::from_secs(5);

/// How long a failed LISTEN waits before it is tried again.
const RELISTEN: Duration = Duration::from_secs(1);

type Subscriber = OnRing;

/// The mailbox of one process.
pub(crate) struct FleetMail {
    shared: Arc<Shared>,
    db: FleetDb,
    mailbox: Mailbox,
    subscribers: Arc<Mutex<Vec<Subscriber>>>,
    watching: OnceLock<()>,
}

impl std::fmt::Debug for FleetMail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FleetMail")
            .field("owner", &self.shared.owner)
            .finish_non_exhaustive()
    }
}

impl FleetMail {
    pub(crate) fn new(db: &FleetDb, shared: Arc<Shared>) -> Self {
        Self {
            shared,
            db: db.clone(),
            mailbox: Mailbox::new(db),
            subscribers: Arc::default(),
            watching: OnceLock::new(),
        }
    }

    fn not_held(session: &str) -> BackendError {
        BackendError::Unavailable(format!(
            "session {session} is not held by this process, so its mail is not read here"
        ))
    }
}

impl MailBackend for FleetMail {
    fn post(
        &self,
        sender: &str,
        recipient: &str,
        message_id: &str,
        message: &Value,
        max_pending: usize,
    ) -> Result<Posted, BackendError> {
        let lease = self
            .shared
            .lease_of(sender)
            .ok_or_else(|| Self::not_held(sender))?;
        let mailbox = self.mailbox.clone();
        let (to, id, body) = (recipient.to_owned(), message_id.to_owned(), message.clone());
        let sent = self
            .shared
            .io
            .run(async move { mailbox.post(&lease, &to, &id, &body, max_pending).await })
            .and_then(|r| r);
        match sent {
            Ok(Sent::Posted) => Ok(Posted::Posted),
            Ok(Sent::Duplicate) => Ok(Posted::Repeated),
            Ok(Sent::Full) => Ok(Posted::Full),
            Err(FleetError::Fenced { owner, .. }) => Err(BackendError::Fenced {
                id: sender.to_owned(),
                holder: owner,
            }),
            Err(FleetError::UnknownSession { session }) => Err(BackendError::UnknownSession {
                id: session,
                backend: self.shared_describe(),
            }),
            Err(e) => Err(unavailable(recipient, e)),
        }
    }

    fn waiting(&self, recipient: &str) -> Result<Vec<Waiting>, BackendError> {
        if self.shared.lease_of(recipient).is_none() {
            return Err(Self::not_held(recipient));
        }
        let mailbox = self.mailbox.clone();
        let to = recipient.to_owned();
        let waiting = self
            .shared
            .io
            .run(async move { mailbox.waiting(&to).await })
            .and_then(|r| r)
            .map_err(|e| unavailable(recipient, e))?;
        Ok(waiting
            .into_iter()
            .map(|m| Waiting {
                message_id: m.message_id,
                sender: m.sender,
                message: m.body,
            })
            .collect())
    }

    fn discard(&self, recipient: &str, message_id: &str) -> Result<(), BackendError> {
        let lease = self
            .shared
            .lease_of(recipient)
            .ok_or_else(|| Self::not_held(recipient))?;
        let mailbox = self.mailbox.clone();
        let id = message_id.to_owned();
        let discarded = self
            .shared
            .io
            .run(async move { mailbox.discard(&lease, &id).await })
            .and_then(|r| r);
        match discarded {
            Ok(()) => Ok(()),
            Err(FleetError::Fenced { owner, .. }) => Err(BackendError::Fenced {
                id: recipient.to_owned(),
                holder: owner,
            }),
            Err(e) => Err(unavailable(recipient, e)),
        }
    }

    fn held_elsewhere(&self, session: &str) -> Result<bool, BackendError> {
        let leases = self.shared.leases.clone();
        let id = session.to_owned();
        let holder = self
            .shared
            .io
            .run(async move { leases.holder(&id).await })
            .and_then(|r| r);
        match holder {
            Ok(holder) => Ok(holder.is_some_and(|h| h != self.shared.owner)),
            Err(FleetError::UnknownSession { session }) => Err(BackendError::UnknownSession {
                id: session,
                backend: self.shared_describe(),
            }),
            Err(e) => Err(unavailable(session, e)),
        }
    }

    fn subscribe(&self, on_ring: OnRing) {
        lock(&self.subscribers).push(on_ring);
        if self.watching.set(()).is_ok() {
            self.shared.io.spawn(watch(
                self.db.clone(),
                self.shared.owner.clone(),
                Arc::downgrade(&self.subscribers),
            ));
        }
    }
}

impl FleetMail {
    fn shared_describe(&self) -> String {
        format!("the fleet database at {}", self.db.url().redacted())
    }
}

fn lock(subscribers: &Mutex<Vec<Subscriber>>) -> std::sync::MutexGuard<'_, Vec<Subscriber>> {
    // A subscriber that panicked leaves the list whole.
    subscribers
        .lock()
        .unwrap_or_else(|poison| poison.into_inner())
}

/// Rings `recipient` (every recipient when `None`) to each subscriber, dropping those done.
fn ring(subscribers: &Mutex<Vec<Subscriber>>, recipient: Option<&str>) {
    lock(subscribers).retain(|on_ring| on_ring(recipient));
}

/// Rings every recipient held by `owner` that has messages waiting, found in one query; every
/// recipient when the query fails (each subscriber then reads each of its sessions).
async fn ring_waiting(mailbox: &Mailbox, owner: &str, subscribers: &Mutex<Vec<Subscriber>>) {
    match mailbox.recipients_waiting(owner).await {
        Ok(recipients) => {
            for recipient in recipients {
                ring(subscribers, Some(&recipient));
            }
        }
        Err(_) => ring(subscribers, None),
    }
}

/// Listens until the mailbox is gone, ringing the subscribers: a post's recipient on its
/// doorbell; on listening, after a reconnect and every [`POLL`], the recipients `owner` holds
/// that have messages waiting.
async fn watch(db: FleetDb, owner: String, subscribers: std::sync::Weak<Mutex<Vec<Subscriber>>>) {
    let mailbox = Mailbox::new(&db);
    let mut watch = None;
    loop {
        let Some(subs) = subscribers.upgrade() else {
            return;
        };
        let watching = match watch.as_mut() {
            Some(w) => w,
            None => match MailboxWatch::open(&db, POLL).await {
                Ok(w) => {
                    // Listening from now on: what was posted before is found by a scan.
                    ring_waiting(&mailbox, &owner, &subs).await;
                    watch.insert(w)
                }
                Err(_) => {
                    drop(subs);
                    tokio::time::sleep(RELISTEN).await;
                    continue;
                }
            },
        };
        drop(subs);
        let woke = watching.wait().await;
        let Some(subs) = subscribers.upgrade() else {
            return;
        };
        match woke {
            Ok(Wake::Doorbell(recipient)) => ring(&subs, Some(&recipient)),
            Ok(Wake::Poll | Wake::Reconnected) => ring_waiting(&mailbox, &owner, &subs).await,
            Err(_) => {
                watch = None;
                ring(&subs, None);
                drop(subs);
                tokio::time::sleep(RELISTEN).await;
            }
        }
    }
}
