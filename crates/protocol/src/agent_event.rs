//! The conversation of an agent session, as records in the session's own event log: the user's
//! input, each model turn with its usage and stop, each tool batch by reference to the
//! `call_*` events the runtime writes for it, compaction checkpoints and each run's end.
//!
//! Key decision: a batch is written twice. [`ToolBatchStarted`] goes down before the runtime
//! sees the calls, so a crash mid-batch leaves a record saying which calls were handed over;
//! [`ToolBatchFinished`] holds the results exactly as the model was shown them, so a rebuilt
//! conversation is the one the model saw, not a re-rendering of retained output.

use serde::{Deserialize, Serialize};

use crate::call::{CallId, CallStatus, ErrorCode, SessionId};
use crate::conversation::{Message, StopReason, ToolResultPart, Usage};

/// Text the user sent: the task, or input queued while a turn ran (steering).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UserInput {
    pub text: String,
    pub at_ms: u64,
}

/// One run of the loop began (a `tackle run`, or a resume of it) with this model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunStarted {
    /// `provider:model`.
    pub model: String,
    pub at_ms: u64,
}

/// A model turn that completed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelTurn {
    /// 1-based within the session.
    pub turn: u32,
    pub message: Message,
    pub stop_reason: StopReason,
    pub usage: Usage,
    /// The model that answered, as the provider named it.
    pub model: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_id: Option<String>,
    pub at_ms: u64,
}

/// A model turn stopped before it completed (cancelled, or the wall clock ran out). Its partial
/// text is kept for the record only; it is not part of the conversation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelTurnCancelled {
    pub turn: u32,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub partial_text: String,
    pub at_ms: u64,
}

/// A turn's tool calls are about to be handed to the runtime; its `call_*` events follow.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolBatchStarted {
    pub turn: u32,
    pub calls: Vec<CallId>,
    pub at_ms: u64,
}

/// The results of a batch, as the model is shown them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolBatchFinished {
    pub turn: u32,
    pub results: Vec<BatchResult>,
    /// Project instructions (`AGENTS.md` of directories the calls entered) sent with the
    /// results.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<InstructionNote>,
    /// The batch was cancelled while it ran.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cancelled: bool,
    /// Written on resume for a batch the process stopped in: calls without a `call_finished`
    /// are reported as interrupted, never run again.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    pub at_ms: u64,
}

/// A project instructions file sent to the model, once per session.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InstructionNote {
    /// The file, relative to the root (`crates/cli/AGENTS.md`).
    pub path: String,
    pub text: String,
}

/// One call's result in a [`ToolBatchFinished`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BatchResult {
    pub tool: String,
    pub status: CallStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<ErrorCode>,
    /// The result part as sent (attachments as references; media is delivered per request).
    pub result: ToolResultPart,
    /// The retained output (`artifact://sha256/…`), where a result elided from a later
    /// request can be re-read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<String>,
    /// The result's reserved `no_op` boolean: the call changed nothing (an unchanged plan, a
    /// repeated task boundary). The watchdog reads this and nothing else.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_op: bool,
}

/// A compaction checkpoint: a model-written summary that stands for every message before
/// `through` in later requests.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// The index (into the rebuilt conversation's messages) of the first message kept.
    pub through: usize,
    pub summary: String,
    pub usage: Usage,
    /// The task the model (mark_task_done) or the user (`/done`) declared finished, when the
    /// checkpoint marks a task boundary rather than a full context window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_done: Option<String>,
    pub at_ms: u64,
}

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunOutcome {
    /// The model ended its turn.
    Finished,
    /// tackle could not go on (the event log could not be written, …).
    Error,
    /// A bound (turns, tokens, cost, wall clock) was reached.
    BoundHit,
    /// The provider failed in a way that cannot be retried.
    ProviderFailed,
    Cancelled,
}

impl RunOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Finished => "finished",
            Self::Error => "error",
            Self::BoundHit => "bound_hit",
            Self::ProviderFailed => "provider_failed",
            Self::Cancelled => "cancelled",
        }
    }
}

/// A run ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunFinished {
    pub outcome: RunOutcome,
    pub reason: String,
    pub at_ms: u64,
}

/// An autonomous run went to sleep until the wake the model asked for (schedule_next_turn).
/// A process that dies in the wait leaves this as the log's last agent record, so
/// `tackle run --autonomous --continue` goes on waiting for the same wake.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WakePending {
    pub wake: WakeSpec,
    /// Why the model asked (what the next turn will do).
    pub reason: String,
    pub at_ms: u64,
}

/// A wake as the log keeps it: every time absolute, so a wait resumed later ends when the
/// first one would have.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WakeSpec {
    /// At this moment (a sleep is recorded as the moment it ends).
    At { at_ms: u64 },
    /// When the root-relative `path` differs from `before` (absent: the file did not exist).
    FileChange {
        path: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        before: Option<WatchedFile>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        limit_at_ms: Option<u64>,
    },
    /// When a message arrives in the session's inbox.
    Message {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        limit_at_ms: Option<u64>,
    },
}

/// What a watched file looked like when the wait began.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WatchedFile {
    pub len: u64,
    /// Modification time in nanoseconds since the Unix epoch, when the system gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modified_ns: Option<u64>,
    pub ino: u64,
}

/// The wait of the last [`WakePending`] is over: the model was woken, or the wait was ended
/// by a bound or a cancel. Nothing is left to resume.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WakeEnded {
    pub why: String,
    pub at_ms: u64,
}

/// A message another session of the same delegation tree sent this one (`send_message`),
/// written to the recipient's log before the sender is told it was accepted. It joins the
/// recipient's conversation at a safe boundary, recorded then as [`MessageConsumed`]; one
/// accepted and never consumed is still owed after a restart.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MessageAccepted {
    pub message_id: String,
    /// The sending session.
    pub from: SessionId,
    /// How the recipient's model is told who sent it: `parent`, `root` or the sender's handle.
    pub sender: String,
    /// `steer` or `queue`.
    pub mode: String,
    pub body: String,
    /// The message's place in a chain of messages, each sent while handling the one before
    /// (1 for a message sent outside one). Internal: never shown to a model.
    pub hop: u32,
    /// The idempotency key of the call that sent it: sender session, run and tool call.
    pub key: String,
    pub at_ms: u64,
}

/// An accepted message became input to the recipient's model: `text` is what it read (the
/// envelope naming the sender, then the body). Rebuilding the conversation applies it as
/// user text.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MessageConsumed {
    pub message_id: String,
    pub text: String,
    pub at_ms: u64,
}
