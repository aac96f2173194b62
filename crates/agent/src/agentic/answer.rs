//! What the parent's model reads back: the small model's answer, then one bracketed line that
//! says who answered from what, where the raw output is (so nothing is lost: the parent can
//! page it when the answer misses something) and which session holds the subtask. The model
//! reads no metadata, so everything it needs to go on is in the text; the metadata repeats it
//! for scripts and front ends.
//!
//! A subtask that gave no answer is a tool error that says why and still names the raw
//! output; the underlying call's own failure is passed on as that failure, code and words.

use serde_json::json;
use tackle_protocol::{CallStatus, ErrorCode};
use tackle_tool::{ToolCompletion, ToolError};

use crate::agentic::reads::ChildCall;
use crate::agentic::subtasks::{Answered, Failure};

/// The code of a subtask whose small model gave no answer.
pub const SUBTASK_FAILED: ErrorCode = ErrorCode::new("subtask_failed");

/// The most raw outputs a research answer lists.
const MAX_LISTED: usize = 12;

/// The completion of a digest wrapper.
pub fn digest(wrapper: &str, call: &str, answered: Answered) -> ToolCompletion {
    let sources = answered.sources.join(", ");
    let read = match answered.parts {
        0 | 1 => String::new(),
        n => format!(", read in {n} parts"),
    };
    let mut text = format!(
        "{}\n\n[{wrapper}: answered by {} from the output of `{call}`{read}; raw output: \
         {sources} (read_file pages it); subtask session {}]\n",
        answered.answer.trim_end(),
        answered.model,
        answered.session.0,
    );
    if let Some(unread) = &answered.unread {
        text.push_str(&format!("[not read: {unread}]\n"));
    }
    ToolCompletion::single(text).with_metadata(metadata(&answered))
}

/// The completion of agentic_research: its calls are its raw outputs.
pub fn research(wrapper: &str, answered: Answered, calls: &[ChildCall]) -> ToolCompletion {
    let mut text = format!(
        "{}\n\n[{wrapper}: answered by {} after {} call(s){}; subtask session {}]\n",
        answered.answer.trim_end(),
        answered.model,
        calls.len(),
        listed(calls),
        answered.session.0,
    );
    if let Some(unread) = &answered.unread {
        text.push_str(&format!("[not read: {unread}]\n"));
    }
    let mut metadata = metadata(&answered);
    metadata["calls"] = json!(
        calls
            .iter()
            .map(|c| json!({"tool": c.tool, "target": c.target, "artifacts": c.artifacts}))
            .collect::<Vec<_>>()
    );
    ToolCompletion::single(text).with_metadata(metadata)
}

/// The wrapper's error for a subtask without an answer.
pub fn failure(wrapper: &str, failure: Failure, calls: &[ChildCall]) -> ToolError {
    match failure {
        Failure::Call(e) => ToolError {
            message: format!("{wrapper}: {}", e.message),
            ..e
        },
        Failure::Unavailable(why) => ToolError::new(
            ErrorCode::new("unavailable"),
            format!("{wrapper}: {why}; use the plain tool instead"),
        ),
        Failure::Model {
            why,
            cancelled,
            session,
            sources,
        } => {
            let raw = if sources.is_empty() {
                listed(calls)
            } else {
                format!(
                    "; the raw output is {} (read_file pages it)",
                    sources.join(", ")
                )
            };
            let code = if cancelled {
                ErrorCode::CANCELLED
            } else {
                SUBTASK_FAILED
            };
            ToolError::new(
                code,
                format!(
                    "{wrapper}: no answer: {why}{raw}; subtask session {}",
                    session.0
                ),
            )
            .with_metadata(json!({"subtask_session": session.0, "sources": sources}))
        }
    }
}

/// `; raw outputs: …` for the calls that retained output or named a file.
fn listed(calls: &[ChildCall]) -> String {
    let named: Vec<String> = calls
        .iter()
        .filter(|c| c.status == CallStatus::Ok)
        .filter_map(|c| match (c.artifacts.first(), &c.target) {
            (Some(a), Some(t)) => Some(format!("{} {t} → {a}", c.tool)),
            (Some(a), None) => Some(format!("{} → {a}", c.tool)),
            (None, Some(t)) => Some(format!("{} {t}", c.tool)),
            (None, None) => None,
        })
        .collect();
    if named.is_empty() {
        return String::new();
    }
    let more = named.len().saturating_sub(MAX_LISTED);
    let mut out = format!(
        "; raw outputs: {}",
        named
            .into_iter()
            .take(MAX_LISTED)
            .collect::<Vec<_>>()
            .join(", ")
    );
    if more > 0 {
        out.push_str(&format!(" and {more} more (in the subtask session)"));
    }
    out
}

fn metadata(answered: &Answered) -> serde_json::Value {
    json!({
        "subtask_session": answered.session.0,
        "model": answered.model,
        "sources": answered.sources,
        "parts": answered.parts,
        "bulk_bytes": answered.bulk_bytes,
        "unread": answered.unread,
        "usage": answered.usage,
        "cost_usd": answered.cost_usd,
    })
}
