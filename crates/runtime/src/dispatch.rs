//! The dispatcher: one model turn's batch through resolve → parse → prepare → gate → schedule →
//! execute → retain → record (DESIGN.md §3).
//!
//! Each stage is a function of its own; this file only sequences them. Every call that reaches
//! here gets exactly one `call_started` and one `call_finished`, whatever happens to it.

use std::any::Any;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Instant;

use futures::FutureExt as _;
use tackle_protocol::{
    CallFinished, CallStatus, ContentBlock, ErrorCode, Event, Label, ToolCall, ToolResult,
    Truncation, TurnId,
};
use tackle_store::Durability;
use tackle_tool::{
    DynTool, ErasedPlan, ExecuteContext, NoToolCalls, OutputSink, PrepareContext, Prepared,
    ToolCompletion, ToolError,
};
use tokio_util::sync::CancellationToken;
use tokio_util::task::AbortOnDropHandle;

use crate::approval::{Approval, ApprovalRequest, Approver, HeadlessApprover};
use crate::artifact_source::StoreArtifacts;
use crate::blocking::run_blocking;
use crate::catalog::Catalog;
use crate::clock::now_ms;
use crate::config::RuntimeConfig;
use crate::error::RuntimeError;
use crate::gate::{GateHook, GateRequest, GateVerdict};
use crate::progress::{EventObserver, ProgressObserver};
use crate::retention::CallOutput;
use crate::retention::capture::sanitize_final_display;
use crate::retention::render::{Rendered, render_bounded, render_opt_out};
use crate::schedule::{self, Runnable};
use crate::session::Session;
use crate::session_calls::SessionCalls;
use crate::stored_arguments::{self, StartRecord};

/// The engine: a catalog, a gate and settings. Cheap to share and to clone (every part is
/// shared); batches run concurrently.
#[derive(Clone)]
pub struct Runtime {
    catalog: Arc<Catalog>,
    gate: Arc<dyn GateHook>,
    config: RuntimeConfig,
    observer: Option<Arc<dyn ProgressObserver>>,
    event_observer: Option<Arc<dyn EventObserver>>,
    approver: Arc<dyn Approver>,
}

/// A call that survived prepare and the gate, waiting for its turn.
struct Ready {
    tool: Arc<dyn DynTool>,
    plan: ErasedPlan,
    dispatched: Instant,
    /// The call's own view of the store, which keeps the label of what it reads back.
    artifacts: Arc<StoreArtifacts>,
}

/// A call that passed resolve, parse and prepare, and that the gate allowed or wants approved
/// (the keys to ask about and the gate's explanation).
type Admitted = (
    Arc<dyn DynTool>,
    Prepared<ErasedPlan>,
    Option<(Vec<String>, String)>,
);
/// A call stopped before execution, with the status and error it ends with.
type Refused = (CallStatus, ToolError);

/// How an execution ended, before shaping.
enum Ending {
    Completed(ToolCompletion),
    Failed(ToolError),
    TimedOut,
    Cancelled,
}

impl Runtime {
    pub fn new(catalog: Catalog, gate: Arc<dyn GateHook>, config: RuntimeConfig) -> Self {
        Self {
            catalog: Arc::new(catalog),
            gate,
            config,
            observer: None,
            event_observer: None,
            approver: Arc::new(HeadlessApprover),
        }
    }

    pub fn with_observer(mut self, observer: Arc<dyn ProgressObserver>) -> Self {
        self.observer = Some(observer);
        self
    }

    /// Ask `approver` about calls the gate wants approved (default: refuse, headless).
    pub fn with_approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = approver;
        self
    }

    /// Notify `observer` of every event once it is acknowledged (see [`Durability`]).
    pub fn with_event_observer(mut self, observer: Arc<dyn EventObserver>) -> Self {
        self.event_observer = Some(observer);
        self
    }

    /// Append an event, wait until it is as durable as `durability` asks, then tell the
    /// observer.
    async fn record(
        &self,
        session: &Session,
        event: Event,
        durability: Durability,
    ) -> Result<u64, RuntimeError> {
        let seq = session.recorder.append(&event, durability).await?;
        if let Some(obs) = &self.event_observer {
            obs.on_recorded(seq, &event);
        }
        Ok(seq)
    }

    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    pub fn config(&self) -> &RuntimeConfig {
        &self.config
    }

    /// Run one turn's calls. Results come back in the order of `calls`, keyed by call id.
    /// `Err` only when the event log cannot be written (the engine cannot keep its record).
    pub async fn run_batch(
        &self,
        session: &Session,
        calls: Vec<ToolCall>,
        cancel: CancellationToken,
    ) -> Result<Vec<ToolResult>, RuntimeError> {
        // Arguments too deep for the recursive code below are replaced by a marker the strict
        // parser refuses (`invalid_arguments`).
        let calls: Vec<ToolCall> = calls
            .into_iter()
            .map(|c| ToolCall {
                arguments: crate::argument_depth::bound(c.arguments),
                ..c
            })
            .collect();
        // Record every call as it reaches the dispatcher. A start is written before the call
        // runs (a killed process keeps it) and made durable in the background or, at the
        // latest, with the call's synced end: a call with effects is acknowledged only once
        // both are on the device.
        // Arguments too large for the log are stored first (synced, under a guard held until
        // the start naming them is written); only those calls leave the executor for it.
        for c in &calls {
            let StartRecord { event, guard } = if stored_arguments::too_large_for_the_log(c) {
                let (c, store) = (c.clone(), session.store.clone());
                run_blocking(move || stored_arguments::start_record(&c, &store)).await?
            } else {
                stored_arguments::start_record(c, &session.store)
            };
            self.record(session, Event::CallStarted(event), Durability::Written)
                .await?;
            drop(guard);
        }

        let turn = session.turn_for_batch();
        let mut results: Vec<Option<ToolResult>> = vec![None; calls.len()];
        let mut ready: Vec<Option<Ready>> = Vec::with_capacity(calls.len());
        let mut runnables = Vec::new();

        // Resolve, parse strictly, prepare (every call before any executes), gate.
        for (index, call) in calls.iter().enumerate() {
            let artifacts = Arc::new(StoreArtifacts::new(session.store.clone()));
            let admitted = match self.admit(session, &turn, call, artifacts.as_ref()) {
                Ok((tool, prepared, Some((keys, message)))) => {
                    match self
                        .ask(session, call, tool.read_only(), &keys, &message)
                        .await
                    {
                        Ok(()) => Ok((tool, prepared)),
                        Err(refused) => Err(refused),
                    }
                }
                Ok((tool, prepared, None)) => Ok((tool, prepared)),
                Err(refused) => Err(refused),
            };
            match admitted {
                Ok((tool, prepared)) => {
                    runnables.push(Runnable {
                        index,
                        concurrency: tool.concurrency(),
                        key: prepared.serialization_key.clone(),
                    });
                    ready.push(Some(Ready {
                        tool,
                        plan: prepared.plan,
                        dispatched: Instant::now(),
                        artifacts,
                    }));
                }
                Err((status, err)) => {
                    ready.push(None);
                    let label = artifacts.label_with_reads(
                        self.catalog
                            .get(&call.name)
                            .map_or(Label::LOCAL, |t| t.label()),
                    );
                    let result = error_result(call, status, &err, label);
                    // Refused before it ran: nothing happened that a power loss could hide.
                    self.record_finished(session, &result, None, None, Durability::Written)
                        .await?;
                    results[index] = Some(result);
                }
            }
        }

        // A call alone in its batch is polled in place when the batch itself runs as a task (as
        // every MCP request does): no hand-off to another task. Driven by `block_on` from outside
        // the runtime (`tackle call`, embedders), the batch has no worker to itself, and a
        // spawned task keeps the call's I/O on the worker that drives the reactor.
        let alone = calls.len() == 1 && tokio::task::try_id().is_some();
        // Schedule: parallel lanes together, then exclusive calls one at a time.
        let plan = schedule::plan(&runnables);
        let lanes = plan.parallel_lanes.iter().map(|lane| {
            let lane_calls: Vec<(usize, Ready)> = lane
                .iter()
                .filter_map(|&i| ready[i].take().map(|r| (i, r)))
                .collect();
            let cancel = cancel.clone();
            let calls = &calls;
            async move {
                let mut done = Vec::with_capacity(lane_calls.len());
                for (i, r) in lane_calls {
                    let res = self.execute(session, &calls[i], r, &cancel, alone).await;
                    done.push((i, res));
                }
                done
            }
        });
        // Collect lane outputs up front so `ready` is no longer borrowed by the futures.
        let lanes: Vec<_> = lanes.collect();
        for lane in futures::future::join_all(lanes).await {
            for (i, res) in lane {
                results[i] = Some(res?);
            }
        }
        for &i in &plan.exclusive {
            if let Some(r) = ready[i].take() {
                results[i] = Some(self.execute(session, &calls[i], r, &cancel, alone).await?);
            }
        }
        Ok(results.into_iter().flatten().collect())
    }

    /// Resolve, parse, prepare and gate one call.
    fn admit(
        &self,
        session: &Session,
        turn: &TurnId,
        call: &ToolCall,
        artifacts: &dyn tackle_tool::ArtifactSource,
    ) -> Result<Admitted, Refused> {
        let Some(tool) = self.catalog.get(&call.name).cloned() else {
            let near = self.catalog.closest(&call.name, 3);
            let hint = if near.is_empty() {
                let all: Vec<&str> = self.catalog.names().collect();
                format!("available tools: {}", all.join(", "))
            } else {
                format!("did you mean {}?", near.join(", "))
            };
            return Err((
                CallStatus::Error,
                ToolError::new(
                    ErrorCode::UNKNOWN_TOOL,
                    format!("unknown tool `{}`; {hint}", call.name),
                )
                .with_metadata(serde_json::json!({ "closest": near })),
            ));
        };
        let cx = PrepareContext {
            root: &session.root,
            session: &session.id,
            turn,
            agent: session.agent.as_deref(),
            call_id: &call.id,
            artifacts,
        };
        let prepared = std::panic::catch_unwind(AssertUnwindSafe(|| {
            tool.prepare_json(call.arguments.clone(), &cx)
        }))
        .map_err(|p| (CallStatus::Error, panic_error(&call.name, "prepare", &*p)))?
        .map_err(|e| (CallStatus::Error, e))?;

        let mut keys = vec![format!("tool.{}", tool.gate_name())];
        keys.extend(prepared.routing.resources.iter().map(|r| r.key()));
        let request = GateRequest {
            session: &session.id,
            tool: &call.name,
            keys,
            resources: &prepared.routing.resources,
            read_only: tool.read_only(),
        };
        match self.gate.check(&request) {
            GateVerdict::Allow => Ok((tool, prepared, None)),
            GateVerdict::Ask { keys, message } => Ok((tool, prepared, Some((keys, message)))),
            GateVerdict::Deny { key, rule, message } => Err((
                CallStatus::Denied,
                ToolError::new(ErrorCode::PERMISSION_DENIED, message.clone()).with_metadata(
                    serde_json::json!({ "tool_denied": { "key": key, "rule": rule, "message": message } }),
                ),
            )),
        }
    }

    /// Put a call the gate wants approved to the approver.
    async fn ask(
        &self,
        session: &Session,
        call: &ToolCall,
        read_only: bool,
        keys: &[String],
        message: &str,
    ) -> Result<(), Refused> {
        let request = ApprovalRequest {
            session: &session.id,
            call_id: &call.id,
            tool: &call.name,
            read_only,
            arguments: &call.arguments,
            keys,
            message,
            session_grant: keys.iter().all(|k| self.gate.session_grantable(k)),
        };
        let key = keys.first().cloned().unwrap_or_default();
        match self.approver.approve(request).await {
            Approval::Once => Ok(()),
            Approval::Session => {
                self.gate.grant_session(&session.id, keys);
                Ok(())
            }
            Approval::Deny { message: reason } => {
                let text = match &reason {
                    Some(r) => format!("{} was refused by the user: {r}", call.name),
                    None => format!("{} was refused by the user", call.name),
                };
                Err((
                    CallStatus::Denied,
                    ToolError::new(ErrorCode::PERMISSION_DENIED, text.clone()).with_metadata(
                        serde_json::json!({ "tool_denied": { "key": key, "rule": "refused at approval", "message": text } }),
                    ),
                ))
            }
            Approval::Unavailable { reason } => Err((
                CallStatus::Denied,
                ToolError::new(
                    ErrorCode::APPROVAL_UNAVAILABLE,
                    format!("{message}; it needs approval, but {reason}"),
                )
                .with_metadata(serde_json::json!({ "keys": keys })),
            )),
        }
    }

    /// Execute one admitted call with timeout and cancellation, then retain, shape and record.
    async fn execute(
        &self,
        session: &Session,
        call: &ToolCall,
        ready: Ready,
        batch_cancel: &CancellationToken,
        alone: bool,
    ) -> Result<ToolResult, RuntimeError> {
        let Ready {
            tool,
            plan,
            dispatched,
            artifacts,
        } = ready;
        let label = tool.label();
        // The end of a call with effects is durable before it is acknowledged; a read-only
        // call's end only needs to be written (the flusher syncs it within its window).
        let durability = if tool.read_only() {
            Durability::Written
        } else {
            Durability::Synced
        };
        let queued_us = dispatched.elapsed().as_micros() as u64;
        if batch_cancel.is_cancelled() {
            let err = ToolError::new(
                ErrorCode::CANCELLED,
                "the batch was cancelled before this call ran",
            );
            let result = error_result(call, CallStatus::Cancelled, &err, label);
            self.record_finished(session, &result, Some(queued_us), None, durability)
                .await?;
            return Ok(result);
        }
        // Garbage collection stays away from this call's artifacts until `call_finished` is durable.
        let guard = match session.store.publication_guard() {
            Ok(g) => g,
            Err(e) => {
                let err = crate::retention::capture::store_error(e);
                let result = error_result(call, CallStatus::Error, &err, label);
                self.record_finished(session, &result, Some(queued_us), None, durability)
                    .await?;
                return Ok(result);
            }
        };
        let output = match CallOutput::new(
            call.id.clone(),
            &tool.output(),
            tool.truncation(),
            &session.store,
            self.config.preview,
            self.observer.clone(),
            durability,
        ) {
            Ok(o) => Arc::new(o),
            Err(err) => {
                let result = error_result(call, CallStatus::Error, &err, label);
                self.record_finished(session, &result, Some(queued_us), None, durability)
                    .await?;
                return Ok(result);
            }
        };
        let cancel = batch_cancel.child_token();
        let cx = ExecuteContext {
            root: session.root.clone(),
            session: session.id.clone(),
            call_id: call.id.clone(),
            artifacts: artifacts.clone(),
            output: OutputSink::new(output.clone()),
            cancel: cancel.clone(),
            read_scope: self.gate.read_scope(),
            calls: if tool.calls_tools() {
                SessionCalls::new(
                    self.clone(),
                    session.clone(),
                    call.id.clone(),
                    artifacts.clone(),
                )
            } else {
                Arc::new(NoToolCalls)
            },
        };
        let started = Instant::now();
        // The only call of its batch has no sibling to overlap with: it is polled right here
        // instead of handed to another task (and, often, another thread). Otherwise it runs as a
        // task of its own, aborted when dropped. Either way, dropping `execution` on timeout or
        // cancellation ends the call. `None` is a task that was cancelled from outside.
        type Executed = Result<Result<ToolCompletion, ToolError>, Option<Box<dyn Any + Send>>>;
        let execution: futures::future::BoxFuture<'_, Executed> = if alone {
            AssertUnwindSafe(tool.execute_erased(plan, cx))
                .catch_unwind()
                .map(|ended| ended.map_err(Some))
                .boxed()
        } else {
            let tool_for_task = tool.clone();
            let task = AbortOnDropHandle::new(tokio::spawn(async move {
                tool_for_task.execute_erased(plan, cx).await
            }));
            task.map(|joined| joined.map_err(|j| j.try_into_panic().ok()))
                .boxed()
        };
        // Biased: a tool that returns because its token fired is cancelled, not done.
        let ending = tokio::select! {
            biased;
            () = batch_cancel.cancelled() => Ending::Cancelled,
            () = tokio::time::sleep(self.config.call_timeout) => Ending::TimedOut,
            ended = execution => match ended {
                Ok(Ok(c)) => Ending::Completed(c),
                Ok(Err(e)) => Ending::Failed(e),
                Err(Some(p)) => Ending::Failed(panic_error(&call.name, "execute", &*p)),
                Err(None) => Ending::Cancelled,
            },
        };
        if !matches!(ending, Ending::Completed(_) | Ending::Failed(_)) {
            cancel.cancel();
            output.close();
        }
        let ran_us = started.elapsed().as_micros() as u64;

        let truncation = tool.truncation();
        let survey = tool.survey() && self.config.digests;
        let timeout = self.config.call_timeout;
        let store = session.store.clone();
        // What the call read back (artifacts, other calls' results) comes out with it.
        let shaping = Shaping {
            truncation,
            survey,
            label: artifacts.label_with_reads(label),
            timeout,
        };
        let result = if durability == Durability::Written && output.in_memory() {
            // Small output of a read-only call: publishing it waits for no device, so it is
            // cheaper done here than handed to a blocking thread.
            shape(call, ending, &output, &store, shaping)
        } else {
            let call_for_shape = call.clone();
            run_blocking(move || shape(&call_for_shape, ending, &output, &store, shaping)).await?
        };
        self.record_finished(session, &result, Some(queued_us), Some(ran_us), durability)
            .await?;
        drop(guard);
        Ok(result)
    }

    async fn record_finished(
        &self,
        session: &Session,
        result: &ToolResult,
        queued_us: Option<u64>,
        ran_us: Option<u64>,
        durability: Durability,
    ) -> Result<(), RuntimeError> {
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
                attachments: result
                    .content
                    .iter()
                    .filter_map(|b| match b {
                        ContentBlock::Attachment { artifact, .. } => Some(artifact.clone()),
                        ContentBlock::Text { .. } => None,
                    })
                    .collect(),
            }),
            durability,
        )
        .await?;
        Ok(())
    }
}

/// What shaping needs to know about the tool and the runtime's settings.
struct Shaping {
    truncation: Truncation,
    /// A survey tool with digests on: large output is shown as a digest.
    survey: bool,
    label: Label,
    timeout: std::time::Duration,
}

/// Turn an execution's ending into the model-facing result. Blocking (publishes artifacts).
fn shape(
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
            }
        }
    }
}

fn error_result(call: &ToolCall, status: CallStatus, err: &ToolError, label: Label) -> ToolResult {
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

fn panic_error(tool: &str, phase: &str, payload: &(dyn std::any::Any + Send)) -> ToolError {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned());
    ToolError::new(
        ErrorCode::PANICKED,
        format!(
            "{tool} panicked during {phase}: {what}; this is a bug in the tool, not in the call"
        ),
    )
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
