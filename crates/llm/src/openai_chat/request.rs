//! The Chat Completions request body, built from the neutral conversation.
//!
//! Chat's rules: the system prompt is the first message; an assistant message carries its text
//! and `tool_calls` together and is followed only by one `tool` message per call, so a user
//! message's tool results become those `tool` messages and its text a user message after them;
//! `arguments` is a JSON string (`"{}"` for empty, the raw text for invalid arguments). Tool
//! messages take text only, so attachments travel as notes. Thinking is not replayed: Chat has
//! no field for it.

use serde_json::{Value, json};
use tackle_protocol::{ContentBlock, MediaPart, Message, Part, Role, ToolCallPart, ToolResultPart};

use super::OpenAiChatConfig;
use crate::media::{MediaKind, data_url, file_name};
use crate::media_note::attachment_note;
use crate::request::{ToolChoice, TurnRequest};
use crate::schema::{object_root, openai_strict};
use crate::tool_names::ToolNameMap;

/// The JSON body of `POST {base}/chat/completions` (streaming).
pub fn request_body(
    config: &OpenAiChatConfig,
    request: &TurnRequest,
    names: &ToolNameMap,
) -> Value {
    let mut messages = Vec::new();
    if let Some(system) = request.system.as_deref().filter(|s| !s.is_empty()) {
        messages.push(json!({"role": "system", "content": system}));
    }
    for message in &request.messages {
        lower(message, names, &mut messages);
    }
    let mut body = json!({
        "model": request.model,
        "stream": true,
        "messages": messages,
    });
    body[config.max_tokens_field.as_str()] = json!(request.max_tokens);
    if config.include_usage {
        body["stream_options"] = json!({"include_usage": true});
    }
    if let Some(t) = request.temperature {
        body["temperature"] = json!(t);
    }
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|spec| {
                let mut function = json!({
                    "name": names.wire(&spec.name),
                    "description": spec.description,
                });
                if config.strict_tools {
                    function["parameters"] = openai_strict(&spec.input_schema);
                    function["strict"] = json!(true);
                } else {
                    function["parameters"] = object_root(&spec.input_schema);
                }
                json!({"type": "function", "function": function})
            })
            .collect();
        body["tools"] = Value::Array(tools);
        body["tool_choice"] = match &request.tool_choice {
            ToolChoice::Auto => json!("auto"),
            ToolChoice::None => json!("none"),
            ToolChoice::Required => json!("required"),
            ToolChoice::Tool(name) => {
                json!({"type": "function", "function": {"name": names.wire(name)}})
            }
        };
    }
    body
}

fn lower(message: &Message, names: &ToolNameMap, out: &mut Vec<Value>) {
    match message.role {
        Role::Assistant => {
            let text = message.text();
            let calls: Vec<Value> = message
                .tool_calls()
                .map(|call| function_call(call, names))
                .collect();
            if text.is_empty() && calls.is_empty() {
                return;
            }
            let mut value = json!({
                "role": "assistant",
                "content": if text.is_empty() { Value::Null } else { json!(text) },
            });
            if !calls.is_empty() {
                value["tool_calls"] = Value::Array(calls);
            }
            out.push(value);
        }
        Role::User => {
            let mut texts = Vec::new();
            for part in &message.content {
                match part {
                    Part::ToolResult(result) => out.push(tool_message(result)),
                    Part::Text { text } if !text.is_empty() => {
                        texts.push(json!({"type": "text", "text": text}));
                    }
                    Part::Media(media) => texts.push(media_part(media)),
                    _ => {}
                }
            }
            if !texts.is_empty() {
                out.push(json!({"role": "user", "content": texts}));
            }
        }
    }
}

/// An assistant tool call as Chat Completions (and Cohere v2, which copied its shape) write it.
pub(crate) fn function_call(call: &ToolCallPart, names: &ToolNameMap) -> Value {
    json!({
        "id": call.id.0,
        "type": "function",
        "function": {
            "name": names.wire(&call.name),
            "arguments": call.arguments.to_wire_string(),
        },
    })
}

/// A tool result as a `tool` message: its text joined, attachments as notes (a tool message
/// carries text only; delivered media goes in the user turn after it).
pub(crate) fn tool_message(result: &ToolResultPart) -> Value {
    let content: Vec<String> = result
        .content
        .iter()
        .map(|block| match block {
            ContentBlock::Text { text } => text.clone(),
            ContentBlock::Attachment { .. } => attachment_note(block),
        })
        .chain(result.media.iter().map(|m| {
            format!(
                "[{} kept as {}; a tool message cannot carry it]",
                m.mime_type, m.artifact
            )
        }))
        .collect();
    json!({
        "role": "tool",
        "tool_call_id": result.call_id.0,
        "content": content.join("\n"),
    })
}

/// Media in a user message: images as `image_url`, PDFs as `file` data, video as `video_url`
/// (what the compatible servers that take video read: Kimi, Qwen), all inline `data:` URLs.
/// Audio has no place in Chat's tool-origin matrix and is described instead.
fn media_part(media: &MediaPart) -> Value {
    match MediaKind::of_mime(&media.mime_type) {
        Some(MediaKind::Image) => {
            json!({"type": "image_url", "image_url": {"url": data_url(media)}})
        }
        Some(MediaKind::Pdf) => json!({
            "type": "file",
            "file": {"filename": file_name(media), "file_data": data_url(media)},
        }),
        Some(MediaKind::Video) => {
            json!({"type": "video_url", "video_url": {"url": data_url(media)}})
        }
        _ => json!({
            "type": "text",
            "text": format!("[{} kept as {}; Chat Completions cannot take it]", media.mime_type, media.artifact),
        }),
    }
}
