//! The durable mailbox between sessions, delivered exactly once.
//!
//! **Key decision:** exactly once is at-least-once delivery plus consumption recorded
//! atomically with its effect. Sending is one transaction: the sender's `message_sent` event
//! and the recipient's mailbox row (the outbox is the mailbox; no broker). Consuming is
//! another: the recipient's `message_received` event and the row marked consumed. A consumer
//! that dies between reading and committing leaves the row unconsumed and its transaction
//! rolled back, so the message is delivered again; one that commits twice is stopped by the
//! idempotency key of its event. Both keys are the message id, which the sender chooses, so a
//! retried send is a no-op too.
//!
//! Waking is separate from delivering: `NOTIFY` carries only the recipient's id, on a
//! connection of its own ([`MailboxWatch`]), and is a doorbell, never the message. The watch
//! listens before the first scan, rescans after every reconnect, and polls on a timer as the
//! floor, so a lost notification costs latency, never a message. Rejected: the message in the
//! `NOTIFY` payload, which is not durable (nobody listening, nothing kept) and capped at 8000
//! bytes.

use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime};

use deadpool_postgres::Object;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::lease::Lease;
use crate::pg_log::{Checked, append_in};
use crate::{FleetDb, FleetError};

/// The channel every send rings; the payload is `<schema>:<recipient session id>` (the
/// schema, so fleets sharing a database in schemas of their own do not ring each other).
pub const DOORBELL_CHANNEL: &str = "tackle_mailbox";

/// What a send did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sent {
    /// The seq of the sender's `message_sent` event.
    pub sender_seq: u64,
    /// The message id was sent before: nothing was written, `sender_seq` is the first send's.
    pub duplicate: bool,
}

/// A message waiting in a mailbox.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    pub message_id: String,
    pub sender: String,
    pub body: Value,
    pub sent_at: SystemTime,
}

/// Sends and receives messages between sessions of a fleet database.
#[derive(Debug, Clone)]
pub struct Mailbox {
    db: FleetDb,
}

impl Mailbox {
    /// The mailbox in the fleet database `db`.
    pub fn new(db: &FleetDb) -> Self {
        Self { db: db.clone() }
    }

    /// Sends `body` from the leased session to `recipient` under `message_id`, in one
    /// transaction with the sender's `message_sent` event, and rings the recipient's doorbell
    /// on commit. A retry with the same id answers the first send (`duplicate`); the same id
    /// on another message is [`FleetError::MessageIdTaken`].
    pub async fn send(
        &self,
        sender: &Lease,
        recipient: &str,
        message_id: &str,
        body: &Value,
    ) -> Result<Sent, FleetError> {
        // The body is checked as an event would be: it must survive jsonb.
        Checked::new(body)?;
        let event = json!({
            "type": "message_sent",
            "message_id": message_id,
            "recipient": recipient,
        });
        let checked = Checked::new(&event)?;
        let idem = format!("message_sent:{message_id}");
        let mut client = self.db.client().await?;
        let tx = client
            .transaction()
            .await
            .map_err(FleetError::db("begin a send"))?;
        let Some(seq) = append_in(&tx, sender, &checked, Some(&idem)).await? else {
            tx.rollback()
                .await
                .map_err(FleetError::db("roll back a duplicate send"))?;
            let row = client
                .query_one(
                    "SELECT sender_seq FROM messages WHERE message_id = $1",
                    &[&message_id],
                )
                .await
                .map_err(FleetError::db("read a duplicate send"))?;
            return Ok(Sent {
                sender_seq: row.get::<_, i64>(0) as u64,
                duplicate: true,
            });
        };
        let insert = tx
            .prepare_cached(
                "INSERT INTO messages (message_id, sender, sender_seq, recipient, body)
                 VALUES ($1, $2, $3, $4, $5)
                 ON CONFLICT (message_id) DO NOTHING",
            )
            .await
            .map_err(FleetError::db("prepare a send"))?;
        let inserted = tx
            .execute(
                &insert,
                &[
                    &message_id,
                    &sender.session(),
                    &(seq as i64),
                    &recipient,
                    body,
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
                    FleetError::db("insert a message")(e)
                }
            })?;
        if inserted == 0 {
            tx.rollback()
                .await
                .map_err(FleetError::db("roll back a send"))?;
            return Err(FleetError::MessageIdTaken {
                message_id: message_id.to_owned(),
            });
        }
        // Delivered to listeners only if and when the transaction commits.
        tx.execute(
            "SELECT pg_notify($1, current_schema() || ':' || $2)",
            &[&DOORBELL_CHANNEL, &recipient],
        )
        .await
        .map_err(FleetError::db("ring a doorbell"))?;
        tx.commit().await.map_err(FleetError::db("commit a send"))?;
        Ok(Sent {
            sender_seq: seq,
            duplicate: false,
        })
    }

    /// The oldest message for the leased session that no other consumer holds, locked until
    /// the [`Delivery`] is committed or dropped; `None` when there is none.
    pub async fn receive(&self, recipient: &Lease) -> Result<Option<Delivery>, FleetError> {
        // From BEGIN on, an error or a cancelled future must not hand the connection back to
        // the pool inside the transaction: the guard closes it instead.
        let conn = InTransaction(Some(self.db.client().await?));
        let client = conn.client()?;
        client
            .batch_execute("BEGIN")
            .await
            .map_err(FleetError::db("begin a receive"))?;
        let pick = client
            .prepare_cached(
                "SELECT message_id, sender, body, sent_at FROM messages
                  WHERE recipient = $1 AND consumed_at IS NULL
                  ORDER BY sent_at, message_id
                  LIMIT 1
                  FOR UPDATE SKIP LOCKED",
            )
            .await
            .map_err(FleetError::db("prepare a receive"))?;
        let row = client
            .query_opt(&pick, &[&recipient.session()])
            .await
            .map_err(FleetError::db("read the mailbox"))?;
        let Some(row) = row else {
            client
                .batch_execute("COMMIT")
                .await
                .map_err(FleetError::db("end an empty receive"))?;
            conn.release();
            return Ok(None);
        };
        let message = Message {
            message_id: row.get(0),
            sender: row.get(1),
            body: row.get(2),
            sent_at: row.get(3),
        };
        Ok(Some(Delivery {
            conn,
            recipient: recipient.clone(),
            message,
        }))
    }

    /// The next message for the leased session: [`Mailbox::receive`], waiting on `watch`
    /// between empty scans.
    pub async fn next_delivery(
        &self,
        watch: &mut MailboxWatch,
        recipient: &Lease,
    ) -> Result<Delivery, FleetError> {
        loop {
            if let Some(delivery) = self.receive(recipient).await? {
                return Ok(delivery);
            }
            watch.wait().await?;
        }
    }
}

/// A message read and locked for its recipient, not yet consumed.
///
/// [`Delivery::commit`] records it consumed. Dropping it instead (a crash, a failed turn)
/// closes its connection, so the server rolls the transaction back and the message is
/// delivered again.
#[derive(Debug)]
pub struct Delivery {
    /// Inside the open transaction.
    conn: InTransaction,
    recipient: Lease,
    message: Message,
}

impl Delivery {
    /// The message.
    pub fn message(&self) -> &Message {
        &self.message
    }

    /// Appends the recipient's `message_received` event and marks the message consumed, in
    /// the transaction that read it; returns the event's seq. [`FleetError::Fenced`] when the
    /// recipient's lease was taken over meanwhile (nothing is recorded; the new owner
    /// receives it).
    pub async fn commit(self) -> Result<u64, FleetError> {
        let seq = consume(
            self.conn.client()?,
            &self.recipient,
            &self.message.message_id,
        )
        .await?;
        // Committed: the connection is clean again.
        self.conn.release();
        Ok(seq)
    }
}

/// A pooled connection inside a transaction begun with `BEGIN`. Dropped (an error, a
/// cancelled future, a consumer that dies), it closes the connection, so the server rolls the
/// transaction back; only [`InTransaction::release`], after `COMMIT`, returns it to the pool.
#[derive(Debug)]
struct InTransaction(Option<Object>);

impl InTransaction {
    fn client(&self) -> Result<&Object, FleetError> {
        // Set at construction and taken only by `release` and `drop`, which consume it.
        self.0.as_ref().ok_or(FleetError::Database {
            action: "use a transaction's connection",
            detail: "the connection was already released".to_owned(),
        })
    }

    fn release(mut self) {
        // Back to the pool: dropping an `Object` returns it.
        drop(self.0.take());
    }
}

impl Drop for InTransaction {
    fn drop(&mut self) {
        if let Some(client) = self.0.take() {
            drop(Object::take(client));
        }
    }
}

async fn consume(client: &Object, recipient: &Lease, message_id: &str) -> Result<u64, FleetError> {
    let event = json!({"type": "message_received", "message_id": message_id});
    let checked = Checked::new(&event)?;
    let idem = format!("message_received:{message_id}");
    // The transaction was begun by `receive` on this connection.
    let seq = append_in(client, recipient, &checked, Some(&idem)).await?;
    let marked = client
        .execute(
            "UPDATE messages SET consumed_at = clock_timestamp(), consumed_seq = $2
              WHERE message_id = $1 AND consumed_at IS NULL",
            &[&message_id, &seq.map(|s| s as i64)],
        )
        .await
        .map_err(FleetError::db("mark a message consumed"))?;
    let (Some(seq), 1) = (seq, marked) else {
        // Consumed by an earlier commit: the constraint dropped this one.
        client
            .batch_execute("ROLLBACK")
            .await
            .map_err(FleetError::db("roll back a duplicate consume"))?;
        return Err(FleetError::AlreadyConsumed {
            message_id: message_id.to_owned(),
        });
    };
    client
        .batch_execute("COMMIT")
        .await
        .map_err(FleetError::db("commit a consume"))?;
    Ok(seq)
}

/// Why [`MailboxWatch::wait`] returned; after any of them, scan the mailbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wake {
    /// The recipient's doorbell rang.
    Doorbell,
    /// The poll interval passed without one.
    Poll,
    /// The LISTEN connection was lost and is back: notifications in between are gone.
    Reconnected,
}

/// A recipient's doorbell: a dedicated LISTEN connection, outside the pool.
#[derive(Debug)]
pub struct MailboxWatch {
    db: FleetDb,
    recipient: String,
    poll: Duration,
    listening: Option<Listening>,
}

#[derive(Debug)]
struct Listening {
    rings: mpsc::Receiver<()>,
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

impl MailboxWatch {
    /// Listens for `recipient`'s doorbell, polling at least every `poll`. Scan the mailbox
    /// after this returns: the LISTEN is committed, so nothing sent from now on is missed.
    pub async fn open(db: &FleetDb, recipient: &str, poll: Duration) -> Result<Self, FleetError> {
        let listening = listen(db, recipient).await?;
        Ok(Self {
            db: db.clone(),
            recipient: recipient.to_owned(),
            poll,
            listening: Some(listening),
        })
    }

    /// The server process of the LISTEN connection (`pg_stat_activity.pid`), for operators.
    pub fn backend_pid(&self) -> Option<i32> {
        self.listening.as_ref().map(|l| l.backend_pid)
    }

    /// Waits for the doorbell, the poll interval, or a lost connection (which it re-opens
    /// before returning [`Wake::Reconnected`]; a failed reconnect is the error, and the next
    /// call tries again).
    pub async fn wait(&mut self) -> Result<Wake, FleetError> {
        let Some(listening) = self.listening.as_mut() else {
            self.listening = Some(listen(&self.db, &self.recipient).await?);
            return Ok(Wake::Reconnected);
        };
        tokio::select! {
            ring = listening.rings.recv() => match ring {
                Some(()) => Ok(Wake::Doorbell),
                None => {
                    self.listening = None;
                    self.listening = Some(listen(&self.db, &self.recipient).await?);
                    Ok(Wake::Reconnected)
                }
            },
            () = tokio::time::sleep(self.poll) => Ok(Wake::Poll),
        }
    }
}

async fn listen(db: &FleetDb, recipient: &str) -> Result<Listening, FleetError> {
    // One pending ring is enough: a scan takes every message, so rings coalesce. Dropping
    // `ring` with the connection's task tells the watch the connection is gone.
    let (ring, rings) = mpsc::channel(1);
    // `<schema>:<recipient>`, set before the LISTEN, so before any ring can arrive.
    let wanted = Arc::new(OnceLock::<String>::new());
    let (client, task) = db
        .dedicated({
            let wanted = Arc::clone(&wanted);
            move |n| {
                if n.channel() == DOORBELL_CHANNEL
                    && wanted.get().map(String::as_str) == Some(n.payload())
                {
                    let _ = ring.try_send(());
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
        let _ = wanted.set(format!("{schema}:{recipient}"));
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
