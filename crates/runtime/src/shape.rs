//! The shape stage: an execution's [`Ending`] and captured output become the model-facing
//! [`ToolResult`] (retention, rendering, the survey digest, attachments), and every call's end
//! is recorded as `call_finished`.

use tackle_protocol::{
    CallFinished, CallStatus, ContentBlock, ErrorCode, Event, Label, ToolCall, ToolResult,
    Truncation,
};
use tackle_store::Durability;
use tackle_tool::{SurveyListing, ToolError};

use crate::clock::now_ms;
use crate::dispatch::Runtime;
use crate::error::RuntimeError;
use crate::execute::Ending;
use crate::retention::CallOutput;
use crate::retention::capture::sanitize_final_display;
use crate::retention::render::{Rendered, render_bounded, render_opt_out};
use crate::session::Session;

impl Runtime {
    /// Record a call's end, as durable as `durability` asks, with the `read:` keys behind what
    /// it retained (kept only when it retained something: nothing else can be read back).
    pub(crate) async fn record_finished(
        &self,
        session: &Session,
        result: &ToolResult,
        queued_us: Option<u64>,
        ran_us: Option<u64>,
        durability: Durability,
        read_keys: Vec<String>,
    ) -> Result<(), RuntimeError> {
        let attachments: Vec<String> = result
            .content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Attachment { artifact, .. } => Some(artifact.clone()),
                ContentBlock::Text { .. } => None,
            })
            .collect();
        let retained = !result.retained_output.is_empty() || !attachments.is_empty();
        self.record(
            session,
            Event::CallFinished(CallFinished {
                call_id: result.call_id.clone(),
                tool: result.tool.clone(),
                status: result.status,
                code: result.code.clone(),
                at_ms: now_ms(),
                queued_us,
                ran_us,
                retained_output: result.retained_output.clone(),
                incomplete: result.incomplete,
                label: result.label,
                display: result.display.clone(),
                digested: result.digested,
                attachments,
                read_keys: if retained { read_keys } else { Vec::new() },
            }),
            durability,
        )
        .await?;
        Ok(())
    }
}

/// What shaping needs to know about the tool and the runtime's settings.
pub(crate) struct Shaping {
    pub(crate) truncation: Truncation,
    /// A survey tool with digests on: large output is shown as a digest.
    pub(crate) survey: bool,
    pub(crate) label: Label,
    pub(crate) timeout: std::time::Duration,
    /// The call's reads, which a survey listing's files join.
    pub(crate) reads: std::sync::Arc<crate::artifact_source::StoreArtifacts>,
    /// The session root, where a listed name's real path is found.
    pub(crate) root: std::sync::Arc<std::path::Path>,
}

/// Turn an execution's ending into the model-facing result. Blocking (publishes artifacts).
pub(crate) fn shape(
    call: &ToolCall,
    ending: Ending,
    output: &CallOutput,
    store: &tackle_store::ArtifactStore,
    shaping: Shaping,
) -> ToolResult {
    let Shaping {
        truncation,
        survey,
        label,
        timeout,
        reads,
        root,
    } = shaping;
    let mut attachments = Vec::new();
    let mut listing = None;
    let (terminal, metadata, display, failure, summary) = match ending {
        Ending::Completed(c) => {
            attachments = c.attachments;
            listing = c.survey;
            (Some(c.output), c.metadata, c.display, None, c.summary)
        }
        Ending::Failed(e) => {
            // A tool that enforces its own time limit, or notices cancellation, ends the same
            // way the runtime's would.
            let status = match &e.code {
                c if *c == ErrorCode::TIMEOUT => CallStatus::TimedOut,
                c if *c == ErrorCode::CANCELLED => CallStatus::Cancelled,
                _ => CallStatus::Error,
            };
            (None, serde_json::Value::Null, None, Some((status, e)), None)
        }
        Ending::TimedOut => (
            None,
            serde_json::Value::Null,
            None,
            Some((
                CallStatus::TimedOut,
                ToolError::new(
                    ErrorCode::TIMEOUT,
                    format!(
                        "{} did not finish within {} s; output captured so far is kept",
                        call.name,
                        timeout.as_secs_f64()
                    ),
                ),
            )),
            None,
        ),
        Ending::Cancelled => (
            None,
            serde_json::Value::Null,
            None,
            Some((
                CallStatus::Cancelled,
                ToolError::new(
                    ErrorCode::CANCELLED,
                    "the call was cancelled; output captured so far is kept",
                ),
            )),
            None,
        ),
    };
    let (finished, failure) = match output.finish(terminal, store) {
        Ok(f) => (f, failure),
        // Terminal output was refused (resupplied after streaming, undeclared stream) or a
        // capture write failed: the output already accepted is still published and shown as
        // incomplete beside the error, never dropped.
        Err(e) if truncation == Truncation::Bounded => match output.finish(None, store) {
            Ok(f) => (f, failure.or(Some((CallStatus::Error, e)))),
            Err(e) => return error_result(call, CallStatus::Error, &e, label),
        },
        Err(e) => return error_result(call, CallStatus::Error, &e, label),
    };
    let rendered = match truncation {
        Truncation::Bounded => Ok(render_bounded(finished)),
        Truncation::OptOut => render_opt_out(finished),
    };
    let mut rendered = match rendered {
        Ok(r) => r,
        Err(e) => return error_result(call, CallStatus::Error, &e, label),
    };
    if let Some(listing) = &listing {
        reads.note_reads(crate::read_sources::listed_files(&root, listing));
    }
    let mut digested = false;
    if survey && failure.is_none() {
        digested = apply_digest(call, listing.as_ref(), &metadata, &mut rendered);
    }
    let mut blocks = Vec::with_capacity(attachments.len());
    for a in attachments {
        match store.put(&a.data) {
            Ok(info) => blocks.push(ContentBlock::Attachment {
                mime_type: a.mime_type,
                bytes: info.bytes,
                artifact: info.id.internal_uri(),
            }),
            Err(e) => {
                let err = crate::retention::capture::store_error(e);
                return error_result(call, CallStatus::Error, &err, label);
            }
        }
    }
    let display = display.map(|d| sanitize_final_display(&d));
    let rendered_text = match summary {
        Some(line) => format!("{}\n{}", line.trim_end(), rendered.text),
        None => rendered.text,
    };
    let rendered = crate::retention::render::Rendered {
        text: rendered_text,
        retained: rendered.retained,
    };
    match failure {
        None => ToolResult {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            status: CallStatus::Ok,
            is_error: false,
            code: None,
            content: std::iter::once(ContentBlock::Text {
                text: rendered.text,
            })
            .chain(blocks)
            .collect(),
            metadata,
            retained_output: rendered.retained,
            incomplete: false,
            label,
            display,
            digested,
            listing_key: listing.as_ref().map(SurveyListing::key),
        },
        Some((status, err)) => {
            let has_output = !rendered.text.is_empty();
            let mut text = format!("error [{}]: {}\n", err.code, err.message);
            if has_output {
                text.push_str("output before the failure (incomplete):\n");
                text.push_str(&rendered.text);
            }
            ToolResult {
                call_id: call.id.clone(),
                tool: call.name.clone(),
                status,
                is_error: true,
                code: Some(err.code),
                content: vec![ContentBlock::Text { text }],
                metadata: err.metadata,
                incomplete: has_output,
                retained_output: rendered.retained,
                label,
                display,
                digested: false,
                listing_key: None,
            }
        }
    }
}

pub(crate) fn error_result(
    call: &ToolCall,
    status: CallStatus,
    err: &ToolError,
    label: Label,
) -> ToolResult {
    ToolResult {
        call_id: call.id.clone(),
        tool: call.name.clone(),
        status,
        is_error: true,
        code: Some(err.code.clone()),
        content: vec![ContentBlock::Text {
            text: format!("error [{}]: {}\n", err.code, err.message),
        }],
        metadata: err.metadata.clone(),
        retained_output: Vec::new(),
        incomplete: false,
        label,
        display: None,
        digested: false,
        listing_key: None,
    }
}

/// Replace a large survey result by its structural digest (seed 003, "Digested survey tools").
/// Only single, retained output over the threshold is digested, and a digest that is not
/// smaller than the output is discarded. Returns whether the model sees the digest.
fn apply_digest(
    call: &ToolCall,
    listing: Option<&tackle_tool::SurveyListing>,
    metadata: &serde_json::Value,
    rendered: &mut Rendered,
) -> bool {
    let [raw] = rendered.retained.as_mut_slice() else {
        return false;
    };
    if raw.stream.is_some() || raw.bytes <= crate::digest::DIGEST_THRESHOLD_BYTES {
        return false;
    }
    let digest = crate::digest::digest_text(
        &call.name, &call.id.0, listing, metadata, raw.bytes, raw.lines,
    );
    if digest.len() as u64 >= raw.bytes {
        return false;
    }
    raw.truncated = true;
    rendered.text = digest;
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use tackle_protocol::{CallId, RetainedOutput};

    fn rendered(bytes: u64) -> Rendered {
        Rendered {
            text: "raw\n".to_owned(),
            retained: vec![RetainedOutput {
                stream: None,
                artifact: "artifact://sha256/00".to_owned(),
                bytes,
                lines: 1,
                truncated: false,
            }],
        }
    }

    fn call() -> ToolCall {
        ToolCall {
            id: CallId("c1".into()),
            name: "grep".into(),
            arguments: serde_json::Value::Null,
        }
    }

    #[test]
    fn a_digest_no_smaller_than_the_output_is_discarded() {
        // Pruning keeps every key, so 400 long keys make a digest larger than the output.
        let metadata: serde_json::Map<String, serde_json::Value> = (0..400)
            .map(|i| {
                (
                    format!("a-rather-long-key-number-{i:04}"),
                    serde_json::json!(i),
                )
            })
            .collect();
        let mut r = rendered(8_001);
        assert!(!apply_digest(&call(), None, &metadata.into(), &mut r));
        assert_eq!(r.text, "raw\n");
        assert!(!r.retained[0].truncated);
    }

    #[test]
    fn only_output_over_the_threshold_is_digested() {
        let listing = tackle_tool::SurveyListing::Entries(vec!["a".into(), "b/".into()]);
        let metadata = serde_json::json!({ "entries": listing.to_json() });
        let mut small = rendered(crate::digest::DIGEST_THRESHOLD_BYTES);
        assert!(!apply_digest(
            &call(),
            Some(&listing),
            &metadata,
            &mut small
        ));
        let mut big = rendered(50_000);
        assert!(apply_digest(&call(), Some(&listing), &metadata, &mut big));
        assert!(big.text.contains("2 entries: 1 files, 1 directories"));
        assert!(big.retained[0].truncated);
    }
}
