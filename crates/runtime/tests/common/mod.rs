//! The one harness the runtime's integration tests go through: a temp project, a session, a
//! runtime over test tools, and helpers to read back the event log and artifacts.
//!
//! The test tools live here so every test file drives the runtime the same way: `Step` records
//! when it starts and ends on a shared sequence counter and can wait on named signals and a
//! barrier; `Scripted` replays an exact script of output writes, progress deltas and a terminal
//! completion; `Hang` streams a little and then never finishes; `Panics` and `BadPrepare` fail
//! in the two places a tool can fail.

#![allow(dead_code)] // each test file uses a different subset
#![allow(clippy::unwrap_used, clippy::expect_used)] // test scaffolding: a failure should panic loudly

use std::borrow::Cow;
use std::collections::HashMap;
use std::future::Future;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tackle_protocol::{
    CallId, Concurrency, ErrorCode, Label, OutputDeclaration, StreamName, ToolCall, ToolResult,
    Truncation,
};
use tackle_runtime::{
    AllowAll, CancellationToken, Catalog, PreviewLimits, ProgressObserver, Runtime, RuntimeConfig,
    Session,
};
use tackle_store::{ArtifactId, EventLog};
use tackle_tool::{
    CompletionOutput, DynTool, ExecuteContext, PrepareContext, Prepared, Routing, SerializationKey,
    Tool, ToolCompletion, ToolError, ToolProgress,
};
use tokio::sync::watch;

/// A regression that serializes what must overlap would otherwise hang; this turns it into a
/// failure. Generous, because it only ever fires on a bug.
pub const GUARD: Duration = Duration::from_secs(20);

/// A temp project with a session and a runtime.
pub struct Harness {
    pub dir: tempfile::TempDir,
    pub session: Session,
    pub runtime: Runtime,
}

impl Harness {
    pub fn new(
        tools: Vec<Arc<dyn DynTool>>,
        preview: PreviewLimits,
        call_timeout: Duration,
    ) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let session = Session::open(dir.path()).expect("open session");
        let catalog = Catalog::new(tools).expect("catalog");
        let runtime = Runtime::new(
            catalog,
            Arc::new(AllowAll),
            RuntimeConfig {
                preview,
                call_timeout,
                ..RuntimeConfig::default()
            },
        );
        Self {
            dir,
            session,
            runtime,
        }
    }

    /// A harness whose calls pass `gate` (a policy, say) instead of being allowed outright.
    pub fn gated(tools: Vec<Arc<dyn DynTool>>, gate: Arc<dyn tackle_runtime::GateHook>) -> Self {
        let mut h = Harness::new(Vec::new(), WIDE, LONG_TIMEOUT);
        h.runtime = Runtime::new(
            Catalog::new(tools).expect("catalog"),
            gate,
            RuntimeConfig {
                preview: WIDE,
                call_timeout: LONG_TIMEOUT,
                ..RuntimeConfig::default()
            },
        );
        h
    }

    /// Replace the runtime with one that reports live progress to `observer`.
    pub fn with_observer(mut self, observer: Arc<dyn ProgressObserver>) -> Self {
        self.runtime = self.runtime.with_observer(observer);
        self
    }

    pub fn root(&self) -> &Path {
        &self.session.root
    }

    /// Run one batch under [`GUARD`], panicking on a runtime error or a hang.
    pub async fn run(&self, calls: Vec<ToolCall>) -> Vec<ToolResult> {
        self.run_with(calls, CancellationToken::new()).await
    }

    pub async fn run_with(
        &self,
        calls: Vec<ToolCall>,
        cancel: CancellationToken,
    ) -> Vec<ToolResult> {
        guarded(self.runtime.run_batch(&self.session, calls, cancel))
            .await
            .expect("run_batch returned a runtime error")
    }

    /// Every event in the session's log, in sequence order.
    pub fn events(&self) -> Vec<Value> {
        EventLog::read_records(&self.session.event_log_path())
            .expect("read event log")
            .into_iter()
            .map(|r| r.event)
            .collect()
    }

    /// `call_finished` events in log order.
    pub fn finished_events(&self) -> Vec<Value> {
        self.events()
            .into_iter()
            .filter(|e| e["type"] == "call_finished")
            .collect()
    }

    pub fn read_artifact(&self, internal_uri: &str) -> Vec<u8> {
        let id = ArtifactId::from_internal_uri(internal_uri).expect("internal artifact uri");
        self.session.store.read(id).expect("read artifact")
    }
}

pub async fn guarded<F: Future>(f: F) -> F::Output {
    tokio::time::timeout(GUARD, f)
        .await
        .expect("batch did not finish: calls that must overlap were serialized")
}

pub fn call(id: &str, name: &str, arguments: Value) -> ToolCall {
    ToolCall {
        id: CallId(id.to_owned()),
        name: name.to_owned(),
        arguments,
    }
}

pub fn stream(name: &str) -> StreamName {
    StreamName::parse(name).expect("valid stream name")
}

/// Generous limits for tests that do not look at truncation.
pub const WIDE: PreviewLimits = PreviewLimits {
    max_lines: 100_000,
    max_bytes: 10_000_000,
};
pub const LONG_TIMEOUT: Duration = Duration::from_secs(60);

pub fn code(result: &ToolResult) -> Option<&str> {
    result.code.as_ref().map(ErrorCode::as_str)
}

// ---------------------------------------------------------------------------------------------
// Step: a tool that records its execution interval.

/// One execution interval, on a shared sequence counter (no clocks: orderings only).
#[derive(Clone, Copy, Debug)]
pub struct Span {
    pub start: u64,
    pub end: u64,
}

/// Shared state of the `Step` tools of one test: the sequence counter, the recorded spans,
/// named one-shot signals and an optional barrier.
pub struct Lab {
    seq: AtomicU64,
    spans: Mutex<HashMap<String, Span>>,
    end_order: Mutex<Vec<String>>,
    signals: Mutex<HashMap<String, watch::Sender<bool>>>,
    barrier: Option<tokio::sync::Barrier>,
    in_flight: AtomicU64,
    max_in_flight: AtomicU64,
}

impl Lab {
    pub fn new(barrier_parties: Option<usize>) -> Arc<Self> {
        Arc::new(Self {
            seq: AtomicU64::new(0),
            spans: Mutex::new(HashMap::new()),
            end_order: Mutex::new(Vec::new()),
            signals: Mutex::new(HashMap::new()),
            barrier: barrier_parties.map(tokio::sync::Barrier::new),
            in_flight: AtomicU64::new(0),
            max_in_flight: AtomicU64::new(0),
        })
    }

    fn signal(&self, name: &str) -> watch::Sender<bool> {
        self.signals
            .lock()
            .expect("signals")
            .entry(name.to_owned())
            .or_insert_with(|| watch::channel(false).0)
            .clone()
    }

    pub fn fire(&self, name: &str) {
        self.signal(name).send_replace(true);
    }

    pub async fn wait(&self, name: &str) {
        let mut rx = self.signal(name).subscribe();
        rx.wait_for(|fired| *fired)
            .await
            .expect("signal sender lives in the lab");
    }

    /// An event observer that fires `logged:<call id>` once a `call_finished` is durable.
    pub fn observe_events(self: &Arc<Self>) -> Arc<dyn tackle_runtime::EventObserver> {
        Arc::new(LoggedSignals(self.clone()))
    }

    /// Wait until `call_id`'s `call_finished` is durable in the session log, as reported by the
    /// runtime's event observer (see [`Lab::observe_events`]).
    async fn wait_logged(&self, call_id: &str) {
        self.wait(&format!("logged:{call_id}")).await;
    }

    pub fn span(&self, id: &str) -> Span {
        *self
            .spans
            .lock()
            .expect("spans")
            .get(id)
            .unwrap_or_else(|| panic!("{id} never ran"))
    }

    pub fn ran(&self, id: &str) -> bool {
        self.spans.lock().expect("spans").contains_key(id)
    }

    /// Call ids in the order their executions ended.
    pub fn end_order(&self) -> Vec<String> {
        self.end_order.lock().expect("end order").clone()
    }

    pub fn max_in_flight(&self) -> u64 {
        self.max_in_flight.load(Ordering::SeqCst)
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StepArgs {
    /// Name under which the span is recorded (usually the call id).
    pub id: String,
    /// Serialization key.
    #[serde(default)]
    pub key: Option<String>,
    /// Wait at the lab's barrier before finishing.
    #[serde(default)]
    pub barrier: bool,
    /// Signals to wait for before finishing (`start:<id>`, `end:<id>` or any name).
    #[serde(default)]
    pub wait_for: Vec<String>,
    /// Sleep this long before finishing, so that an overlap a bug would cause is observable.
    #[serde(default)]
    pub work_ms: u64,
    /// Finish only once this call's `call_finished` is durable in the event log.
    #[serde(default)]
    pub after_logged: Option<String>,
}

pub struct Step {
    pub name: &'static str,
    pub concurrency: Concurrency,
    pub lab: Arc<Lab>,
}

impl Step {
    pub fn parallel(lab: &Arc<Lab>) -> Arc<dyn DynTool> {
        Arc::new(Self {
            name: "step",
            concurrency: Concurrency::Parallel,
            lab: lab.clone(),
        })
    }

    pub fn exclusive(lab: &Arc<Lab>) -> Arc<dyn DynTool> {
        Arc::new(Self {
            name: "step_exclusive",
            concurrency: Concurrency::Exclusive,
            lab: lab.clone(),
        })
    }
}

impl Tool for Step {
    type Args = StepArgs;
    type Plan = StepArgs;

    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> Cow<'static, str> {
        Cow::Borrowed("Records when it runs.")
    }
    fn concurrency(&self) -> Concurrency {
        self.concurrency
    }
    fn read_only(&self) -> bool {
        true
    }
    fn prepare(
        &self,
        args: StepArgs,
        _: &PrepareContext<'_>,
    ) -> Result<Prepared<StepArgs>, ToolError> {
        let key = args.key.clone().map(SerializationKey);
        let mut p = Prepared::new(Routing::default(), args);
        p.serialization_key = key;
        Ok(p)
    }
    async fn execute(
        &self,
        args: StepArgs,
        _: ExecuteContext,
    ) -> Result<ToolCompletion, ToolError> {
        let lab = &self.lab;
        let start = lab.seq.fetch_add(1, Ordering::SeqCst);
        let now = lab.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        lab.max_in_flight.fetch_max(now, Ordering::SeqCst);
        lab.fire(&format!("start:{}", args.id));
        if args.barrier {
            lab.barrier
                .as_ref()
                .expect("lab has a barrier")
                .wait()
                .await;
        }
        for name in &args.wait_for {
            lab.wait(name).await;
        }
        if let Some(id) = &args.after_logged {
            lab.wait_logged(id).await;
        }
        if args.work_ms > 0 {
            tokio::time::sleep(Duration::from_millis(args.work_ms)).await;
        }
        lab.in_flight.fetch_sub(1, Ordering::SeqCst);
        let end = lab.seq.fetch_add(1, Ordering::SeqCst);
        lab.spans
            .lock()
            .expect("spans")
            .insert(args.id.clone(), Span { start, end });
        lab.end_order
            .lock()
            .expect("end order")
            .push(args.id.clone());
        lab.fire(&format!("end:{}", args.id));
        Ok(ToolCompletion::single(format!("done {}\n", args.id)))
    }
}

// ---------------------------------------------------------------------------------------------
// Failing tools.

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

/// Refuses every call in `prepare`.
pub struct BadPrepare;

impl Tool for BadPrepare {
    type Args = NoArgs;
    type Plan = ();
    fn name(&self) -> &str {
        "bad_prepare"
    }
    fn description(&self) -> Cow<'static, str> {
        Cow::Borrowed("Fails in prepare.")
    }
    fn concurrency(&self) -> Concurrency {
        Concurrency::Parallel
    }
    fn read_only(&self) -> bool {
        true
    }
    fn prepare(&self, _: NoArgs, _: &PrepareContext<'_>) -> Result<Prepared<()>, ToolError> {
        Err(ToolError::new(
            ErrorCode::NOT_FOUND,
            "bad_prepare: nothing to prepare; this tool always fails",
        ))
    }
    async fn execute(&self, _: (), _: ExecuteContext) -> Result<ToolCompletion, ToolError> {
        unreachable!("prepare always fails")
    }
}

/// Panics while executing.
pub struct Panics;

impl Tool for Panics {
    type Args = NoArgs;
    type Plan = ();
    fn name(&self) -> &str {
        "panics"
    }
    fn description(&self) -> Cow<'static, str> {
        Cow::Borrowed("Panics in execute.")
    }
    fn concurrency(&self) -> Concurrency {
        Concurrency::Parallel
    }
    fn read_only(&self) -> bool {
        true
    }
    fn prepare(&self, _: NoArgs, _: &PrepareContext<'_>) -> Result<Prepared<()>, ToolError> {
        Ok(Prepared::new(Routing::default(), ()))
    }
    async fn execute(&self, _: (), _: ExecuteContext) -> Result<ToolCompletion, ToolError> {
        panic!("deliberate test panic")
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HangArgs {
    pub id: String,
    /// Streamed before the tool stops making progress.
    #[serde(default)]
    pub before: String,
    #[serde(default)]
    pub key: Option<String>,
}

/// Streams `before`, fires `start:<id>`, then never finishes on its own (it only ends when
/// its cancellation token fires, and then records `cancelled:<id>`).
pub struct Hang {
    pub lab: Arc<Lab>,
}

impl Tool for Hang {
    type Args = HangArgs;
    type Plan = HangArgs;
    fn name(&self) -> &str {
        "hang"
    }
    fn description(&self) -> Cow<'static, str> {
        Cow::Borrowed("Never finishes.")
    }
    fn concurrency(&self) -> Concurrency {
        Concurrency::Parallel
    }
    fn read_only(&self) -> bool {
        true
    }
    fn prepare(
        &self,
        args: HangArgs,
        _: &PrepareContext<'_>,
    ) -> Result<Prepared<HangArgs>, ToolError> {
        let key = args.key.clone().map(SerializationKey);
        let mut p = Prepared::new(Routing::default(), args);
        p.serialization_key = key;
        Ok(p)
    }
    async fn execute(
        &self,
        args: HangArgs,
        cx: ExecuteContext,
    ) -> Result<ToolCompletion, ToolError> {
        cx.output.write(None, &args.before)?;
        self.lab.fire(&format!("start:{}", args.id));
        cx.cancel.cancelled().await;
        self.lab.fire(&format!("cancelled:{}", args.id));
        std::future::pending().await
    }
}

// ---------------------------------------------------------------------------------------------
// Scripted: exact output, for retention tests.

/// One thing a scripted execution does, in order.
#[derive(Clone, Debug)]
pub enum Act {
    /// `OutputSink::write` to a stream (`None` for single output).
    Write(Option<StreamName>, String),
    /// `OutputSink::progress` with a delta.
    Progress(ToolProgress),
}

/// What a scripted call does, registered under a name before the batch runs.
#[derive(Clone, Debug)]
pub struct Script {
    pub acts: Vec<Act>,
    pub completion: CompletionOutput,
    /// Final UI display text.
    pub display: Option<String>,
}

impl Script {
    pub fn complete_single(text: impl Into<String>) -> Self {
        Self {
            acts: vec![],
            completion: CompletionOutput::Single(text.into()),
            display: None,
        }
    }

    pub fn complete_named(streams: &[(&str, &str)]) -> Self {
        Self {
            acts: vec![],
            completion: CompletionOutput::Named(
                streams
                    .iter()
                    .map(|(n, t)| (stream(n), (*t).to_owned()))
                    .collect(),
            ),
            display: None,
        }
    }

    pub fn streamed(acts: Vec<Act>) -> Self {
        Self {
            acts,
            completion: CompletionOutput::Streamed,
            display: None,
        }
    }
}

pub type Scripts = Arc<Mutex<HashMap<String, Script>>>;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScriptedArgs {
    pub script: String,
}

pub struct Scripted {
    pub name: &'static str,
    pub output: OutputDeclaration,
    pub truncation: Truncation,
    pub scripts: Scripts,
    pub label: Label,
}

impl Scripted {
    pub fn single(name: &'static str, scripts: &Scripts) -> Arc<dyn DynTool> {
        Arc::new(Self {
            name,
            output: OutputDeclaration::Single,
            truncation: Truncation::Bounded,
            scripts: scripts.clone(),
            label: Label::LOCAL,
        })
    }

    pub fn named(name: &'static str, streams: &[&str], scripts: &Scripts) -> Arc<dyn DynTool> {
        let output = OutputDeclaration::named(streams.iter().map(|s| stream(s)).collect())
            .expect("declaration");
        Arc::new(Self {
            name,
            output,
            truncation: Truncation::Bounded,
            scripts: scripts.clone(),
            label: Label::LOCAL,
        })
    }

    /// Single bounded output labelled as if it came from the network.
    pub fn remote(name: &'static str, scripts: &Scripts) -> Arc<dyn DynTool> {
        Arc::new(Self {
            name,
            output: OutputDeclaration::Single,
            truncation: Truncation::Bounded,
            scripts: scripts.clone(),
            label: Label::REMOTE,
        })
    }

    /// Named bounded output labelled as if it came from the network.
    pub fn remote_named(
        name: &'static str,
        streams: &[&str],
        scripts: &Scripts,
    ) -> Arc<dyn DynTool> {
        let output = OutputDeclaration::named(streams.iter().map(|s| stream(s)).collect())
            .expect("declaration");
        Arc::new(Self {
            name,
            output,
            truncation: Truncation::Bounded,
            scripts: scripts.clone(),
            label: Label::REMOTE,
        })
    }

    pub fn opt_out(name: &'static str, scripts: &Scripts) -> Arc<dyn DynTool> {
        Arc::new(Self {
            name,
            output: OutputDeclaration::Single,
            truncation: Truncation::OptOut,
            scripts: scripts.clone(),
            label: Label::LOCAL,
        })
    }
}

impl Tool for Scripted {
    type Args = ScriptedArgs;
    type Plan = Script;
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> Cow<'static, str> {
        Cow::Borrowed("Replays a script of output.")
    }
    fn concurrency(&self) -> Concurrency {
        Concurrency::Parallel
    }
    fn read_only(&self) -> bool {
        true
    }
    fn output(&self) -> OutputDeclaration {
        self.output.clone()
    }
    fn truncation(&self) -> Truncation {
        self.truncation
    }
    fn label(&self) -> Label {
        self.label
    }
    fn prepare(
        &self,
        args: ScriptedArgs,
        _: &PrepareContext<'_>,
    ) -> Result<Prepared<Script>, ToolError> {
        let script = self
            .scripts
            .lock()
            .expect("scripts")
            .get(&args.script)
            .cloned();
        let script = script.ok_or_else(|| {
            ToolError::new(
                ErrorCode::NOT_FOUND,
                format!("no script `{}` registered", args.script),
            )
        })?;
        Ok(Prepared::new(Routing::default(), script))
    }
    async fn execute(
        &self,
        script: Script,
        cx: ExecuteContext,
    ) -> Result<ToolCompletion, ToolError> {
        for act in script.acts {
            match act {
                Act::Write(s, text) => cx.output.write(s.as_ref(), &text)?,
                Act::Progress(p) => cx.output.progress(p)?,
            }
        }
        Ok(ToolCompletion {
            output: script.completion,
            metadata: json!({"scripted": true}),
            display: script.display,
            attachments: Vec::new(),
            summary: None,
            survey: None,
        })
    }
}

pub fn new_scripts() -> Scripts {
    Arc::new(Mutex::new(HashMap::new()))
}

pub fn register(scripts: &Scripts, name: &str, script: Script) {
    scripts
        .lock()
        .expect("scripts")
        .insert(name.to_owned(), script);
}

struct LoggedSignals(Arc<Lab>);

impl tackle_runtime::EventObserver for LoggedSignals {
    fn on_recorded(&self, _seq: u64, event: &tackle_protocol::Event) {
        if let tackle_protocol::Event::CallFinished(f) = event {
            self.0.fire(&format!("logged:{}", f.call_id));
        }
    }
}
