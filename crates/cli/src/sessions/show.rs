//! `tackle sessions show`: the conversation as the model had it, rebuilt from the log the way
//! a resume rebuilds it.

use std::fmt::Write as _;

use tackle_protocol::{ContentBlock, Message, Part, Role, ToolArguments};
use tackle_runtime::visible::visible;

/// How much of one tool result the text view prints.
const RESULT_PREVIEW: usize = 600;

/// The conversation as text for a person: every string the model or a tool wrote made safe to
/// show, long tool results cut with a note of how much was left out.
pub fn to_text(messages: &[Message]) -> String {
    let mut out = String::new();
    for message in messages {
        let who = match message.role {
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        let _ = writeln!(out, "── {who}");
        for part in &message.content {
            part_text(&mut out, part);
        }
    }
    out
}

/// The session's todo list as the model last saw it, after the conversation.
pub fn todo_text(list: &str) -> String {
    let mut out = String::from("\n── todo (as the model last saw it) ──\n");
    for line in list.lines() {
        out.push_str(&visible(line));
        out.push('\n');
    }
    out
}

fn part_text(out: &mut String, part: &Part) {
    match part {
        Part::Text { text } => {
            let _ = writeln!(out, "{}", visible(text));
        }
        Part::Thinking { text, .. } => {
            let _ = writeln!(out, "(thinking) {}", visible(text));
        }
        Part::ToolCall(call) => {
            let arguments = match &call.arguments {
                ToolArguments::Valid { value } => value.to_string(),
                ToolArguments::Invalid { raw, reason } => format!("{raw} (invalid: {reason})"),
            };
            let _ = writeln!(
                out,
                "→ {} {} [{}]",
                visible(&call.name),
                visible(&cut(&arguments, RESULT_PREVIEW)),
                visible(&call.id.0)
            );
        }
        Part::ToolResult(result) => {
            let mark = if result.is_error { "✗" } else { "✓" };
            let _ = writeln!(out, "{mark} result [{}]", visible(&result.call_id.0));
            for block in &result.content {
                match block {
                    ContentBlock::Text { text } => {
                        let _ = writeln!(out, "{}", visible(&cut(text, RESULT_PREVIEW)));
                    }
                    ContentBlock::Attachment {
                        mime_type,
                        bytes,
                        artifact,
                    } => {
                        let _ =
                            writeln!(out, "(attachment {mime_type}, {bytes} bytes: {artifact})");
                    }
                }
            }
        }
        Part::Media(media) => {
            let _ = writeln!(out, "(media {}: {})", media.mime_type, media.artifact);
        }
        Part::RedactedThinking { .. } | Part::Reasoning(_) | Part::ThoughtSignature { .. } => {}
    }
}

/// `text` cut at a character boundary near `limit` bytes, saying how much was left out.
fn cut(text: &str, limit: usize) -> String {
    if text.len() <= limit {
        return text.to_owned();
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} more bytes)", &text[..end], text.len() - end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tackle_protocol::{CallId, ToolCallPart, ToolResultPart};

    #[test]
    fn calls_and_results_are_shown_cut_and_safe() {
        let messages = vec![
            Message::user_text("fix \u{1b}[2Jit"),
            Message {
                role: Role::Assistant,
                content: vec![Part::ToolCall(ToolCallPart {
                    id: CallId("c1".into()),
                    name: "read_file".into(),
                    arguments: ToolArguments::Valid {
                        value: serde_json::json!({"path": "a.rs"}),
                    },
                })],
            },
            Message {
                role: Role::User,
                content: vec![Part::ToolResult(ToolResultPart {
                    call_id: CallId("c1".into()),
                    content: vec![ContentBlock::Text {
                        text: "x".repeat(2000),
                    }],
                    is_error: false,
                    media: Vec::new(),
                })],
            },
        ];
        let text = to_text(&messages);
        assert!(!text.contains('\u{1b}'), "{text}");
        assert!(
            text.contains("→ read_file {\"path\":\"a.rs\"} [c1]"),
            "{text}"
        );
        assert!(text.contains("(1400 more bytes)"), "{text}");
    }
}
