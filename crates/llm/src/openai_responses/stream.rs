//! Responses stream events lifted into neutral events.
//!
//! Items are keyed by `output_index` (argument deltas also name their `item_id`, used when the
//! index is missing), so parallel function calls may interleave. A call opens at
//! `output_item.added` and ends at `output_item.done`; when a server sends no argument deltas,
//! the arguments of `function_call_arguments.done` or of the finished item are used instead.
//! Reasoning is taken whole from `output_item.done` (`.added` may be incomplete) so its
//! encrypted content can be replayed. The turn ends at `response.completed` or
//! `response.incomplete`; `response.failed` and `error` end it with their error; an end of body
//! before any of them is a cut stream (the transport reports it).

use std::collections::HashMap;

use serde::Deserialize;
use tackle_net::SseEvent;
use tackle_protocol::{CallId, ReasoningPart, StopReason, Usage};

use crate::assemble::synthetic_call_id;
use crate::error::ErrorKind;
use crate::event::StreamEvent;
use crate::openai_chat::error::{WireError, kind_of};
use crate::tool_names::ToolNameMap;
use crate::transport::{Lift, LiftFailure, Lifted};

#[derive(Deserialize)]
#[serde(tag = "type")]
enum WireEvent {
    #[serde(rename = "response.created")]
    Created { response: WireResponse },
    #[serde(rename = "response.output_item.added")]
    ItemAdded {
        #[serde(default)]
        output_index: Option<usize>,
        item: WireItem,
    },
    #[serde(rename = "response.output_item.done")]
    ItemDone {
        #[serde(default)]
        output_index: Option<usize>,
        item: WireItem,
    },
    #[serde(
        rename = "response.output_text.delta",
        alias = "response.refusal.delta"
    )]
    TextDelta {
        #[serde(default)]
        output_index: Option<usize>,
        #[serde(default)]
        item_id: Option<String>,
        delta: String,
    },
    #[serde(rename = "response.function_call_arguments.delta")]
    ArgumentsDelta {
        #[serde(default)]
        output_index: Option<usize>,
        #[serde(default)]
        item_id: Option<String>,
        delta: String,
    },
    #[serde(rename = "response.function_call_arguments.done")]
    ArgumentsDone {
        #[serde(default)]
        output_index: Option<usize>,
        #[serde(default)]
        item_id: Option<String>,
        #[serde(default)]
        arguments: String,
    },
    #[serde(rename = "response.completed", alias = "response.incomplete")]
    Finished { response: WireResponse },
    #[serde(rename = "response.failed")]
    Failed { response: WireResponse },
    /// `code` and `message` beside `type`, as the API reference shows it, or inside an
    /// `error` object, as OpenAI also streams it.
    #[serde(rename = "error")]
    Error {
        #[serde(default)]
        code: Option<serde_json::Value>,
        #[serde(default)]
        message: String,
        #[serde(default)]
        error: Option<WireError>,
    },
    /// Lifecycle events (`in_progress`, `content_part.*`, `*.done` texts, summary deltas) and
    /// types this version does not know: nothing to lift.
    #[serde(other)]
    Other,
}

#[derive(Deserialize, Default)]
struct WireResponse {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    incomplete_details: Option<IncompleteDetails>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<WireError>,
}

#[derive(Deserialize)]
struct IncompleteDetails {
    #[serde(default)]
    reason: Option<String>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireItem {
    FunctionCall {
        #[serde(default)]
        id: Option<String>,
        #[serde(default)]
        call_id: Option<String>,
        #[serde(default)]
        name: String,
        #[serde(default)]
        arguments: String,
    },
    Reasoning {
        #[serde(default)]
        id: String,
        #[serde(default)]
        summary: Vec<SummaryText>,
        #[serde(default)]
        encrypted_content: Option<String>,
    },
    Message {
        #[serde(default)]
        id: Option<String>,
        #[serde(default)]
        content: Vec<MessageContent>,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct SummaryText {
    #[serde(default)]
    text: String,
}

#[derive(Deserialize)]
struct MessageContent {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    refusal: Option<String>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
    #[serde(default)]
    input_tokens_details: Option<InputDetails>,
    #[serde(default)]
    output_tokens_details: Option<OutputDetails>,
}

#[derive(Deserialize)]
struct InputDetails {
    #[serde(default)]
    cached_tokens: u64,
}

#[derive(Deserialize)]
struct OutputDetails {
    #[serde(default)]
    reasoning_tokens: Option<u64>,
}

/// How a stream names an output item: llama.cpp's server sends no `output_index`, only ids.
#[derive(Clone, Debug, PartialEq, Eq)]
enum ItemKey {
    Index(usize),
    Id(String),
}

/// A function call open at one output index.
struct OpenCall {
    /// The assembler's index for it.
    index: usize,
    item_id: Option<String>,
    /// Whether any arguments were passed on (from deltas or a `.done`).
    arguments_sent: bool,
}

pub(crate) struct ResponsesLift {
    names: ToolNameMap,
    started: bool,
    calls: HashMap<usize, OpenCall>,
    next_index: usize,
    /// The message items whose text arrived as deltas, by output index or item id.
    streamed_text: Vec<ItemKey>,
    /// Text deltas arrived that named no item at all.
    streamed_unkeyed_text: bool,
    saw_call: bool,
    saw_refusal: bool,
}

impl ResponsesLift {
    pub fn new(names: ToolNameMap) -> Self {
        Self {
            names,
            started: false,
            calls: HashMap::new(),
            next_index: 0,
            streamed_text: Vec::new(),
            streamed_unkeyed_text: false,
            saw_call: false,
            saw_refusal: false,
        }
    }

    fn started(&mut self, response: &WireResponse, out: &mut Vec<StreamEvent>) {
        if !self.started {
            self.started = true;
            out.push(StreamEvent::Started {
                model: response.model.clone().unwrap_or_default(),
                response_id: response.id.clone(),
            });
        }
    }

    /// The open call an argument event is about: by output index, else by item id.
    fn call_key(&self, output_index: Option<usize>, item_id: Option<&str>) -> Option<usize> {
        if let Some(at) = output_index.filter(|at| self.calls.contains_key(at)) {
            return Some(at);
        }
        let id = item_id?;
        self.calls
            .iter()
            .find(|(_, call)| call.item_id.as_deref() == Some(id))
            .map(|(at, _)| *at)
    }

    fn open_call(
        &mut self,
        at: usize,
        item_id: Option<String>,
        call_id: Option<String>,
        name: &str,
        out: &mut Vec<StreamEvent>,
    ) {
        let index = self.next_index;
        self.next_index += 1;
        self.saw_call = true;
        out.push(StreamEvent::ToolCallStart {
            index,
            id: call_id
                .filter(|id| !id.is_empty())
                .map_or_else(|| synthetic_call_id(index), CallId),
            name: self.names.catalog(name),
        });
        self.calls.insert(
            at,
            OpenCall {
                index,
                item_id,
                arguments_sent: false,
            },
        );
    }

    fn arguments(&mut self, at: usize, fragment: String, out: &mut Vec<StreamEvent>) {
        if let Some(call) = self.calls.get_mut(&at)
            && !fragment.is_empty()
        {
            call.arguments_sent = true;
            out.push(StreamEvent::ToolCallArgumentsDelta {
                index: call.index,
                fragment,
            });
        }
    }

    fn item_added(&mut self, at: usize, item: WireItem, out: &mut Vec<StreamEvent>) {
        if let WireItem::FunctionCall {
            id,
            call_id,
            name,
            arguments,
        } = item
        {
            self.open_call(at, id, call_id, &name, out);
            self.arguments(at, arguments, out);
        }
    }

    fn item_done(
        &mut self,
        output_index: Option<usize>,
        item: WireItem,
        out: &mut Vec<StreamEvent>,
    ) {
        match item {
            WireItem::FunctionCall {
                id,
                call_id,
                name,
                arguments,
            } => {
                let at = self
                    .call_key(output_index, id.as_deref())
                    .or(output_index)
                    .unwrap_or_else(|| self.unused_slot());
                if !self.calls.contains_key(&at) {
                    self.open_call(at, id, call_id, &name, out);
                }
                if self.calls.get(&at).is_some_and(|c| !c.arguments_sent) {
                    self.arguments(at, arguments, out);
                }
                if let Some(call) = self.calls.remove(&at) {
                    out.push(StreamEvent::ToolCallEnd { index: call.index });
                }
            }
            WireItem::Reasoning {
                id,
                summary,
                encrypted_content,
            } => out.push(StreamEvent::Reasoning(ReasoningPart {
                id,
                summary: summary.into_iter().map(|s| s.text).collect(),
                // llama.cpp's server sends "" where it has none.
                encrypted_content: encrypted_content.filter(|e| !e.is_empty()),
            })),
            WireItem::Message { id, content } => {
                if content.iter().any(|c| c.refusal.is_some()) {
                    self.saw_refusal = true;
                }
                let streamed = self.streamed_unkeyed_text
                    || output_index
                        .is_some_and(|i| self.streamed_text.contains(&ItemKey::Index(i)))
                    || id.is_some_and(|id| self.streamed_text.contains(&ItemKey::Id(id)));
                // A server that sent the text only with the finished item.
                if !streamed {
                    for text in content.into_iter().filter_map(|c| c.text.or(c.refusal)) {
                        if !text.is_empty() {
                            out.push(StreamEvent::TextDelta { text });
                        }
                    }
                }
            }
            WireItem::Other => {}
        }
    }

    /// A key no open call uses, for an item that names neither index nor id.
    fn unused_slot(&self) -> usize {
        (usize::MAX - self.calls.len()..=usize::MAX)
            .rev()
            .find(|k| !self.calls.contains_key(k))
            .unwrap_or(usize::MAX)
    }

    fn finished(&mut self, response: WireResponse, out: &mut Vec<StreamEvent>) {
        self.started(&response, out);
        if let Some(usage) = response.usage {
            let cached = usage.input_tokens_details.map_or(0, |d| d.cached_tokens);
            out.push(StreamEvent::Usage(Usage {
                input_tokens: usage.input_tokens.saturating_sub(cached),
                output_tokens: usage.output_tokens,
                cache_read_tokens: cached,
                cache_write_tokens: 0,
                reasoning_tokens: usage.output_tokens_details.and_then(|d| d.reasoning_tokens),
            }));
        }
        let reason = match response.status.as_deref() {
            Some("incomplete") => match response.incomplete_details.and_then(|d| d.reason) {
                Some(r) if r == "max_output_tokens" => StopReason::MaxTokens,
                Some(r) if r == "content_filter" => StopReason::ContentFilter,
                Some(raw) => StopReason::Unknown { raw },
                None => StopReason::Unknown {
                    raw: "incomplete".into(),
                },
            },
            Some("completed") | None if self.saw_call => StopReason::ToolUse,
            Some("completed") | None if self.saw_refusal => StopReason::Refusal,
            Some("completed") | None => StopReason::EndTurn,
            Some(raw) => StopReason::Unknown { raw: raw.into() },
        };
        out.push(StreamEvent::Stop(reason));
    }
}

fn failure(code: Option<serde_json::Value>, message: String) -> LiftFailure {
    let error = WireError {
        message,
        code,
        ..WireError::default()
    };
    LiftFailure {
        kind: kind_of(None, &error),
        message: format!("the provider sent an error mid-stream: {}", error.message),
    }
}

impl Lift for ResponsesLift {
    fn lift(
        &mut self,
        event: &SseEvent,
        out: &mut Vec<StreamEvent>,
    ) -> Result<Lifted, LiftFailure> {
        let value: serde_json::Value =
            serde_json::from_str(&event.data).map_err(|e| LiftFailure {
                kind: ErrorKind::InvalidResponse,
                message: format!("an event is not valid json: {e}"),
            })?;
        // The Chat-style error object some compatible servers send instead of an `error` event.
        if value.get("type").is_none()
            && let Some(error) = value.get("error")
        {
            let error: WireError =
                serde_json::from_value(error.clone()).unwrap_or_else(|_| WireError {
                    message: error.to_string(),
                    ..WireError::default()
                });
            return Err(failure(error.code, error.message));
        }
        let event: WireEvent = serde_json::from_value(value).map_err(|e| LiftFailure {
            kind: ErrorKind::InvalidResponse,
            message: format!("an event does not have the responses shape: {e}"),
        })?;
        match event {
            WireEvent::Created { response } => self.started(&response, out),
            WireEvent::ItemAdded { output_index, item } => {
                let at = output_index.unwrap_or_else(|| self.unused_slot());
                self.item_added(at, item, out);
            }
            WireEvent::ItemDone { output_index, item } => self.item_done(output_index, item, out),
            WireEvent::TextDelta {
                output_index,
                item_id,
                delta,
            } => {
                let key = output_index
                    .map(ItemKey::Index)
                    .or(item_id.map(ItemKey::Id));
                match key {
                    Some(key) if !self.streamed_text.contains(&key) => self.streamed_text.push(key),
                    Some(_) => {}
                    None => self.streamed_unkeyed_text = true,
                }
                if !delta.is_empty() {
                    out.push(StreamEvent::TextDelta { text: delta });
                }
            }
            WireEvent::ArgumentsDelta {
                output_index,
                item_id,
                delta,
            } => {
                let Some(at) = self.call_key(output_index, item_id.as_deref()) else {
                    return Err(LiftFailure {
                        kind: ErrorKind::InvalidResponse,
                        message: "the stream sent arguments for a function call it never opened"
                            .into(),
                    });
                };
                self.arguments(at, delta, out);
            }
            WireEvent::ArgumentsDone {
                output_index,
                item_id,
                arguments,
            } => {
                if let Some(at) = self.call_key(output_index, item_id.as_deref())
                    && self.calls.get(&at).is_some_and(|c| !c.arguments_sent)
                {
                    self.arguments(at, arguments, out);
                }
            }
            WireEvent::Finished { response } => {
                self.finished(response, out);
                return Ok(Lifted::Done);
            }
            WireEvent::Failed { response } => {
                let error = response.error.unwrap_or(WireError {
                    message: "the response failed without an error".into(),
                    ..WireError::default()
                });
                return Err(failure(error.code, error.message));
            }
            WireEvent::Error {
                error: Some(error), ..
            } => return Err(failure(error.code, error.message)),
            WireEvent::Error {
                code,
                message,
                error: None,
            } => return Err(failure(code, message)),
            WireEvent::Other => {}
        }
        Ok(Lifted::More)
    }
}
