//! Messages API stream events lifted into neutral events.
//!
//! Dispatch is on the `type` inside `data`, not the `event:` name; unknown event, block and
//! delta types are skipped (Anthropic adds them). Usage is cumulative in `message_delta`, so
//! the lifter keeps the merged counts and re-emits them whole. An `error` event after the 200
//! (overload mid-stream) ends the turn with that error's class.

use std::collections::HashMap;

use serde::Deserialize;
use tackle_net::SseEvent;
use tackle_protocol::{CallId, StopReason, Usage};

use crate::error::ErrorKind;
use crate::event::StreamEvent;
use crate::tool_names::ToolNameMap;
use crate::transport::{Lift, LiftFailure, Lifted};

use super::error::kind_of_error_type;

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Event {
    MessageStart {
        message: StartMessage,
    },
    ContentBlockStart {
        index: usize,
        content_block: Block,
    },
    ContentBlockDelta {
        index: usize,
        delta: WireDelta,
    },
    ContentBlockStop {
        index: usize,
    },
    MessageDelta {
        delta: MessageDelta,
        #[serde(default)]
        usage: Option<WireUsage>,
    },
    MessageStop,
    Error {
        error: WireError,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct StartMessage {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    model: String,
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block {
    Text {
        #[serde(default)]
        text: String,
    },
    Thinking {
        #[serde(default)]
        thinking: String,
        #[serde(default)]
        signature: String,
    },
    RedactedThinking {
        data: String,
    },
    ToolUse {
        id: String,
        name: String,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireDelta {
    TextDelta {
        text: String,
    },
    ThinkingDelta {
        thinking: String,
    },
    SignatureDelta {
        signature: String,
    },
    InputJsonDelta {
        partial_json: String,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct MessageDelta {
    #[serde(default)]
    stop_reason: Option<String>,
}

#[derive(Deserialize, Default)]
struct WireUsage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
}

#[derive(Deserialize)]
pub(super) struct WireError {
    #[serde(rename = "type", default)]
    pub kind: String,
    #[serde(default)]
    pub message: String,
}

/// The lifter of one response.
pub(crate) struct AnthropicLift {
    names: ToolNameMap,
    usage: Usage,
    /// Block indices that are tool calls (their stop ends the call).
    tool_blocks: HashMap<usize, ()>,
    stop: Option<StopReason>,
}

impl AnthropicLift {
    pub fn new(names: ToolNameMap) -> Self {
        Self {
            names,
            usage: Usage::default(),
            tool_blocks: HashMap::new(),
            stop: None,
        }
    }

    fn merge_usage(&mut self, wire: WireUsage) -> StreamEvent {
        let u = &mut self.usage;
        if let Some(v) = wire.input_tokens {
            u.input_tokens = v;
        }
        if let Some(v) = wire.output_tokens {
            u.output_tokens = v;
        }
        if let Some(v) = wire.cache_creation_input_tokens {
            u.cache_write_tokens = v;
        }
        if let Some(v) = wire.cache_read_input_tokens {
            u.cache_read_tokens = v;
        }
        StreamEvent::Usage(*u)
    }
}

pub(crate) fn stop_reason(raw: &str) -> StopReason {
    match raw {
        "end_turn" => StopReason::EndTurn,
        "tool_use" => StopReason::ToolUse,
        "max_tokens" => StopReason::MaxTokens,
        "stop_sequence" => StopReason::StopSequence,
        "refusal" => StopReason::Refusal,
        "pause_turn" => StopReason::PauseTurn,
        "model_context_window_exceeded" => StopReason::ContextWindowExceeded,
        other => StopReason::Unknown {
            raw: other.to_owned(),
        },
    }
}

impl Lift for AnthropicLift {
    fn lift(
        &mut self,
        event: &SseEvent,
        out: &mut Vec<StreamEvent>,
    ) -> Result<Lifted, LiftFailure> {
        let parsed: Event = serde_json::from_str(&event.data).map_err(|e| LiftFailure {
            kind: ErrorKind::InvalidResponse,
            message: format!("a `{}` event is not valid json: {e}", event.event),
        })?;
        match parsed {
            Event::MessageStart { message } => {
                out.push(StreamEvent::Started {
                    model: message.model,
                    response_id: message.id,
                });
                if let Some(usage) = message.usage {
                    out.push(self.merge_usage(usage));
                }
            }
            Event::ContentBlockStart {
                index,
                content_block,
            } => match content_block {
                Block::Text { text } => out.push(StreamEvent::TextDelta { text }),
                Block::Thinking {
                    thinking,
                    signature,
                } => {
                    out.push(StreamEvent::ThinkingDelta { text: thinking });
                    if !signature.is_empty() {
                        out.push(StreamEvent::ThinkingSignature { signature });
                    }
                }
                Block::RedactedThinking { data } => {
                    out.push(StreamEvent::RedactedThinking { data });
                }
                Block::ToolUse { id, name } => {
                    self.tool_blocks.insert(index, ());
                    out.push(StreamEvent::ToolCallStart {
                        index,
                        id: CallId(id),
                        name: self.names.catalog(&name),
                    });
                }
                Block::Other => {}
            },
            Event::ContentBlockDelta { index, delta } => match delta {
                WireDelta::TextDelta { text } => out.push(StreamEvent::TextDelta { text }),
                WireDelta::ThinkingDelta { thinking } => {
                    out.push(StreamEvent::ThinkingDelta { text: thinking });
                }
                WireDelta::SignatureDelta { signature } => {
                    out.push(StreamEvent::ThinkingSignature { signature });
                }
                WireDelta::InputJsonDelta { partial_json }
                    if self.tool_blocks.contains_key(&index) =>
                {
                    out.push(StreamEvent::ToolCallArgumentsDelta {
                        index,
                        fragment: partial_json,
                    });
                }
                WireDelta::InputJsonDelta { .. } | WireDelta::Other => {}
            },
            Event::ContentBlockStop { index } => {
                if self.tool_blocks.contains_key(&index) {
                    out.push(StreamEvent::ToolCallEnd { index });
                }
            }
            Event::MessageDelta { delta, usage } => {
                if let Some(raw) = delta.stop_reason {
                    self.stop = Some(stop_reason(&raw));
                }
                if let Some(usage) = usage {
                    out.push(self.merge_usage(usage));
                }
            }
            Event::MessageStop => {
                let reason = self
                    .stop
                    .take()
                    .unwrap_or(StopReason::Unknown { raw: String::new() });
                out.push(StreamEvent::Stop(reason));
                return Ok(Lifted::Done);
            }
            Event::Error { error } => {
                return Err(LiftFailure {
                    kind: kind_of_error_type(&error.kind, &error.message),
                    message: format!(
                        "the provider sent an error mid-stream: {} ({})",
                        error.message, error.kind
                    ),
                });
            }
            Event::Other => {}
        }
        Ok(Lifted::More)
    }
}
