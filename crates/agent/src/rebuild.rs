//! The session log → the exact conversation. Records the runtime writes (`call_*`) and kinds
//! this version does not know are skipped; an agent record that does not parse is an error
//! naming its seq, never silently dropped.
//!
//! A batch the process stopped in (a `tool_batch_started` without its `tool_batch_finished`,
//! or a model turn whose calls were never handed over) comes back as [`Rebuilt::interrupted`]:
//! results for the model that say what happened to each call, from the `call_finished`
//! records that follow the batch's start. A call without one is reported as interrupted and is
//! never run again.

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::path::Path;

use tackle_protocol::{
    BatchResult, CallFinished, CallId, CallStatus, ContentBlock, ErrorCode, Event,
    ToolBatchFinished, ToolBatchStarted, ToolCallPart, ToolResultPart,
};
use tackle_store::EventLog;

use crate::conversation::Conversation;
use crate::error::AgentError;
use crate::record::now_ms;

/// The code of a result for a call that tackle stopped in.
pub const INTERRUPTED: ErrorCode = ErrorCode::new("interrupted");

/// A session's conversation, and the results owed for a batch it stopped in.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rebuilt {
    pub conversation: Conversation,
    /// To be recorded (and applied) before the conversation goes on.
    pub interrupted: Option<ToolBatchFinished>,
    /// The latest `run_started`'s model (`provider:model`).
    pub model: Option<String>,
    /// Whether the log holds any agent record (a session `tackle call` made holds none).
    pub is_agent_session: bool,
    /// A task boundary the model marked (mark_task_done) whose completion record the last
    /// process did not write: the loop writes it before its next request.
    pub task_done: Option<String>,
    /// The watchdog's counts over the recorded batches (its settings are the caller's).
    pub watchdog: crate::watchdog::Watchdog,
    /// The wake an autonomous run was waiting for when its process stopped: the log's last
    /// `wake_pending` with no `wake_ended`, input or run after it.
    pub pending_wake: Option<tackle_protocol::WakePending>,
    /// Calls of the batch the process stopped in that were waiting for a person's approval
    /// (`approval_asked`, no `call_finished`): they never ran, and the model is told to call
    /// them again to be asked again.
    pub awaiting_approval: Vec<CallId>,
}

/// Reads the log at `path` and rebuilds its conversation.
pub fn rebuild(path: &Path) -> Result<Rebuilt, AgentError> {
    let mut out = Rebuilt::default();
    let mut open: Option<(ToolBatchStarted, HashMap<CallId, CallFinished>)> = None;
    let mut failure = None;
    EventLog::visit_records(path, |record| {
        let kind = record
            .event
            .get("type")
            .and_then(|t| t.as_str())
            .unwrap_or("")
            .to_owned();
        if !is_agent_kind(&kind) && kind != "call_finished" && kind != "approval_asked" {
            return ControlFlow::Continue(());
        }
        let event = match serde_json::from_value::<Event>(record.event) {
            Ok(e) => e,
            Err(e) => {
                failure = Some(AgentError::BadRecord {
                    path: path.to_path_buf(),
                    seq: record.seq,
                    kind,
                    problem: e.to_string(),
                });
                return ControlFlow::Break(());
            }
        };
        if kind != "call_finished" && kind != "approval_asked" {
            out.is_agent_session = true;
        }
        apply(&mut out, &mut open, event);
        ControlFlow::Continue(())
    })
    .map_err(|source| AgentError::Log {
        path: path.to_path_buf(),
        source,
    })?;
    if let Some(e) = failure {
        return Err(e);
    }
    let calls = out.conversation.unanswered_calls();
    if !calls.is_empty() {
        let (turn, finished) = match open {
            Some((started, finished)) => (started.turn, finished),
            None => (out.conversation.turns, HashMap::new()),
        };
        out.awaiting_approval
            .retain(|id| calls.iter().any(|c| &c.id == id) && !finished.contains_key(id));
        out.interrupted = Some(interrupted(turn, &calls, &finished, &out.awaiting_approval));
    }
    Ok(out)
}

fn is_agent_kind(kind: &str) -> bool {
    matches!(
        kind,
        "user_input"
            | "run_started"
            | "model_turn"
            | "model_turn_cancelled"
            | "tool_batch_started"
            | "tool_batch_finished"
            | "checkpoint"
            | "run_finished"
            | "wake_pending"
            | "wake_ended"
            | "message_consumed"
    )
}

fn apply(
    out: &mut Rebuilt,
    open: &mut Option<(ToolBatchStarted, HashMap<CallId, CallFinished>)>,
    event: Event,
) {
    let conversation = &mut out.conversation;
    match event {
        Event::UserInput(input) => {
            out.pending_wake = None;
            conversation.push_user(&input.text)
        }
        Event::RunStarted(run) => {
            out.pending_wake = None;
            out.model = Some(run.model)
        }
        Event::WakePending(pending) => out.pending_wake = Some(pending),
        Event::WakeEnded(_) => out.pending_wake = None,
        Event::MessageConsumed(message) => {
            out.pending_wake = None;
            conversation.push_user(&message.text)
        }
        Event::ModelTurn(turn) => {
            out.task_done = None;
            conversation.push_turn(&turn);
        }
        Event::ModelTurnCancelled(cancelled) => {
            conversation.turns = conversation.turns.max(cancelled.turn)
        }
        Event::ToolBatchStarted(started) => {
            out.awaiting_approval.clear();
            *open = Some((started, HashMap::new()))
        }
        Event::ApprovalAsked(asked)
            if open
                .as_ref()
                .is_some_and(|(started, _)| started.calls.contains(&asked.call_id)) =>
        {
            out.awaiting_approval.push(asked.call_id);
        }
        Event::CallFinished(finished) => {
            if let Some((started, seen)) = open.as_mut()
                && started.calls.contains(&finished.call_id)
            {
                seen.insert(finished.call_id.clone(), finished);
            }
        }
        Event::ToolBatchFinished(batch) => {
            *open = None;
            out.awaiting_approval.clear();
            if let Some(note) =
                crate::task_done::requested_in(&batch, &conversation.unanswered_calls())
            {
                out.task_done = Some(note);
            }
            if let Some(turn) = conversation.messages.last() {
                out.watchdog.observe(&turn.clone(), &mut batch.clone());
            }
            conversation.push_results(&batch);
        }
        Event::Checkpoint(checkpoint) => {
            out.task_done = None;
            conversation.push_checkpoint(&checkpoint);
        }
        _ => {}
    }
}

/// The results owed for `calls`, from what the log says happened to each.
pub fn interrupted(
    turn: u32,
    calls: &[ToolCallPart],
    finished: &HashMap<CallId, CallFinished>,
    awaiting_approval: &[CallId],
) -> ToolBatchFinished {
    let results = calls
        .iter()
        .map(|call| match finished.get(&call.id) {
            None if awaiting_approval.contains(&call.id) => never_finished(
                call,
                "this call was waiting for the user's approval when tackle stopped, so it never \
                 ran. Call it again if it is still needed: the user will be asked again.",
            ),
            Some(f) => {
                let artifacts: Vec<String> = f
                    .retained_output
                    .iter()
                    .map(|o| o.artifact.clone())
                    .collect();
                let where_ = if artifacts.is_empty() {
                    "it retained no output".to_owned()
                } else {
                    format!(
                        "its output is retained at {} (read it with read_file)",
                        artifacts.join(", ")
                    )
                };
                let text = format!(
                    "{}: this call ran and ended `{}`{}, but tackle stopped before its result was \
                     delivered; {where_}. It was not run again.",
                    call.name,
                    status_name(f.status),
                    f.code
                        .as_ref()
                        .map(|c| format!(" ({c})"))
                        .unwrap_or_default()
                );
                BatchResult {
                    tool: call.name.clone(),
                    status: f.status,
                    code: f.code.clone(),
                    result: part(&call.id, text, f.status != CallStatus::Ok),
                    artifacts,
                    no_op: false,
                }
            }
            None => never_finished(
                call,
                "interrupted: tackle stopped before this call finished, and it was not run \
                 again. Check whether it took effect before repeating it.",
            ),
        })
        .collect();
    ToolBatchFinished {
        turn,
        results,
        notes: Vec::new(),
        cancelled: false,
        interrupted: true,
        at_ms: now_ms(),
    }
}

/// The result of a call with no `call_finished`: cancelled, `interrupted`, `why` said.
fn never_finished(call: &ToolCallPart, why: &str) -> BatchResult {
    BatchResult {
        tool: call.name.clone(),
        status: CallStatus::Cancelled,
        code: Some(INTERRUPTED),
        result: part(&call.id, format!("{}: {why}", call.name), true),
        artifacts: Vec::new(),
        no_op: false,
    }
}

fn part(id: &CallId, text: String, is_error: bool) -> ToolResultPart {
    ToolResultPart {
        call_id: id.clone(),
        content: vec![ContentBlock::Text { text }],
        is_error,
        media: Vec::new(),
    }
}

pub(crate) fn status_name(status: CallStatus) -> &'static str {
    match status {
        CallStatus::Ok => "ok",
        CallStatus::Error => "error",
        CallStatus::Denied => "denied",
        CallStatus::TimedOut => "timed_out",
        CallStatus::Cancelled => "cancelled",
    }
}
