//! The `GenerateContentRequest` body, built from the neutral conversation.
//!
//! Roles are `user` and `model`; tool results are `functionResponse` parts (`name` plus a
//! `response` object, `output` or `error`) opening their user turn. A `thoughtSignature` is put
//! back on the part it came with (the [`Part::ThoughtSignature`] after it), and a thought part is
//! replayed only when it carries one. Ids the API sent are echoed; ids tackle made up for calls
//! that came without one are not (results then pair with calls by name and order).

use std::collections::HashMap;

use serde_json::{Value, json};
use tackle_protocol::{ContentBlock, Message, Part, Role, ToolResultPart};

use crate::request::{ToolChoice, TurnRequest};
use crate::schema::{SchemaError, gemini_parameters};
use crate::tool_names::ToolNameMap;

use super::stream::is_synthetic_id;

/// A tool whose schema Gemini's subset cannot carry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolSchemaError {
    pub tool: String,
    pub error: SchemaError,
}

/// The JSON body of `:streamGenerateContent`.
pub fn request_body(request: &TurnRequest, names: &ToolNameMap) -> Result<Value, ToolSchemaError> {
    let call_names = call_names(&request.messages);
    let contents: Vec<Value> = request
        .messages
        .iter()
        .filter_map(|m| content(m, names, &call_names))
        .collect();
    let mut body = json!({"contents": contents});
    if let Some(system) = request.system.as_deref().filter(|s| !s.is_empty()) {
        body["systemInstruction"] = json!({"parts": [{"text": system}]});
    }
    if !request.tools.is_empty() {
        let mut declarations = Vec::new();
        for spec in &request.tools {
            let mut declaration = json!({
                "name": names.wire(&spec.name),
                "description": spec.description,
            });
            let parameters =
                gemini_parameters(&spec.input_schema).map_err(|error| ToolSchemaError {
                    tool: spec.name.clone(),
                    error,
                })?;
            if let Some(parameters) = parameters {
                declaration["parameters"] = parameters;
            }
            declarations.push(declaration);
        }
        body["tools"] = json!([{"functionDeclarations": declarations}]);
        body["toolConfig"] = json!({"functionCallingConfig": match &request.tool_choice {
            ToolChoice::Auto => json!({"mode": "AUTO"}),
            ToolChoice::None => json!({"mode": "NONE"}),
            ToolChoice::Required => json!({"mode": "ANY"}),
            ToolChoice::Tool(name) => json!({"mode": "ANY", "allowedFunctionNames": [names.wire(name)]}),
        }});
    }
    let mut generation = json!({"maxOutputTokens": request.max_tokens});
    if let Some(t) = request.temperature {
        generation["temperature"] = json!(t);
    }
    if let Some(budget) = request.thinking_budget {
        generation["thinkingConfig"] = json!({"thinkingBudget": budget, "includeThoughts": true});
    }
    body["generationConfig"] = generation;
    Ok(body)
}

/// Every call id of the conversation with the (wire) tool name it called.
fn call_names(messages: &[Message]) -> HashMap<&str, &str> {
    messages
        .iter()
        .flat_map(Message::tool_calls)
        .map(|call| (call.id.0.as_str(), call.name.as_str()))
        .collect()
}

fn content(
    message: &Message,
    names: &ToolNameMap,
    call_names: &HashMap<&str, &str>,
) -> Option<Value> {
    let parts = match message.role {
        Role::User => user_parts(message, names, call_names),
        Role::Assistant => model_parts(message, names),
    };
    if parts.is_empty() {
        return None;
    }
    let role = match message.role {
        Role::User => "user",
        Role::Assistant => "model",
    };
    Some(json!({"role": role, "parts": parts}))
}

/// Tool results first, then text and media; what a user turn cannot carry is left out.
fn user_parts(
    message: &Message,
    names: &ToolNameMap,
    call_names: &HashMap<&str, &str>,
) -> Vec<Value> {
    let results = message.content.iter().filter_map(|p| match p {
        Part::ToolResult(result) => Some(function_response(result, names, call_names)),
        _ => None,
    });
    // Media delivered in this user turn (every kind, for this family) as inline data, in
    // order with the labels that name the call it came from.
    let texts = message.content.iter().filter_map(|p| match p {
        Part::Text { text } if !text.is_empty() => Some(json!({"text": text})),
        Part::Media(media) => Some(json!({
            "inlineData": {"mimeType": media.mime_type, "data": media.data_base64},
        })),
        _ => None,
    });
    results.chain(texts).collect()
}

fn model_parts(message: &Message, names: &ToolNameMap) -> Vec<Value> {
    let mut parts: Vec<Value> = Vec::new();
    // Whether the last entry of `parts` is the part just before the current one.
    let mut previous_sent = false;
    for (at, part) in message.content.iter().enumerate() {
        let signed = matches!(
            message.content.get(at + 1),
            Some(Part::ThoughtSignature { .. })
        );
        let value = match part {
            Part::Text { text } if !text.is_empty() => Some(json!({"text": text})),
            Part::Thinking {
                text,
                signature: None,
            } if signed => Some(json!({"text": text, "thought": true})),
            Part::ToolCall(call) => {
                let mut function_call = json!({
                    "name": names.wire(&call.name),
                    "args": call.arguments.object_or_empty(),
                });
                if !is_synthetic_id(&call.id.0) {
                    function_call["id"] = json!(call.id.0);
                }
                Some(json!({"functionCall": function_call}))
            }
            Part::ThoughtSignature { signature } => {
                if previous_sent && let Some(Value::Object(last)) = parts.last_mut() {
                    last.insert("thoughtSignature".into(), json!(signature));
                }
                previous_sent = false;
                continue;
            }
            // Empty text, unsigned thoughts and other families' reasoning.
            _ => None,
        };
        previous_sent = value.is_some();
        parts.extend(value);
    }
    parts
}

fn function_response(
    result: &ToolResultPart,
    names: &ToolNameMap,
    call_names: &HashMap<&str, &str>,
) -> Value {
    let text: Vec<String> = result
        .content
        .iter()
        .map(|block| match block {
            ContentBlock::Text { text } => text.clone(),
            ContentBlock::Attachment { .. } => crate::media_note::attachment_note(block),
        })
        .collect();
    let key = if result.is_error { "error" } else { "output" };
    let name = call_names
        .get(result.call_id.0.as_str())
        .map_or(result.call_id.0.as_str(), |n| names.wire(n));
    let mut response = json!({
        "name": name,
        "response": {key: text.join("\n")},
    });
    if !is_synthetic_id(&result.call_id.0) {
        response["id"] = json!(result.call_id.0);
    }
    json!({"functionResponse": response})
}

#[cfg(test)]
mod tests {
    use super::*;
    use tackle_protocol::{CallId, ToolArguments, ToolCallPart};

    #[test]
    fn signatures_go_back_on_their_part_and_unsigned_thoughts_are_dropped() {
        let message = Message {
            role: Role::Assistant,
            content: vec![
                Part::Thinking {
                    text: "unsigned".into(),
                    signature: None,
                },
                Part::Thinking {
                    text: "signed".into(),
                    signature: None,
                },
                Part::ThoughtSignature {
                    signature: "s0".into(),
                },
                Part::Text { text: "".into() },
                Part::ThoughtSignature {
                    signature: "orphan".into(),
                },
                Part::ToolCall(ToolCallPart {
                    id: CallId("tackle-gc-1".into()),
                    name: "read_file".into(),
                    arguments: ToolArguments::parse("not json"),
                }),
                Part::ThoughtSignature {
                    signature: "s1".into(),
                },
                Part::Thinking {
                    text: "anthropic's".into(),
                    signature: Some("sig".into()),
                },
            ],
        };
        assert_eq!(
            model_parts(&message, &ToolNameMap::default()),
            vec![
                json!({"text": "signed", "thought": true, "thoughtSignature": "s0"}),
                json!({"functionCall": {"name": "read_file", "args": {}}, "thoughtSignature": "s1"}),
            ]
        );
    }

    #[test]
    fn tool_choice_and_generation_config_follow_the_request() {
        let mut request = TurnRequest::new("m", vec![Message::user_text("x")], 100);
        request.tools = vec![tackle_protocol::ToolSpec {
            name: "a.b".into(),
            description: "d".into(),
            input_schema: json!({"type": "object"}),
        }];
        let names = ToolNameMap::new(["a.b"]);
        let cases = [
            (ToolChoice::Auto, json!({"mode": "AUTO"})),
            (ToolChoice::None, json!({"mode": "NONE"})),
            (ToolChoice::Required, json!({"mode": "ANY"})),
            (
                ToolChoice::Tool("a.b".into()),
                json!({"mode": "ANY", "allowedFunctionNames": ["a_b"]}),
            ),
        ];
        for (choice, want) in cases {
            request.tool_choice = choice;
            let body = request_body(&request, &names).unwrap();
            assert_eq!(body["toolConfig"]["functionCallingConfig"], want);
            assert_eq!(
                body["tools"][0]["functionDeclarations"][0],
                json!({"name": "a_b", "description": "d"})
            );
        }
        assert_eq!(
            request_body(&request, &names).unwrap()["generationConfig"],
            json!({"maxOutputTokens": 100})
        );
        request.temperature = Some(0.5);
        request.thinking_budget = Some(512);
        assert_eq!(
            request_body(&request, &names).unwrap()["generationConfig"],
            json!({"maxOutputTokens": 100, "temperature": 0.5,
                   "thinkingConfig": {"thinkingBudget": 512, "includeThoughts": true}})
        );
        request.tools[0].input_schema = json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/X"}},
            "$defs": {"X": {"properties": {"y": {"$ref": "#/$defs/X"}}}}});
        let e = request_body(&request, &names).unwrap_err();
        assert_eq!(e.tool, "a.b");
    }
}
