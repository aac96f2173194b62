//! The agentic wrappers' test bench: a project with a 5,000-line file, 1,000 grep matches
//! and a secret; a root session whose runtime has read_file, grep, a remote `web` tool and
//! the wrappers; a tree whose spawner builds every child loop on that runtime; the small model
//! scripted by the test, with an 8k window so the file is read in parts.

#![allow(dead_code)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::borrow::Cow;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tackle_agent::agentic::{AgenticGrep, AgenticReadFile, AgenticResearch, SmallModel, Subtasks};
use tackle_agent::delegate::{AgentType, Limits, Spawn, Tree};
use tackle_agent::{
    Agent, AgentSetup, Bounds, DescriptionsSetting, ModelSetup, TaskBoundaries, Unobserved,
    WatchdogSettings,
};
use tackle_llm::catalog::{Modality, ModelEntry, Prices};
use tackle_llm::media::DeliveryFamily;
use tackle_llm::{LlmError, Provider, TurnRequest, TurnStream};
use tackle_protocol::{CallFinished, Event, Label, SessionId};
use tackle_runtime::{
    Catalog, GateHook, GateRequest, GateVerdict, Runtime, RuntimeConfig, Session,
};
use tackle_tool::{
    DynTool, ExecuteContext, PrepareContext, Prepared, Routing, Tool, ToolCompletion, ToolError,
};
use tokio::sync::Notify;

use super::{Collect, Scripted, entry};

pub const QUESTION: &str = "What value does the NEEDLE line hold, and on which line is it?";

pub fn text(t: &str) -> Value {
    json!({"turn": {"text": t, "usage": {"input_tokens": 1000, "output_tokens": 10}}})
}

pub fn call(name: &str, arguments: Value) -> Value {
    json!({"turn": {"tool_calls": [{"name": name, "arguments": arguments}]}})
}

/// The small model: notes for a part, the answer from notes or from the whole output.
pub fn small_model(seen: &str) -> Value {
    if seen.contains("these are the notes") {
        return text("NEEDLE holds 4242, on line 3817 (from the notes).");
    }
    if seen.contains("NEEDLE=4242") {
        return text("Line 3817: NEEDLE=4242");
    }
    if seen.contains("is too long to read at once") {
        return text("NOTHING RELEVANT");
    }
    text("The output says nothing about a NEEDLE.")
}

/// Denies reading secret.txt.
pub struct DenySecret;

impl GateHook for DenySecret {
    fn check(&self, request: &GateRequest<'_>) -> GateVerdict {
        match request.keys.iter().find(|k| *k == "read:secret.txt") {
            Some(key) => GateVerdict::Deny {
                key: key.clone(),
                rule: "deny read:secret.txt".into(),
                message: "read:secret.txt is denied by the test policy".into(),
            },
            None => GateVerdict::Allow,
        }
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

/// A tool whose output came from the network.
pub struct Web;

impl Tool for Web {
    type Args = NoArgs;
    type Plan = ();
    fn name(&self) -> &str {
        "web"
    }
    fn description(&self) -> Cow<'static, str> {
        Cow::Borrowed("Returns a page from the network.")
    }
    fn read_only(&self) -> bool {
        true
    }
    fn label(&self) -> Label {
        Label::REMOTE
    }
    fn prepare(&self, _: NoArgs, _: &PrepareContext<'_>) -> Result<Prepared<()>, ToolError> {
        Ok(Prepared::new(Routing::default(), ()))
    }
    async fn execute(&self, _: (), _: ExecuteContext) -> Result<ToolCompletion, ToolError> {
        Ok(ToolCompletion::single(
            "remote page\nNEEDLE=4242 said the page\n",
        ))
    }
}

/// A small model that never answers: it says it was asked, then waits to be cancelled.
pub struct Hanging(pub Arc<Notify>);

#[async_trait::async_trait]
impl Provider for Hanging {
    fn name(&self) -> &str {
        "hanging"
    }
    async fn stream(&self, _: &TurnRequest) -> Result<TurnStream, LlmError> {
        self.0.notify_one();
        std::future::pending().await
    }
}

/// The front end's side: every child loop on the one runtime.
pub struct TestSpawn(pub Mutex<Option<Arc<Runtime>>>);

impl Spawn for TestSpawn {
    fn setup(&self, session: Session, ty: &AgentType) -> Result<AgentSetup, String> {
        Ok(AgentSetup {
            runtime: self.0.lock().unwrap().clone().unwrap(),
            session,
            provider: Scripted::new(|_| text("the parent's model is never asked here")),
            model: model(entry(200_000)),
            system: ty.prompt.clone().into(),
            bounds: Bounds::default(),
            observer: Arc::new(Unobserved),
            boundaries: TaskBoundaries::new(),
            watchdog: WatchdogSettings::default(),
            descriptions: DescriptionsSetting::Full,
            delegation: None,
        })
    }
    fn reopen(&self, session: &SessionId) -> Result<Session, String> {
        Err(format!("{} is not held by this test", session.0))
    }
}

pub fn model(entry: ModelEntry) -> ModelSetup {
    ModelSetup {
        model: "scripted".into(),
        entry,
        family: DeliveryFamily::Anthropic,
        max_tokens: 500,
    }
}

/// A small model's entry: an 8k window (so a 5,000-line file is read in parts), with prices.
pub fn small_entry() -> ModelEntry {
    ModelEntry {
        id: "small:scripted".parse().unwrap(),
        context_window: 8192,
        max_output: 500,
        input: vec![Modality::Text],
        media: Vec::new(),
        prices: Some(Prices {
            input: 0.5,
            output: 1.0,
            cache_read: 0.0,
            cache_write: 0.0,
        }),
    }
}

/// A project with a 5,000-line file, 1,000 grep matches and a secret, a root session whose
/// catalog has the wrappers, and the small model.
pub struct Bench {
    pub dir: tempfile::TempDir,
    pub root: Session,
    pub runtime: Arc<Runtime>,
    pub tree: Arc<Tree>,
    pub observer: Arc<Collect>,
}

impl Bench {
    pub fn new(gate: Arc<dyn GateHook>, small: Arc<dyn Provider>) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let mut big = String::new();
        for n in 1..=5000 {
            if n == 3817 {
                big.push_str("NEEDLE=4242 is the value the question is about\n");
            } else {
                big.push_str(&format!("filler line {n}: lorem ipsum dolor sit amet\n"));
            }
        }
        std::fs::write(dir.path().join("big.txt"), big).unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        for f in 0..50 {
            let body: String = (0..20)
                .map(|j| format!("    call_site({f}, {j});\n"))
                .collect();
            std::fs::write(dir.path().join(format!("src/m{f}.rs")), body).unwrap();
        }
        std::fs::write(dir.path().join("secret.txt"), "NEEDLE=1\n").unwrap();
        let root = Session::open(dir.path()).unwrap();
        let observer = Arc::new(Collect::default());
        let tree = Tree::new(Limits::default(), Vec::new(), observer.clone());
        tree.add_root(root.clone());
        let small = SmallModel {
            provider: small,
            model: model(small_entry()),
            parallel: 4,
        };
        let subtasks = Subtasks::new(tree.clone(), small);
        let tools: Vec<Arc<dyn DynTool>> = vec![
            Arc::new(tackle_tools::ReadFile::new()),
            Arc::new(tackle_tools::Grep),
            Arc::new(Web),
            Arc::new(AgenticReadFile::new(subtasks.clone())),
            Arc::new(AgenticGrep::new(subtasks.clone())),
            Arc::new(AgenticResearch::new(subtasks)),
        ];
        let runtime = Arc::new(
            Runtime::new(Catalog::new(tools).unwrap(), gate, RuntimeConfig::default())
                .with_event_observer(Arc::new(tackle_agent::CallEvents(observer.clone()))),
        );
        let names = runtime.catalog().names().map(str::to_owned).collect();
        tree.set_spawn(
            Arc::new(TestSpawn(Mutex::new(Some(runtime.clone())))),
            names,
        );
        Self {
            dir,
            root,
            runtime,
            tree,
            observer,
        }
    }

    pub fn parent(&self, provider: Arc<dyn Provider>, bounds: Bounds) -> Agent {
        Agent::new(AgentSetup {
            runtime: self.runtime.clone(),
            session: self.root.clone(),
            provider,
            model: model(entry(200_000)),
            system: "You are the parent.".into(),
            bounds,
            observer: self.observer.clone(),
            boundaries: TaskBoundaries::new(),
            watchdog: WatchdogSettings::default(),
            descriptions: DescriptionsSetting::Full,
            delegation: Some(self.tree.clone()),
        })
    }

    /// Every session's records, by the agent its `session_started` names.
    pub fn sessions_of(&self, agent: &str) -> Vec<Vec<Event>> {
        let dir = self.dir.path().join(".agents/store/sessions");
        let mut out = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let log = entry.unwrap().path().join("events.jsonl");
            let events: Vec<Event> = tackle_store::EventLog::read_records(&log)
                .unwrap()
                .into_iter()
                .filter_map(|r| serde_json::from_value(r.event).ok())
                .collect();
            if matches!(&events[0], Event::SessionStarted(s) if s.agent.as_deref() == Some(agent)) {
                out.push(events);
            }
        }
        out
    }

    pub fn finished(&self, session: &Session, tool: &str) -> CallFinished {
        tackle_store::EventLog::read_records(&session.event_log_path())
            .unwrap()
            .into_iter()
            .filter_map(|r| serde_json::from_value::<Event>(r.event).ok())
            .find_map(|e| match e {
                Event::CallFinished(f) if f.tool == tool => Some(f),
                _ => None,
            })
            .unwrap()
    }
}

pub fn started_tools(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::CallStarted(s) => Some(s.tool.clone()),
            _ => None,
        })
        .collect()
}

/// Whether a request holds a tool's result.
pub fn has_result(seen: &str) -> bool {
    seen.contains("\"type\":\"tool_result\"")
}

/// The parent asks once with `arguments`, then finishes with whatever came back.
pub fn parent_asking(tool: &'static str, arguments: Value) -> Arc<Scripted> {
    Scripted::new(move |seen| {
        if has_result(seen) {
            text("done")
        } else {
            call(tool, arguments.clone())
        }
    })
}

impl Bench {
    pub fn root_records(&self) -> Vec<Event> {
        tackle_store::EventLog::read_records(&self.root.event_log_path())
            .unwrap()
            .into_iter()
            .filter_map(|r| serde_json::from_value(r.event).ok())
            .collect()
    }
}
