//! The durable mailbox between sessions held by different processes, delivered exactly once.
//!
//! **Key decision:** exactly once is at-least-once delivery plus the delivery recorded
//! atomically with its effect. Posting is one statement: the message's row, keyed by its id
//! (which the sender derives from its call's idempotency key, so a retried send posts
//! nothing), checked against the sender's lease and the recipient's waiting count. Delivering
//! is the recipient's holder appending a `message_accepted` record to the recipient's log:
//! the batch that commits it marks the row consumed in the same statement
//! ([`crate::PgEventLog::append_batch`]). A holder killed before that commit leaves the row
//! waiting for the next holder, which takes the log from the database and so knows every
//! message the log already accepted; one that committed cannot deliver it again. Rejected:
//! a consumer's transaction held open while the recipient's turn runs, which pins a pooled
//! connection per message and cannot include a record the working copy numbers.
//!
//! Waking is separate from delivering: `NOTIFY` carries only `<schema>:<recipient id>`, on a
//! connection of its own ([`MailboxWatch`]), and is a doorbell, never the message. The watch
//! listens before the first scan and says so after every reconnect, and its owner polls as
//! the floor, so a lost notification costs latency, never a message. Rejected: the message in
//! the `NOTIFY` payload, which is not durable (nobody listening, nothing kept) and capped at
//! 8000 bytes.

use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime};

use serde_json::Value;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::lease::Lease;
use crate::pg_log::Checked;
use crate::{FleetDb, FleetError};

/// The channel every post rings; the payload is `<schema>:<recipient session id>` (the
/// schema, so fleets sharing a database in schemas of their own do not ring each other).
pub const DOORBELL_CHANNEL: &str = "tackle_mailbox";

/// The most waiting messages one [`Mailbox::waiting`] returns.
pub const WAITING_PER_READ: i64 = 256;

/// What a post did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sent {
    /// The message waits for its recipient.
    Posted,
    /// The message id was posted before: nothing was written.
    Duplicate,
    /// The recipient already has the most messages waiting that the post allowed.
    Full,
}

/// A message waiting in a mailbox.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    pub message_id: String,
    pub sender: String,
    pub body: Value,
    pub sent_at: SystemTime,
}

/// Posts and lists messages between sessions of a fleet database.
#[derive(Debug, Clone)]
pub struct Mailbox {
    db: FleetDb,
}

impl Mailbox {
    /// The mailbox in the fleet database `db`.
    pub fn new(db: &FleetDb) -> Self {
        Self { db: db.clone() }
    }

    /// Posts `body` from the leased session to `recipient` under `message_id`, unless
    /// `recipient` has `max_pending` messages waiting, and rings its doorbell on commit. A
    /// repeat of the id from the same sender to the same recipient is [`Sent::Duplicate`];
    /// the id on another pair is [`FleetError::MessageIdTaken`]. [`FleetError::Fenced`] when
    /// the sender's lease is no longer this one.
    pub async fn post(
        &self,
        sender: &Lease,
        recipient: &str,
        message_id: &str,
        body: &Value,
        max_pending: usize,
    ) -> Result<Sent, FleetError> {
        // The body is checked as an event would be: it must survive jsonb.
        Checked::new(body)?;
        let max = i64::try_from(max_pending).unwrap_or(i64::MAX);
        let client = self.db.client().await?;
        // The NOTIFY is sent at commit, and only for a row inserted.
        let post = client
            .prepare_cached(
                "WITH s AS (
                     SELECT 1 FROM sessions WHERE id = $2 AND owner = $5 AND lease_epoch = $6
                 ), prior AS (
                     SELECT sender, recipient FROM messages WHERE message_id = $1
                 ), room AS (
                     SELECT count(*) < $7 AS ok FROM messages
                      WHERE recipient = $3 AND consumed_at IS NULL
                 ), ins AS (
                     INSERT INTO messages (message_id, sender, recipient, body)
                     SELECT $1, $2, $3, $4 FROM s, room
                      WHERE room.ok AND NOT EXISTS (SELECT 1 FROM prior)
                     ON CONFLICT (message_id) DO NOTHING
                     RETURNING 1
                 ), bell AS (
                     SELECT pg_notify($8, current_schema() || ':' || $3) FROM ins
                 )
                 SELECT EXISTS (SELECT 1 FROM s),
                        (SELECT count(*) FROM ins) + (SELECT count(*) FROM bell) * 0,
                        (SELECT sender = $2 AND recipient = $3 FROM prior),
                        (SELECT ok FROM room)",
            )
            .await
            .map_err(FleetError::db("prepare a post"))?;
        let row = client
            .query_one(
                &post,
                &[
                    &message_id,
                    &sender.session(),
                    &recipient,
                    body,
                    &sender.owner(),
                    &sender.epoch(),
                    &max,
                    &DOORBELL_CHANNEL,
                ],
            )
            .await
            .map_err(|e| {
                // The recipient has no row: a typed refusal, not the constraint's wording.
                if e.code() == Some(&tokio_postgres::error::SqlState::FOREIGN_KEY_VIOLATION) {
                    FleetError::UnknownSession {
                        session: recipient.to_owned(),
                    }
                } else {
                    FleetError::db("post a message")(e)
                }
            })?;
        let (leased, inserted, prior, room): (bool, i64, Option<bool>, bool) =
            (row.get(0), row.get(1), row.get(2), row.get(3));
        match prior {
            Some(true) => return Ok(Sent::Duplicate),
            Some(false) => {
                return Err(FleetError::MessageIdTaken {
                    message_id: message_id.to_owned(),
                });
            }
            None => {}
        }
        if !leased {
            return Err(crate::lease::refusal(&client, sender).await);
        }
        if inserted == 1 {
            Ok(Sent::Posted)
        } else if !room {
            Ok(Sent::Full)
        } else {
            // Posted concurrently under the same id by a retry that won the race.
            Ok(Sent::Duplicate)
        }
    }

    /// The oldest messages waiting for `recipient`, at most [`WAITING_PER_READ`] (what a
    /// scan holds in memory is bounded whatever was written; the next scan reads on).
    pub async fn waiting(&self, recipient: &str) -> Result<Vec<Message>, FleetError> {
        let client = self.db.client().await?;
        let pick = client
            .prepare_cached(
                "SELECT message_id, sender, body, sent_at FROM messages
                  WHERE recipient = $1 AND consumed_at IS NULL
                  ORDER BY sent_at, message_id
                  LIMIT $2",
            )
            .await
            .map_err(FleetError::db("prepare a mailbox read"))?;
        let rows = client
            .query(&pick, &[&recipient, &WAITING_PER_READ])
            .await
            .map_err(FleetError::db("read the mailbox"))?;
        Ok(rows
            .into_iter()
            .map(|row| Message {
                message_id: row.get(0),
                sender: row.get(1),
                body: row.get(2),
                sent_at: row.get(3),
            })
            .collect())
    }
}

impl Mailbox {
    /// The sessions whose holder is `owner` with messages waiting, each once: what a
    /// process's periodic scan rings, found in one statement however many sessions it holds
    /// (the pending index's rows only), instead of one read per held session.
    pub async fn recipients_waiting(&self, owner: &str) -> Result<Vec<String>, FleetError> {
        let client = self.db.client().await?;
        let pick = client
            .prepare_cached(
                "SELECT DISTINCT m.recipient FROM messages m
                   JOIN sessions s ON s.id = m.recipient
                  WHERE m.consumed_at IS NULL AND s.owner = $1",
            )
            .await
            .map_err(FleetError::db("prepare a scan of the mailboxes"))?;
        let rows = client
            .query(&pick, &[&owner])
            .await
            .map_err(FleetError::db("scan the mailboxes"))?;
        Ok(rows.into_iter().map(|row| row.get(0)).collect())
    }

    /// Marks `message_id`, waiting for the session `holder` leases, as never to be delivered
    /// (its body does not have the form a sender posts): consumed with no `consumed_seq`, since
    /// no record of the recipient's log accepted it. It no longer counts against the
    /// recipient's waiting messages nor fills a read, so malformed rows cannot stall a mailbox
    /// whose reads are bounded. A message already consumed is left as it is;
    /// [`FleetError::Fenced`] when `holder` is no longer the session's lease.
    pub async fn discard(&self, holder: &Lease, message_id: &str) -> Result<(), FleetError> {
        let client = self.db.client().await?;
        let discard = client
            .prepare_cached(
                "WITH s AS (
                     SELECT 1 FROM sessions WHERE id = $2 AND owner = $3 AND lease_epoch = $4
                 ), d AS (
                     UPDATE messages SET consumed_at = clock_timestamp()
                      WHERE message_id = $1 AND recipient = $2 AND consumed_at IS NULL
                        AND EXISTS (SELECT 1 FROM s)
                     RETURNING 1
                 )
                 SELECT EXISTS (SELECT 1 FROM s)",
            )
            .await
            .map_err(FleetError::db("prepare a discard"))?;
        let row = client
            .query_one(
                &discard,
                &[
                    &message_id,
                    &holder.session(),
                    &holder.owner(),
                    &holder.epoch(),
                ],
            )
            .await
            .map_err(FleetError::db("discard a message"))?;
        let leased: bool = row.get(0);
        if !leased {
            return Err(crate::lease::refusal(&client, holder).await);
        }
        Ok(())
    }
}

/// Why [`MailboxWatch::wait`] returned; after any of them, scan the mailboxes it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Wake {
    /// A message was posted for this recipient.
    Doorbell(String),
    /// The poll interval passed without a ring: scan every recipient.
    Poll,
    /// The LISTEN connection was lost and is back: rings in between are gone, so scan every
    /// recipient.
    Reconnected,
}

/// The doorbells of every recipient in the fleet schema: a dedicated LISTEN connection,
/// outside the pool.
#[derive(Debug)]
pub struct MailboxWatch {
    db: FleetDb,
    poll: Duration,
    listening: Option<Listening>,
}

#[derive(Debug)]
struct Listening {
    rings: mpsc::Receiver<String>,
    backend_pid: i32,
    /// Keeps the connection's statements possible; dropping it ends the connection.
    _client: tokio_postgres::Client,
    task: JoinHandle<()>,
}

impl Drop for Listening {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Rings held before the watch's owner takes them; past this, a ring is dropped and the
/// owner's next poll finds its message.
const RINGS_HELD: usize = 1_024;

impl MailboxWatch {
    /// Listens for every doorbell of the schema, waking at least every `poll`. Scan the
    /// mailboxes after this returns: the LISTEN is committed, so nothing posted from now on
    /// is missed.
    pub async fn open(db: &FleetDb, poll: Duration) -> Result<Self, FleetError> {
        let listening = listen(db).await?;
        Ok(Self {
            db: db.clone(),
            poll,
            listening: Some(listening),
        })
    }

    /// The server process of the LISTEN connection (`pg_stat_activity.pid`), for operators.
    pub fn backend_pid(&self) -> Option<i32> {
        self.listening.as_ref().map(|l| l.backend_pid)
    }

    /// Waits for a doorbell, the poll interval, or a lost connection (which it re-opens
    /// before returning [`Wake::Reconnected`]; a failed reconnect is the error, and the next
    /// call tries again).
    pub async fn wait(&mut self) -> Result<Wake, FleetError> {
        let Some(listening) = self.listening.as_mut() else {
            self.listening = Some(listen(&self.db).await?);
            return Ok(Wake::Reconnected);
        };
        tokio::select! {
            ring = listening.rings.recv() => match ring {
                Some(recipient) => Ok(Wake::Doorbell(recipient)),
                None => {
                    self.listening = None;
                    self.listening = Some(listen(&self.db).await?);
                    Ok(Wake::Reconnected)
                }
            },
            () = tokio::time::sleep(self.poll) => Ok(Wake::Poll),
        }
    }
}

async fn listen(db: &FleetDb) -> Result<Listening, FleetError> {
    // Dropping `ring` with the connection's task tells the watch the connection is gone.
    let (ring, rings) = mpsc::channel(RINGS_HELD);
    // `<schema>:`, set before the LISTEN, so before any ring can arrive.
    let prefix = Arc::new(OnceLock::<String>::new());
    let (client, task) = db
        .dedicated({
            let prefix = Arc::clone(&prefix);
            move |n| {
                if n.channel() != DOORBELL_CHANNEL {
                    return;
                }
                let recipient = prefix
                    .get()
                    .and_then(|p| n.payload().strip_prefix(p.as_str()));
                if let Some(recipient) = recipient {
                    let _ = ring.try_send(recipient.to_owned());
                }
            }
        })
        .await?;
    let listened = async {
        // The schema is known before LISTEN commits, so no ring after it is missed.
        let schema: String = client
            .query_one("SELECT current_schema()", &[])
            .await?
            .get(0);
        let _ = prefix.set(format!("{schema}:"));
        client
            .batch_execute(&format!("LISTEN {DOORBELL_CHANNEL}"))
            .await?;
        client.query_one("SELECT pg_backend_pid()", &[]).await
    }
    .await;
    match listened {
        Ok(row) => Ok(Listening {
            rings,
            backend_pid: row.get(0),
            _client: client,
            task,
        }),
        Err(e) => {
            task.abort();
            Err(FleetError::db("listen for the mailbox doorbell")(e))
        }
    }
}
