//! Typed errors for the artifact store and the event log.

use std::io;
use std::path::PathBuf;

use crate::ArtifactId;

/// Why an artifact store operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// A filesystem operation failed.
    #[error("artifact store: cannot {action} {}: {source}; check the directory's permissions and free space", path.display())]
    Io {
        /// What was being done, e.g. "create temp file".
        action: &'static str,
        /// The file or directory involved.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// No artifact with this id exists in the store.
    #[error("artifact {id} not found in the store; it was never retained or has been collected")]
    ArtifactMissing {
        /// The requested id.
        id: ArtifactId,
    },
    /// The artifact's bytes no longer hash to its name.
    #[error(
        "artifact {id} is corrupt: its content hashes to {actual}; it was set aside, re-run the tool that produced it to store it again"
    )]
    ArtifactCorrupt {
        /// The requested id.
        id: ArtifactId,
        /// What the bytes on disk actually hash to.
        actual: ArtifactId,
    },
    /// The backend artifacts are durable in failed to hand one back.
    #[error("artifact {}: {source}", id.public_uri())]
    Backend {
        id: crate::ArtifactId,
        #[source]
        source: crate::BackendError,
    },
    /// A directory of the store is a symlink or not a directory.
    #[error(transparent)]
    Layout(#[from] crate::LayoutError),
    /// A manifest could not be encoded as JSON.
    #[error("artifact store: cannot encode manifest: {source}")]
    EncodeManifest {
        /// The underlying error.
        source: serde_json::Error,
    },
}

impl StoreError {
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(io::Error) -> Self {
        let path = path.into();
        move |source| Self::Io {
            action,
            path,
            source,
        }
    }
}

/// Why an event log operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EventLogError {
    /// A filesystem operation failed.
    #[error("event log {}: cannot {action}: {source}; check the directory's permissions and free space", path.display())]
    Io {
        /// What was being done, e.g. "fdatasync".
        action: &'static str,
        /// The log file.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// The log's directory is a symlink or not a directory, or the log itself is not a regular
    /// file.
    #[error(transparent)]
    Layout(#[from] crate::LayoutError),
    /// A complete line fails its check, or the final line cannot be a torn write of the next
    /// record: not what a crash leaves, so nothing is cut and the file is left as found.
    #[error("event log {} is corrupt at line {line}: {reason}; it was left as found: restore it from a backup, or move it aside and start a new session", path.display())]
    Corrupt {
        /// The log file.
        path: PathBuf,
        /// 1-based line number of the first invalid record.
        line: usize,
        /// What is wrong with that record.
        reason: String,
    },
    /// An earlier write or sync failed, so what reached the disk is unknown.
    #[error("event log {}: an earlier write or sync failed{}; reopen the log to recover", path.display(), why.as_deref().map(|w| format!(" ({w})")).unwrap_or_default())]
    Poisoned {
        /// The log file.
        path: PathBuf,
        /// What failed, when the backend said ([`crate::BackendError`]).
        why: Option<String>,
    },
    /// The backend the log is durable in refused or failed; nothing from this record on is
    /// acknowledged.
    #[error("event log {}: {source}", path.display())]
    Backend {
        path: PathBuf,
        #[source]
        source: crate::BackendError,
    },
    /// The record is longer than a line may be ([`crate::MAX_RECORD_BYTES`]); nothing was
    /// written.
    #[error("event log {}: a record of {bytes} bytes is over the {} a line may be; nothing was written", path.display(), crate::MAX_RECORD_BYTES)]
    RecordTooLarge {
        /// The log file.
        path: PathBuf,
        /// The encoded event's length.
        bytes: usize,
    },
    /// The event could not be encoded as JSON.
    #[error("event log: cannot encode event: {source}")]
    Encode {
        /// The underlying error.
        source: serde_json::Error,
    },
}

impl EventLogError {
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(io::Error) -> Self {
        let path = path.into();
        move |source| Self::Io {
            action,
            path,
            source,
        }
    }
}
