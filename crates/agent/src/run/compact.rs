//! Compaction as the loop does it: a summary request without tools, recorded as a
//! `checkpoint` before the conversation uses it. The loop compacts when a request would not
//! fit and after a batch in which the model marked a task done; a front end compacts on the
//! user's request through [`Agent::compact`] and marks a task done through
//! [`Agent::mark_done`].

use std::time::Instant;

use tackle_llm::{ErrorKind, ToolChoice, TurnRequest};
use tackle_protocol::{Checkpoint, Event, Role, RunOutcome};
use tokio_util::sync::CancellationToken;

use super::Agent;
use super::ending::{Ended, bounded};
use super::overflow::{Refused, TooLong};
use crate::bounds::Spent;
use crate::checkpoint::{self, Why};
use crate::context;
use crate::error::AgentError;
use crate::events::AgentEvent;
use crate::record::now_ms;
use crate::turn::{self, Streamed};

/// What compacting on request did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Compacted {
    /// A checkpoint now stands for the conversation's first `through` messages.
    Written { through: usize },
    /// Nothing before the model's last turn that a summary does not already stand for.
    Nothing,
    /// No summary was written, for this reason (cancelled, the provider failed); the
    /// conversation is as it was.
    Failed(String),
}

impl Agent {
    /// Compacts now, between runs: the model summarises everything before its last turn, and
    /// later requests start from that summary. Recorded like the loop's own checkpoints, so
    /// a resumed session starts from it too.
    pub async fn compact(&mut self, cancel: CancellationToken) -> Compacted {
        self.compact_for(Why::Requested, cancel).await
    }

    /// The user declares a task finished (chat's `/done`): the completion record is written
    /// now, as mark_task_done would have it written, whether or not that tool is offered.
    pub async fn mark_done(&mut self, note: &str, cancel: CancellationToken) -> Compacted {
        self.compact_for(Why::TaskDone(note.to_owned()), cancel)
            .await
    }

    async fn compact_for(&mut self, why: Why, cancel: CancellationToken) -> Compacted {
        let through = checkpoint::through(&self.conversation);
        let covered = self
            .conversation
            .checkpoint
            .as_ref()
            .map_or(0, |c| c.through);
        let has_turn = self
            .conversation
            .messages
            .iter()
            .any(|m| m.role == Role::Assistant);
        if !has_turn || through <= covered {
            return Compacted::Nothing;
        }
        let turn = self.conversation.turns;
        let mut spent = Spent::default();
        match self
            .write_checkpoint(why, turn, &cancel, &mut spent, None)
            .await
        {
            Ok(None) => Compacted::Written { through },
            Ok(Some(ended)) => Compacted::Failed(ended.reason),
            Err(e) => Compacted::Failed(e.to_string()),
        }
    }

    /// Writes a compaction checkpoint; `Some` when the run ends instead.
    pub(super) async fn write_checkpoint(
        &mut self,
        why: Why,
        turn: u32,
        cancel: &CancellationToken,
        spent: &mut Spent,
        deadline: Option<Instant>,
    ) -> Result<Option<Ended>, AgentError> {
        let through = checkpoint::through(&self.conversation);
        let fixed = context::estimate_fixed(checkpoint::SUMMARY_SYSTEM, &[]);
        let view = context::view(
            &self.conversation,
            fixed,
            self.window.prompt(),
            self.calibration,
        );
        let mut request = TurnRequest::new(
            self.setup.model.model.clone(),
            checkpoint::summary_request(&view.messages, &why),
            self.window.output,
        );
        request.system = Some(checkpoint::SUMMARY_SYSTEM.to_owned());
        request.tool_choice = ToolChoice::None;
        let summary_cancel = cancel.child_token();
        let (streamed, late) = bounded(
            turn::stream(
                self.setup.provider.as_ref(),
                &request,
                &summary_cancel,
                self.setup.observer.as_ref(),
                None,
            ),
            deadline,
            &summary_cancel,
        )
        .await;
        let answered = match streamed {
            Streamed::Complete(t) => t,
            Streamed::Cancelled { .. } => {
                return Ok(Some(self.stopped(late, "the compaction summary")));
            }
            Streamed::Failed(e) if e.kind == ErrorKind::ContextTooLong => {
                let refused = Refused::of(&e);
                if self
                    .window
                    .learn(refused.sizes, self.setup.model.max_tokens)
                {
                    self.refit();
                }
                return Ok(Some(self.too_long(&TooLong::Summary(refused))));
            }
            Streamed::Failed(e) => {
                return Ok(Some(Ended::new(
                    RunOutcome::ProviderFailed,
                    format!("writing the compaction summary: {e}"),
                )));
            }
        };
        let record = Checkpoint {
            through,
            summary: answered.message.text(),
            usage: answered.usage,
            task_done: why.task_done().map(str::to_owned),
            at_ms: now_ms(),
        };
        self.append(Event::Checkpoint(record.clone())).await?;
        self.conversation.push_checkpoint(&record);
        self.spend(spent, &answered.usage, turn);
        self.setup.observer.on_event(&AgentEvent::Checkpoint {
            turn,
            through,
            task_done: record.task_done.clone(),
        });
        Ok(None)
    }
}
