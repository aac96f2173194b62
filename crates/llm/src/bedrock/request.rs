//! The Converse request body, built from the neutral conversation.
//!
//! Blocks are keyed objects (`{"text": …}`, `{"toolUse": …}`), not tagged ones. Tool results
//! open their user message; `toolUseId` keeps to `[a-zA-Z0-9_-]` (the same mapping as the
//! Anthropic adapter, since Claude is behind most of these ids); `input` is always an object;
//! empty text is left out; signed thinking is replayed as `reasoningContent` with its
//! signature, redacted thinking as `redactedContent`. `cachePoint` blocks follow the system
//! prompt, the tools and the last user message, as the Anthropic adapter places its
//! breakpoints, for the models that take them (Claude and Nova).

use serde_json::{Value, json};
use tackle_protocol::{ContentBlock, MediaPart, Message, Part, Role, ToolResultPart};

use crate::anthropic::request::results_first;
use crate::anthropic::tool_use_id;
use crate::media::MediaKind;
use crate::request::{ToolChoice, TurnRequest};
use crate::schema::object_root;
use crate::tool_names::ToolNameMap;

/// The JSON body of `POST /model/{modelId}/converse-stream`.
pub fn request_body(request: &TurnRequest, names: &ToolNameMap) -> Value {
    let cache = request.prompt_cache && takes_cache_points(&request.model);
    let mut messages: Vec<Value> = request
        .messages
        .iter()
        .filter_map(|m| message(m, names))
        .collect();
    if cache
        && let Some(last_user) = messages.iter_mut().rev().find(|m| m["role"] == "user")
        && let Some(Value::Array(blocks)) = last_user.get_mut("content")
    {
        blocks.push(cache_point());
    }
    let mut body = json!({ "messages": messages });
    if let Some(system) = request.system.as_deref().filter(|s| !s.is_empty()) {
        let mut blocks = vec![json!({"text": system})];
        if cache {
            blocks.push(cache_point());
        }
        body["system"] = Value::Array(blocks);
    }
    if !request.tools.is_empty() {
        let mut tools: Vec<Value> = request
            .tools
            .iter()
            .map(|spec| {
                json!({"toolSpec": {
                    "name": names.wire(&spec.name),
                    "description": spec.description,
                    "inputSchema": {"json": object_root(&spec.input_schema)},
                }})
            })
            .collect();
        if cache {
            tools.push(cache_point());
        }
        let mut config = json!({ "tools": tools });
        // Converse has no "none": the tools stay (a conversation with tool blocks needs them)
        // and the choice is left to the model.
        match &request.tool_choice {
            ToolChoice::Auto => config["toolChoice"] = json!({"auto": {}}),
            ToolChoice::Required => config["toolChoice"] = json!({"any": {}}),
            ToolChoice::Tool(name) => {
                config["toolChoice"] = json!({"tool": {"name": names.wire(name)}});
            }
            ToolChoice::None => {}
        }
        body["toolConfig"] = config;
    }
    let mut inference = json!({ "maxTokens": request.max_tokens });
    match request.thinking_budget {
        // Claude's extended thinking goes through the model's own fields, and requires the
        // default temperature.
        Some(budget) => {
            body["additionalModelRequestFields"] =
                json!({"thinking": {"type": "enabled", "budget_tokens": budget}});
        }
        None => {
            if let Some(t) = request.temperature {
                inference["temperature"] = json!(t);
            }
        }
    }
    body["inferenceConfig"] = inference;
    body
}

/// Whether a model id (or inference profile) names a model that takes `cachePoint` blocks;
/// the others reject them.
fn takes_cache_points(model: &str) -> bool {
    model.contains("anthropic.claude") || model.contains("amazon.nova")
}

fn cache_point() -> Value {
    json!({"cachePoint": {"type": "default"}})
}

fn message(message: &Message, names: &ToolNameMap) -> Option<Value> {
    results_first(message, |p| block(p, message.role, names))
}

fn block(part: &Part, role: Role, names: &ToolNameMap) -> Option<Value> {
    match part {
        Part::Text { text } if text.is_empty() => None,
        Part::Text { text } => Some(json!({"text": text})),
        Part::Thinking {
            text,
            signature: Some(signature),
        } if role == Role::Assistant => Some(json!({"reasoningContent": {
            "reasoningText": {"text": text, "signature": signature},
        }})),
        Part::Thinking { .. } => None,
        Part::RedactedThinking { data } if role == Role::Assistant => {
            Some(json!({"reasoningContent": {"redactedContent": data}}))
        }
        Part::RedactedThinking { .. } => None,
        // Another family's reasoning: Bedrock's models cannot verify it.
        Part::Reasoning(_) => None,
        Part::ToolCall(call) => Some(json!({"toolUse": {
            "toolUseId": tool_use_id(&call.id.0),
            "name": names.wire(&call.name),
            "input": call.arguments.object_or_empty(),
        }})),
        Part::ToolResult(result) => Some(tool_result(result)),
        // Gemini's signatures mean nothing here; media reaches Bedrock inside tool results.
        Part::ThoughtSignature { .. } => None,
        Part::Media(media) => Some(media_block(media)),
    }
}

/// An image, document or video content block with its bytes (base64 in the JSON body). The
/// format is the MIME subtype as Bedrock names them; a document's name may hold only
/// letters, digits, spaces, `-`, `()` and `[]`, so it is the artifact digest's start.
fn media_block(media: &MediaPart) -> Value {
    let subtype = media.mime_type.rsplit('/').next().unwrap_or("");
    let source = json!({"bytes": media.data_base64});
    match MediaKind::of_mime(&media.mime_type) {
        Some(MediaKind::Image) => {
            let format = if subtype == "jpg" { "jpeg" } else { subtype };
            json!({"image": {"format": format, "source": source}})
        }
        Some(MediaKind::Pdf) => {
            let digest = media.artifact.rsplit('/').next().unwrap_or("");
            let name: String = digest
                .chars()
                .filter(char::is_ascii_alphanumeric)
                .take(12)
                .collect();
            json!({"document": {"format": "pdf", "name": format!("attachment {name}"), "source": source}})
        }
        Some(MediaKind::Video) => {
            let format = match subtype {
                "quicktime" => "mov",
                "x-matroska" => "mkv",
                "x-flv" => "flv",
                "x-ms-wmv" => "wmv",
                "3gpp" => "three_gp",
                other => other,
            };
            json!({"video": {"format": format, "source": source}})
        }
        _ => json!({"text": format!(
            "[{} kept as {}; Bedrock Converse cannot take it]",
            media.mime_type, media.artifact
        )}),
    }
}

fn tool_result(result: &ToolResultPart) -> Value {
    let content: Vec<Value> = result
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text { text } if text.is_empty() => None,
            ContentBlock::Text { text } => Some(json!({"text": text})),
            ContentBlock::Attachment { .. } => {
                Some(json!({"text": crate::media_note::attachment_note(block)}))
            }
        })
        .chain(result.media.iter().map(media_block))
        .collect();
    let mut value = json!({
        "toolUseId": tool_use_id(&result.call_id.0),
        "content": content,
    });
    // `status` is read by Claude and Nova only; it is sent when it says something.
    if result.is_error {
        value["status"] = json!("error");
    }
    json!({ "toolResult": value })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_points_only_for_models_that_take_them_and_choice_none_keeps_the_tools() {
        let spec = tackle_protocol::ToolSpec {
            name: "t".into(),
            description: "d".into(),
            input_schema: json!({"type": "object"}),
        };
        let names = ToolNameMap::new(["t"]);
        let mut r = TurnRequest::new(
            "meta.llama3-70b-instruct-v1:0",
            vec![Message::user_text("x")],
            8,
        );
        r.system = Some("s".into());
        r.tools = vec![spec];
        r.tool_choice = ToolChoice::None;
        let body = request_body(&r, &names);
        assert!(!body.to_string().contains("cachePoint"), "{body}");
        assert!(body["toolConfig"].get("toolChoice").is_none());
        assert_eq!(
            body["toolConfig"]["tools"].as_array().map(Vec::len),
            Some(1)
        );
        r.model = "us.amazon.nova-pro-v1:0".into();
        let body = request_body(&r, &names);
        assert_eq!(body.to_string().matches("cachePoint").count(), 3, "{body}");
    }
}
