//! `mark_task_done` (seed 003, "Optional lifecycle tools"): the model declares a task boundary
//! with a short note; between turns the loop writes a completion checkpoint (a summary in
//! fixed sections, recorded in the session log) and later requests start from it.
//!
//! The tool only records the request in [`TaskBoundaries`], keyed by session; the loop takes
//! it after the batch ([`TaskBoundaries::take`]). So the checkpoint fires once between turns
//! however often the tool was called, and the newest note wins. A second call before the
//! checkpoint is written says plainly that the boundary is already recorded and that repeating
//! does nothing, with the reserved `no_op` key set (which the watchdog reads). It is not an
//! error: an error would read as "the task did not get marked" and invite the retry that is
//! the loop.
//!
//! Withheld by `--checkpoint=operator` (config `checkpoint.mode`): the front end leaves the
//! tool out of the catalog; the user's `/done` ([`crate::Agent::mark_done`]) and compaction
//! keep working.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tackle_protocol::SessionId;
use tackle_tool::protocol::{Concurrency, ErrorCode, Truncation};
use tackle_tool::{
    ExecuteContext, PrepareContext, Prepared, Routing, Tool, ToolCompletion, ToolError,
};

/// The tool's name.
pub const NAME: &str = "mark_task_done";

/// The longest note the tool takes, in bytes: a short description, not a report.
pub const MAX_NOTE_BYTES: usize = 4096;

/// Task boundaries the model asked for and the loop has not yet written, by session.
#[derive(Default)]
pub struct TaskBoundaries {
    pending: Mutex<HashMap<SessionId, String>>,
}

impl TaskBoundaries {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Records `note` for `session`; true when a boundary was already pending (the call is a
    /// repeat, and the newest note replaces the older one).
    pub fn request(&self, session: &SessionId, note: String) -> bool {
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        pending.insert(session.clone(), note).is_some()
    }

    /// The boundary pending for `session`, if any, cleared.
    pub fn take(&self, session: &SessionId) -> Option<String> {
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        pending.remove(session)
    }
}

/// The note of the last successful mark_task_done call in `batch`, from the calls of the model
/// turn it answers: how a resumed session finds a boundary its last process did not write.
pub fn requested_in(
    batch: &tackle_protocol::ToolBatchFinished,
    calls: &[tackle_protocol::ToolCallPart],
) -> Option<String> {
    batch
        .results
        .iter()
        .rev()
        .filter(|r| r.tool == NAME && r.status == tackle_protocol::CallStatus::Ok)
        .find_map(|r| {
            let call = calls.iter().find(|c| c.id == r.result.call_id)?;
            match &call.arguments {
                tackle_protocol::ToolArguments::Valid { value } => {
                    Some(value.get("task")?.as_str()?.trim().to_owned())
                }
                tackle_protocol::ToolArguments::Invalid { .. } => None,
            }
        })
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MarkTaskDoneArgs {
    /// One or two sentences: what was finished.
    pub task: String,
}

/// The tool; its clones share one [`TaskBoundaries`] with the loop that reads it.
pub struct MarkTaskDone {
    boundaries: Arc<TaskBoundaries>,
}

impl MarkTaskDone {
    pub fn new(boundaries: Arc<TaskBoundaries>) -> Self {
        Self { boundaries }
    }
}

impl Tool for MarkTaskDone {
    type Args = MarkTaskDoneArgs;
    type Plan = String;

    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> Cow<'static, str> {
        Cow::Borrowed(
            "Declare that a task is finished, with a one- or two-sentence note of what was done. \
             Call it once, at a real task boundary (the change is made and checked), not after \
             every step. Before your next turn tackle writes a summary of the work so far and \
             later turns start from it, so older messages and tool output are no longer sent. \
             Calling it again before then changes nothing.",
        )
    }

    fn concurrency(&self) -> Concurrency {
        Concurrency::Parallel
    }

    fn read_only(&self) -> bool {
        // Changes only what the session's next request holds, never the project.
        true
    }

    fn truncation(&self) -> Truncation {
        Truncation::OptOut
    }

    fn prepare(
        &self,
        args: MarkTaskDoneArgs,
        _: &PrepareContext<'_>,
    ) -> Result<Prepared<String>, ToolError> {
        let note = args.task.trim();
        if note.is_empty() {
            return Err(ToolError::new(
                ErrorCode::INVALID_ARGUMENTS,
                "mark_task_done: `task` is empty; say in a sentence what was finished",
            ));
        }
        if note.len() > MAX_NOTE_BYTES {
            return Err(ToolError::new(
                ErrorCode::INVALID_ARGUMENTS,
                format!(
                    "mark_task_done: `task` is {} bytes; keep it under {MAX_NOTE_BYTES} (a short \
                     note, not a report: the summary is written for you)",
                    note.len()
                ),
            ));
        }
        Ok(Prepared::new(
            Routing {
                resources: Vec::new(),
            },
            note.to_owned(),
        ))
    }

    async fn execute(&self, note: String, cx: ExecuteContext) -> Result<ToolCompletion, ToolError> {
        let repeat = self.boundaries.request(&cx.session, note);
        let (text, metadata) = if repeat {
            (
                "mark_task_done: already recorded for this turn; the checkpoint is written once \
                 before your next turn, and repeating this call does nothing further.",
                json!({"recorded": false, "no_op": true}),
            )
        } else {
            (
                "mark_task_done: recorded. Before your next turn the work so far is summarized \
                 and later turns start from that summary. Go on with the next task, or end your \
                 turn if there is none.",
                json!({"recorded": true}),
            )
        };
        Ok(ToolCompletion::single(text).with_metadata(metadata))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_request_before_the_take_is_a_repeat_and_the_newest_note_wins() {
        let b = TaskBoundaries::new();
        let one = SessionId("s1".into());
        let two = SessionId("s2".into());
        assert!(!b.request(&one, "first".into()));
        assert!(b.request(&one, "second".into()));
        assert!(!b.request(&two, "other session".into()));
        assert_eq!(b.take(&one).as_deref(), Some("second"));
        assert_eq!(b.take(&one), None);
        assert_eq!(b.take(&two).as_deref(), Some("other session"));
    }
}
