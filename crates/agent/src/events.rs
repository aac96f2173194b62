//! What front ends observe while a run goes on: one [`AgentEvent`] at a time, each with a
//! `type` when serialized (`tackle run --json` prints them one a line). Never part of the
//! model's history; the durable record is the session log.

use std::sync::Arc;

use serde::Serialize;
use tackle_protocol::{CallId, CallStatus, ErrorCode, Event, RunOutcome, StopReason, Usage};
use tackle_runtime::{ApprovalFuture, ApprovalRequest, Approver, EventObserver};

/// One thing a front end may show while a run goes on (text, calls, usage, the run's end).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AgentEvent {
    SessionStarted {
        session: String,
        resumed: bool,
    },
    TurnStarted {
        turn: u32,
    },
    TextDelta {
        turn: u32,
        text: String,
    },
    /// A piece of the model's visible reasoning, as it streams (front ends that show it apart
    /// from the answer: an editor's thought panel).
    ThinkingDelta {
        turn: u32,
        text: String,
    },
    ToolCallStarted {
        call_id: CallId,
        tool: String,
        arguments: serde_json::Value,
    },
    ToolCallFinished {
        call_id: CallId,
        tool: String,
        status: CallStatus,
        #[serde(skip_serializing_if = "Option::is_none")]
        code: Option<ErrorCode>,
        /// What the tool said for the person only (a processor's remark), never the model.
        #[serde(skip_serializing_if = "Option::is_none", default)]
        display: Option<String>,
    },
    /// A batch's results as the model is shown them, once the batch is recorded (front ends
    /// that show a call's output: an editor's tool call panel).
    ToolResults {
        turn: u32,
        results: Vec<ToolResultView>,
    },
    ApprovalRequested {
        call_id: CallId,
        tool: String,
        keys: Vec<String>,
        message: String,
    },
    /// Tokens a model turn of the run used, or, with `subtask`, an agentic subtask its calls
    /// ran on the small model (`crate::agentic`), which is no turn of the run's own.
    Usage {
        turn: u32,
        usage: Usage,
        /// This run's tokens so far, its subtasks' included.
        total: Usage,
        /// This run's cost so far, its subtasks' included, when the model's prices are known.
        #[serde(skip_serializing_if = "Option::is_none")]
        cost_usd: Option<f64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        subtask: Option<SubtaskUsage>,
    },
    TurnFinished {
        turn: u32,
        stop_reason: StopReason,
    },
    /// Older tool results were left out of the next request to fit the context window.
    ContextElided {
        turn: u32,
        results: usize,
    },
    /// A compaction checkpoint was recorded; `task_done` holds the note when it marks a task
    /// boundary.
    Checkpoint {
        turn: u32,
        through: usize,
        task_done: Option<String>,
    },
    /// A subagent of the tree started (`status` running) or ended; `usage` is its tokens.
    Subagent {
        handle: String,
        session: String,
        agent_type: String,
        status: String,
        usage: Usage,
    },
    /// The window the loop plans requests for, and the catalog form sent with it: at the start
    /// of a run, and again when a server's overflow answer names a smaller window.
    Window {
        /// Tokens of input and output together.
        context: u64,
        /// The output limit of one turn.
        output: u32,
        /// Where the window came from ([`crate::WindowSource::as_str`]).
        source: String,
        /// `full` or `compact` tool descriptions (and system prompt).
        descriptions: String,
    },
    /// The watchdog tripped (`crate::watchdog`): `cut` when it ends the run.
    Watchdog {
        turn: u32,
        message: String,
        cut: bool,
    },
    /// An autonomous run waits for the wake the model asked for.
    Sleeping {
        wake: String,
        reason: String,
    },
    /// The wait ended; the next run starts.
    Woken {
        why: String,
    },
    RunFinished {
        outcome: RunOutcome,
        reason: String,
    },
}

/// One result of a batch, as the model is shown it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolResultView {
    pub call_id: CallId,
    pub tool: String,
    pub is_error: bool,
    pub content: Vec<tackle_protocol::ContentBlock>,
}

/// Whose tokens a `usage` event with a subtask counts: the wrapper that ran it, its session
/// and the small model.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SubtaskUsage {
    pub tool: String,
    pub session: String,
    pub model: String,
    /// The subtask's cost at the small model's prices, when it has them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

/// Receives the events of a run, in order.
pub trait Observer: Send + Sync {
    fn on_event(&self, event: &AgentEvent);
}

/// An observer that drops everything.
pub struct Unobserved;

impl Observer for Unobserved {
    fn on_event(&self, _: &AgentEvent) {}
}

/// Turns the runtime's call records into `tool_call_started`/`tool_call_finished` as each is
/// written; install it with [`tackle_runtime::Runtime::with_event_observer`].
pub struct CallEvents(pub Arc<dyn Observer>);

impl EventObserver for CallEvents {
    fn on_recorded(&self, _seq: u64, event: &Event) {
        match event {
            Event::CallStarted(started) => self.0.on_event(&AgentEvent::ToolCallStarted {
                call_id: started.call_id.clone(),
                tool: started.tool.clone(),
                arguments: started.arguments.clone(),
            }),
            Event::CallFinished(finished) => self.0.on_event(&AgentEvent::ToolCallFinished {
                call_id: finished.call_id.clone(),
                tool: finished.tool.clone(),
                status: finished.status,
                code: finished.code.clone(),
                display: finished.display.clone(),
            }),
            _ => {}
        }
    }
}

/// An approver that says `approval_requested` before asking the one it wraps.
pub struct ObservedApprover {
    pub inner: Arc<dyn Approver>,
    pub observer: Arc<dyn Observer>,
}

impl Approver for ObservedApprover {
    fn approve<'a>(&'a self, request: ApprovalRequest<'a>) -> ApprovalFuture<'a> {
        self.observer.on_event(&AgentEvent::ApprovalRequested {
            call_id: request.call_id.clone(),
            tool: request.tool.to_owned(),
            keys: request.keys.to_vec(),
            message: request.message.to_owned(),
        });
        self.inner.approve(request)
    }
}
