//! `streamGenerateContent?alt=sse` events lifted into neutral events.
//!
//! Every `data:` is a whole `GenerateContentResponse`: text parts are deltas, `thought: true`
//! parts thinking, each `functionCall` part one whole call (ids synthesized when the API sends
//! none), a `thoughtSignature` on any part a [`StreamEvent::PartSignature`] right after it.
//! `usageMetadata` is cumulative. The stream has no terminal event: a `finishReason` is
//! remembered and the stop is emitted when the connection closes, so a later usage chunk is not
//! lost; a close without one is a cut stream. An `error` object, framed or bare, ends the turn
//! with its class.

use serde::Deserialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use tackle_net::SseEvent;
use tackle_protocol::{CallId, StopReason, Usage};

use crate::error::ErrorKind;
use crate::event::StreamEvent;
use crate::tool_names::ToolNameMap;
use crate::transport::{Lift, LiftFailure, Lifted};

use super::error::{GoogleError, describe, kind_of, parse};

/// Ids made up for calls the API sent without one start with this; they are never sent back.
const SYNTHETIC_ID_PREFIX: &str = "tackle-gc-";

pub(super) fn is_synthetic_id(id: &str) -> bool {
    id.starts_with(SYNTHETIC_ID_PREFIX)
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Chunk {
    #[serde(default)]
    candidates: Vec<Candidate>,
    #[serde(default)]
    usage_metadata: Option<WireUsage>,
    #[serde(default)]
    model_version: Option<String>,
    #[serde(default)]
    response_id: Option<String>,
    #[serde(default)]
    prompt_feedback: Option<PromptFeedback>,
    #[serde(default)]
    error: Option<GoogleError>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Candidate {
    #[serde(default)]
    content: Option<Content>,
    #[serde(default)]
    finish_reason: Option<String>,
    #[serde(default)]
    finish_message: Option<String>,
    #[serde(default)]
    index: Option<u32>,
}

#[derive(Deserialize)]
struct Content {
    #[serde(default)]
    parts: Vec<WirePart>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WirePart {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    thought: bool,
    #[serde(default)]
    thought_signature: Option<String>,
    #[serde(default)]
    function_call: Option<FunctionCall>,
}

#[derive(Deserialize)]
struct FunctionCall {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    name: String,
    #[serde(default)]
    args: Option<Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PromptFeedback {
    #[serde(default)]
    block_reason: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct WireUsage {
    #[serde(default)]
    prompt_token_count: u64,
    #[serde(default)]
    candidates_token_count: u64,
    #[serde(default)]
    cached_content_token_count: u64,
    #[serde(default)]
    thoughts_token_count: Option<u64>,
}

/// The lifter of one response.
pub(crate) struct GeminiLift {
    names: ToolNameMap,
    /// The requested model, reported when the stream names none.
    model: String,
    started: bool,
    response_id: Option<String>,
    calls: usize,
    finish: Option<String>,
}

impl GeminiLift {
    pub fn new(names: ToolNameMap, model: &str) -> Self {
        Self {
            names,
            model: model.to_owned(),
            started: false,
            response_id: None,
            calls: 0,
            finish: None,
        }
    }

    fn part(&mut self, part: WirePart, out: &mut Vec<StreamEvent>) {
        if let Some(call) = part.function_call {
            let index = self.calls;
            self.calls += 1;
            let arguments = call.args.map_or_else(|| "{}".to_owned(), |a| a.to_string());
            let id = match call.id.filter(|id| !id.is_empty()) {
                Some(id) => CallId(id),
                None => self.synthetic_id(index, &call.name, &arguments),
            };
            out.push(StreamEvent::ToolCallStart {
                index,
                id,
                name: self.names.catalog(&call.name),
            });
            out.push(StreamEvent::ToolCallArgumentsDelta {
                index,
                fragment: arguments,
            });
            out.push(StreamEvent::ToolCallEnd { index });
        } else if let Some(text) = part.text {
            out.push(if part.thought {
                StreamEvent::ThinkingDelta { text }
            } else {
                StreamEvent::TextDelta { text }
            });
        }
        if let Some(signature) = part.thought_signature.filter(|s| !s.is_empty()) {
            out.push(StreamEvent::PartSignature { signature });
        }
    }

    /// Stable for the same response and call, distinct across responses and positions.
    fn synthetic_id(&self, index: usize, name: &str, arguments: &str) -> CallId {
        let mut hash = Sha256::new();
        for field in [self.response_id.as_deref().unwrap_or(""), name, arguments] {
            hash.update(field.as_bytes());
            hash.update([0]);
        }
        let digest = hex::encode(&hash.finalize()[..6]);
        CallId(format!("{SYNTHETIC_ID_PREFIX}{index}-{digest}"))
    }

    fn stop(&self) -> StopReason {
        let raw = self.finish.as_deref().unwrap_or("");
        match raw {
            "STOP" if self.calls > 0 => StopReason::ToolUse,
            "STOP" => StopReason::EndTurn,
            "MAX_TOKENS" => StopReason::MaxTokens,
            "SAFETY"
            | "RECITATION"
            | "PROHIBITED_CONTENT"
            | "BLOCKLIST"
            | "SPII"
            | "IMAGE_SAFETY"
            | "IMAGE_PROHIBITED_CONTENT" => StopReason::ContentFilter,
            other => StopReason::Unknown {
                raw: other.to_owned(),
            },
        }
    }
}

fn usage(wire: WireUsage) -> Usage {
    let cached = wire.cached_content_token_count.min(wire.prompt_token_count);
    Usage {
        input_tokens: wire.prompt_token_count - cached,
        // Gemini counts thoughts apart from the candidates; both are output.
        output_tokens: wire.candidates_token_count + wire.thoughts_token_count.unwrap_or(0),
        cache_read_tokens: cached,
        cache_write_tokens: 0,
        reasoning_tokens: wire.thoughts_token_count,
    }
}

fn failure(error: &GoogleError) -> LiftFailure {
    LiftFailure {
        kind: kind_of(None, error).0,
        message: format!("the provider sent an error mid-stream: {}", describe(error)),
    }
}

impl Lift for GeminiLift {
    const READS_UNFRAMED: bool = true;

    fn lift(
        &mut self,
        event: &SseEvent,
        out: &mut Vec<StreamEvent>,
    ) -> Result<Lifted, LiftFailure> {
        let chunk: Chunk = serde_json::from_str(&event.data).map_err(|e| LiftFailure {
            kind: ErrorKind::InvalidResponse,
            message: format!("a stream chunk is not a GenerateContentResponse: {e}"),
        })?;
        if let Some(error) = &chunk.error {
            return Err(failure(error));
        }
        if !self.started {
            self.started = true;
            self.response_id = chunk.response_id.clone();
            out.push(StreamEvent::Started {
                model: chunk.model_version.unwrap_or_else(|| self.model.clone()),
                response_id: chunk.response_id,
            });
        }
        if let Some(reason) = chunk.prompt_feedback.and_then(|f| f.block_reason) {
            return Err(LiftFailure {
                kind: ErrorKind::InvalidRequest,
                message: format!(
                    "the provider blocked the prompt ({reason}); rephrase the request or remove the content it objects to"
                ),
            });
        }
        for candidate in chunk.candidates {
            if candidate.index.is_some_and(|i| i != 0) {
                continue; // one candidate is asked for
            }
            for part in candidate.content.map(|c| c.parts).unwrap_or_default() {
                self.part(part, out);
            }
            if let Some(reason) = candidate.finish_reason {
                if reason == "MALFORMED_FUNCTION_CALL" {
                    let detail = candidate
                        .finish_message
                        .map(|m| format!(": {m}"))
                        .unwrap_or_default();
                    return Err(LiftFailure {
                        kind: ErrorKind::InvalidResponse,
                        message: format!(
                            "the model produced a malformed function call (MALFORMED_FUNCTION_CALL){detail}; try the turn again"
                        ),
                    });
                }
                self.finish = Some(reason);
            }
        }
        if let Some(wire) = chunk.usage_metadata {
            out.push(StreamEvent::Usage(usage(wire)));
        }
        Ok(Lifted::More)
    }

    fn end_of_body(&mut self, out: &mut Vec<StreamEvent>) -> bool {
        if self.finish.is_none() {
            return false;
        }
        out.push(StreamEvent::Stop(self.stop()));
        true
    }

    fn unframed(&mut self, text: &str) -> LiftFailure {
        match parse(text.as_bytes()) {
            Some(error) => failure(&error),
            None => LiftFailure {
                kind: ErrorKind::InvalidResponse,
                message: "the stream carried json outside its events that is not an error; check that the base url points at the provider's api".into(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lift(lifter: &mut GeminiLift, data: &str) -> Result<Vec<StreamEvent>, LiftFailure> {
        let mut out = Vec::new();
        let event = SseEvent {
            event: "message".into(),
            data: data.into(),
            id: None,
        };
        lifter.lift(&event, &mut out).map(|_| out)
    }

    #[test]
    fn finish_reasons_map_as_a_table() {
        let cases = [
            ("STOP", 0, StopReason::EndTurn),
            ("STOP", 1, StopReason::ToolUse),
            ("MAX_TOKENS", 0, StopReason::MaxTokens),
            ("SAFETY", 0, StopReason::ContentFilter),
            ("RECITATION", 0, StopReason::ContentFilter),
            ("PROHIBITED_CONTENT", 0, StopReason::ContentFilter),
            ("BLOCKLIST", 0, StopReason::ContentFilter),
            ("SPII", 0, StopReason::ContentFilter),
            (
                "LANGUAGE",
                0,
                StopReason::Unknown {
                    raw: "LANGUAGE".into(),
                },
            ),
        ];
        for (raw, calls, want) in cases {
            let mut l = GeminiLift::new(ToolNameMap::default(), "m");
            l.finish = Some(raw.into());
            l.calls = calls;
            let mut out = Vec::new();
            assert!(l.end_of_body(&mut out), "{raw}");
            assert_eq!(out, vec![StreamEvent::Stop(want)], "{raw}");
        }
        let mut unfinished = GeminiLift::new(ToolNameMap::default(), "m");
        assert!(!unfinished.end_of_body(&mut Vec::new()));
    }

    #[test]
    fn bad_chunks_are_classified_failures() {
        let cases = [
            ("not json", ErrorKind::InvalidResponse),
            (r#"{"candidates":"nope"}"#, ErrorKind::InvalidResponse),
            (
                r#"{"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}"#,
                ErrorKind::Overloaded,
            ),
            (
                r#"{"promptFeedback":{"blockReason":"SAFETY"}}"#,
                ErrorKind::InvalidRequest,
            ),
            (
                r#"{"candidates":[{"content":{"parts":[]},"finishReason":"MALFORMED_FUNCTION_CALL","finishMessage":"bad call"}]}"#,
                ErrorKind::InvalidResponse,
            ),
        ];
        for (data, kind) in cases {
            let mut l = GeminiLift::new(ToolNameMap::default(), "m");
            let e = lift(&mut l, data).expect_err(data);
            assert_eq!(e.kind, kind, "{data}: {}", e.message);
        }
    }

    #[test]
    fn synthetic_ids_are_stable_and_distinct() {
        let data = r#"{"responseId":"r1","candidates":[{"content":{"parts":[
            {"functionCall":{"name":"a","args":{}}},{"functionCall":{"name":"a","args":{}}},
            {"functionCall":{"id":"given","name":"b"}}]}}]}"#;
        let ids = |data: &str| -> Vec<String> {
            let mut l = GeminiLift::new(ToolNameMap::default(), "m");
            lift(&mut l, data)
                .unwrap()
                .into_iter()
                .filter_map(|e| match e {
                    StreamEvent::ToolCallStart { id, .. } => Some(id.0),
                    _ => None,
                })
                .collect()
        };
        let first = ids(data);
        assert_eq!(first, ids(data));
        assert_ne!(first[0], first[1]);
        assert!(is_synthetic_id(&first[0]) && first[2] == "given");
        assert_ne!(first, ids(&data.replace("r1", "r2")));
    }
}
