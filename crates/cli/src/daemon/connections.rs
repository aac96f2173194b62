//! Connections as the ACP transport RFD ("Streamable HTTP & WebSocket") has them: a client
//! `initialize`s and gets an `Acp-Connection-Id`; from then on every message it sends is
//! answered on one stream of the connection (its `GET /acp` event stream, or its WebSocket),
//! together with everything the sessions it opened, loaded, prompted or attached to say.
//!
//! A connection follows a session by reading the session's journal live from the moment it
//! began to follow it; a request's response waits until everything its session said before it
//! ended has gone out, so a prompt's updates always precede its answer. Sessions outlive the
//! connections that opened them (a daemon's sessions are anyone's to attach to); `DELETE`, a
//! closed WebSocket or a client that falls too far behind ends the connection only.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::{broadcast, mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::hosted::Daemon;
use super::journal::From;
use crate::acp::rpc::RpcError;

/// Messages, and bytes of them, a connection may have waiting for its stream; past either it
/// is closed (the client reads too slowly, or never opened its stream).
const OUTBOX: usize = 4096;
const OUTBOX_BYTES: usize = 32 * 1024 * 1024;
/// The most connections at once.
pub const MOST_CONNECTIONS: usize = 256;
/// A connection with no stream open and nothing sent for this long is let go.
const IDLE: Duration = Duration::from_secs(600);
/// How long a response waits for its session's earlier messages to go out first.
const ORDERING: Duration = Duration::from_secs(5);

/// One client's connection.
pub struct Connection {
    pub id: String,
    outbox: mpsc::Sender<String>,
    /// The receiving end, held by the connection's stream while one is open.
    inbox: Mutex<Option<mpsc::Receiver<String>>>,
    /// Per followed session, the number of its last journal message sent on.
    followed: Mutex<HashMap<String, watch::Receiver<u64>>>,
    /// Requests whose response has not been sent (ids as JSON text), to refuse a reused id.
    pending: Mutex<HashSet<String>>,
    pub closed: CancellationToken,
    last_used: Mutex<Instant>,
    /// The bytes of the messages waiting for the stream.
    queued: AtomicUsize,
}

/// Every open connection.
#[derive(Default)]
pub struct Connections {
    open: Mutex<HashMap<String, Arc<Connection>>>,
}

/// What became of one message a client sent on a connection.
#[derive(Debug, PartialEq, Eq)]
pub enum Received {
    /// Taken; any answer follows on the connection's stream.
    Accepted,
    /// An answer to a permission request no longer open.
    UnknownRequest(String),
}

impl Connections {
    fn open(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Connection>>> {
        self.open.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A new connection, or an error when the daemon holds as many as it takes.
    pub fn create(&self) -> Result<Arc<Connection>, String> {
        let mut open = self.open();
        open.retain(|_, c| !c.closed.is_cancelled() && !c.idle());
        if open.len() >= MOST_CONNECTIONS {
            return Err(format!(
                "the daemon holds {MOST_CONNECTIONS} connections, the most it takes; close one (DELETE /acp) or use a request's own stream"
            ));
        }
        let (outbox, inbox) = mpsc::channel(OUTBOX);
        let connection = Arc::new(Connection {
            id: tackle_runtime::unguessable::unguessable_id("acp"),
            outbox,
            inbox: Mutex::new(Some(inbox)),
            followed: Mutex::new(HashMap::new()),
            pending: Mutex::new(HashSet::new()),
            closed: CancellationToken::new(),
            last_used: Mutex::new(Instant::now()),
            queued: AtomicUsize::new(0),
        });
        open.insert(connection.id.clone(), connection.clone());
        Ok(connection)
    }

    pub fn get(&self, id: &str) -> Option<Arc<Connection>> {
        let connection = self.open().get(id).cloned()?;
        if connection.closed.is_cancelled() {
            self.open().remove(id);
            return None;
        }
        connection.touch();
        Some(connection)
    }

    /// Ends connection `id`; whether there was one.
    pub fn close(&self, id: &str) -> bool {
        match self.open().remove(id) {
            Some(connection) => {
                connection.closed.cancel();
                true
            }
            None => false,
        }
    }
}

impl Connection {
    fn touch(&self) {
        *self.last_used.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
    }

    fn idle(&self) -> bool {
        let streaming = self
            .inbox
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_none();
        !streaming
            && self
                .last_used
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .elapsed()
                > IDLE
    }

    /// Queues `message` for the connection's stream; a connection that cannot take it is closed.
    pub fn send(&self, message: String) {
        let bytes = message.len();
        let queued = self.queued.fetch_add(bytes, Ordering::Relaxed) + bytes;
        if queued > OUTBOX_BYTES || self.outbox.try_send(message).is_err() {
            self.closed.cancel();
        }
    }

    /// The connection's stream: what it was sent, in order. `None` while another holds it.
    pub fn take_stream(self: &Arc<Self>) -> Option<StreamLease> {
        let inbox = self
            .inbox
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()?;
        Some(StreamLease {
            connection: self.clone(),
            inbox: Some(inbox),
        })
    }

    /// From now on, what session `session` says goes to this connection too.
    pub fn follow(self: &Arc<Self>, daemon: &Arc<Daemon>, session: &str) {
        let mut followed = self.followed.lock().unwrap_or_else(|p| p.into_inner());
        if followed.contains_key(session) {
            return;
        }
        let journal = daemon.journals.of(session);
        let at = journal.last();
        let mut live = journal.attach(From::After(at)).live;
        let (sent_tx, sent_rx) = watch::channel(at);
        followed.insert(session.to_owned(), sent_rx);
        let connection = self.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    received = live.recv() => match received {
                        Ok(entry) => {
                            connection.send(entry.message.clone());
                            let _ = sent_tx.send(entry.seq);
                        }
                        Err(broadcast::error::RecvError::Lagged(_)) => {
                            // Fell behind the journal: the connection cannot be told everything.
                            connection.closed.cancel();
                            return;
                        }
                        Err(broadcast::error::RecvError::Closed) => return,
                    },
                    () = connection.closed.cancelled() => return,
                }
            }
        });
    }

    /// Waits (a while at most) until everything session `session` had said by `seq` was sent.
    async fn sent_through(&self, session: &str, seq: u64) {
        let watching = self
            .followed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(session)
            .cloned();
        if let Some(mut sent) = watching {
            let _ = tokio::time::timeout(ORDERING, sent.wait_for(|s| *s >= seq)).await;
        }
    }
}

/// A connection's stream while a client reads it; dropped, it gives the messages back for the
/// next stream to read.
pub struct StreamLease {
    connection: Arc<Connection>,
    inbox: Option<mpsc::Receiver<String>>,
}

impl StreamLease {
    pub fn connection(&self) -> &Arc<Connection> {
        &self.connection
    }

    /// The next message, `None` once the connection is closed.
    pub async fn next(&mut self) -> Option<String> {
        let inbox = self.inbox.as_mut()?;
        let message = tokio::select! {
            biased;
            () = self.connection.closed.cancelled() => None,
            message = inbox.recv() => message,
        }?;
        self.connection
            .queued
            .fetch_sub(message.len(), Ordering::Relaxed);
        Some(message)
    }
}

impl Drop for StreamLease {
    fn drop(&mut self) {
        self.connection.touch();
        *self
            .connection
            .inbox
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = self.inbox.take();
    }
}

/// Takes one message a client sent on `connection`: a request runs on a task of its own and its
/// response goes to the connection's stream; a notification or an answer is acted on now.
pub fn receive(daemon: &Arc<Daemon>, connection: &Arc<Connection>, message: Value) -> Received {
    let id = message.get("id").cloned();
    let params = message.get("params").cloned().unwrap_or(Value::Null);
    let method = message.get("method").and_then(Value::as_str);
    match (method, id) {
        (Some(method), Some(id)) => {
            let key = id.to_string();
            if !connection
                .pending
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(key.clone())
            {
                connection.send(
                    super::http::response(
                        id,
                        Err(RpcError::invalid(format!(
                            "a request with id {key} is still running on this connection; use a new id"
                        ))),
                    )
                    .to_string(),
                );
                return Received::Accepted;
            }
            let session = params
                .get("sessionId")
                .and_then(Value::as_str)
                .map(str::to_owned);
            // Followed before the call, so nothing it says is missed (a load retells the
            // conversation as it runs).
            if let Some(session) = &session
                && (daemon.host.is_open(session) || method == "session/load")
            {
                connection.follow(daemon, session);
            }
            let daemon = daemon.clone();
            let connection = connection.clone();
            let method = method.to_owned();
            tokio::spawn(async move {
                let answer = match (method.as_str(), &session) {
                    // The connection's stream is the attach: followed from now (above).
                    ("_tackle/session/attach", Some(s)) if daemon.host.is_open(s) => Ok(json!({
                        "sessionId": s,
                        "lastEventId": super::journal::cursor(&daemon.epoch, daemon.journals.of(s).last()),
                    })),
                    ("_tackle/session/attach", _) => Err(RpcError::invalid(
                        "the daemon hosts no such session; _tackle/sessions/list names those it does",
                    )),
                    _ => super::methods::call(&daemon, &method, params).await,
                };
                let mut answer = answer;
                // Said in the result as well as the header: a browser's WebSocket cannot read
                // the upgrade's headers.
                if method == "initialize"
                    && let Ok(Value::Object(result)) = &mut answer
                {
                    result.insert(
                        "connectionId".to_owned(),
                        Value::from(connection.id.clone()),
                    );
                }
                if let Ok(result) = &answer
                    && matches!(method.as_str(), "session/new" | "session/load")
                    && let Some(opened) = result.get("sessionId").and_then(Value::as_str)
                {
                    connection.follow(&daemon, opened);
                }
                if let Some(session) = &session {
                    let last = daemon.journals.of(session).last();
                    connection.sent_through(session, last).await;
                }
                connection
                    .pending
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .remove(&key);
                connection.send(super::http::response(id, answer).to_string());
            });
            Received::Accepted
        }
        (Some(method), None) => {
            super::http::notified(daemon, method, &params);
            Received::Accepted
        }
        (None, Some(id)) => match super::http::answered(daemon, &id, &message) {
            Ok(()) => Received::Accepted,
            Err(super::http::UnknownAnswer(known)) => {
                Received::UnknownRequest(known.unwrap_or_else(|| id.to_string()))
            }
        },
        (None, None) => {
            connection.send(
                json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "the message has neither a method nor an id"}})
                    .to_string(),
            );
            Received::Accepted
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_connection_that_is_not_read_is_closed_past_its_budget_and_not_before() {
        let connections = Connections::default();
        let connection = connections.create().unwrap();
        let message = "x".repeat(1024 * 1024);
        for _ in 0..OUTBOX_BYTES / message.len() {
            connection.send(message.clone());
        }
        assert!(!connection.closed.is_cancelled(), "within the budget");
        // Read, the bytes are given back.
        let mut lease = connection.take_stream().unwrap();
        assert_eq!(lease.next().await.map(|m| m.len()), Some(message.len()));
        connection.send(message.clone());
        assert!(!connection.closed.is_cancelled());
        connection.send(message);
        assert!(connection.closed.is_cancelled(), "past the budget");
        assert_eq!(
            lease.next().await,
            None,
            "a closed connection's stream ends"
        );
        assert!(connections.get(&connection.id).is_none());
    }
}
