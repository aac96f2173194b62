//! The v2 Chat request body, built from the neutral conversation.
//!
//! Cohere's rules, close to Chat Completions': the system prompt is the first message; an
//! assistant message carries its text, its `tool_plan` and its `tool_calls` (arguments as a
//! JSON string, `"{}"` for empty) and is followed by one `tool` message per call, so a user
//! message's tool results become those messages and its text a user message after them. Tool
//! messages take text only, so attachments travel as notes.
//!
//! Thinking is replayed as the `tool_plan` of a message with tool calls: the stream's
//! `tool-plan-delta` and thinking content both arrive as thinking parts, and the plan is the
//! one field Cohere reads back (assistant content items are text only). A message without
//! calls drops its thinking.
//!
//! `tool_choice` is `REQUIRED` or `NONE` (auto is the absence of the field); Cohere cannot name
//! a tool, so [`ToolChoice::Tool`] offers only that tool and requires a call.

use serde_json::{Value, json};
use tackle_protocol::{MediaPart, Message, Part, Role};

use crate::media::{MediaKind, data_url};
use crate::openai_chat::request::{function_call, tool_message};
use crate::request::{ToolChoice, TurnRequest};
use crate::schema::object_root;
use crate::tool_names::ToolNameMap;

/// The JSON body of `POST {base}/v2/chat` (streaming).
pub fn request_body(request: &TurnRequest, names: &ToolNameMap) -> Value {
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
        "max_tokens": request.max_tokens,
    });
    if let Some(t) = request.temperature {
        body["temperature"] = json!(t);
    }
    if let Some(budget) = request.thinking_budget {
        body["thinking"] = json!({"type": "enabled", "token_budget": budget});
    }
    let offered: Vec<_> = match &request.tool_choice {
        ToolChoice::Tool(name) => request.tools.iter().filter(|t| &t.name == name).collect(),
        _ => request.tools.iter().collect(),
    };
    if !offered.is_empty() {
        let tools: Vec<Value> = offered
            .iter()
            .map(|spec| {
                json!({"type": "function", "function": {
                    "name": names.wire(&spec.name),
                    "description": spec.description,
                    "parameters": object_root(&spec.input_schema),
                }})
            })
            .collect();
        body["tools"] = Value::Array(tools);
        match &request.tool_choice {
            ToolChoice::Auto => {}
            ToolChoice::None => body["tool_choice"] = json!("NONE"),
            ToolChoice::Required | ToolChoice::Tool(_) => body["tool_choice"] = json!("REQUIRED"),
        }
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
            let mut value = json!({"role": "assistant"});
            if !text.is_empty() {
                value["content"] = json!(text);
            }
            if !calls.is_empty() {
                let plan: String = message
                    .content
                    .iter()
                    .filter_map(|p| match p {
                        Part::Thinking { text, .. } => Some(text.as_str()),
                        _ => None,
                    })
                    .collect::<Vec<_>>()
                    .join("\n");
                if !plan.is_empty() {
                    value["tool_plan"] = json!(plan);
                }
                value["tool_calls"] = Value::Array(calls);
            }
            out.push(value);
        }
        Role::User => {
            let mut texts = Vec::new();
            let mut media_parts: Vec<Value> = Vec::new();
            for part in &message.content {
                match part {
                    Part::ToolResult(result) => out.push(tool_message(result)),
                    Part::Text { text } if !text.is_empty() => texts.push(text.as_str()),
                    Part::Media(media) => {
                        // A label before each item keeps it tied to its call.
                        media_parts
                            .extend(texts.drain(..).map(|t| json!({"type": "text", "text": t})));
                        media_parts.push(image_part(media));
                    }
                    _ => {}
                }
            }
            if !media_parts.is_empty() {
                media_parts.extend(texts.drain(..).map(|t| json!({"type": "text", "text": t})));
                out.push(json!({"role": "user", "content": media_parts}));
            } else if !texts.is_empty() {
                out.push(json!({"role": "user", "content": texts.join("\n")}));
            }
        }
    }
}

/// Delivered media in a user message: Cohere's matrix row takes images only, as `image_url`
/// with an inline `data:` URL; anything else is described.
fn image_part(media: &MediaPart) -> Value {
    match MediaKind::of_mime(&media.mime_type) {
        Some(MediaKind::Image) => {
            json!({"type": "image_url", "image_url": {"url": data_url(media)}})
        }
        _ => json!({
            "type": "text",
            "text": format!("[{} kept as {}; Cohere cannot take it]", media.mime_type, media.artifact),
        }),
    }
}
