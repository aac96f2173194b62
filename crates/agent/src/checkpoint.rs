//! Compaction: when even an elided request does not fit, the model writes a summary of the
//! task so far in fixed sections; it is recorded as a `checkpoint` and stands for every message
//! before its `through` in later requests. Attachments are left out of the summary request.
//! A task boundary (mark_task_done, `/done`) writes the same record with one more section
//! first, the task that was finished: the six-section completion record of seed 003.

use tackle_protocol::{ContentBlock, Message, Part, Role};

use crate::conversation::Conversation;

/// The sections every summary has, in order.
pub const SECTIONS: [&str; 5] = [
    "Task",
    "Done so far",
    "Current state",
    "Open questions",
    "Next steps",
];

/// The system prompt of a summary request.
pub const SUMMARY_SYSTEM: &str = "You write the working notes a coding agent continues from. \
Be specific: name files, commands, decisions and exact error messages.";

/// The section a completion record opens with.
pub const COMPLETED: &str = "Completed task";

/// Why a summary is asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Why {
    /// The next request would not fit the context window.
    WindowFull,
    /// The user asked to compact (chat's `/compact`).
    Requested,
    /// A task was declared finished, with this note (mark_task_done, chat's `/done`).
    TaskDone(String),
}

impl Why {
    /// The note of a task boundary.
    pub fn task_done(&self) -> Option<&str> {
        match self {
            Why::TaskDone(note) => Some(note),
            Why::WindowFull | Why::Requested => None,
        }
    }
}

/// The user text that asks for the summary.
pub fn summary_instruction(why: &Why) -> String {
    let mut headings: Vec<String> = SECTIONS.iter().map(|s| format!("## {s}")).collect();
    let reason = match why {
        Why::WindowFull => "The conversation no longer fits the context window.".to_owned(),
        Why::Requested => "The user asked to compact the conversation.".to_owned(),
        Why::TaskDone(note) => {
            headings.insert(0, format!("## {COMPLETED}"));
            format!(
                "A task was declared finished: {note}\nWrite its completion record; later turns \
                 start from it."
            )
        }
    };
    format!(
        "{reason} Summarize it so the work can continue from your summary alone, under exactly \
         these headings:\n{}",
        headings.join("\n")
    )
}

/// How a summary leads later requests.
pub fn summary_message(summary: &str) -> String {
    format!("Summary of the conversation so far (older messages were compacted):\n{summary}")
}

/// The messages of a summary request: `view` with attachments as notes, then the instruction.
pub fn summary_request(view: &[Message], why: &Why) -> Vec<Message> {
    let mut messages: Vec<Message> = view
        .iter()
        .map(|m| Message {
            role: m.role,
            content: m
                .content
                .iter()
                .filter(|p| !matches!(p, Part::Media(_)))
                .cloned()
                .map(|p| match p {
                    Part::ToolResult(mut r) => {
                        r.media.clear();
                        for block in &mut r.content {
                            if let ContentBlock::Attachment {
                                mime_type,
                                artifact,
                                ..
                            } = block
                            {
                                *block = ContentBlock::Text {
                                    text: format!("[attachment {mime_type} {artifact} left out]"),
                                };
                            }
                        }
                        Part::ToolResult(r)
                    }
                    other => other,
                })
                .collect(),
        })
        .filter(|m| !m.content.is_empty())
        .collect();
    let instruction = Part::Text {
        text: summary_instruction(why),
    };
    match messages.last_mut() {
        Some(last) if last.role == Role::User => last.content.push(instruction),
        _ => messages.push(Message {
            role: Role::User,
            content: vec![instruction],
        }),
    }
    messages
}

/// Where a checkpoint written now starts keeping messages: at the model's last turn, so the
/// request after it holds the summary, that turn and its results.
pub fn through(conversation: &Conversation) -> usize {
    conversation
        .messages
        .iter()
        .rposition(|m| m.role == Role::Assistant)
        .unwrap_or(conversation.messages.len())
}

/// Whether a summary has every section heading.
pub fn has_sections(summary: &str) -> bool {
    SECTIONS
        .iter()
        .all(|s| summary.contains(&format!("## {s}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_instruction_names_every_section_and_joins_the_last_user_message() {
        let view = vec![
            Message::user_text("task"),
            Message {
                role: Role::Assistant,
                content: vec![Part::Text { text: "ok".into() }],
            },
            Message::user_text("more"),
        ];
        let req = summary_request(&view, &Why::WindowFull);
        assert_eq!(req.len(), 3);
        let text = req[2].text();
        assert!(text.starts_with("more"));
        for s in SECTIONS {
            assert!(text.contains(&format!("## {s}")), "{text}");
        }
        assert!(has_sections(&summary_instruction(&Why::WindowFull)));
        assert!(summary_instruction(&Why::Requested).starts_with("The user asked"));
        let done = summary_instruction(&Why::TaskDone("parser fixed".into()));
        assert!(done.contains("parser fixed"), "{done}");
        assert!(done.contains(&format!("## {COMPLETED}\n## Task")), "{done}");
        assert!(has_sections(&done));
        assert!(!has_sections("## Task only"));
    }
}
