//! The loop on its own task: the chat hands it work ([`Work`]) and hears back when a run ends
//! ([`Done`]); while it runs, the [`ChatObserver`] forwards each [`AgentEvent`] as it happens,
//! with the diff a starting edit or write applies, read before the call runs.

use std::path::PathBuf;
use std::time::Instant;

use tackle_agent::{Agent, AgentEvent, Compacted, Observer};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::diff::{self, Diff};

pub enum Work {
    /// Run the loop on this input until the model ends its turn.
    Run {
        input: String,
        cancel: CancellationToken,
        /// The chat's number for this run, said back in [`Done::Ran`].
        seq: u64,
    },
    /// Go on with another agent (another model, another session).
    Replace(Box<Agent>),
    /// Say what the session's todo list last was.
    Todo,
    /// Compact the conversation now (`/compact`), or, with `done`, write the completion
    /// record of the task it names (`/done`).
    Compact {
        cancel: CancellationToken,
        seq: u64,
        done: Option<String>,
    },
}

pub enum Done {
    /// The run with this number has returned (its `run_finished` event, already sent, said
    /// how it ended).
    Ran(u64),
    Todo(Option<String>),
    /// The compaction with this run number returned.
    Compacted(u64, Compacted),
}

/// One event as the chat receives it.
pub struct Update {
    pub event: AgentEvent,
    pub diff: Option<Diff>,
    pub at: Instant,
}

/// Forwards a run's events to the chat.
pub struct ChatObserver {
    pub updates: mpsc::UnboundedSender<Update>,
    pub root: PathBuf,
}

impl Observer for ChatObserver {
    fn on_event(&self, event: &AgentEvent) {
        let diff = match event {
            // Called as `call_started` is recorded, before the call runs: the file is as the
            // edit will find it.
            AgentEvent::ToolCallStarted {
                tool, arguments, ..
            } => diff::for_call(&self.root, tool, arguments),
            _ => None,
        };
        // A chat that has gone no longer listens.
        let _ = self.updates.send(Update {
            event: event.clone(),
            diff,
            at: Instant::now(),
        });
    }
}

/// Runs the agent's work in order until the chat goes.
pub async fn work(
    mut agent: Agent,
    mut inbox: mpsc::UnboundedReceiver<Work>,
    done: mpsc::UnboundedSender<Done>,
) {
    while let Some(work) = inbox.recv().await {
        let answer = match work {
            Work::Run { input, cancel, seq } => {
                agent.run(Some(&input), cancel).await;
                Done::Ran(seq)
            }
            Work::Replace(next) => {
                agent = *next;
                continue;
            }
            Work::Todo => Done::Todo(agent.conversation().last_result_text("todo")),
            Work::Compact {
                cancel,
                seq,
                done: None,
            } => Done::Compacted(seq, agent.compact(cancel).await),
            Work::Compact {
                cancel,
                seq,
                done: Some(note),
            } => Done::Compacted(seq, agent.mark_done(&note, cancel).await),
        };
        if done.send(answer).is_err() {
            return;
        }
    }
}
