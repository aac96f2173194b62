//! v2 Chat stream events lifted into neutral events, dispatched on the data's `type`.
//!
//! - `message-start` starts the turn with its `id` (Cohere does not echo the model; the
//!   request's is used).
//! - `content-delta` carries `delta.message.content.text`, or `.thinking` inside a thinking
//!   block of a reasoning model: text and thinking deltas.
//! - `tool-plan-delta` (the plan the model writes before its calls) is kept as thinking: it is
//!   the model's reasoning about the calls, not its answer, and the request replays it as the
//!   `tool_plan` of the message that carries the calls.
//! - `tool-call-start` (id and name), `tool-call-delta` (argument fragments) and
//!   `tool-call-end` are keyed by the event's `index`.
//! - `message-end` ends the turn: `finish_reason` becomes the stop reason and `usage` the usage
//!   (`tokens`, what the model read and wrote, when present; `billed_units` otherwise).
//!   `ERROR` and `TIMEOUT` end it with a classified error rather than a stop: what came before
//!   is incomplete and must not pass for an answer.
//!
//! Citations and unknown types are ignored; a body without `type` that has a `message` is an
//! error sent after the 200.

use std::collections::HashMap;

use serde::Deserialize;
use tackle_net::SseEvent;
use tackle_protocol::{CallId, StopReason, Usage};

use crate::assemble::synthetic_call_id;
use crate::error::ErrorKind;
use crate::event::StreamEvent;
use crate::tool_names::ToolNameMap;
use crate::transport::{Lift, LiftFailure, Lifted};

#[derive(Deserialize)]
struct Event {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    index: Option<usize>,
    #[serde(default)]
    delta: Option<Delta>,
    /// An error object sent in place of an event.
    #[serde(default)]
    message: Option<String>,
}

#[derive(Deserialize, Default)]
struct Delta {
    #[serde(default)]
    message: Option<DeltaMessage>,
    #[serde(default)]
    finish_reason: Option<String>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<String>,
}

#[derive(Deserialize, Default)]
struct DeltaMessage {
    #[serde(default)]
    content: Option<Content>,
    #[serde(default)]
    tool_plan: Option<String>,
    /// One call per event, despite the plural.
    #[serde(default)]
    tool_calls: Option<ToolCallDelta>,
}

#[derive(Deserialize, Default)]
struct Content {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    thinking: Option<String>,
}

#[derive(Deserialize, Default)]
struct ToolCallDelta {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<FunctionDelta>,
}

#[derive(Deserialize, Default)]
struct FunctionDelta {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    billed_units: Option<Tokens>,
    #[serde(default)]
    tokens: Option<Tokens>,
}

#[derive(Deserialize)]
struct Tokens {
    #[serde(default)]
    input_tokens: Option<f64>,
    #[serde(default)]
    output_tokens: Option<f64>,
}

pub(crate) struct CohereLift {
    names: ToolNameMap,
    model: String,
    started: bool,
    /// Wire index → the assembler's index.
    calls: HashMap<usize, usize>,
    next_index: usize,
}

impl CohereLift {
    pub fn new(names: ToolNameMap, model: String) -> Self {
        Self {
            names,
            model,
            started: false,
            calls: HashMap::new(),
            next_index: 0,
        }
    }

    fn start(&mut self, response_id: Option<String>, out: &mut Vec<StreamEvent>) {
        if !self.started {
            self.started = true;
            out.push(StreamEvent::Started {
                model: self.model.clone(),
                response_id,
            });
        }
    }

    fn call_index(&self, event: &Event, what: &str) -> Result<usize, LiftFailure> {
        let wire = event.index.unwrap_or(0);
        self.calls.get(&wire).copied().ok_or_else(|| LiftFailure {
            kind: ErrorKind::InvalidResponse,
            message: format!("a {what} names call index {wire}, which no tool-call-start opened"),
        })
    }

    fn tool_call_start(&mut self, event: &Event, out: &mut Vec<StreamEvent>) {
        let call = event
            .delta
            .as_ref()
            .and_then(|d| d.message.as_ref())
            .and_then(|m| m.tool_calls.as_ref());
        let function = call.and_then(|c| c.function.as_ref());
        let index = self.next_index;
        self.next_index += 1;
        self.calls.insert(event.index.unwrap_or(index), index);
        out.push(StreamEvent::ToolCallStart {
            index,
            id: call
                .and_then(|c| c.id.clone())
                .filter(|id| !id.is_empty())
                .map_or_else(|| synthetic_call_id(index), CallId),
            name: self
                .names
                .catalog(function.and_then(|f| f.name.as_deref()).unwrap_or_default()),
        });
        if let Some(fragment) = function.and_then(|f| f.arguments.clone()) {
            push_arguments(index, fragment, out);
        }
    }

    fn message_end(&mut self, delta: Delta, out: &mut Vec<StreamEvent>) -> Result<(), LiftFailure> {
        if let Some(usage) = delta.usage {
            out.push(StreamEvent::Usage(lift_usage(usage)));
        }
        let raw = delta.finish_reason.unwrap_or_default();
        let detail = delta
            .error
            .filter(|e| !e.is_empty())
            .map(|e| format!(": {e}"))
            .unwrap_or_default();
        let reason = match raw.as_str() {
            "COMPLETE" => StopReason::EndTurn,
            "TOOL_CALL" => StopReason::ToolUse,
            "MAX_TOKENS" => StopReason::MaxTokens,
            "STOP_SEQUENCE" => StopReason::StopSequence,
            "ERROR" => {
                return Err(LiftFailure {
                    kind: ErrorKind::Server,
                    message: format!("the provider failed while generating{detail}; try again"),
                });
            }
            "TIMEOUT" => {
                return Err(LiftFailure {
                    kind: ErrorKind::Timeout,
                    message: format!(
                        "the provider timed out while generating{detail}; try again or ask for less"
                    ),
                });
            }
            other => StopReason::Unknown {
                raw: other.to_owned(),
            },
        };
        out.push(StreamEvent::Stop(reason));
        Ok(())
    }
}

fn push_arguments(index: usize, fragment: String, out: &mut Vec<StreamEvent>) {
    if !fragment.is_empty() {
        out.push(StreamEvent::ToolCallArgumentsDelta { index, fragment });
    }
}

/// Token counts arrive as JSON numbers that may be written as floats (`12.0`).
fn count(tokens: Option<&Tokens>, pick: fn(&Tokens) -> Option<f64>) -> Option<u64> {
    tokens
        .and_then(pick)
        .filter(|n| n.is_finite() && *n >= 0.0)
        // Saturating float-to-int cast of a checked non-negative finite count.
        .map(|n| n as u64)
}

fn lift_usage(usage: WireUsage) -> Usage {
    let (tokens, billed) = (usage.tokens.as_ref(), usage.billed_units.as_ref());
    let input = |t: &Tokens| t.input_tokens;
    let output = |t: &Tokens| t.output_tokens;
    Usage {
        input_tokens: count(tokens, input).or(count(billed, input)).unwrap_or(0),
        output_tokens: count(tokens, output).or(count(billed, output)).unwrap_or(0),
        cache_read_tokens: 0,
        cache_write_tokens: 0,
        reasoning_tokens: None,
    }
}

impl Lift for CohereLift {
    fn lift(
        &mut self,
        event: &SseEvent,
        out: &mut Vec<StreamEvent>,
    ) -> Result<Lifted, LiftFailure> {
        let parsed: Event = serde_json::from_str(&event.data).map_err(|e| LiftFailure {
            kind: ErrorKind::InvalidResponse,
            message: format!("an event is not valid json: {e}"),
        })?;
        let Some(kind) = parsed.kind.clone() else {
            return match parsed.message {
                Some(message) => Err(LiftFailure {
                    kind: ErrorKind::Server,
                    message: format!("the provider sent an error mid-stream: {message}"),
                }),
                None => Ok(Lifted::More),
            };
        };
        match kind.as_str() {
            "message-start" => self.start(parsed.id, out),
            "content-start" | "content-delta" => {
                self.start(None, out);
                let content = parsed
                    .delta
                    .and_then(|d| d.message)
                    .and_then(|m| m.content)
                    .unwrap_or_default();
                if let Some(text) = content.thinking.filter(|t| !t.is_empty()) {
                    out.push(StreamEvent::ThinkingDelta { text });
                }
                if let Some(text) = content.text.filter(|t| !t.is_empty()) {
                    out.push(StreamEvent::TextDelta { text });
                }
            }
            "tool-plan-delta" => {
                self.start(None, out);
                if let Some(text) = parsed
                    .delta
                    .and_then(|d| d.message)
                    .and_then(|m| m.tool_plan)
                    .filter(|t| !t.is_empty())
                {
                    out.push(StreamEvent::ThinkingDelta { text });
                }
            }
            "tool-call-start" => {
                self.start(None, out);
                self.tool_call_start(&parsed, out);
            }
            "tool-call-delta" => {
                let index = self.call_index(&parsed, "tool-call-delta")?;
                if let Some(fragment) = parsed
                    .delta
                    .and_then(|d| d.message)
                    .and_then(|m| m.tool_calls)
                    .and_then(|c| c.function)
                    .and_then(|f| f.arguments)
                {
                    push_arguments(index, fragment, out);
                }
            }
            "tool-call-end" => {
                let index = self.call_index(&parsed, "tool-call-end")?;
                out.push(StreamEvent::ToolCallEnd { index });
            }
            "message-end" => {
                self.start(parsed.id, out);
                self.message_end(parsed.delta.unwrap_or_default(), out)?;
                return Ok(Lifted::Done);
            }
            _ => {}
        }
        Ok(Lifted::More)
    }
}
