//! Records appended to a session's durable event log.

use serde::{Deserialize, Serialize};

use crate::agent_event::{
    Checkpoint, MessageAccepted, MessageConsumed, ModelTurn, ModelTurnCancelled, RunFinished,
    RunStarted, ToolBatchFinished, ToolBatchStarted, UserInput, WakeEnded, WakePending,
};
use crate::call::{CallId, CallStatus, ErrorCode, RetainedOutput, SessionId};
use crate::label::Label;
use crate::posture::Posture;
use crate::sealed_record::SealedRecord;

/// One event-log record body. The store wraps it with a sequence number and checksum.
/// Non-exhaustive: readers skip the kinds they do not handle (the agent's conversation
/// records share the log with the runtime's call records).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Event {
    SessionStarted(SessionStarted),
    CallStarted(CallStarted),
    /// The gate asked a person about a call, which waits for the answer.
    ApprovalAsked(ApprovalAsked),
    CallFinished(CallFinished),
    UserInput(UserInput),
    RunStarted(RunStarted),
    ModelTurn(ModelTurn),
    ModelTurnCancelled(ModelTurnCancelled),
    ToolBatchStarted(ToolBatchStarted),
    ToolBatchFinished(ToolBatchFinished),
    Checkpoint(Checkpoint),
    RunFinished(RunFinished),
    WakePending(WakePending),
    WakeEnded(WakeEnded),
    MessageAccepted(MessageAccepted),
    MessageConsumed(MessageConsumed),
    /// The sealed posture's state (`crate::SealedRecord`).
    Sealed(SealedRecord),
}

/// Written first in every session's log. `parent`, `agent` and `tools` are absent from the
/// logs of top-level sessions (and from every log written before they existed).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SessionStarted {
    pub session: SessionId,
    pub root: String,
    pub posture: Posture,
    /// Unix time in milliseconds.
    pub at_ms: u64,
    /// The session this one was opened for (a subagent's caller).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<SessionId>,
    /// The agent type the session runs, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The only tools the session is offered, when it is narrower than the catalog.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<String>>,
    /// A subagent's handle in its tree (`explore_1a2b3c4d`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handle: Option<String>,
    /// Rules the session adds to the gate's policy, each `deny <pattern>` or `ask <pattern>`:
    /// a subagent's type narrows what its parent may do, never widens it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub narrowing: Vec<String>,
}

/// Written when the gate puts a call to a person, before they are asked: a log that ends with
/// it (and no `call_finished` for the call) belongs to a process that stopped while the call
/// waited for an answer, so the call never ran.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ApprovalAsked {
    pub call_id: CallId,
    /// Unix time in milliseconds.
    pub at_ms: u64,
}

/// Written when a call reaches the dispatcher, before anything can fail.
///
/// Arguments too large to keep in the log (a `write_file` of megabytes) are stored as an
/// artifact instead: `arguments` is then `null` and `stored_arguments` names them. A record
/// without `stored_arguments` (every log written before it existed) carries them inline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CallStarted {
    pub call_id: CallId,
    pub tool: String,
    /// The arguments as the client sent them, unless they were stored.
    #[serde(default)]
    pub arguments: serde_json::Value,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub stored_arguments: Option<StoredArguments>,
    pub at_ms: u64,
}

/// Where a call's arguments went when they were too large for the log.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredArguments {
    /// `artifact://sha256/<hex>` of the arguments' JSON, as the client sent it.
    pub artifact: String,
    /// Length of that JSON in bytes.
    pub bytes: u64,
}

/// Written exactly once per call, whatever happened to it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CallFinished {
    pub call_id: CallId,
    pub tool: String,
    pub status: CallStatus,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub code: Option<ErrorCode>,
    pub at_ms: u64,
    /// Time from dispatch to the start of execution (queueing behind siblings), if it ran.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub queued_us: Option<u64>,
    /// Execution time, if it ran.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub ran_us: Option<u64>,
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub retained_output: Vec<RetainedOutput>,
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub incomplete: bool,
    pub label: Label,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub display: Option<String>,
    /// Whether the model saw a structural digest instead of the output; `retrieve_raw` returns
    /// the retained output of such a call.
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub digested: bool,
    /// Attachments retained for the result (`artifact://sha256/<digest>`), so the janitor keeps
    /// them.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub attachments: Vec<String>,
    /// The `read:` keys behind what the call retained: those it was admitted under (a walk's
    /// listed files among them) and those of every artifact it read back. Reading its retained
    /// output asks today's policy about each, so a deny on a source covers its copies. Absent
    /// when the call retained nothing, and on every record written before it existed.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub read_keys: Vec<String>,
}
