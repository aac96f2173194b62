//! ConverseStream frames lifted into neutral events.
//!
//! Dispatch is on the `:message-type` header (`event`, `exception`, `error`) and then on
//! `:event-type`; unknown event types and delta shapes are skipped. `messageStop` carries the
//! stop reason but `metadata` (usage) follows it, so the turn ends at `metadata`, or at a clean
//! end of the body once the stop reason came.

use std::collections::HashSet;

use aws_smithy_types::event_stream::Message;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use tackle_protocol::{CallId, StopReason, Usage};

use crate::error::ErrorKind;
use crate::event::StreamEvent;
use crate::tool_names::ToolNameMap;
use crate::transport::{Lift, LiftFailure, Lifted};

use super::error::{WireError, kind_of_exception};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct BlockStart {
    content_block_index: usize,
    #[serde(default)]
    start: Option<Start>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Start {
    #[serde(default)]
    tool_use: Option<ToolUseStart>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ToolUseStart {
    tool_use_id: String,
    name: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct BlockDelta {
    content_block_index: usize,
    delta: Delta,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Delta {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    tool_use: Option<ToolUseDelta>,
    #[serde(default)]
    reasoning_content: Option<ReasoningDelta>,
}

#[derive(Deserialize)]
struct ToolUseDelta {
    #[serde(default)]
    input: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ReasoningDelta {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    signature: Option<String>,
    #[serde(default)]
    redacted_content: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct BlockStop {
    content_block_index: usize,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct MessageStop {
    #[serde(default)]
    stop_reason: String,
}

#[derive(Deserialize)]
struct Metadata {
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireUsage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
    #[serde(default)]
    cache_read_input_tokens: u64,
    #[serde(default)]
    cache_write_input_tokens: u64,
}

/// The lifter of one response.
pub(crate) struct BedrockLift {
    names: ToolNameMap,
    /// Bedrock's events do not name the model; the request's id stands for it.
    model: String,
    tool_blocks: HashSet<usize>,
    stop: Option<StopReason>,
}

impl BedrockLift {
    pub fn new(names: ToolNameMap, model: String) -> Self {
        Self {
            names,
            model,
            tool_blocks: HashSet::new(),
            stop: None,
        }
    }
}

pub(crate) fn stop_reason(raw: &str) -> StopReason {
    match raw {
        "end_turn" => StopReason::EndTurn,
        "tool_use" => StopReason::ToolUse,
        "max_tokens" => StopReason::MaxTokens,
        "stop_sequence" => StopReason::StopSequence,
        "guardrail_intervened" | "content_filtered" => StopReason::ContentFilter,
        "model_context_window_exceeded" => StopReason::ContextWindowExceeded,
        other => StopReason::Unknown {
            raw: other.to_owned(),
        },
    }
}

fn header<'a>(frame: &'a Message, name: &str) -> Option<&'a str> {
    frame
        .headers()
        .iter()
        .find(|h| h.name().as_str() == name)
        .and_then(|h| h.value().as_string().ok())
        .map(|s| s.as_str())
}

fn payload<T: DeserializeOwned>(frame: &Message, what: &str) -> Result<T, LiftFailure> {
    serde_json::from_slice(frame.payload()).map_err(|e| LiftFailure {
        kind: ErrorKind::InvalidResponse,
        message: format!("a `{what}` frame is not the json bedrock sends: {e}"),
    })
}

fn exception(kind: &str, message: &str) -> LiftFailure {
    LiftFailure {
        kind: kind_of_exception(kind, message),
        message: format!("the provider sent {kind} mid-stream: {message}"),
    }
}

impl Lift<Message> for BedrockLift {
    fn lift(&mut self, frame: &Message, out: &mut Vec<StreamEvent>) -> Result<Lifted, LiftFailure> {
        match header(frame, ":message-type").unwrap_or("event") {
            "event" => {}
            "exception" => {
                let kind = header(frame, ":exception-type").unwrap_or("unknownException");
                let body: WireError = serde_json::from_slice(frame.payload()).unwrap_or_default();
                return Err(exception(kind, &body.message));
            }
            "error" => {
                let kind = header(frame, ":error-code").unwrap_or("unknownError");
                return Err(exception(
                    kind,
                    header(frame, ":error-message").unwrap_or(""),
                ));
            }
            other => {
                return Err(LiftFailure {
                    kind: ErrorKind::InvalidResponse,
                    message: format!("a frame has the unknown message type `{other}`"),
                });
            }
        }
        let Some(event_type) = header(frame, ":event-type") else {
            return Err(LiftFailure {
                kind: ErrorKind::InvalidResponse,
                message: "an event frame has no `:event-type` header".into(),
            });
        };
        match event_type {
            "messageStart" => out.push(StreamEvent::Started {
                model: self.model.clone(),
                response_id: None,
            }),
            "contentBlockStart" => {
                let start: BlockStart = payload(frame, event_type)?;
                if let Some(tool) = start.start.and_then(|s| s.tool_use) {
                    self.tool_blocks.insert(start.content_block_index);
                    out.push(StreamEvent::ToolCallStart {
                        index: start.content_block_index,
                        id: CallId(tool.tool_use_id),
                        name: self.names.catalog(&tool.name),
                    });
                }
            }
            "contentBlockDelta" => {
                let BlockDelta {
                    content_block_index: index,
                    delta,
                } = payload(frame, event_type)?;
                if let Some(text) = delta.text {
                    out.push(StreamEvent::TextDelta { text });
                }
                if let Some(tool) = delta.tool_use
                    && self.tool_blocks.contains(&index)
                {
                    out.push(StreamEvent::ToolCallArgumentsDelta {
                        index,
                        fragment: tool.input,
                    });
                }
                if let Some(reasoning) = delta.reasoning_content {
                    if let Some(text) = reasoning.text {
                        out.push(StreamEvent::ThinkingDelta { text });
                    }
                    if let Some(signature) = reasoning.signature {
                        out.push(StreamEvent::ThinkingSignature { signature });
                    }
                    if let Some(data) = reasoning.redacted_content {
                        out.push(StreamEvent::RedactedThinking { data });
                    }
                }
            }
            "contentBlockStop" => {
                let stop: BlockStop = payload(frame, event_type)?;
                if self.tool_blocks.contains(&stop.content_block_index) {
                    out.push(StreamEvent::ToolCallEnd {
                        index: stop.content_block_index,
                    });
                }
            }
            "messageStop" => {
                let stop: MessageStop = payload(frame, event_type)?;
                self.stop = Some(stop_reason(&stop.stop_reason));
            }
            "metadata" => {
                let metadata: Metadata = payload(frame, event_type)?;
                if let Some(u) = metadata.usage {
                    out.push(StreamEvent::Usage(Usage {
                        input_tokens: u.input_tokens,
                        output_tokens: u.output_tokens,
                        cache_read_tokens: u.cache_read_input_tokens,
                        cache_write_tokens: u.cache_write_input_tokens,
                        reasoning_tokens: None,
                    }));
                }
                if let Some(stop) = self.stop.take() {
                    out.push(StreamEvent::Stop(stop));
                    return Ok(Lifted::Done);
                }
            }
            _ => {}
        }
        Ok(Lifted::More)
    }

    fn end_of_body(&mut self, out: &mut Vec<StreamEvent>) -> bool {
        match self.stop.take() {
            Some(stop) => {
                out.push(StreamEvent::Stop(stop));
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_reasons_map_as_a_table() {
        let cases = [
            ("end_turn", StopReason::EndTurn),
            ("tool_use", StopReason::ToolUse),
            ("max_tokens", StopReason::MaxTokens),
            ("stop_sequence", StopReason::StopSequence),
            ("guardrail_intervened", StopReason::ContentFilter),
            ("content_filtered", StopReason::ContentFilter),
            (
                "something_new",
                StopReason::Unknown {
                    raw: "something_new".into(),
                },
            ),
        ];
        for (raw, want) in cases {
            assert_eq!(stop_reason(raw), want, "{raw}");
        }
    }
}
