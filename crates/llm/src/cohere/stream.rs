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

use tackle_net::SseEvent;
use tackle_protocol::{CallId, StopReason, Usage};

use super::wire::{Delta, Event, Tokens, WireUsage};
use crate::assemble::synthetic_call_id;
use crate::error::ErrorKind;
use crate::event::StreamEvent;
use crate::tool_names::ToolNameMap;
use crate::transport::{Lift, LiftFailure, Lifted};

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

#[cfg(test)]
mod tests {
    use super::*;

    fn lift(lines: &[&str]) -> (Vec<StreamEvent>, Result<Lifted, LiftFailure>) {
        let mut lift = CohereLift::new(ToolNameMap::new(["mcp.fs.list"]), "command-x".into());
        let mut out = Vec::new();
        let mut last = Ok(Lifted::More);
        for data in lines {
            let event = SseEvent {
                event: "message".into(),
                data: (*data).into(),
                id: None,
            };
            last = lift.lift(&event, &mut out);
            if last.is_err() {
                break;
            }
        }
        (out, last)
    }

    #[test]
    fn finish_reasons_map_to_stops_or_errors() {
        let cases: &[(&str, Result<StopReason, ErrorKind>)] = &[
            ("COMPLETE", Ok(StopReason::EndTurn)),
            ("TOOL_CALL", Ok(StopReason::ToolUse)),
            ("MAX_TOKENS", Ok(StopReason::MaxTokens)),
            ("STOP_SEQUENCE", Ok(StopReason::StopSequence)),
            (
                "USER_CANCEL",
                Ok(StopReason::Unknown {
                    raw: "USER_CANCEL".into(),
                }),
            ),
            ("ERROR", Err(ErrorKind::Server)),
            ("TIMEOUT", Err(ErrorKind::Timeout)),
        ];
        for (reason, want) in cases {
            let end = format!(r#"{{"type":"message-end","delta":{{"finish_reason":"{reason}"}}}}"#);
            let (out, last) = lift(&[&end]);
            match want {
                Ok(stop) => {
                    assert_eq!(last, Ok(Lifted::Done), "{reason}");
                    assert_eq!(
                        out.last(),
                        Some(&StreamEvent::Stop(stop.clone())),
                        "{reason}"
                    );
                }
                Err(kind) => assert_eq!(last.map_err(|f| f.kind), Err(*kind), "{reason}"),
            }
        }
    }

    #[test]
    fn a_call_without_an_id_gets_one_and_wire_names_map_back() {
        let (out, last) = lift(&[
            r#"{"type":"tool-call-start","index":4,"delta":{"message":{"tool_calls":{"function":{"name":"mcp_fs_list","arguments":"{}"}}}}}"#,
            r#"{"type":"tool-call-end","index":4}"#,
            r#"{"type":"message-end","delta":{"finish_reason":"TOOL_CALL","usage":{"tokens":{"input_tokens":-3,"output_tokens":1e30}}}}"#,
        ]);
        assert_eq!(last, Ok(Lifted::Done));
        assert_eq!(
            out[1],
            StreamEvent::ToolCallStart {
                index: 0,
                id: synthetic_call_id(0),
                name: "mcp.fs.list".into(),
            }
        );
        assert_eq!(
            out[2],
            StreamEvent::ToolCallArgumentsDelta {
                index: 0,
                fragment: "{}".into(),
            }
        );
        assert_eq!(out[3], StreamEvent::ToolCallEnd { index: 0 });
        let StreamEvent::Usage(usage) = &out[4] else {
            panic!("{out:?}");
        };
        assert_eq!(usage.input_tokens, 0, "a negative count is no count");
        assert_eq!(usage.output_tokens, u64::MAX, "a huge count saturates");
    }

    #[test]
    fn events_without_a_type_are_ignored_unless_they_are_errors() {
        let (out, last) = lift(&[r#"{"note":"x"}"#, r#"[1,2]"#]);
        assert!(out.is_empty());
        assert_eq!(last.map_err(|f| f.kind), Err(ErrorKind::InvalidResponse));
        let (_, last) = lift(&[r#"{"message":"boom"}"#]);
        let failure = last.unwrap_err();
        assert_eq!(failure.kind, ErrorKind::Server);
        assert!(failure.message.contains("boom"));
    }
}
