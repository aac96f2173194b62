//! The harness every loop test goes through: a temp project with a session, a runtime over
//! test tools, a scripted provider (replay exchanges written inline), and an observer that
//! keeps every event.
//!
//! `Scripted` is a model that answers each request with the turn a function picks from what
//! the request holds (for sessions whose requests interleave: subagents, messages).
//!
//! Test tools: `note` (parallel; counts executions, returns `noted <text>` padded to `size`
//! bytes, and with `meet` waits at a two-party barrier so two notes prove they overlap),
//! `hang` (says it started, then waits for its cancellation), and `steer` (sends input to the
//! running loop through its [`Steering`] handle); and the loop's own `mark_task_done`, sharing
//! the world's [`TaskBoundaries`].

#![allow(dead_code)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

pub mod agentic;

use std::borrow::Cow;
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tackle_agent::{
    Agent, AgentEvent, AgentSetup, Bounds, CallEvents, DescriptionsSetting, ModelSetup,
    ObservedApprover, Observer, Steering, TaskBoundaries, WatchdogSettings,
};
use tackle_llm::catalog::{Modality, ModelEntry, Prices};
use tackle_llm::media::DeliveryFamily;
use tackle_llm::replay::{ReplayProvider, parse};
use tackle_llm::{LlmError, Provider, TurnRequest, TurnStream};
use tackle_protocol::{Concurrency, Event};
use tackle_runtime::{
    Approval, ApprovalFuture, ApprovalRequest, Approver, Catalog, GateHook, GateRequest,
    GateVerdict, Runtime, RuntimeConfig, Session,
};
use tackle_tool::{
    DynTool, ExecuteContext, PrepareContext, Prepared, Routing, Tool, ToolCompletion, ToolError,
};
use tokio::sync::{Barrier, Notify};

/// A hang a bug would cause becomes a failure after this long.
pub const GUARD: Duration = Duration::from_secs(30);

pub async fn guarded<F: Future>(f: F) -> F::Output {
    tokio::time::timeout(GUARD, f).await.expect("the loop hung")
}

/// What the test tools share with the test.
#[derive(Default)]
pub struct Lab {
    pub notes: AtomicUsize,
    pub hangs: AtomicUsize,
    pub hang_started: Notify,
    pub barrier: Option<Barrier>,
    pub steering: Mutex<Option<Steering>>,
}

impl Lab {
    pub fn new() -> Arc<Self> {
        Arc::new(Self {
            barrier: Some(Barrier::new(2)),
            ..Self::default()
        })
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoteArgs {
    pub text: String,
    /// A file the note is about (only named: the loop reads the instructions on its way).
    #[serde(default)]
    pub path: Option<String>,
    #[serde(default)]
    pub size: usize,
    #[serde(default)]
    pub meet: bool,
}

pub struct Note(pub Arc<Lab>);

impl Tool for Note {
    type Args = NoteArgs;
    type Plan = NoteArgs;
    fn name(&self) -> &str {
        "note"
    }
    fn description(&self) -> Cow<'static, str> {
        Cow::Borrowed("Takes a note.")
    }
    fn concurrency(&self) -> Concurrency {
        Concurrency::Parallel
    }
    fn read_only(&self) -> bool {
        true
    }
    fn prepare(
        &self,
        a: NoteArgs,
        _: &PrepareContext<'_>,
    ) -> Result<Prepared<NoteArgs>, ToolError> {
        Ok(Prepared::new(Routing::default(), a))
    }
    async fn execute(&self, a: NoteArgs, _: ExecuteContext) -> Result<ToolCompletion, ToolError> {
        self.0.notes.fetch_add(1, Ordering::SeqCst);
        if a.meet {
            self.0.barrier.as_ref().unwrap().wait().await;
        }
        let mut text = format!("noted {}", a.text);
        while text.len() < a.size {
            text.push_str(" padding");
        }
        Ok(ToolCompletion::single(text))
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

pub struct Hang(pub Arc<Lab>);

impl Tool for Hang {
    type Args = NoArgs;
    type Plan = ();
    fn name(&self) -> &str {
        "hang"
    }
    fn description(&self) -> Cow<'static, str> {
        Cow::Borrowed("Never finishes on its own.")
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
    async fn execute(&self, _: (), ctx: ExecuteContext) -> Result<ToolCompletion, ToolError> {
        self.0.hangs.fetch_add(1, Ordering::SeqCst);
        self.0.hang_started.notify_one();
        ctx.cancel.cancelled().await;
        Ok(ToolCompletion::single("stopped"))
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SteerArgs {
    pub text: String,
}

pub struct Steer(pub Arc<Lab>);

impl Tool for Steer {
    type Args = SteerArgs;
    type Plan = SteerArgs;
    fn name(&self) -> &str {
        "steer"
    }
    fn description(&self) -> Cow<'static, str> {
        Cow::Borrowed("Sends input to the loop as a person would.")
    }
    fn concurrency(&self) -> Concurrency {
        Concurrency::Parallel
    }
    fn read_only(&self) -> bool {
        true
    }
    fn prepare(
        &self,
        a: SteerArgs,
        _: &PrepareContext<'_>,
    ) -> Result<Prepared<SteerArgs>, ToolError> {
        Ok(Prepared::new(Routing::default(), a))
    }
    async fn execute(&self, a: SteerArgs, _: ExecuteContext) -> Result<ToolCompletion, ToolError> {
        let steering = self.0.steering.lock().unwrap().clone().unwrap();
        assert!(steering.send(a.text));
        Ok(ToolCompletion::single("sent"))
    }
}

/// Denies `deny`, asks about `ask`, allows the rest.
pub struct TestGate {
    pub deny: &'static str,
    pub ask: &'static str,
}

impl GateHook for TestGate {
    fn check(&self, request: &GateRequest<'_>) -> GateVerdict {
        if request.tool == self.deny {
            GateVerdict::Deny {
                key: format!("tool.{}", self.deny),
                rule: "deny tool.test".into(),
                message: format!("{} is denied by the test policy", self.deny),
            }
        } else if request.tool == self.ask {
            GateVerdict::Ask {
                keys: vec![format!("tool.{}", self.ask)],
                message: "the test policy asks".into(),
            }
        } else {
            GateVerdict::Allow
        }
    }
}

/// Refuses every approval with a message the model sees.
pub struct Refuses;

impl Approver for Refuses {
    fn approve<'a>(&'a self, _: ApprovalRequest<'a>) -> ApprovalFuture<'a> {
        Box::pin(std::future::ready(Approval::Deny {
            message: Some("not today".into()),
        }))
    }
}

/// Keeps every event; fires `text_seen` at the first text delta.
#[derive(Default)]
pub struct Collect {
    pub events: Mutex<Vec<AgentEvent>>,
    pub text_seen: Notify,
}

impl Observer for Collect {
    fn on_event(&self, event: &AgentEvent) {
        if matches!(event, AgentEvent::TextDelta { .. }) {
            self.text_seen.notify_one();
        }
        self.events.lock().unwrap().push(event.clone());
    }
}

impl Collect {
    pub fn types(&self) -> Vec<String> {
        self.events
            .lock()
            .unwrap()
            .iter()
            .map(|e| {
                serde_json::to_value(e).unwrap()["type"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect()
    }

    pub fn json(&self) -> Vec<Value> {
        self.events
            .lock()
            .unwrap()
            .iter()
            .map(|e| serde_json::to_value(e).unwrap())
            .collect()
    }
}

/// A replay file's exchanges, written inline.
pub fn script(lines: &[Value]) -> Vec<tackle_llm::replay::Exchange> {
    let mut text = String::from("{\"tackle_replay\":1}\n");
    for l in lines {
        text.push_str(&l.to_string());
        text.push('\n');
    }
    parse("script.jsonl", &text).unwrap()
}

pub fn entry(context_window: u64) -> ModelEntry {
    ModelEntry {
        id: "replay:scripted".parse().unwrap(),
        context_window,
        max_output: 500,
        input: vec![Modality::Text, Modality::Image],
        media: Vec::new(),
        prices: Some(Prices {
            input: 1.0,
            output: 2.0,
            cache_read: 0.1,
            cache_write: 1.0,
        }),
    }
}

/// A project and everything a loop runs on in it.
pub struct World {
    pub dir: tempfile::TempDir,
    pub lab: Arc<Lab>,
    pub observer: Arc<Collect>,
    pub runtime: Arc<Runtime>,
    pub session: Session,
    pub entry: ModelEntry,
    pub bounds: Bounds,
    pub boundaries: Arc<TaskBoundaries>,
    pub watchdog: WatchdogSettings,
    pub descriptions: DescriptionsSetting,
}

impl World {
    pub fn new() -> Self {
        Self::gated(Arc::new(tackle_runtime::AllowAll))
    }

    pub fn gated(gate: Arc<dyn GateHook>) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let session = Session::open(dir.path()).unwrap();
        let lab = Lab::new();
        let observer = Arc::new(Collect::default());
        let boundaries = TaskBoundaries::new();
        let runtime = runtime(&lab, gate, &observer, &boundaries);
        Self {
            dir,
            lab,
            observer,
            runtime,
            session,
            entry: entry(200_000),
            bounds: Bounds::default(),
            boundaries,
            watchdog: WatchdogSettings::default(),
            descriptions: DescriptionsSetting::Full,
        }
    }

    pub fn setup(&self, provider: Arc<dyn tackle_llm::Provider>) -> AgentSetup {
        AgentSetup {
            runtime: self.runtime.clone(),
            session: self.session.clone(),
            provider,
            model: ModelSetup {
                model: "scripted".into(),
                entry: self.entry.clone(),
                family: DeliveryFamily::Anthropic,
                max_tokens: 500,
            },
            system: "You are tested.".into(),
            bounds: self.bounds.clone(),
            observer: self.observer.clone(),
            boundaries: self.boundaries.clone(),
            watchdog: self.watchdog,
            descriptions: self.descriptions,
            delegation: None,
        }
    }

    /// A new loop answered by `exchanges`.
    pub fn agent(&self, exchanges: &[Value]) -> Agent {
        let agent =
            Agent::new(self.setup(Arc::new(ReplayProvider::new("replay", script(exchanges)))));
        *self.lab.steering.lock().unwrap() = Some(agent.steering());
        agent
    }

    /// The session's records, parsed.
    pub fn records(&self) -> Vec<Event> {
        tackle_store::EventLog::read_records(&self.session.event_log_path())
            .unwrap()
            .into_iter()
            .filter_map(|r| serde_json::from_value(r.event).ok())
            .collect()
    }
}

pub fn runtime(
    lab: &Arc<Lab>,
    gate: Arc<dyn GateHook>,
    observer: &Arc<Collect>,
    boundaries: &Arc<TaskBoundaries>,
) -> Arc<Runtime> {
    let tools: Vec<Arc<dyn DynTool>> = vec![
        Arc::new(Note(lab.clone())),
        Arc::new(Hang(lab.clone())),
        Arc::new(Steer(lab.clone())),
        Arc::new(tackle_agent::MarkTaskDone::new(boundaries.clone())),
    ];
    let observer: Arc<dyn Observer> = observer.clone();
    Arc::new(
        Runtime::new(Catalog::new(tools).unwrap(), gate, RuntimeConfig::default())
            .with_event_observer(Arc::new(CallEvents(observer.clone())))
            .with_approver(Arc::new(ObservedApprover {
                inner: Arc::new(Refuses),
                observer,
            })),
    )
}

/// A model that answers each request with the turn `script` picks from the request's
/// messages, serialized as JSON.
pub struct Scripted {
    script: Box<dyn Fn(&str) -> Value + Send + Sync>,
    pub requests: Mutex<Vec<String>>,
}

impl Scripted {
    pub fn new(script: impl Fn(&str) -> Value + Send + Sync + 'static) -> Arc<Self> {
        Arc::new(Self {
            script: Box::new(script),
            requests: Mutex::new(Vec::new()),
        })
    }
}

#[async_trait::async_trait]
impl Provider for Scripted {
    fn name(&self) -> &str {
        "scripted"
    }

    async fn stream(&self, request: &TurnRequest) -> Result<TurnStream, LlmError> {
        let tools: Vec<&str> = request.tools.iter().map(|t| t.name.as_str()).collect();
        let seen = serde_json::to_string(&request.messages).unwrap()
            + &request.system.clone().unwrap_or_default()
            + &format!("\ntools offered: {}", tools.join(","));
        self.requests.lock().unwrap().push(seen.clone());
        let turn = (self.script)(&seen);
        let one = ReplayProvider::new("scripted", script(&[turn]));
        one.stream(request).await
    }
}
