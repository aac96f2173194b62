//! Errors that stop the runtime (as opposed to tool results, which never do).

use std::path::PathBuf;

/// A fatal runtime error: the engine cannot keep its guarantees (e.g. the event log cannot be
/// written), so the batch stops. Everything a model can act on is a tool result instead.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error("project root {path}: {source}; pass an existing directory with --root")]
    Root {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Store(#[from] tackle_store::StoreError),
    #[error(transparent)]
    EventLog(#[from] tackle_store::EventLogError),
    #[error(
        "no session `{id}` in this project's store; omit --session to start a new one, or pass \
         an id from .agents/store/sessions/"
    )]
    UnknownSession { id: String },
    #[error(
        "the session_started record of session `{id}` cannot be read ({reason}); the log was \
         written by a newer tackle or edited: resume it with that version, or start a new session"
    )]
    SessionStarted { id: String, reason: String },
    #[error(
        "the arguments of call `{call_id}` were stored as {artifact}, but {reason}; the event \
         log was edited or belongs to another store"
    )]
    StoredArguments {
        call_id: String,
        artifact: String,
        reason: String,
    },
    #[error(
        "session `{id}`'s log was not written by this user's tackle ({first}): it may have come \
         with the repository, and what it says the user asked would reach the model as the \
         user's words; resume it only if you trust every line of it"
    )]
    ForeignLog {
        id: String,
        first: tackle_store::ForeignLine,
    },
    #[error("event log writer stopped unexpectedly: {0}")]
    Join(String),
    #[error("`{kind}` events are written by the dispatcher only; append the agent's own records")]
    CallEventRefused { kind: &'static str },
}
