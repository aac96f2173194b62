//! The Responses request body, built from the neutral conversation.
//!
//! Responses' rules: the system prompt is `instructions`; the conversation is a flat list of
//! `input` items in the order the parts were produced — `message` items (user `input_text`,
//! assistant `output_text`), `function_call {call_id, name, arguments}` and
//! `function_call_output {call_id, output}`, paired by `call_id`, never by item id; a user
//! message's tool outputs come first, so each follows its call, and its text after them. Tools are
//! flat (`{type, name, description, parameters, strict}`, no nested `function`), and `strict` is
//! always sent, since servers disagree on its default. Reasoning items are replayed with their
//! summary and encrypted content but without their `rs_…` id: under `store: false` a replayed
//! id is a 404. A reasoning item without encrypted content, and thinking from other families,
//! is dropped. Attachments travel as notes until media delivery lands.

use serde_json::{Value, json};
use tackle_protocol::{
    ContentBlock, MediaPart, Message, Part, ReasoningPart, Role, ToolResultPart,
};

use super::OpenAiResponsesConfig;
use crate::media::{MediaKind, data_url, file_name};
use crate::media_note::attachment_note;
use crate::request::{ToolChoice, TurnRequest};
use crate::schema::{object_root, openai_strict};
use crate::tool_names::ToolNameMap;

/// The JSON body of `POST {base}/responses` (streaming).
pub fn request_body(
    config: &OpenAiResponsesConfig,
    request: &TurnRequest,
    names: &ToolNameMap,
) -> Value {
    let mut input = Vec::new();
    for message in &request.messages {
        lower(message, names, &mut input);
    }
    let mut body = json!({
        "model": request.model,
        "stream": true,
        "store": false,
        "input": input,
        "max_output_tokens": request.max_tokens,
    });
    if let Some(system) = request.system.as_deref().filter(|s| !s.is_empty()) {
        body["instructions"] = json!(system);
    }
    if config.include_reasoning {
        body["include"] = json!(["reasoning.encrypted_content"]);
    }
    if let Some(budget) = request.thinking_budget {
        body["reasoning"] = json!({"effort": effort(budget), "summary": "auto"});
    }
    if let Some(t) = request.temperature {
        body["temperature"] = json!(t);
    }
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|spec| {
                let parameters = if config.strict_tools {
                    openai_strict(&spec.input_schema)
                } else {
                    object_root(&spec.input_schema)
                };
                json!({
                    "type": "function",
                    "name": names.wire(&spec.name),
                    "description": spec.description,
                    "parameters": parameters,
                    "strict": config.strict_tools,
                })
            })
            .collect();
        body["tools"] = Value::Array(tools);
        body["tool_choice"] = match &request.tool_choice {
            ToolChoice::Auto => json!("auto"),
            ToolChoice::None => json!("none"),
            ToolChoice::Required => json!("required"),
            ToolChoice::Tool(name) => json!({"type": "function", "name": names.wire(name)}),
        };
        body["parallel_tool_calls"] = json!(true);
    }
    body
}

/// Responses takes a reasoning effort, not a budget: the budget picks the nearest level.
fn effort(budget: u32) -> &'static str {
    match budget {
        0..=2048 => "low",
        2049..=16384 => "medium",
        _ => "high",
    }
}

fn lower(message: &Message, names: &ToolNameMap, out: &mut Vec<Value>) {
    match message.role {
        Role::User => lower_user(message, out),
        Role::Assistant => lower_assistant(message, names, out),
    }
}

/// Tool outputs first, so each follows its call directly, then the user's text as one message.
fn lower_user(message: &Message, out: &mut Vec<Value>) {
    let mut texts = Vec::new();
    for part in &message.content {
        match part {
            Part::ToolResult(result) => out.push(tool_output(result)),
            Part::Text { text } if !text.is_empty() => {
                texts.push(json!({"type": "input_text", "text": text}));
            }
            Part::Media(media) => texts.push(input_media(media)),
            _ => {}
        }
    }
    if !texts.is_empty() {
        out.push(json!({"type": "message", "role": "user", "content": texts}));
    }
}

/// Items in the order the model produced them; consecutive text parts share one message.
fn lower_assistant(message: &Message, names: &ToolNameMap, out: &mut Vec<Value>) {
    let mut texts: Vec<Value> = Vec::new();
    let flush = |texts: &mut Vec<Value>, out: &mut Vec<Value>| {
        if !texts.is_empty() {
            out.push(
                json!({"type": "message", "role": "assistant", "content": std::mem::take(texts)}),
            );
        }
    };
    for part in &message.content {
        match part {
            Part::Text { text } if !text.is_empty() => {
                texts.push(json!({"type": "output_text", "text": text}));
            }
            Part::ToolCall(call) => {
                flush(&mut texts, out);
                out.push(json!({
                    "type": "function_call",
                    "call_id": call.id.0,
                    "name": names.wire(&call.name),
                    "arguments": call.arguments.to_wire_string(),
                }));
            }
            Part::Reasoning(reasoning) => {
                if let Some(item) = reasoning_item(reasoning) {
                    flush(&mut texts, out);
                    out.push(item);
                }
            }
            _ => {}
        }
    }
    flush(&mut texts, out);
}

fn reasoning_item(reasoning: &ReasoningPart) -> Option<Value> {
    let encrypted = reasoning.encrypted_content.as_deref()?;
    let summary: Vec<Value> = reasoning
        .summary
        .iter()
        .map(|text| json!({"type": "summary_text", "text": text}))
        .collect();
    Some(json!({"type": "reasoning", "summary": summary, "encrypted_content": encrypted}))
}

/// A result's output: its text as one string, or, when media was delivered into it, a list
/// of the text followed by the media (Responses takes images and files in tool output).
fn tool_output(result: &ToolResultPart) -> Value {
    let text: Vec<String> = result
        .content
        .iter()
        .map(|block| match block {
            ContentBlock::Text { text } => text.clone(),
            ContentBlock::Attachment { .. } => attachment_note(block),
        })
        .collect();
    let output = if result.media.is_empty() {
        json!(text.join("\n"))
    } else {
        let mut items = vec![json!({"type": "input_text", "text": text.join("\n")})];
        items.extend(result.media.iter().map(input_media));
        Value::Array(items)
    };
    json!({
        "type": "function_call_output",
        "call_id": result.call_id.0,
        "output": output,
    })
}

/// Images as `input_image`, PDFs as `input_file`, inline `data:` URLs; other kinds have no
/// place in this family's matrix and are described.
fn input_media(media: &MediaPart) -> Value {
    match MediaKind::of_mime(&media.mime_type) {
        Some(MediaKind::Image) => json!({"type": "input_image", "image_url": data_url(media)}),
        Some(MediaKind::Pdf) => json!({
            "type": "input_file",
            "filename": file_name(media),
            "file_data": data_url(media),
        }),
        _ => json!({
            "type": "input_text",
            "text": format!("[{} kept as {}; Responses cannot take it]", media.mime_type, media.artifact),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_pick_the_nearest_effort() {
        let cases = [
            (0, "low"),
            (2048, "low"),
            (2049, "medium"),
            (16384, "medium"),
            (16385, "high"),
        ];
        for (budget, want) in cases {
            assert_eq!(effort(budget), want, "{budget}");
        }
    }

    #[test]
    fn reasoning_without_encrypted_content_and_foreign_thinking_are_dropped() {
        let request = TurnRequest::new(
            "gpt-5",
            vec![Message {
                role: Role::Assistant,
                content: vec![
                    Part::Thinking {
                        text: "anthropic thinking".into(),
                        signature: Some("sig".into()),
                    },
                    Part::Reasoning(ReasoningPart {
                        id: "rs_1".into(),
                        summary: vec!["plain".into()],
                        encrypted_content: None,
                    }),
                    Part::Reasoning(ReasoningPart {
                        id: "rs_2".into(),
                        summary: vec!["kept".into()],
                        encrypted_content: Some("gAAA".into()),
                    }),
                    Part::Text {
                        text: "done".into(),
                    },
                ],
            }],
            64,
        );
        let body = request_body(
            &OpenAiResponsesConfig::compatible("local", "http://127.0.0.1:1/v1"),
            &request,
            &ToolNameMap::default(),
        );
        assert_eq!(
            body["input"],
            json!([
                {"type": "reasoning", "summary": [{"type": "summary_text", "text": "kept"}], "encrypted_content": "gAAA"},
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]}
            ])
        );
        assert!(!body.to_string().contains("rs_2"), "ids are never replayed");
        assert!(body.get("include").is_none());
    }
}
