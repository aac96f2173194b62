//! The replay file: JSON Lines, a header line then one exchange per line.
//!
//! ```text
//! {"tackle_replay":1}
//! {"request":{"model":"m","messages":[…]},"events":[{"text":"Hi"},{"stop":"end_turn"}]}
//! {"turn":{"text":"Reading it.","tool_calls":[{"name":"read_file","arguments":{"path":"a"}}]}}
//! {"error":{"kind":"rate_limit","status":429,"message":"slow down"}}
//! ```
//!
//! An exchange holds what the model sent, either as the neutral stream `events` (what a
//! recording writes: every delta, in order) or as a `turn` (the shorthand a person writes for a
//! scripted test, expanded into events), and optionally an `error`: alone, the turn failed
//! before streaming; after events, the stream broke there. `request`, when present, is what was
//! asked (model, system prompt, messages, tool names), for a strict replay to compare.
//!
//! The format is tackle's own, independent of any vendor's wire: a recording holds neither
//! headers nor credentials, only the conversation, which is why recordings are written 0600.

use serde::{Deserialize, Serialize};
use tackle_protocol::{CallId, Message, ReasoningPart, StopReason, Usage};

use crate::error::ErrorKind;
use crate::event::StreamEvent;
use crate::request::TurnRequest;

/// The header's version; a file of another version is refused with both numbers.
pub const REPLAY_VERSION: u32 = 1;

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Header {
    pub(crate) tackle_replay: u32,
}

/// One model turn as recorded or scripted.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Exchange {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<RecordedRequest>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<RecordedEvent>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<ScriptedTurn>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<RecordedError>,
}

/// What a turn asked, as far as a replay compares it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedRequest {
    pub model: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    pub messages: Vec<Message>,
    /// The names of the tools on offer, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<String>,
}

impl RecordedRequest {
    pub fn of(request: &TurnRequest) -> Self {
        Self {
            model: request.model.clone(),
            system: request.system.clone(),
            messages: request.messages.clone(),
            tools: request.tools.iter().map(|t| t.name.clone()).collect(),
        }
    }
}

/// A [`StreamEvent`] in the file's spelling (externally tagged, snake_case).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum RecordedEvent {
    Started {
        model: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        response_id: Option<String>,
    },
    Text(String),
    Thinking(String),
    ThinkingSignature(String),
    RedactedThinking(String),
    /// A whole reasoning item (OpenAI Responses), with its encrypted content when there was one.
    Reasoning(ReasoningPart),
    /// Gemini's `thoughtSignature` of the part before it.
    PartSignature(String),
    ToolCallStart {
        index: usize,
        id: CallId,
        name: String,
    },
    ToolCallArguments {
        index: usize,
        fragment: String,
    },
    ToolCallEnd {
        index: usize,
    },
    Usage(Usage),
    Stop(StopReason),
}

impl From<&StreamEvent> for RecordedEvent {
    fn from(event: &StreamEvent) -> Self {
        match event.clone() {
            StreamEvent::Started { model, response_id } => Self::Started { model, response_id },
            StreamEvent::TextDelta { text } => Self::Text(text),
            StreamEvent::ThinkingDelta { text } => Self::Thinking(text),
            StreamEvent::ThinkingSignature { signature } => Self::ThinkingSignature(signature),
            StreamEvent::RedactedThinking { data } => Self::RedactedThinking(data),
            StreamEvent::Reasoning(part) => Self::Reasoning(part),
            StreamEvent::PartSignature { signature } => Self::PartSignature(signature),
            StreamEvent::ToolCallStart { index, id, name } => {
                Self::ToolCallStart { index, id, name }
            }
            StreamEvent::ToolCallArgumentsDelta { index, fragment } => {
                Self::ToolCallArguments { index, fragment }
            }
            StreamEvent::ToolCallEnd { index } => Self::ToolCallEnd { index },
            StreamEvent::Usage(usage) => Self::Usage(usage),
            StreamEvent::Stop(reason) => Self::Stop(reason),
        }
    }
}

impl From<RecordedEvent> for StreamEvent {
    fn from(event: RecordedEvent) -> Self {
        match event {
            RecordedEvent::Started { model, response_id } => Self::Started { model, response_id },
            RecordedEvent::Text(text) => Self::TextDelta { text },
            RecordedEvent::Thinking(text) => Self::ThinkingDelta { text },
            RecordedEvent::ThinkingSignature(signature) => Self::ThinkingSignature { signature },
            RecordedEvent::RedactedThinking(data) => Self::RedactedThinking { data },
            RecordedEvent::Reasoning(part) => Self::Reasoning(part),
            RecordedEvent::PartSignature(signature) => Self::PartSignature { signature },
            RecordedEvent::ToolCallStart { index, id, name } => {
                Self::ToolCallStart { index, id, name }
            }
            RecordedEvent::ToolCallArguments { index, fragment } => {
                Self::ToolCallArgumentsDelta { index, fragment }
            }
            RecordedEvent::ToolCallEnd { index } => Self::ToolCallEnd { index },
            RecordedEvent::Usage(usage) => Self::Usage(usage),
            RecordedEvent::Stop(reason) => Self::Stop(reason),
        }
    }
}

/// A turn written by hand: text, tool calls, and how it ends.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedTurn {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ScriptedCall>,
    /// Default: `tool_use` when there are calls, else `end_turn`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<StopReason>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}

/// One tool call of a [`ScriptedTurn`]. `arguments` is sent as its JSON text; `arguments_raw`
/// is sent verbatim instead, to script a model that emits broken JSON.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedCall {
    /// Default: `call_<turn>_<index>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<CallId>,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments_raw: Option<String>,
}

impl ScriptedTurn {
    /// The events this turn streams as, the model named as asked; `turn` numbers default ids.
    pub(crate) fn events(&self, model: &str, turn: usize) -> Vec<StreamEvent> {
        let mut events = vec![StreamEvent::Started {
            model: model.to_owned(),
            response_id: None,
        }];
        if let Some(text) = &self.thinking {
            events.push(StreamEvent::ThinkingDelta { text: text.clone() });
        }
        if let Some(text) = &self.text {
            events.push(StreamEvent::TextDelta { text: text.clone() });
        }
        for (index, call) in self.tool_calls.iter().enumerate() {
            let id = call
                .id
                .clone()
                .unwrap_or_else(|| CallId(format!("call_{turn}_{index}")));
            events.push(StreamEvent::ToolCallStart {
                index,
                id,
                name: call.name.clone(),
            });
            let fragment = match (&call.arguments_raw, &call.arguments) {
                (Some(raw), _) => raw.clone(),
                (None, Some(value)) => value.to_string(),
                (None, None) => "{}".to_owned(),
            };
            events.push(StreamEvent::ToolCallArgumentsDelta { index, fragment });
            events.push(StreamEvent::ToolCallEnd { index });
        }
        if let Some(usage) = self.usage {
            events.push(StreamEvent::Usage(usage));
        }
        let stop = self.stop.clone().unwrap_or(if self.tool_calls.is_empty() {
            StopReason::EndTurn
        } else {
            StopReason::ToolUse
        });
        events.push(StreamEvent::Stop(stop));
        events
    }
}

/// A failure as recorded: its kind by name (`rate_limit`, `overloaded`, `stream_cut` …).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedError {
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    pub message: String,
}

/// Every kind a file may name, by its stable name.
pub(crate) const ERROR_KINDS: &[ErrorKind] = &[
    ErrorKind::Auth,
    ErrorKind::Permission,
    ErrorKind::NotFound,
    ErrorKind::RateLimit,
    ErrorKind::QuotaExhausted,
    ErrorKind::Overloaded,
    ErrorKind::ContextTooLong,
    ErrorKind::InvalidRequest,
    ErrorKind::Server,
    ErrorKind::Transport,
    ErrorKind::StreamCut,
    ErrorKind::Timeout,
    ErrorKind::InvalidResponse,
    ErrorKind::Cancelled,
    ErrorKind::Configuration,
];

pub(crate) fn error_kind(name: &str) -> Option<ErrorKind> {
    ERROR_KINDS.iter().copied().find(|k| k.as_str() == name)
}
