//! `FleetError`: what a fleet backend call can fail with, each naming the thing and the fix.
//!
//! No variant carries a database URL as given: where one is named it is the
//! [`DatabaseUrl`](crate::DatabaseUrl)'s redacted form, so a password never reaches an error,
//! a log line or `Debug` output.

use std::time::SystemTime;

use tackle_store::ArtifactId;

/// A failure of the fleet backend.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FleetError {
    /// The environment variable that should hold the database URL is unset or empty.
    #[error(
        "fleet: the database URL variable {var} is not set; export it (e.g. {var}=postgres://user@host/db) in the daemon's environment"
    )]
    DatabaseUrlMissing { var: String },

    /// The database URL does not parse.
    #[error("fleet: the database URL {url} is not valid ({reason}); fix it in the environment")]
    DatabaseUrlInvalid { url: String, reason: String },

    /// The pool could not hand out a connection.
    #[error(
        "fleet: cannot connect to the database at {url}: {detail}; check that PostgreSQL runs there and accepts this user"
    )]
    Connect { url: String, detail: String },

    /// A statement failed.
    #[error("fleet: {action} failed: {detail}")]
    Database {
        action: &'static str,
        detail: String,
    },

    /// The database's schema was written by a newer tackle than this one.
    #[error(
        "fleet: the database schema is at version {found}, newer than version {known} this tackle knows; upgrade tackle on this machine (never downgrade a shared database)"
    )]
    SchemaTooNew { found: i32, known: i32 },

    /// The session has no row: it was never created in this database.
    #[error("fleet: session {session} does not exist in the database; create it before use")]
    UnknownSession { session: String },

    /// The caller's lease on the session was taken over: its writes are refused.
    #[error(
        "fleet: session {session} is fenced: this lease has epoch {held}, the session is now at epoch {current} (owner {owner}); stop running it and claim it again"
    )]
    Fenced {
        session: String,
        held: i64,
        current: i64,
        owner: String,
    },

    /// A live lease of another owner stands in the way of a renewal or claim that needed it.
    #[error(
        "fleet: session {session} is leased by {owner} until {until:?}; wait for the lease to expire"
    )]
    LeaseHeld {
        session: String,
        owner: String,
        until: SystemTime,
    },

    /// A batch of a working copy does not follow what the database holds for the session.
    #[error(
        "fleet: session {session}'s working copy does not follow the database (a batch from seq {first}, the database's next seq is {next}); resume the session to rebuild its working copy"
    )]
    Diverged {
        session: String,
        first: u64,
        next: u64,
    },

    /// A stored event's checksum does not match its payload.
    #[error(
        "fleet: event {seq} of session {session} is corrupt ({reason}); restore it from a backup"
    )]
    Corrupt {
        session: String,
        seq: u64,
        reason: String,
    },

    /// A seq was missing between two stored events (a read expects none).
    #[error(
        "fleet: session {session} has a gap in its log: expected seq {expected}, found {found}"
    )]
    Gap {
        session: String,
        expected: u64,
        found: u64,
    },

    /// An event PostgreSQL cannot store as `jsonb`.
    #[error("fleet: event refused: {reason}")]
    EventRefused { reason: String },

    /// A message id already names a different message.
    #[error(
        "fleet: message id {message_id} is already used by another message; give each message an id of its own"
    )]
    MessageIdTaken { message_id: String },

    /// The object store's settings cannot make a client.
    #[error("fleet: the S3 settings are not usable: {reason}")]
    S3Settings { reason: String },

    /// An object store call failed.
    #[error("fleet: {action} {key} failed: {detail}")]
    ObjectStore {
        action: &'static str,
        key: String,
        detail: String,
    },

    /// An artifact's bytes do not hash to the digest its key names.
    #[error(
        "fleet: the object at {key} is corrupt: it hashes to {actual}, not {expected}; delete it so the next publication writes it again"
    )]
    DigestMismatch {
        key: String,
        expected: ArtifactId,
        actual: ArtifactId,
    },

    /// No object under an artifact's key.
    #[error("fleet: artifact {id} is missing from the object store (no object at {key})")]
    ArtifactMissing { id: ArtifactId, key: String },
}

impl FleetError {
    pub(crate) fn db(action: &'static str) -> impl FnOnce(tokio_postgres::Error) -> Self {
        move |e| Self::Database {
            action,
            detail: pg_detail(&e),
        }
    }

    pub(crate) fn pool(
        url: &crate::DatabaseUrl,
    ) -> impl FnOnce(deadpool_postgres::PoolError) -> Self {
        let url = url.redacted();
        move |e| Self::Connect {
            url,
            detail: match &e {
                deadpool_postgres::PoolError::Backend(pg) => pg_detail(pg),
                other => other.to_string(),
            },
        }
    }

    pub(crate) fn object_store(
        action: &'static str,
        key: &object_store::path::Path,
    ) -> impl FnOnce(object_store::Error) -> Self {
        let key = key.to_string();
        move |e| Self::ObjectStore {
            action,
            key,
            detail: e.to_string(),
        }
    }
}

/// tokio-postgres says only "db error" in its own `Display`; the server's message, detail and
/// SQLSTATE are in the source.
pub(crate) fn pg_detail(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => {
            let mut out = format!("{} ({})", db.message(), db.code().code());
            if let Some(detail) = db.detail() {
                out.push_str(": ");
                out.push_str(detail);
            }
            out
        }
        None => {
            let mut out = e.to_string();
            let mut source = std::error::Error::source(e);
            while let Some(s) = source {
                out.push_str(": ");
                out.push_str(&s.to_string());
                source = s.source();
            }
            out
        }
    }
}
