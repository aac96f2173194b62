//! The neutral conversation a model provider is sent and answers with: messages with roles,
//! ordered content parts, usage and stop reasons.
//!
//! Owns the shapes only; `tackle-llm` lowers them to each vendor's JSON and lifts vendor streams
//! back into them, so nothing outside that crate ever sees a vendor field.
//!
//! Key decisions:
//! - An assistant message is an **ordered list of parts**, never "text plus calls": Anthropic
//!   interleaves text, thinking and tool calls, and its thinking blocks must be replayed in place
//!   with their signatures.
//! - Tool-call arguments the model produced are kept even when they are not a JSON object
//!   ([`ToolArguments::Invalid`]), so the runtime can answer `invalid_arguments` to the model
//!   instead of the turn failing.
//! - A stop reason no adapter knows keeps its raw string ([`StopReason::Unknown`]) rather than
//!   being folded into a guess.
//! - Every struct rejects unknown fields: a recorded conversation read back from a file is parsed
//!   strictly, like the rest of tackle's inputs.

use serde::{Deserialize, Serialize};

use crate::call::{CallId, ContentBlock};

/// Who wrote a message. System instructions are not a role: they travel beside the messages
/// (Anthropic has no system role, and every family places them differently).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    User,
    Assistant,
}

/// One message of a conversation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Message {
    pub role: Role,
    pub content: Vec<Part>,
}

impl Message {
    /// A user message holding one text part.
    pub fn user_text(text: impl Into<String>) -> Self {
        Self {
            role: Role::User,
            content: vec![Part::Text { text: text.into() }],
        }
    }

    /// The tool calls of this message, in order.
    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolCallPart> {
        self.content.iter().filter_map(|p| match p {
            Part::ToolCall(call) => Some(call),
            _ => None,
        })
    }

    /// The text parts of this message joined with no separator.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|p| match p {
                Part::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }
}

/// One content part of a message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Part {
    Text {
        text: String,
    },
    /// The model's visible reasoning. `signature` is the provider's opaque proof that the text is
    /// unaltered (Anthropic's `signature`); a part with one is replayed unchanged to the family
    /// that issued it and dropped for the others.
    Thinking {
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
    },
    /// Reasoning the provider returned only in encrypted form (Anthropic `redacted_thinking`),
    /// replayed as is.
    RedactedThinking {
        data: String,
    },
    /// An OpenAI Responses reasoning item: its summary and, when the request asked for it,
    /// the encrypted reasoning that lets a stateless (`store: false`) conversation carry the
    /// model's reasoning into the next turn. Replayed only to that family; the others drop it.
    Reasoning(ReasoningPart),
    /// Gemini's `thoughtSignature`: the opaque proof of the model's reasoning that came on the
    /// part just before this one (a tool call, text or thought). Replayed on that same part to
    /// Gemini, which rejects a function call sent back without its signature; the other
    /// families drop it.
    ThoughtSignature {
        signature: String,
    },
    ToolCall(ToolCallPart),
    ToolResult(ToolResultPart),
    /// Media delivered in a user turn (the families that take tool-origin media only there):
    /// emitted right after the message holding the tool result it came from.
    Media(MediaPart),
}

/// Media bytes on their way to a model, prepared by `tackle-llm`'s delivery step from a
/// retained attachment: never written by a tool, never read back from a model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MediaPart {
    /// The sniffed MIME type (`image/png`, `application/pdf`, `video/mp4`, …).
    pub mime_type: String,
    /// The bytes, base64 (standard alphabet, padded): every family takes them so.
    pub data_base64: String,
    /// Where the bytes are kept (`artifact://sha256/<digest>`), for the record and for the
    /// file name the families that want one are given.
    pub artifact: String,
}

/// A reasoning item as the Responses API returned it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReasoningPart {
    /// The item id (`rs_…`). Kept for the record; a stateless request must not send it back
    /// (the server answers 404 for ids it did not store).
    pub id: String,
    /// The summary texts, in order (empty when no summary was requested).
    #[serde(default)]
    pub summary: Vec<String>,
    /// The opaque encrypted reasoning; without it the item cannot be replayed statelessly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encrypted_content: Option<String>,
}

/// A tool call the model made.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolCallPart {
    /// The provider's call id (`toolu_…`, `call_…`), echoed in the matching result.
    pub id: CallId,
    /// The catalog name of the tool (already mapped back from any name the provider required).
    pub name: String,
    pub arguments: ToolArguments,
}

/// A tool call's arguments as the model produced them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ToolArguments {
    /// A JSON object (empty or whitespace-only arguments are read as `{}`).
    Valid { value: serde_json::Value },
    /// What the model sent when it is not a JSON object: truncated JSON, a bare string, `null`.
    /// Replayed verbatim where the wire format takes a string, as `{}` where it needs an object.
    Invalid { raw: String, reason: String },
}

impl ToolArguments {
    /// Parses the concatenated argument text of one call.
    pub fn parse(raw: &str) -> Self {
        if raw.trim().is_empty() {
            return Self::Valid {
                value: serde_json::Value::Object(serde_json::Map::new()),
            };
        }
        match serde_json::from_str::<serde_json::Value>(raw) {
            Ok(value @ serde_json::Value::Object(_)) => Self::Valid { value },
            Ok(other) => Self::Invalid {
                raw: raw.to_owned(),
                reason: format!("arguments are a JSON {}, not an object", json_kind(&other)),
            },
            Err(e) => Self::Invalid {
                raw: raw.to_owned(),
                reason: format!("arguments are not valid JSON: {e}"),
            },
        }
    }

    /// The arguments as a JSON object, `{}` when they were invalid.
    pub fn object_or_empty(&self) -> serde_json::Value {
        match self {
            Self::Valid { value } => value.clone(),
            Self::Invalid { .. } => serde_json::Value::Object(serde_json::Map::new()),
        }
    }

    /// The arguments as the JSON text a string-typed wire field carries.
    pub fn to_wire_string(&self) -> String {
        match self {
            Self::Valid { value } => value.to_string(),
            Self::Invalid { raw, .. } => raw.clone(),
        }
    }
}

fn json_kind(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "boolean",
        serde_json::Value::Number(_) => "number",
        serde_json::Value::String(_) => "string",
        serde_json::Value::Array(_) => "array",
        serde_json::Value::Object(_) => "object",
    }
}

/// The answer to one tool call, sent back in the next user message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolResultPart {
    pub call_id: CallId,
    /// Text and attachments (stored artifacts, referenced by URI; the adapter decides how
    /// their bytes travel).
    pub content: Vec<ContentBlock>,
    #[serde(default)]
    pub is_error: bool,
    /// Media delivered inside the result (the families whose tool results take it), set by
    /// `tackle-llm`'s delivery step; the attachment blocks of `content` stay references.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub media: Vec<MediaPart>,
}

/// Token counts of one turn. `input_tokens` counts only uncached input, so the prompt's size is
/// `input_tokens + cache_read_tokens + cache_write_tokens` for every family (OpenAI reports
/// cached tokens inside its prompt count; the adapter subtracts them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    #[serde(default)]
    pub cache_read_tokens: u64,
    #[serde(default)]
    pub cache_write_tokens: u64,
    /// Output tokens spent on reasoning, where the provider reports them separately.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
}

impl Usage {
    /// Every input token, cached or not.
    pub fn prompt_tokens(&self) -> u64 {
        self.input_tokens + self.cache_read_tokens + self.cache_write_tokens
    }
}

/// Why the model stopped, normalized across families.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum StopReason {
    /// The model finished its answer.
    EndTurn,
    /// The model wants its tool calls answered.
    ToolUse,
    /// The output limit was reached; a tool call in progress is truncated and must not run.
    MaxTokens,
    StopSequence,
    /// The model declined to answer.
    Refusal,
    /// The provider filtered the output.
    ContentFilter,
    /// A long server-side turn paused; send the assistant content back as is to continue.
    PauseTurn,
    /// The conversation no longer fits the model's context window.
    ContextWindowExceeded,
    /// A reason this version does not know, with the provider's string.
    Unknown {
        raw: String,
    },
}

/// A complete assistant turn: the message plus how and why it ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AssistantTurn {
    pub message: Message,
    pub stop_reason: StopReason,
    pub usage: Usage,
    /// The model that answered, as the provider named it.
    pub model: String,
    /// The provider's id for this response (`msg_…`, `chatcmpl-…`), when it sent one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_id: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_parsed_as_a_table() {
        let cases: &[(&str, Option<&str>)] = &[
            ("", None),
            ("  \n", None),
            ("{}", None),
            (r#"{"path":"a.txt"}"#, None),
            (r#"{"path":"a"#, Some("not valid JSON")),
            ("null", Some("a JSON null")),
            (r#""a.txt""#, Some("a JSON string")),
            ("[1]", Some("a JSON array")),
        ];
        for (raw, want_invalid) in cases {
            match (ToolArguments::parse(raw), want_invalid) {
                (ToolArguments::Valid { value }, None) => assert!(value.is_object(), "{raw}"),
                (ToolArguments::Invalid { raw: kept, reason }, Some(fragment)) => {
                    assert_eq!(&kept, raw);
                    assert!(reason.contains(fragment), "{raw}: {reason}");
                }
                (got, want) => panic!("{raw}: got {got:?}, wanted invalid={want:?}"),
            }
        }
    }

    #[test]
    fn invalid_arguments_replay_verbatim_as_strings_and_empty_as_objects() {
        let bad = ToolArguments::parse(r#"{"path":"#);
        assert_eq!(bad.to_wire_string(), r#"{"path":"#);
        assert_eq!(bad.object_or_empty(), serde_json::json!({}));
        assert_eq!(ToolArguments::parse("").to_wire_string(), "{}");
    }

    #[test]
    fn stop_reasons_round_trip_and_unknown_keeps_its_string() {
        let cases = [
            (StopReason::EndTurn, r#""end_turn""#),
            (StopReason::ToolUse, r#""tool_use""#),
            (
                StopReason::Unknown {
                    raw: "new_reason".into(),
                },
                r#"{"unknown":{"raw":"new_reason"}}"#,
            ),
        ];
        for (reason, json) in cases {
            assert_eq!(serde_json::to_string(&reason).unwrap(), json);
            assert_eq!(serde_json::from_str::<StopReason>(json).unwrap(), reason);
        }
    }

    #[test]
    fn parsing_is_strict_about_unknown_fields() {
        let bad = [
            r#"{"role":"user","content":[],"extra":1}"#,
            r#"{"role":"system","content":[]}"#,
            r#"{"role":"user","content":[{"type":"text","text":"a","x":1}]}"#,
            r#"{"role":"user","content":[{"type":"image","url":"a"}]}"#,
        ];
        for json in bad {
            assert!(serde_json::from_str::<Message>(json).is_err(), "{json}");
        }
        let good = r#"{"role":"assistant","content":[{"type":"thinking","text":"t","signature":"s"},
            {"type":"tool_call","id":"c1","name":"read_file","arguments":{"kind":"valid","value":{"path":"a"}}}]}"#;
        let message: Message = serde_json::from_str(good).unwrap();
        assert_eq!(message.tool_calls().count(), 1);
        let again = serde_json::to_string(&message).unwrap();
        assert_eq!(serde_json::from_str::<Message>(&again).unwrap(), message);
    }

    #[test]
    fn prompt_tokens_add_cached_input() {
        let usage = Usage {
            input_tokens: 10,
            output_tokens: 5,
            cache_read_tokens: 100,
            cache_write_tokens: 7,
            reasoning_tokens: None,
        };
        assert_eq!(usage.prompt_tokens(), 117);
    }
}
