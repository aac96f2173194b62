//! The conversation a session holds, built by applying its records in order. The live loop
//! and [`crate::rebuild`] apply the same records through the same functions, so a rebuilt
//! conversation is the live one by construction.

use std::collections::HashMap;

use tackle_protocol::{Checkpoint, Message, ModelTurn, Part, Role, ToolBatchFinished, Usage};

/// The latest compaction checkpoint: its summary stands for the messages before `through`.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckpointMark {
    pub through: usize,
    pub summary: String,
}

/// Every message of the session, with what later requests need to know about them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Conversation {
    pub messages: Vec<Message>,
    pub checkpoint: Option<CheckpointMark>,
    /// The retained output of each tool result, by (message, part).
    artifacts: HashMap<(usize, usize), Vec<String>>,
    /// Model turns recorded.
    pub turns: u32,
    /// Model requests answered (turns and checkpoint summaries): how far a scripted provider
    /// has been played.
    pub answered: usize,
    /// Every token the session's turns and summaries used.
    pub usage: Usage,
    /// Instruction files already sent, relative to the root.
    pub instructions_sent: Vec<String>,
}

impl Conversation {
    /// User text: appended to the last message when that is the user's (tool results, or
    /// input queued behind them), so roles alternate as every family requires.
    pub fn push_user(&mut self, text: &str) {
        let part = Part::Text {
            text: text.to_owned(),
        };
        match self.messages.last_mut() {
            Some(last) if last.role == Role::User => last.content.push(part),
            _ => self.messages.push(Message {
                role: Role::User,
                content: vec![part],
            }),
        }
    }

    pub fn push_turn(&mut self, turn: &ModelTurn) {
        self.messages.push(turn.message.clone());
        self.turns = self.turns.max(turn.turn);
        self.answered += 1;
        add_usage(&mut self.usage, &turn.usage);
    }

    pub fn push_results(&mut self, batch: &ToolBatchFinished) {
        let index = self.messages.len();
        let mut content = Vec::new();
        for (pi, result) in batch.results.iter().enumerate() {
            content.push(Part::ToolResult(result.result.clone()));
            if !result.artifacts.is_empty() {
                self.artifacts.insert((index, pi), result.artifacts.clone());
            }
        }
        for note in &batch.notes {
            content.push(Part::Text {
                text: instruction_text(&note.path, &note.text),
            });
            self.instructions_sent.push(note.path.clone());
        }
        self.messages.push(Message {
            role: Role::User,
            content,
        });
    }

    pub fn push_checkpoint(&mut self, checkpoint: &Checkpoint) {
        self.checkpoint = Some(CheckpointMark {
            through: checkpoint.through.min(self.messages.len()),
            summary: checkpoint.summary.clone(),
        });
        self.answered += 1;
        add_usage(&mut self.usage, &checkpoint.usage);
    }

    /// The retained output behind the tool result at (message, part).
    pub fn artifacts_of(&self, message: usize, part: usize) -> &[String] {
        self.artifacts
            .get(&(message, part))
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// The text of the last assistant message, if it has any.
    pub fn last_assistant_text(&self) -> Option<String> {
        self.messages
            .iter()
            .rev()
            .find(|m| m.role == Role::Assistant)
            .map(Message::text)
            .filter(|t| !t.is_empty())
    }

    /// The calls of the last message when it is the model's and none has a result yet.
    pub fn unanswered_calls(&self) -> Vec<tackle_protocol::ToolCallPart> {
        match self.messages.last() {
            Some(m) if m.role == Role::Assistant => m.tool_calls().cloned().collect(),
            _ => Vec::new(),
        }
    }
}

/// How an instruction file is shown to the model.
pub fn instruction_text(path: &str, text: &str) -> String {
    format!("Project instructions from {path}:\n{text}")
}

pub(crate) fn add_usage(total: &mut Usage, usage: &Usage) {
    total.input_tokens += usage.input_tokens;
    total.output_tokens += usage.output_tokens;
    total.cache_read_tokens += usage.cache_read_tokens;
    total.cache_write_tokens += usage.cache_write_tokens;
    if let Some(r) = usage.reasoning_tokens {
        *total.reasoning_tokens.get_or_insert(0) += r;
    }
}

impl Conversation {
    /// The text of the newest result of a `tool` call, as the model was shown it: for the todo
    /// tool, the list as the model last saw it.
    pub fn last_result_text(&self, tool: &str) -> Option<String> {
        use tackle_protocol::ContentBlock;
        let call = self.messages.iter().rev().find_map(|m| {
            m.tool_calls()
                .filter(|c| c.name == tool)
                .last()
                .map(|c| c.id.clone())
        })?;
        self.messages.iter().rev().find_map(|m| {
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
}

/// Text blocks of a result as one string (attachments as their references).
#[cfg(test)]
pub(crate) fn result_text(content: &[tackle_protocol::ContentBlock]) -> String {
    use tackle_protocol::ContentBlock;
    content
        .iter()
        .map(|b| match b {
            ContentBlock::Text { text } => text.clone(),
            ContentBlock::Attachment {
                mime_type,
                artifact,
                ..
            } => format!("[attachment {mime_type} {artifact}]"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_result_of_a_tool_is_its_newest_calls() {
        use tackle_protocol::{
            CallId, ContentBlock, Message, Role, ToolArguments, ToolCallPart, ToolResultPart,
        };
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
        assert_eq!(conversation.last_result_text("todo"), None);
        conversation.messages = vec![
            message(Role::Assistant, vec![call("a", "todo")]),
            message(Role::User, vec![result("a", "[ ] old")]),
            message(Role::Assistant, vec![call("b", "todo"), call("c", "bash")]),
            message(Role::User, vec![result("b", "[x] new"), result("c", "ls")]),
        ];
        assert_eq!(
            conversation.last_result_text("todo").as_deref(),
            Some("[x] new")
        );
        assert_eq!(conversation.last_result_text("bash").as_deref(), Some("ls"));
    }
}
