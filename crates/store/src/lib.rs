//! tackle-store: where tool output and the record of what happened live on disk.
//!
//! **Owns** the layout under `<project>/.agents/store/`: the content-addressed artifact store
//! (`artifacts/<sha256 hex>`, captures in locked temp files under `tmp/`), the generic
//! [`Manifest`] for named multi-stream output, the [`Janitor`] that collects unreferenced
//! artifacts, and the durable JSONL [`EventLog`] (`sessions/<id>/events.jsonl`), whose lines a
//! session tags with the user's [`LogKey`] so a log the user's tackle did not write is told
//! apart ([`LogOrigin`]).
//!
//! **Refuses** to know what an event means, how output is previewed or truncated, or who may
//! read an artifact: events are opaque JSON, and artifact ids grant access by possession to
//! whoever the runtime lets ask. It depends on no other tackle crate.
//!
//! **Key decision:** durability is by ordering, not by locks or recovery logic. Every final
//! name is reached by temp → fsync → rename → fsync directory, so a crash never leaves a partial
//! artifact under its digest; and an event is acknowledged only after `write` on an `O_APPEND`
//! descriptor and `fdatasync`, with CRC-32C per line so a torn tail is recognised and truncated
//! while a damaged complete line, wherever it is, is reported, never silently skipped. Concurrent appenders share
//! one `fdatasync` (group commit) instead of each paying for their own. Garbage collection is
//! excluded by `flock` on `gc.lock` (shared for publishers, exclusive for the janitor) rather
//! than by reference counts, which a crash would leave wrong.

// Tests report failure by panicking; unwrap is how they do it.
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

mod artifact;
pub mod backend;
mod error;
mod event_log;
mod fsutil;
mod id;
mod janitor;
mod layout;
mod log_key;
mod log_read;
mod log_seal;
mod manifest;
mod record;
mod session_log;
mod spill;
mod temps;

pub use artifact::{
    ArtifactInfo, ArtifactInfoOnDisk, ArtifactStore, Capture, MANIFEST_READ_LIMIT,
    PublicationGuard, hash_file,
};
pub use backend::{BackendError, install_backend};
pub use error::{EventLogError, StoreError};
pub use event_log::{Durability, EventLog, FLUSH_WINDOW, Recovery, session_log_path};
pub use id::ArtifactId;
pub use janitor::{DEFAULT_GRACE, Janitor, JanitorReport};
pub use layout::LayoutError;
pub use log_key::{LOG_KEY_FILE, LOG_KEY_LEN, LogKey, LogKeyError};
pub use log_read::MAX_RECORD_BYTES;
pub use log_seal::{ForeignLine, ForeignReason, LogOrigin, LogSeal};
pub use manifest::{MANIFEST_KIND, Manifest, ManifestStream};
pub use record::Record;
pub use session_log::{
    Opening, copy_descendants, installed_log_backend, is_unknown_session, logs_are_backed,
    open_session_log, write_working_copy,
};
pub use temps::TempSweep;
