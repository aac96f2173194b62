//! The Messages API request body, built from the neutral conversation.
//!
//! Anthropic's rules that would otherwise return 400 are kept here: tool results open their
//! user message (text follows them), tool-use ids match `^[a-zA-Z0-9_-]+$` (other characters
//! become `_`, identically in the call and its result), `input` is always an object, empty text
//! blocks and empty messages are left out, and thinking blocks are replayed unchanged with their
//! signatures (unsigned thinking, from another family, is dropped).

use serde_json::{Value, json};
use tackle_protocol::{ContentBlock, MediaPart, Message, Part, Role, ToolResultPart};

use crate::media::MediaKind;
use crate::request::{ToolChoice, TurnRequest};
use crate::schema::object_root;
use crate::tool_names::ToolNameMap;

/// The JSON body of `POST /v1/messages` (streaming).
pub fn request_body(request: &TurnRequest, names: &ToolNameMap) -> Value {
    let mut body = json!({
        "model": request.model,
        "max_tokens": request.max_tokens,
        "stream": true,
    });
    if let Some(system) = request.system.as_deref().filter(|s| !s.is_empty()) {
        let mut block = json!({"type": "text", "text": system});
        if request.prompt_cache {
            block["cache_control"] = ephemeral();
        }
        body["system"] = json!([block]);
    }
    if !request.tools.is_empty() {
        let mut tools: Vec<Value> = request
            .tools
            .iter()
            .map(|spec| {
                json!({
                    "name": names.wire(&spec.name),
                    "description": spec.description,
                    "input_schema": object_root(&spec.input_schema),
                })
            })
            .collect();
        if request.prompt_cache
            && let Some(last) = tools.last_mut()
        {
            last["cache_control"] = ephemeral();
        }
        body["tools"] = Value::Array(tools);
        body["tool_choice"] = match &request.tool_choice {
            ToolChoice::Auto => json!({"type": "auto"}),
            ToolChoice::None => json!({"type": "none"}),
            ToolChoice::Required => json!({"type": "any"}),
            ToolChoice::Tool(name) => json!({"type": "tool", "name": names.wire(name)}),
        };
    }
    let mut messages: Vec<Value> = request
        .messages
        .iter()
        .filter_map(|m| message(m, names))
        .collect();
    if request.prompt_cache
        && let Some(last_user) = messages.iter_mut().rev().find(|m| m["role"] == "user")
        && let Some(Value::Array(blocks)) = last_user.get_mut("content")
        && let Some(last) = blocks.last_mut()
    {
        last["cache_control"] = ephemeral();
    }
    body["messages"] = Value::Array(messages);
    match request.thinking_budget {
        Some(budget) => body["thinking"] = json!({"type": "enabled", "budget_tokens": budget}),
        // Thinking requires the default temperature.
        None => {
            if let Some(t) = request.temperature {
                body["temperature"] = json!(t);
            }
        }
    }
    body
}

fn ephemeral() -> Value {
    json!({"type": "ephemeral"})
}

fn message(message: &Message, names: &ToolNameMap) -> Option<Value> {
    results_first(message, |p| block(p, message.role, names))
}

/// A message as `{role, content: [blocks]}` with its tool results first (Messages and
/// Converse both require the results to open the turn that answers the calls); `None` when no
/// part gives a block.
pub(crate) fn results_first(
    message: &Message,
    block: impl Fn(&Part) -> Option<Value>,
) -> Option<Value> {
    let (results, others): (Vec<&Part>, Vec<&Part>) = message
        .content
        .iter()
        .partition(|p| matches!(p, Part::ToolResult(_)));
    let blocks: Vec<Value> = results
        .into_iter()
        .chain(others)
        .filter_map(block)
        .collect();
    if blocks.is_empty() {
        return None;
    }
    let role = match message.role {
        Role::User => "user",
        Role::Assistant => "assistant",
    };
    Some(json!({"role": role, "content": blocks}))
}

fn block(part: &Part, role: Role, names: &ToolNameMap) -> Option<Value> {
    match part {
        Part::Text { text } if text.is_empty() => None,
        Part::Text { text } => Some(json!({"type": "text", "text": text})),
        Part::Thinking {
            text,
            signature: Some(signature),
        } if role == Role::Assistant => Some(json!({
            "type": "thinking", "thinking": text, "signature": signature,
        })),
        Part::Thinking { .. } => None,
        Part::RedactedThinking { data } if role == Role::Assistant => {
            Some(json!({"type": "redacted_thinking", "data": data}))
        }
        Part::RedactedThinking { .. } => None,
        // Another family's reasoning: Anthropic cannot verify it.
        Part::Reasoning(_) | Part::ThoughtSignature { .. } => None,
        Part::ToolCall(call) => Some(json!({
            "type": "tool_use",
            "id": tool_use_id(&call.id.0),
            "name": names.wire(&call.name),
            "input": call.arguments.object_or_empty(),
        })),
        Part::ToolResult(result) => Some(tool_result(result)),
        Part::Media(media) => Some(media_block(media)),
    }
}

/// An image or PDF as a base64 block. Other kinds reach this family only as notes: the
/// matrix puts video on Anthropic-compatible endpoints in a user turn, but no wire shape for
/// it is documented well enough to send, so it is described instead.
fn media_block(media: &MediaPart) -> Value {
    let source =
        json!({"type": "base64", "media_type": media.mime_type, "data": media.data_base64});
    match MediaKind::of_mime(&media.mime_type) {
        Some(MediaKind::Image) => json!({"type": "image", "source": source}),
        Some(MediaKind::Pdf) => json!({"type": "document", "source": source}),
        _ => json!({
            "type": "text",
            "text": format!(
                "[{} kept as {}; this endpoint has no documented way to take it inline]",
                media.mime_type, media.artifact
            ),
        }),
    }
}

fn tool_result(result: &ToolResultPart) -> Value {
    let content: Vec<Value> = result
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text { text } if text.is_empty() => None,
            ContentBlock::Text { text } => Some(json!({"type": "text", "text": text})),
            ContentBlock::Attachment { .. } => Some(json!({
                "type": "text",
                "text": crate::media_note::attachment_note(block),
            })),
        })
        .chain(result.media.iter().map(media_block))
        .collect();
    let mut value = json!({
        "type": "tool_result",
        "tool_use_id": tool_use_id(&result.call_id.0),
        "content": content,
    });
    if result.is_error {
        value["is_error"] = json!(true);
    }
    value
}

/// A call id as Anthropic accepts it: every character outside `[a-zA-Z0-9_-]` becomes `_`.
pub(crate) fn tool_use_id(id: &str) -> String {
    let mapped: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if mapped.is_empty() {
        "_".to_owned()
    } else {
        mapped
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tackle_protocol::{CallId, ToolArguments, ToolCallPart, ToolSpec};

    fn request(messages: Vec<Message>) -> TurnRequest {
        let mut r = TurnRequest::new("m", messages, 10);
        r.prompt_cache = false;
        r
    }

    #[test]
    fn tool_use_ids_are_sanitized_as_a_table() {
        let cases = [
            ("toolu_01A", "toolu_01A"),
            ("call-1_x", "call-1_x"),
            ("call.1:2/3", "call_1_2_3"),
            ("fc_é", "fc__"),
            ("", "_"),
        ];
        for (id, want) in cases {
            assert_eq!(tool_use_id(id), want, "{id:?}");
        }
    }

    #[test]
    fn empty_parts_and_messages_are_left_out_and_unsigned_thinking_is_dropped() {
        let body = request_body(
            &request(vec![
                Message::user_text(""),
                Message::user_text("hi"),
                Message {
                    role: Role::Assistant,
                    content: vec![
                        Part::Thinking {
                            text: "from another family".into(),
                            signature: None,
                        },
                        Part::Text { text: "".into() },
                        Part::ToolCall(ToolCallPart {
                            id: CallId("c".into()),
                            name: "t".into(),
                            arguments: ToolArguments::parse("null"),
                        }),
                    ],
                },
            ]),
            &ToolNameMap::default(),
        );
        assert_eq!(
            body["messages"],
            json!([
                {"role": "user", "content": [{"type": "text", "text": "hi"}]},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "c", "name": "t", "input": {}}]},
            ])
        );
        assert!(body.get("system").is_none() && body.get("tools").is_none());
    }

    #[test]
    fn tool_choice_maps_per_variant_and_temperature_yields_to_thinking() {
        let spec = ToolSpec {
            name: "a.b".into(),
            description: "d".into(),
            input_schema: json!({"type": "object"}),
        };
        let names = ToolNameMap::new(["a.b"]);
        let cases = [
            (ToolChoice::Auto, json!({"type": "auto"})),
            (ToolChoice::None, json!({"type": "none"})),
            (ToolChoice::Required, json!({"type": "any"})),
            (
                ToolChoice::Tool("a.b".into()),
                json!({"type": "tool", "name": "a_b"}),
            ),
        ];
        for (choice, want) in cases {
            let mut r = request(vec![Message::user_text("x")]);
            r.tools = vec![spec.clone()];
            r.tool_choice = choice;
            assert_eq!(request_body(&r, &names)["tool_choice"], want);
        }
        let mut r = request(vec![Message::user_text("x")]);
        r.temperature = Some(0.2);
        assert!(request_body(&r, &names).get("temperature").is_some());
        r.thinking_budget = Some(1024);
        let body = request_body(&r, &names);
        assert!(body.get("temperature").is_none());
        assert_eq!(body["thinking"]["budget_tokens"], json!(1024));
    }
}
