//! Plain data shared across tackle: tool specs, calls, results, content blocks, events, ids,
//! information-flow labels, and the neutral model conversation (`conversation.rs`).
//!
//! This crate owns *shapes*, not behaviour: nothing here does I/O, and the only logic is the
//! validation that makes a value of a type trustworthy once constructed (a [`StreamName`] is
//! always a valid stream name, an [`ArtifactUri`] always a well-formed public artifact URI).
//! Keeping validation in the constructor means every crate that receives one of these types can
//! rely on it without re-checking.
//!
//! Rejected alternative: one crate per concept (ids, events, specs). The types are small and
//! always travel together; one dependency-free crate keeps the graph simple.

mod agent_event;
mod artifact_uri;
mod call;
mod conversation;
mod event;
mod label;
mod posture;
mod sealed_record;
mod spec;
mod stream_name;

pub use agent_event::{
    BatchResult, Checkpoint, InstructionNote, MessageAccepted, MessageConsumed, ModelTurn,
    ModelTurnCancelled, RunFinished, RunOutcome, RunStarted, ToolBatchFinished, ToolBatchStarted,
    UserInput, WakeEnded, WakePending, WakeSpec, WatchedFile,
};
pub use artifact_uri::{ArtifactUri, ArtifactUriError, DIGEST_HEX_LEN};
pub use call::{
    CallId, CallStatus, ContentBlock, ErrorCode, RetainedOutput, SessionId, ToolCall, ToolResult,
    TurnId,
};
pub use conversation::{
    AssistantTurn, MediaPart, Message, Part, ReasoningPart, Role, StopReason, ToolArguments,
    ToolCallPart, ToolResultPart, Usage,
};
pub use event::{ApprovalAsked, CallFinished, CallStarted, Event, SessionStarted, StoredArguments};
pub use label::{Label, Privacy, Trust};
pub use posture::Posture;
pub use sealed_record::{Quarantined, SealedChange, SealedRecord};
pub use spec::{Concurrency, OutputDeclaration, OutputDeclarationError, ToolSpec, Truncation};
pub use stream_name::{StreamName, StreamNameError};
