//! The loop on its own task: the chat hands it work ([`Work`]) and hears back when a run ends
//! ([`Done`]); while it runs, the [`ChatObserver`] forwards each [`AgentEvent`] as it happens,
//! with the diff a starting edit or write applies, read before the call runs.

use std::path::PathBuf;
use std::time::Instant;

use tackle_agent::{Agent, AgentEvent, Compacted, Conversation, Observer};
use tackle_protocol::{ContentBlock, Part};
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
    /// Compact the conversation now (`/compact`).
    Compact { cancel: CancellationToken, seq: u64 },
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
            Work::Todo => Done::Todo(last_todo(agent.conversation())),
            Work::Compact { cancel, seq } => Done::Compacted(seq, agent.compact(cancel).await),
        };
        if done.send(answer).is_err() {
            return;
        }
    }
}

/// The text of the newest `todo` call's result: the list as the model last saw it.
pub fn last_todo(conversation: &Conversation) -> Option<String> {
    let messages = &conversation.messages;
    let call = messages.iter().rev().find_map(|m| {
        m.tool_calls()
            .filter(|c| c.name == "todo")
            .last()
            .map(|c| c.id.clone())
    })?;
    messages.iter().rev().find_map(|m| {
        m.content.iter().find_map(|p| match p {
            Part::ToolResult(r) if r.call_id == call => Some(
                r.content
                    .iter()
                    .filter_map(|b| match b {
                        ContentBlock::Text { text } => Some(text.as_str()),
                        _ => None,
                    })
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
            _ => None,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tackle_protocol::{CallId, Message, Role, ToolArguments, ToolCallPart, ToolResultPart};

    #[test]
    fn the_todo_list_is_the_newest_todo_result() {
        let call = |id: &str, name: &str| {
            Part::ToolCall(ToolCallPart {
                id: CallId(id.into()),
                name: name.into(),
                arguments: ToolArguments::Valid {
                    value: serde_json::json!({}),
                },
            })
        };
        let result = |id: &str, text: &str| {
            Part::ToolResult(ToolResultPart {
                call_id: CallId(id.into()),
                content: vec![ContentBlock::Text { text: text.into() }],
                is_error: false,
                media: Vec::new(),
            })
        };
        let message = |role, parts| Message {
            role,
            content: parts,
        };
        let mut conversation = Conversation::default();
        assert_eq!(last_todo(&conversation), None);
        conversation.messages = vec![
            message(Role::Assistant, vec![call("a", "todo")]),
            message(Role::User, vec![result("a", "[ ] old")]),
            message(Role::Assistant, vec![call("b", "todo"), call("c", "bash")]),
            message(Role::User, vec![result("b", "[x] new"), result("c", "ls")]),
        ];
        assert_eq!(last_todo(&conversation).as_deref(), Some("[x] new"));
    }
}
