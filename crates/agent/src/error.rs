//! What stops the loop from working at all (as opposed to a run that ends with a reason).

use std::path::PathBuf;

/// What stops an agent from starting or resuming a conversation: the runtime could not
/// record, or the session's log could not be read back.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error(transparent)]
    Runtime(#[from] tackle_runtime::RuntimeError),
    #[error("reading the session log {path}: {source}")]
    Log {
        path: PathBuf,
        source: tackle_store::EventLogError,
    },
    #[error(
        "the session log {path} has a `{kind}` record at seq {seq} that does not parse ({problem}); the log was edited or written by a newer tackle"
    )]
    BadRecord {
        path: PathBuf,
        seq: u64,
        kind: String,
        problem: String,
    },
}
