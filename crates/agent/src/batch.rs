//! One turn's tool calls through [`tackle_runtime::Runtime::run_batch`], with all of its
//! semantics (strict parsing, the gate, approvals, scheduling, retention), and its results
//! made ready for the model: attachments the model cannot take become the tool error
//! `media_unsupported` (`tackle_llm::media::refuse_undeliverable`), and the instructions of
//! directories the calls entered go with them.
//!
//! Invalid calls are the runtime's to answer: arguments that are not a JSON object reach it
//! as the string the model wrote, and come back `invalid_arguments`; an unknown tool comes
//! back `unknown_tool`. The loop never second-guesses either.

use std::sync::Arc;

use tackle_llm::media::refuse_undeliverable;
use tackle_protocol::{
    BatchResult, CallStatus, ErrorCode, Event, Message, StopReason, ToolArguments,
    ToolBatchFinished, ToolBatchStarted, ToolCall, ToolResultPart, TurnId,
};
use tackle_runtime::{Runtime, Session};
use tokio_util::sync::CancellationToken;

use crate::error::AgentError;
use crate::model::ModelSetup;
use crate::prompt::{Instructions, path_arguments};
use crate::record::{Record, now_ms};

/// The code of a result whose attachment the model cannot take.
pub const MEDIA_UNSUPPORTED: ErrorCode = ErrorCode::new("media_unsupported");
/// The code of a call cut off by the output limit, which is never run.
pub const OUTPUT_LIMIT: ErrorCode = ErrorCode::new("output_limit");

pub(crate) struct Batch<'a> {
    pub runtime: &'a Arc<Runtime>,
    pub session: &'a Session,
    pub record: &'a Record,
    pub model: &'a ModelSetup,
    pub instructions: &'a mut Instructions,
}

impl Batch<'_> {
    /// Records the batch's start, runs it, and returns its results (not yet recorded).
    pub async fn run(
        self,
        turn: u32,
        message: &Message,
        stop: &StopReason,
        cancel: CancellationToken,
    ) -> Result<ToolBatchFinished, AgentError> {
        let parts: Vec<_> = message.tool_calls().cloned().collect();
        if *stop == StopReason::MaxTokens {
            return Ok(cut_off(turn, &parts));
        }
        self.record
            .append(Event::ToolBatchStarted(ToolBatchStarted {
                turn,
                calls: parts.iter().map(|p| p.id.clone()).collect(),
                at_ms: now_ms(),
            }))
            .await?;
        let calls: Vec<ToolCall> = parts
            .iter()
            .map(|p| ToolCall {
                id: p.id.clone(),
                name: p.name.clone(),
                arguments: match &p.arguments {
                    ToolArguments::Valid { value } => value.clone(),
                    ToolArguments::Invalid { raw, .. } => serde_json::Value::String(raw.clone()),
                },
            })
            .collect();
        self.session
            .set_turn(TurnId(format!("{}-turn-{turn}", self.session.id())));
        let results = self
            .runtime
            .run_batch(self.session, calls.clone(), cancel.clone())
            .await?;
        let notes = self
            .instructions
            .entered(calls.iter().flat_map(|c| path_arguments(&c.arguments)));
        let results = results
            .into_iter()
            .map(|r| {
                let mut part = ToolResultPart {
                    call_id: r.call_id.clone(),
                    content: r.content.clone(),
                    is_error: r.is_error,
                    media: Vec::new(),
                };
                let (mut status, mut code) = (r.status, r.code.clone());
                if refuse_undeliverable(&mut part, &self.model.entry, self.model.family).is_some() {
                    status = CallStatus::Error;
                    code = Some(MEDIA_UNSUPPORTED);
                }
                BatchResult {
                    tool: r.tool.clone(),
                    status,
                    code,
                    result: part,
                    artifacts: r
                        .retained_output
                        .iter()
                        .map(|o| o.artifact.clone())
                        .collect(),
                    no_op: r.metadata.get("no_op").and_then(|v| v.as_bool()) == Some(true),
                }
            })
            .collect();
        Ok(ToolBatchFinished {
            turn,
            results,
            notes,
            cancelled: cancel.is_cancelled(),
            interrupted: false,
            at_ms: now_ms(),
        })
    }
}

/// A turn that hit the output limit: its calls may be truncated, so none runs.
fn cut_off(turn: u32, parts: &[tackle_protocol::ToolCallPart]) -> ToolBatchFinished {
    ToolBatchFinished {
        turn,
        results: parts
            .iter()
            .map(|p| BatchResult {
                tool: p.name.clone(),
                status: CallStatus::Error,
                code: Some(OUTPUT_LIMIT),
                result: ToolResultPart {
                    call_id: p.id.clone(),
                    content: vec![tackle_protocol::ContentBlock::Text {
                        text: format!(
                            "{}: not run: your turn reached its output limit, so this call may be \
                             cut short; make it again, smaller if it was large",
                            p.name
                        ),
                    }],
                    is_error: true,
                    media: Vec::new(),
                },
                artifacts: Vec::new(),
                no_op: false,
            })
            .collect(),
        notes: Vec::new(),
        cancelled: false,
        interrupted: false,
        at_ms: now_ms(),
    }
}
