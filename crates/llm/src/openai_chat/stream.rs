//! Chat Completions chunks lifted into neutral events.
//!
//! Tool calls are accumulated by `index`: the id and name arrive only in a call's first delta.
//! Servers that break the rule are tolerated where it is unambiguous: a missing `index` is the
//! position in the delta's array, and a new id on an index already in use opens a new call.
//! The turn ends at `data: [DONE]`; a chunk carrying an `error` ends it with that error.

use std::collections::HashMap;

use serde::Deserialize;

use tackle_net::SseEvent;
use tackle_protocol::{CallId, StopReason, Usage};

use super::error::{WireError, kind_of};
use crate::assemble::synthetic_call_id;
use crate::error::ErrorKind;
use crate::event::StreamEvent;
use crate::tool_names::ToolNameMap;
use crate::transport::{Lift, LiftFailure, Lifted};

#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<WireError>,
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    delta: Option<Delta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize, Default)]
struct Delta {
    #[serde(default)]
    content: Option<String>,
    /// llama.cpp, vLLM and DeepSeek name it `reasoning_content`; OpenRouter and Ollama `reasoning`.
    #[serde(default, alias = "reasoning")]
    reasoning_content: Option<String>,
    #[serde(default)]
    tool_calls: Vec<ToolCallDelta>,
}

#[derive(Deserialize)]
struct ToolCallDelta {
    #[serde(default)]
    index: Option<usize>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<FunctionDelta>,
}

#[derive(Deserialize)]
struct FunctionDelta {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    #[serde(default)]
    prompt_tokens_details: Option<PromptDetails>,
    #[serde(default)]
    completion_tokens_details: Option<CompletionDetails>,
}

#[derive(Deserialize)]
struct PromptDetails {
    #[serde(default)]
    cached_tokens: u64,
}

#[derive(Deserialize)]
struct CompletionDetails {
    #[serde(default)]
    reasoning_tokens: Option<u64>,
}

/// The call open at one wire index.
struct OpenCall {
    id: Option<String>,
    /// The assembler's index for it (unique per turn).
    index: usize,
}

pub(crate) struct ChatLift {
    names: ToolNameMap,
    started: bool,
    calls: HashMap<usize, OpenCall>,
    next_index: usize,
    finish: Option<StopReason>,
}

impl ChatLift {
    pub fn new(names: ToolNameMap) -> Self {
        Self {
            names,
            started: false,
            calls: HashMap::new(),
            next_index: 0,
            finish: None,
        }
    }

    fn tool_call(&mut self, position: usize, delta: ToolCallDelta, out: &mut Vec<StreamEvent>) {
        let wire_index = delta.index.unwrap_or(position);
        let (name, arguments) = match delta.function {
            Some(f) => (f.name, f.arguments),
            None => (None, None),
        };
        let reopened = match (self.calls.get(&wire_index), &delta.id) {
            (None, _) => true,
            (Some(open), Some(id)) => open.id.as_deref().is_some_and(|o| o != id),
            (Some(_), None) => false,
        };
        if reopened {
            let index = self.next_index;
            self.next_index += 1;
            out.push(StreamEvent::ToolCallStart {
                index,
                id: delta
                    .id
                    .clone()
                    .map_or_else(|| synthetic_call_id(index), CallId),
                name: self.names.catalog(name.as_deref().unwrap_or_default()),
            });
            self.calls.insert(
                wire_index,
                OpenCall {
                    id: delta.id,
                    index,
                },
            );
        }
        if let Some(fragment) = arguments.filter(|a| !a.is_empty())
            && let Some(open) = self.calls.get(&wire_index)
        {
            out.push(StreamEvent::ToolCallArgumentsDelta {
                index: open.index,
                fragment,
            });
        }
    }
}

pub(crate) fn finish_reason(raw: &str) -> StopReason {
    match raw {
        "stop" => StopReason::EndTurn,
        "tool_calls" | "function_call" => StopReason::ToolUse,
        "length" => StopReason::MaxTokens,
        "content_filter" => StopReason::ContentFilter,
        other => StopReason::Unknown {
            raw: other.to_owned(),
        },
    }
}

impl Lift for ChatLift {
    fn lift(
        &mut self,
        event: &SseEvent,
        out: &mut Vec<StreamEvent>,
    ) -> Result<Lifted, LiftFailure> {
        if event.data.trim() == "[DONE]" {
            let reason = self
                .finish
                .take()
                .unwrap_or(StopReason::Unknown { raw: String::new() });
            out.push(StreamEvent::Stop(reason));
            return Ok(Lifted::Done);
        }
        let chunk: Chunk = serde_json::from_str(&event.data).map_err(|e| LiftFailure {
            kind: ErrorKind::InvalidResponse,
            message: format!("a chunk is not valid json: {e}"),
        })?;
        if let Some(error) = chunk.error {
            return Err(LiftFailure {
                kind: kind_of(None, &error),
                message: format!("the provider sent an error mid-stream: {}", error.message),
            });
        }
        // Azure opens with a chunk of content-filter results and no model; the first chunk
        // that names one starts the turn.
        if !self.started
            && let Some(model) = chunk.model.filter(|m| !m.is_empty())
        {
            self.started = true;
            out.push(StreamEvent::Started {
                model,
                response_id: chunk.id,
            });
        }
        // n = 1: only the first choice is read.
        if let Some(choice) = chunk.choices.into_iter().next() {
            let delta = choice.delta.unwrap_or_default();
            if let Some(text) = delta.reasoning_content.filter(|t| !t.is_empty()) {
                out.push(StreamEvent::ThinkingDelta { text });
            }
            if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
                out.push(StreamEvent::TextDelta { text });
            }
            for (position, call) in delta.tool_calls.into_iter().enumerate() {
                self.tool_call(position, call, out);
            }
            if let Some(reason) = choice.finish_reason {
                self.finish = Some(finish_reason(&reason));
            }
        }
        if let Some(usage) = chunk.usage {
            let cached = usage.prompt_tokens_details.map_or(0, |d| d.cached_tokens);
            out.push(StreamEvent::Usage(Usage {
                input_tokens: usage.prompt_tokens.saturating_sub(cached),
                output_tokens: usage.completion_tokens,
                cache_read_tokens: cached,
                cache_write_tokens: 0,
                reasoning_tokens: usage
                    .completion_tokens_details
                    .and_then(|d| d.reasoning_tokens),
            }));
        }
        Ok(Lifted::More)
    }
}
