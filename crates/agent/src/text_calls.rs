//! Tool calls a model wrote as text. Small local models often answer with the call they mean as
//! a JSON object in their text (```` ```json {"name": "read_file", "arguments": {…}} ``` ````, or
//! Qwen's `<tool_call>{…}</tool_call>` when the server did not parse it) instead of a structured
//! call, and the run would end there with the call unmade.
//!
//! **Key decision:** a turn is read as tool calls only when it has no structured call and its
//! whole text is nothing but such blocks, each naming a tool the request offered with object
//! arguments. Text around a block (an explanation, an example) leaves the turn as it is: a model
//! showing what a call looks like is not making one. A recovered call is an ordinary call from
//! there on (gated, recorded, answered), and the next request shows the model its own turn as a
//! structured call.

use serde_json::Value;
use tackle_protocol::{CallId, Message, Part, StopReason, ToolArguments, ToolCallPart, ToolSpec};

/// The calls `message`'s text holds, when its whole text is tool calls; `None` otherwise.
pub fn recover(message: &Message, tools: &[ToolSpec], turn: u32) -> Option<Message> {
    if message.tool_calls().next().is_some() {
        return None;
    }
    let mut text = String::new();
    for part in &message.content {
        match part {
            Part::Text { text: t } => text.push_str(t),
            Part::Thinking { .. } | Part::RedactedThinking { .. } | Part::Reasoning(_) => {}
            _ => return None,
        }
    }
    let blocks = blocks(text.trim())?;
    let mut content: Vec<Part> = message
        .content
        .iter()
        .filter(|p| !matches!(p, Part::Text { .. }))
        .cloned()
        .collect();
    for (i, block) in blocks.iter().enumerate() {
        let (name, arguments) = call_in(block, tools)?;
        content.push(Part::ToolCall(ToolCallPart {
            id: CallId(format!("text_call_{turn}_{i}")),
            name,
            arguments: ToolArguments::Valid { value: arguments },
        }));
    }
    Some(Message {
        role: message.role,
        content,
    })
}

/// The stop reason of a turn whose calls were recovered.
pub const RECOVERED_STOP: StopReason = StopReason::ToolUse;

/// The JSON texts of `text` when it is only fenced blocks, `<tool_call>` blocks or one bare
/// object, separated by white space.
fn blocks(text: &str) -> Option<Vec<&str>> {
    if text.starts_with('{') {
        return Some(vec![text]);
    }
    let mut rest = text;
    let mut found = Vec::new();
    while !rest.is_empty() {
        let (inner, after) = if let Some(body) = rest.strip_prefix("<tool_call>") {
            body.split_once("</tool_call>")?
        } else if let Some(body) = rest.strip_prefix("```") {
            let body = body.strip_prefix("json").unwrap_or(body);
            body.split_once("```")?
        } else {
            return None;
        };
        found.push(inner.trim());
        rest = after.trim_start();
    }
    (!found.is_empty()).then_some(found)
}

/// The tool and object arguments of one block: `{"name": …, "arguments": {…}}`, the arguments
/// also as a JSON string holding an object (`parameters` is taken for `arguments`).
fn call_in(block: &str, tools: &[ToolSpec]) -> Option<(String, Value)> {
    let Value::Object(call) = serde_json::from_str::<Value>(block).ok()? else {
        return None;
    };
    let name = call.get("name")?.as_str()?;
    if !tools.iter().any(|t| t.name == name) {
        return None;
    }
    let arguments = match call.get("arguments").or_else(|| call.get("parameters")) {
        None => Value::Object(Default::default()),
        Some(Value::String(text)) => serde_json::from_str(text).ok()?,
        Some(value) => value.clone(),
    };
    let only_call_keys = call
        .keys()
        .all(|k| matches!(k.as_str(), "name" | "arguments" | "parameters"));
    (arguments.is_object() && only_call_keys).then(|| (name.to_owned(), arguments))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tools() -> Vec<ToolSpec> {
        ["read_file", "bash"]
            .iter()
            .map(|n| ToolSpec {
                name: (*n).into(),
                description: String::new(),
                input_schema: json!({"type": "object"}),
            })
            .collect()
    }

    fn calls(text: &str) -> Option<Vec<(String, Value)>> {
        let message = Message {
            role: tackle_protocol::Role::Assistant,
            content: vec![Part::Text { text: text.into() }],
        };
        let recovered = recover(&message, &tools(), 3)?;
        Some(
            recovered
                .tool_calls()
                .map(|c| match &c.arguments {
                    ToolArguments::Valid { value } => (c.name.clone(), value.clone()),
                    ToolArguments::Invalid { .. } => panic!("invalid"),
                })
                .collect(),
        )
    }

    #[test]
    fn whole_text_calls_are_recovered() {
        let read = ("read_file".to_owned(), json!({"path": "notes.txt"}));
        let cases: &[&str] = &[
            "```json\n{\"name\": \"read_file\", \"arguments\": \"{\\\"path\\\": \\\"notes.txt\\\"}\"}\n```",
            "```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"notes.txt\"}}\n```",
            "```\n{\"name\": \"read_file\", \"parameters\": {\"path\": \"notes.txt\"}}\n```",
            "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"notes.txt\"}}\n</tool_call>",
            "  {\"name\": \"read_file\", \"arguments\": {\"path\": \"notes.txt\"}}\n",
        ];
        for text in cases {
            assert_eq!(calls(text), Some(vec![read.clone()]), "{text}");
        }
        let two = "<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}</tool_call>\n\
                   <tool_call>{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}</tool_call>";
        assert_eq!(calls(two).unwrap().len(), 2);
    }

    #[test]
    fn anything_else_is_left_as_text() {
        let cases: &[&str] = &[
            "The answer is 7316.",
            // An explanation around an example is not a call.
            "Call it like this:\n```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}\n```",
            // A tool the request did not offer.
            "```json\n{\"name\": \"delete_everything\", \"arguments\": {}}\n```",
            // Arguments that are not an object, keys that are not a call's.
            "```json\n{\"name\": \"read_file\", \"arguments\": \"notes.txt\"}\n```",
            "```json\n{\"name\": \"read_file\", \"arguments\": {}, \"result\": 1}\n```",
            // Data that happens to be JSON.
            "```json\n{\"port\": 8080}\n```",
            "```json\n{\"name\": \"read_file\"",
            "",
        ];
        for text in cases {
            assert_eq!(calls(text), None, "{text}");
        }
    }
}
