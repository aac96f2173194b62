//! Folds a turn's [`StreamEvent`]s into the neutral assistant message.
//!
//! Parts keep the order the model produced them in: a text delta extends the text part in
//! progress or opens a new one after a call or thinking; each tool call is a slot opened by its
//! start and keyed by index, so deltas of parallel calls may interleave. Arguments are read as
//! their deltas arrive ([`arguments`]), so a call's end (or the stop, for families without an
//! end event) has nothing left to parse; JSON that does not parse becomes
//! [`ToolArguments::Invalid`], never an error of the turn.

mod arguments;
mod object_builder;

use std::collections::HashMap;

use tackle_protocol::{
    AssistantTurn, CallId, Message, Part, Role, StopReason, ToolArguments, ToolCallPart, Usage,
};

use crate::event::StreamEvent;
use arguments::StreamedArguments;

/// Why a stream did not make a turn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AssembleError {
    /// The stream ended without its stop event.
    NoStop,
    /// A delta or end named a call index no start opened.
    UnknownCallIndex { index: usize },
}

#[derive(Debug)]
struct OpenCall {
    /// Position of the call's part in `parts`.
    part: usize,
    /// `None` once the call has ended.
    arguments: Option<StreamedArguments>,
}

#[derive(Debug, Default)]
pub struct TurnAssembler {
    parts: Vec<Part>,
    calls: HashMap<usize, OpenCall>,
    usage: Usage,
    stop: Option<StopReason>,
    model: String,
    response_id: Option<String>,
}

impl TurnAssembler {
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether the stop event has arrived.
    pub fn is_complete(&self) -> bool {
        self.stop.is_some()
    }

    /// Folds one event in; returns whether it was the stop event.
    pub fn push(&mut self, event: StreamEvent) -> Result<bool, AssembleError> {
        match event {
            StreamEvent::Started { model, response_id } => {
                self.model = model;
                self.response_id = response_id;
            }
            StreamEvent::TextDelta { text } => match self.parts.last_mut() {
                Some(Part::Text { text: open }) => open.push_str(&text),
                _ if text.is_empty() => {}
                _ => self.parts.push(Part::Text { text }),
            },
            StreamEvent::ThinkingDelta { text } => match self.parts.last_mut() {
                Some(Part::Thinking {
                    text: open,
                    signature: None,
                }) => open.push_str(&text),
                _ => self.parts.push(Part::Thinking {
                    text,
                    signature: None,
                }),
            },
            StreamEvent::ThinkingSignature { signature } => match self.parts.last_mut() {
                Some(Part::Thinking { signature: s, .. }) => {
                    s.get_or_insert_with(String::new).push_str(&signature);
                }
                // A signature with no thinking text still has to be replayed.
                _ => self.parts.push(Part::Thinking {
                    text: String::new(),
                    signature: Some(signature),
                }),
            },
            StreamEvent::RedactedThinking { data } => {
                self.parts.push(Part::RedactedThinking { data });
            }
            StreamEvent::Reasoning(part) => self.parts.push(Part::Reasoning(part)),
            StreamEvent::PartSignature { signature } => {
                self.parts.push(Part::ThoughtSignature { signature });
            }
            StreamEvent::ToolCallStart { index, id, name } => {
                self.close_call(index);
                self.parts.push(Part::ToolCall(ToolCallPart {
                    id,
                    name,
                    arguments: ToolArguments::parse(""),
                }));
                self.calls.insert(
                    index,
                    OpenCall {
                        part: self.parts.len() - 1,
                        arguments: Some(StreamedArguments::new()),
                    },
                );
            }
            StreamEvent::ToolCallArgumentsDelta { index, fragment } => {
                let call = self
                    .calls
                    .get_mut(&index)
                    .ok_or(AssembleError::UnknownCallIndex { index })?;
                // Deltas after a call's end are dropped, as they always were.
                if let Some(arguments) = call.arguments.as_mut() {
                    arguments.push(fragment);
                }
            }
            StreamEvent::ToolCallEnd { index } => {
                if !self.calls.contains_key(&index) {
                    return Err(AssembleError::UnknownCallIndex { index });
                }
                self.close_call(index);
            }
            StreamEvent::Usage(usage) => self.usage = usage,
            StreamEvent::Stop(reason) => {
                let open: Vec<usize> = self.calls.keys().copied().collect();
                for index in open {
                    self.close_call(index);
                }
                self.stop = Some(reason);
            }
        }
        Ok(self.stop.is_some())
    }

    /// Ends the call at `index`, if one is open there: its arguments take their final form
    /// and what was kept to read them is released.
    fn close_call(&mut self, index: usize) {
        let Some(call) = self.calls.get_mut(&index) else {
            return;
        };
        let Some(arguments) = call.arguments.take() else {
            return;
        };
        if let Some(Part::ToolCall(part)) = self.parts.get_mut(call.part) {
            part.arguments = arguments.finish();
        }
    }

    /// The assembled turn; fails when the stop event never came.
    pub fn finish(self) -> Result<AssistantTurn, AssembleError> {
        let stop_reason = self.stop.ok_or(AssembleError::NoStop)?;
        Ok(AssistantTurn {
            message: Message {
                role: Role::Assistant,
                content: self.parts,
            },
            stop_reason,
            usage: self.usage,
            model: self.model,
            response_id: self.response_id,
        })
    }
}

/// A call id for a provider that sent none (some OpenAI-compatible servers): unique within the
/// turn, stable for its index.
pub(crate) fn synthetic_call_id(index: usize) -> CallId {
    CallId(format!("tackle_call_{index}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn start(index: usize, id: &str) -> StreamEvent {
        StreamEvent::ToolCallStart {
            index,
            id: CallId(id.into()),
            name: "read_file".into(),
        }
    }

    fn args(index: usize, fragment: &str) -> StreamEvent {
        StreamEvent::ToolCallArgumentsDelta {
            index,
            fragment: fragment.into(),
        }
    }

    fn text(t: &str) -> StreamEvent {
        StreamEvent::TextDelta { text: t.into() }
    }

    #[test]
    fn interleaved_parallel_calls_assemble_by_index_in_order() {
        let mut a = TurnAssembler::new();
        for event in [
            text("Reading "),
            text("both."),
            start(0, "call_a"),
            args(0, "{\"path\":\"a"),
            start(1, "call_b"),
            args(1, "{\"path\":"),
            args(0, ".txt\"}"),
            args(1, "\"b.txt\"}"),
            StreamEvent::Stop(StopReason::ToolUse),
        ] {
            a.push(event).unwrap();
        }
        let turn = a.finish().unwrap();
        assert_eq!(turn.message.text(), "Reading both.");
        let calls: Vec<_> = turn.message.tool_calls().collect();
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0].id.0, "call_a");
        assert_eq!(
            calls[0].arguments,
            ToolArguments::Valid {
                value: json!({"path":"a.txt"})
            }
        );
        assert_eq!(
            calls[1].arguments,
            ToolArguments::Valid {
                value: json!({"path":"b.txt"})
            }
        );
    }

    #[test]
    fn thinking_with_signature_then_text_then_call_keeps_order() {
        let mut a = TurnAssembler::new();
        for event in [
            StreamEvent::ThinkingDelta {
                text: "let me ".into(),
            },
            StreamEvent::ThinkingDelta { text: "see".into() },
            StreamEvent::ThinkingSignature {
                signature: "sig".into(),
            },
            text("ok"),
            start(2, "toolu_1"),
            StreamEvent::ToolCallEnd { index: 2 },
            text("after"),
            StreamEvent::Stop(StopReason::ToolUse),
        ] {
            a.push(event).unwrap();
        }
        let parts = a.finish().unwrap().message.content;
        assert_eq!(
            parts[0],
            Part::Thinking {
                text: "let me see".into(),
                signature: Some("sig".into())
            }
        );
        assert_eq!(parts[1], Part::Text { text: "ok".into() });
        assert!(
            matches!(&parts[2], Part::ToolCall(c) if c.arguments == ToolArguments::Valid { value: json!({}) })
        );
        assert_eq!(
            parts[3],
            Part::Text {
                text: "after".into()
            }
        );
    }

    #[test]
    fn invalid_arguments_are_kept_not_fatal() {
        let mut a = TurnAssembler::new();
        a.push(start(0, "c")).unwrap();
        a.push(args(0, "{\"path\": \"unterminated")).unwrap();
        a.push(StreamEvent::Stop(StopReason::MaxTokens)).unwrap();
        let turn = a.finish().unwrap();
        let call = turn.message.tool_calls().next().unwrap();
        assert!(
            matches!(&call.arguments, ToolArguments::Invalid { raw, .. } if raw == "{\"path\": \"unterminated")
        );
    }

    #[test]
    fn a_stream_without_stop_and_unknown_indices_are_errors() {
        let mut a = TurnAssembler::new();
        a.push(text("partial")).unwrap();
        assert_eq!(
            a.push(args(3, "{}")),
            Err(AssembleError::UnknownCallIndex { index: 3 })
        );
        assert_eq!(a.finish(), Err(AssembleError::NoStop));
    }

    #[test]
    fn later_usage_replaces_earlier() {
        let mut a = TurnAssembler::new();
        let first = Usage {
            input_tokens: 10,
            output_tokens: 1,
            ..Usage::default()
        };
        let last = Usage {
            output_tokens: 40,
            ..first
        };
        a.push(StreamEvent::Usage(first)).unwrap();
        a.push(StreamEvent::Usage(last)).unwrap();
        a.push(StreamEvent::Stop(StopReason::EndTurn)).unwrap();
        assert_eq!(a.finish().unwrap().usage, last);
    }
}
