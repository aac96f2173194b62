//! The dispatcher: one model turn's batch through resolve → parse → prepare → gate → schedule →
//! execute → retain → record (DESIGN.md §3).
//!
//! Each stage is a file of its own and hands the next a named type: `admit.rs` ([`Admitted`] or
//! a [`Refusal`]), `schedule.rs` (lanes), `execute.rs` ([`Launch`], then an [`Ending`] in
//! [`Ran`]), `shape.rs` (the [`ToolResult`] and its `call_finished`). This file only sequences
//! them. Every call that reaches here gets exactly one `call_started` and one `call_finished`,
//! whatever happens to it.
//!
//! [`Admitted`]: crate::admit::Admitted
//! [`Refusal`]: crate::admit::Refusal
//! [`Launch`]: crate::execute::Launch
//! [`Ending`]: crate::execute::Ending
//! [`Ran`]: crate::execute::Ran

use std::sync::Arc;
use std::time::Instant;

use tackle_protocol::{Event, Label, ToolCall, ToolResult, ToolSpec};
use tackle_store::Durability;
use tackle_tool::DynTool;
use tokio_util::sync::CancellationToken;

use crate::admit::{Admitted, Refusal};
use crate::approval::{Approver, HeadlessApprover};
use crate::artifact_source::StoreArtifacts;
use crate::blocking::run_blocking;
use crate::catalog::Catalog;
use crate::config::RuntimeConfig;
use crate::error::RuntimeError;
use crate::execute::{Launch, Ran, Ready};
use crate::gate::GateHook;
use crate::progress::{EventObserver, ProgressObserver};
use crate::schedule::{self, Runnable};
use crate::session::Session;
use crate::shape::{Shaping, error_result, shape};
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
    pub(crate) async fn record(
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

    /// The specs `session` is offered: the catalog's, narrowed by the session's tool filter,
    /// in registration order.
    pub fn offered(&self, session: &Session) -> Vec<ToolSpec> {
        let context = session.context();
        self.catalog
            .specs()
            .into_iter()
            .filter(|spec| context.offers(&spec.name))
            .collect()
    }

    /// The tool `name` as `session` sees it: absent when the catalog lacks it or the session's
    /// tool filter leaves it out.
    pub(crate) fn tool_for(&self, session: &Session, name: &str) -> Option<&Arc<dyn DynTool>> {
        self.catalog
            .get(name)
            .filter(|_| session.context().offers(name))
    }

    pub(crate) fn gate(&self) -> &dyn GateHook {
        self.gate.as_ref()
    }

    pub(crate) fn approver(&self) -> &dyn Approver {
        self.approver.as_ref()
    }

    pub(crate) fn observer(&self) -> Option<Arc<dyn ProgressObserver>> {
        self.observer.clone()
    }

    /// Run one turn's calls. Results come back in the order of `calls`, keyed by call id.
    /// `Err` only when the event log cannot be written (the engine cannot keep its record).
    pub async fn run_batch(
        &self,
        session: &Session,
        calls: Vec<ToolCall>,
        cancel: CancellationToken,
    ) -> Result<Vec<ToolResult>, RuntimeError> {
        self.run_batch_for(session, calls, cancel, None).await
    }

    /// [`Runtime::run_batch`] for a tool's own calls: what each call read is folded into the
    /// caller's reads (`caller`), whose output it becomes part of.
    pub(crate) async fn run_batch_for(
        &self,
        session: &Session,
        calls: Vec<ToolCall>,
        cancel: CancellationToken,
        caller: Option<Arc<StoreArtifacts>>,
    ) -> Result<Vec<ToolResult>, RuntimeError> {
        // A resumed session's stateful tools are rebuilt from its log before its first batch.
        session
            .restored
            .get_or_try_init(|| {
                let (catalog, session) = (self.catalog.clone(), session.clone());
                async move {
                    run_blocking(move || crate::restore::restore(&catalog, &session)).await?
                }
            })
            .await?;
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
            match self.admit(session, &turn, call, artifacts.as_ref()).await {
                Ok(Admitted { tool, prepared }) => {
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
                Err(Refusal { status, error }) => {
                    ready.push(None);
                    let label = artifacts.label_with_reads(
                        self.tool_for(session, &call.name)
                            .map_or(Label::LOCAL, |t| t.label()),
                    );
                    let result = error_result(call, status, &error, label);
                    // Refused before it ran: nothing happened that a power loss could hide.
                    self.record_finished(
                        session,
                        &result,
                        None,
                        None,
                        Durability::Written,
                        Vec::new(),
                    )
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
            let caller = caller.as_ref();
            async move {
                let mut done = Vec::with_capacity(lane_calls.len());
                for (i, r) in lane_calls {
                    let res = self
                        .run_call(session, &calls[i], r, &cancel, alone, caller)
                        .await;
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
                let res = self
                    .run_call(session, &calls[i], r, &cancel, alone, caller.as_ref())
                    .await;
                results[i] = Some(res?);
            }
        }
        Ok(results.into_iter().flatten().collect())
    }

    /// One scheduled call through launch, execute and shape, its end recorded.
    async fn run_call(
        &self,
        session: &Session,
        call: &ToolCall,
        ready: Ready,
        batch_cancel: &CancellationToken,
        alone: bool,
        caller: Option<&Arc<StoreArtifacts>>,
    ) -> Result<ToolResult, RuntimeError> {
        let (tool, artifacts) = (ready.tool.clone(), ready.artifacts.clone());
        let label = tool.label();
        // The end of a call with effects is durable before it is acknowledged; a read-only
        // call's end only needs to be written (the flusher syncs it within its window).
        let durability = if tool.read_only() {
            Durability::Written
        } else {
            Durability::Synced
        };
        let queued_us = ready.dispatched.elapsed().as_micros() as u64;
        let Launch { guard, output } =
            match self.launch(session, call, tool.as_ref(), durability, batch_cancel) {
                Ok(launch) => launch,
                Err(Refusal { status, error }) => {
                    let result = error_result(call, status, &error, label);
                    self.record_finished(
                        session,
                        &result,
                        Some(queued_us),
                        None,
                        durability,
                        Vec::new(),
                    )
                    .await?;
                    return Ok(result);
                }
            };
        let Ran {
            ending,
            output,
            ran_us,
        } = self
            .execute(session, call, ready, output, batch_cancel, alone)
            .await;
        let store = session.store.clone();
        // What the call read back (artifacts, other calls' results) comes out with it.
        let shaping = Shaping {
            truncation: tool.truncation(),
            survey: tool.survey() && self.config.digests,
            label: artifacts.label_with_reads(label),
            timeout: self.config.call_timeout,
            reads: artifacts.clone(),
            root: session.root.clone(),
        };
        let result = if durability == Durability::Written && output.in_memory() {
            // Small output of a read-only call: publishing it waits for no device, so it is
            // cheaper done here than handed to a blocking thread.
            shape(call, ending, &output, &store, shaping)
        } else {
            let call_for_shape = call.clone();
            run_blocking(move || shape(&call_for_shape, ending, &output, &store, shaping)).await?
        };
        // What it read is behind what it produced, and behind its caller's output too.
        let read_keys = artifacts.read_keys();
        if let Some(caller) = caller {
            caller.note_reads(read_keys.iter().cloned());
        }
        self.record_finished(
            session,
            &result,
            Some(queued_us),
            Some(ran_us),
            durability,
            read_keys,
        )
        .await?;
        drop(guard);
        Ok(result)
    }
}
