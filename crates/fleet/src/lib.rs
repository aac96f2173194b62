//! tackle-fleet: the fleet backends, where daemons on several machines share sessions,
//! messages and artifacts through PostgreSQL and an S3-compatible object store.
//!
//! **Owns** the fleet schema and its migrations ([`FleetDb`], `schema.rs`), each session's
//! event log as rows ([`PgEventLog`]), session leases with fencing epochs ([`Leases`]), the
//! exactly-once mailbox between sessions with its doorbell ([`Mailbox`], [`MailboxWatch`]),
//! the peer registry ([`Peers`]), and content-addressed artifacts in a bucket with their
//! references and two-phase collection ([`S3Artifacts`], [`ArtifactGc`]).
//!
//! **Refuses** to know what an event or a message means (both are opaque JSON), to read a
//! database password from anywhere but the environment, or to print one ([`DatabaseUrl`]).
//! [`FleetBackend`] puts it behind `tackle-store`'s storage seam: installed in a process,
//! every session log and artifact of that process is durable here, and nothing above the
//! seam knows.
//!
//! **Key decision:** every ordering and exactly-once guarantee is a constraint or a row lock
//! inside one PostgreSQL transaction (seq from the session's row, idempotency keys under
//! unique constraints, the lease epoch checked by the write itself), never a lock held by a
//! daemon or a message on the wire: a daemon that dies mid-write leaves a rolled-back
//! transaction and nothing else. The bucket holds only immutable content under its digest;
//! what is referenced is known to the database alone.

// Tests report failure by panicking; unwrap is how they do it.
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

mod artifact_gc;
mod backend;
mod backend_mail;
mod canonical;
mod database_url;
mod db;
mod error;
mod io;
mod lease;
mod mailbox;
mod peers;
mod pg_log;
mod s3_artifacts;
mod s3_http;
mod schema;

pub use artifact_gc::{ArtifactGc, BUCKET_GRACE, GcReport};
pub use backend::FleetBackend;
pub use canonical::storable;
pub use database_url::DatabaseUrl;
pub use db::{FleetDb, FleetDbSettings};
pub use error::FleetError;
pub use io::FleetIo;
pub use lease::{Claim, Lease, Leases};
pub use mailbox::{DOORBELL_CHANNEL, Mailbox, MailboxWatch, Message, Sent, WAITING_PER_READ, Wake};
pub use peers::{Peer, Peers};
pub use pg_log::{Appended, PgEventLog, PgRecord};
pub use s3_artifacts::{
    MULTIPART_THRESHOLD, PutArtifact, S3Artifacts, S3Credentials, S3Settings, record_reference,
};
pub use schema::{SCHEMA_VERSION, SchemaReport, VERSION_TABLE};
