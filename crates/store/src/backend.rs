//! The storage seam: where a session's log and the artifacts are durable beyond this machine.
//!
//! The files under `.agents/store/` are always the working copy: every reader (a resume, the
//! janitor, `sessions`, `retrieve_raw`) reads them, and the file backend is that working copy
//! alone, unchanged in speed. A [`Backend`] installed in a process ([`install_backend`]) is
//! where they are *durable*: an event is acknowledged only once the backend holds it
//! ([`LogReplica::replicate`], called by the log's group commit), an artifact is in it before
//! any record naming it is ([`ArtifactBackend::upload`], called from the log's pre-sync hook),
//! and opening a session takes it for this process and first rewrites the working copy from
//! what the backend holds ([`LogBackend::take`]), so a session started on another machine
//! continues here with every acknowledged event and nothing another process wrote after.
//!
//! Rejected: putting every reader behind a trait (a dozen readers that want a file's random
//! access, each learning to page through a database), and a cache that is sometimes
//! authoritative. Here the backend is always authoritative for what was acknowledged, and
//! the working copy is rebuilt whole whenever it may be stale (every open).

use std::fmt;
use std::io;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use serde_json::Value;

use crate::ArtifactId;

/// Where this process's stores are durable besides their files. `Send + Sync`; installed once.
pub trait Backend: Send + Sync + fmt::Debug {
    /// What it is, for logs and `tackle config` (never a password).
    fn describe(&self) -> String;
    /// Where session logs are durable, when not in files alone.
    fn logs(&self) -> Option<Arc<dyn LogBackend>>;
    /// Where artifacts are durable, when not in files alone.
    fn artifacts(&self) -> Option<Arc<dyn ArtifactBackend>>;
    /// Where messages wait for sessions another process holds, when the backend has a
    /// mailbox.
    fn mail(&self) -> Option<Arc<dyn MailBackend>> {
        None
    }
    /// The process is stopping: let go of every session it holds, so another process need
    /// not wait for them. A log written after this is refused.
    fn close(&self) {}
}

/// Session logs held by a backend.
pub trait LogBackend: Send + Sync + fmt::Debug {
    /// Registers new session `id` and takes it for this process.
    fn create(&self, id: &str) -> Result<Arc<dyn LogReplica>, BackendError>;

    /// Takes existing session `id` for this process (waiting out another process's lease when
    /// it is about to expire) and returns every record the backend holds, in seq order from 1.
    /// [`BackendError::UnknownSession`] when the backend has no such session.
    fn take(&self, id: &str) -> Result<(Arc<dyn LogReplica>, Vec<Value>), BackendError>;

    /// Every record the backend holds for session `id`, in seq order from 1, without taking
    /// it (whoever runs it goes on). [`BackendError::UnknownSession`] when it has none.
    fn read(&self, id: &str) -> Result<Vec<Value>, BackendError>;

    /// The sessions whose first record names `parent` (its subagents), by id.
    fn children(&self, parent: &str) -> Result<Vec<String>, BackendError>;
}

/// A taken session's log in the backend.
pub trait LogReplica: Send + Sync + fmt::Debug {
    /// Makes the records `first_seq..` (each an event's JSON) durable in the backend, in one
    /// unit. Called again with the same records after a failure, it must not duplicate them.
    /// Fails when another process has taken the session since ([`BackendError::Fenced`]).
    fn replicate(&self, first_seq: u64, events: &[&[u8]]) -> Result<(), BackendError>;
}

/// Artifacts held by a backend.
pub trait ArtifactBackend: Send + Sync + fmt::Debug {
    /// Makes the artifacts (each its id and the file holding its bytes) durable in the
    /// backend; one already there is success.
    fn upload(&self, artifacts: &[(ArtifactId, &Path)]) -> Result<(), BackendError>;

    /// Artifact `id`'s bytes (the caller checks them against the digest before keeping
    /// them); `Ok(None)` when the backend does not hold it.
    fn download(&self, id: ArtifactId) -> Result<Option<Vec<u8>>, BackendError>;
}

/// A mailbox between sessions held by different processes.
///
/// A message for a session this process does not hold is *posted* (durable once `post`
/// returns); the process holding the recipient delivers it by appending the recipient's
/// `message_accepted` record, whose replication marks the message delivered in the same unit
/// ([`LogReplica::replicate`]), so a holder killed before that commit leaves it waiting for
/// the next one, and one that commits cannot deliver it again.
pub trait MailBackend: Send + Sync + fmt::Debug {
    /// Posts `message` from `sender` (a session this process holds) to `recipient` under
    /// `message_id`, unless `recipient` already has `max_pending` messages waiting. A repeat
    /// of `message_id` posts nothing and answers [`Posted::Repeated`].
    fn post(
        &self,
        sender: &str,
        recipient: &str,
        message_id: &str,
        message: &Value,
        max_pending: usize,
    ) -> Result<Posted, BackendError>;

    /// The messages waiting for `recipient` (a session this process holds), oldest first; at
    /// most as many as the backend reads at once (the next call reads on once these are
    /// delivered).
    fn waiting(&self, recipient: &str) -> Result<Vec<Waiting>, BackendError>;

    /// Takes `message_id`, waiting for `recipient` (a session this process holds), out of the
    /// mailbox undelivered: a message that does not have the form a tackle sender posts, which
    /// would otherwise be read again on every scan and hold a place in every bounded read.
    fn discard(&self, recipient: &str, message_id: &str) -> Result<(), BackendError>;

    /// Whether another live process holds `session` (so a message for it is posted, never
    /// written into its log from here).
    fn held_elsewhere(&self, session: &str) -> Result<bool, BackendError>;

    /// Calls `on_ring` whenever a message may be waiting: with `Some(recipient)` when one was
    /// posted for it, `None` when any may be (a lost notification channel came back). Kept
    /// while `on_ring` returns true.
    fn subscribe(&self, on_ring: OnRing);
}

/// What a [`MailBackend`] calls on a ring; it stays subscribed while it returns true.
pub type OnRing = Box<dyn Fn(Option<&str>) -> bool + Send + Sync>;

/// A message waiting for its recipient.
#[derive(Debug, Clone, PartialEq)]
pub struct Waiting {
    pub message_id: String,
    /// The session that posted it, as the backend checked it.
    pub sender: String,
    /// What was posted.
    pub message: Value,
}

/// What [`MailBackend::post`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Posted {
    /// The message waits for its recipient.
    Posted,
    /// A message of this id was posted before; nothing was written.
    Repeated,
    /// The recipient already has the most messages waiting that the sender allows.
    Full,
}

/// Why a backend refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    /// The backend has no session of this id.
    #[error("session {id} is not in {backend}")]
    UnknownSession { id: String, backend: String },
    /// The session is in this project's files and not in the backend: it was made before the
    /// backend was configured.
    #[error(
        "session {id} is in this project's files but not in {backend}; move it there with: tackle store migrate --from files --to postgres"
    )]
    NotMigrated { id: String, backend: String },
    /// Another process took the session over: this one must stop writing it.
    #[error(
        "session {id} was taken over by {holder}: this process no longer runs it (resume it to take it back)"
    )]
    Fenced { id: String, holder: String },
    /// Another live process runs the session.
    #[error(
        "session {id} is running on {holder} (its lease ends {until}); stop it there, or resume it here once the lease has ended"
    )]
    Held {
        id: String,
        holder: String,
        until: String,
    },
    /// The backend could not be reached or refused the operation.
    #[error("{0}")]
    Unavailable(String),
}

impl From<BackendError> for io::Error {
    fn from(e: BackendError) -> Self {
        io::Error::other(e.to_string())
    }
}

static BACKEND: OnceLock<Arc<dyn Backend>> = OnceLock::new();

/// Makes `backend` where every store this process opens from now on is durable. Once per
/// process: a second call is refused (with the one already installed), since stores opened
/// before would disagree with stores opened after.
pub fn install_backend(backend: Arc<dyn Backend>) -> Result<(), Arc<dyn Backend>> {
    BACKEND.set(backend)
}

/// The backend installed in this process, if any.
pub fn backend() -> Option<&'static Arc<dyn Backend>> {
    BACKEND.get()
}

/// The installed backend's mailbox, if it has one.
pub fn mail_backend() -> Option<Arc<dyn MailBackend>> {
    backend().and_then(|b| b.mail())
}

/// The installed backend's session logs, if it holds them.
pub fn log_backend() -> Option<Arc<dyn LogBackend>> {
    backend().and_then(|b| b.logs())
}

/// Every `artifact://sha256/<hex>` an event names (its strings, object keys included), once
/// each, in the order first met: what a backend records as referenced when it takes the event.
pub fn artifacts_named(event: &Value) -> Vec<ArtifactId> {
    let mut found = Vec::new();
    crate::janitor::collect_strings(event, &mut |s: &str| {
        let mut rest = s;
        while let Some(at) = rest.find("artifact://sha256/") {
            let tail = &rest[at..];
            let end = (at + "artifact://sha256/".len() + 64).min(rest.len());
            // `get`: the 64 bytes after the prefix may end inside a character.
            if let Some(id) = rest.get(at..end).and_then(ArtifactId::from_internal_uri)
                && !found.contains(&id)
            {
                found.push(id);
            }
            rest = &tail["artifact://".len()..];
        }
    });
    found
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn artifacts_named_walks_generated_nesting_to_the_parsers_limit() {
        // Events are parsed by serde_json, whose recursion limit (128) bounds the walk.
        let id = ArtifactId::of(b"deep");
        for pairs in [1usize, 16, 63] {
            let text = format!(
                "{}\"see {}\"{}",
                "[{\"k\":".repeat(pairs),
                id.internal_uri(),
                "}]".repeat(pairs)
            );
            let value: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(artifacts_named(&value), vec![id], "{} levels", 2 * pairs);
        }
    }

    #[test]
    fn artifacts_named_finds_every_uri_once_wherever_it_is() {
        let a = ArtifactId::of(b"a");
        let b = ArtifactId::of(b"b");
        let event = json!({
            "output": a.internal_uri(),
            "text": format!("see {} and {}", b.internal_uri(), a.internal_uri()),
            (b.internal_uri()): [null, 1, "artifact://sha256/short"],
        });
        let named = artifacts_named(&event);
        assert_eq!(named.len(), 2, "{named:?}");
        assert!(named.contains(&a) && named.contains(&b));
        assert!(artifacts_named(&json!({"x": "artifact://sha256/"})).is_empty());
    }
}
