//! What starting a subagent costs the loop, in process (`tackle_agent::delegate`), against the
//! loop's own cost of one turn.
//!
//! - **delegate → child's first request**: from the parent's model request whose answer is a
//!   `delegate_subagent` call, to the child's first model request. It holds the parent's turn
//!   (stream, synced turn record), the batch (call records, parse, prepare, gate), admission
//!   (the child's session opened: its log created and its `session_started` synced), the
//!   child's loop built (its catalog, prompt) and started on a task, and its first request.
//! - **turn to turn**: the same parent, whose answer is instead a call of a tool that does
//!   nothing, from that request to the parent's next one: the loop's own overhead per turn
//!   with a trivial call.
//!
//! Both models answer at once from a script, so what is measured is tackle alone. Each sample
//! is a fresh root session in one project; `ROUNDS` of each, interleaved, so drift in the
//! machine's load falls on both alike. Reported: median, p99 and the ratio of the medians.
//!
//! Run: `cargo bench -p tackle-bench --bench delegation`.

use std::borrow::Cow;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tackle_agent::delegate::{AgentType, DelegateSubagent, Limits, Spawn, Tree};
use tackle_agent::{
    Agent, AgentSetup, Bounds, DescriptionsSetting, ModelSetup, TaskBoundaries, Unobserved,
    WatchdogSettings,
};
use tackle_bench::Stats;
use tackle_llm::catalog::{Modality, ModelEntry};
use tackle_llm::media::DeliveryFamily;
use tackle_llm::replay::{Exchange, ReplayProvider, parse};
use tackle_llm::{LlmError, Provider, TurnRequest, TurnStream};
use tackle_protocol::{Concurrency, SessionId};
use tackle_runtime::{AllowAll, CancellationToken, Catalog, Runtime, RuntimeConfig, Session};
use tackle_tool::{
    DynTool, ExecuteContext, PrepareContext, Prepared, Routing, Tool, ToolCompletion, ToolError,
};

type BenchResult<T> = Result<T, Box<dyn std::error::Error>>;

const ROUNDS: usize = 200;

/// `turns` as a script's exchanges.
fn exchanges(turns: &[Value]) -> BenchResult<Vec<Exchange>> {
    let mut text = String::from("{\"tackle_replay\":1}\n");
    for t in turns {
        text.push_str(&format!("{t}\n"));
    }
    Ok(parse("bench.jsonl", &text)?)
}

/// A model that answers with a script's next turn and stamps each request.
struct Stamping {
    who: &'static str,
    turns: Vec<Exchange>,
    next: Mutex<usize>,
    stamps: Arc<Mutex<Vec<(&'static str, Instant)>>>,
}

#[async_trait::async_trait]
impl Provider for Stamping {
    fn name(&self) -> &str {
        "stamping"
    }

    async fn stream(&self, request: &TurnRequest) -> Result<TurnStream, LlmError> {
        self.stamps
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((self.who, Instant::now()));
        let turn = {
            let mut next = self.next.lock().unwrap_or_else(|p| p.into_inner());
            let turn = self.turns[(*next).min(self.turns.len() - 1)].clone();
            *next += 1;
            turn
        };
        ReplayProvider::new("stamping", vec![turn])
            .stream(request)
            .await
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

/// A tool that does nothing.
struct Nothing;

impl Tool for Nothing {
    type Args = NoArgs;
    type Plan = ();
    fn name(&self) -> &str {
        "nothing"
    }
    fn description(&self) -> Cow<'static, str> {
        Cow::Borrowed("Does nothing.")
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
        Ok(ToolCompletion::single("done"))
    }
}

fn model() -> BenchResult<ModelSetup> {
    Ok(ModelSetup {
        model: "bench".into(),
        entry: ModelEntry {
            id: "replay:bench".parse()?,
            context_window: 200_000,
            max_output: 500,
            input: vec![Modality::Text],
            media: Vec::new(),
            prices: None,
        },
        family: DeliveryFamily::Anthropic,
        max_tokens: 500,
    })
}

fn setup(
    model: ModelSetup,
    runtime: Arc<Runtime>,
    session: Session,
    provider: Arc<dyn Provider>,
    tree: Arc<Tree>,
) -> AgentSetup {
    AgentSetup {
        runtime,
        session,
        provider,
        model,
        system: "You are measured.".into(),
        bounds: Bounds::default(),
        observer: Arc::new(Unobserved),
        boundaries: TaskBoundaries::new(),
        watchdog: WatchdogSettings::default(),
        descriptions: DescriptionsSetting::Full,
        delegation: Some(tree),
    }
}

struct BenchSpawn {
    model: ModelSetup,
    runtime: Arc<Runtime>,
    tree: Arc<Tree>,
    stamps: Arc<Mutex<Vec<(&'static str, Instant)>>>,
}

impl Spawn for BenchSpawn {
    fn setup(&self, session: Session, _: &AgentType) -> Result<AgentSetup, String> {
        let provider = Arc::new(Stamping {
            who: "child",
            turns: exchanges(&[json!({"turn": {"text": "Found it."}})])
                .map_err(|e| e.to_string())?,
            next: Mutex::new(0),
            stamps: self.stamps.clone(),
        });
        Ok(setup(
            self.model.clone(),
            self.runtime.clone(),
            session,
            provider,
            self.tree.clone(),
        ))
    }

    fn reopen(&self, session: &SessionId) -> Result<Session, String> {
        Err(format!("{} is not held here", session.0))
    }
}

/// One parent run whose first answer is `first`; the time from its first request to the
/// first request of `until` after it.
async fn one_round(
    model: &ModelSetup,
    root: &std::path::Path,
    runtime: &Arc<Runtime>,
    tree: &Arc<Tree>,
    stamps: &Arc<Mutex<Vec<(&'static str, Instant)>>>,
    first: Value,
    until: &'static str,
) -> BenchResult<Duration> {
    stamps.lock().unwrap_or_else(|p| p.into_inner()).clear();
    let session = Session::open(root)?;
    tree.add_root(session.clone());
    let provider = Arc::new(Stamping {
        who: "parent",
        turns: exchanges(&[first, json!({"turn": {"text": "Done."}})])?,
        next: Mutex::new(0),
        stamps: stamps.clone(),
    });
    let mut agent = Agent::new(setup(
        model.clone(),
        runtime.clone(),
        session,
        provider,
        tree.clone(),
    ));
    let end = agent.run(Some("go"), CancellationToken::new()).await;
    if end.outcome != tackle_protocol::RunOutcome::Finished {
        return Err(format!("the run ended {:?}: {}", end.outcome, end.reason).into());
    }
    let stamps = stamps.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let start = stamps
        .iter()
        .find(|(w, _)| *w == "parent")
        .map(|(_, t)| *t)
        .ok_or("no parent request")?;
    let next = stamps
        .iter()
        .filter(|(w, t)| *w == until && *t > start)
        .map(|(_, t)| *t)
        .next()
        .ok_or("no request after the first")?;
    Ok(next - start)
}

fn main() -> BenchResult<()> {
    let dir = tempfile::tempdir()?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let stamps = Arc::new(Mutex::new(Vec::new()));
    let model = model()?;
    let tree = Tree::new(
        Limits {
            max_depth: 1,
            max_running: 4,
        },
        tackle_agent::delegate::agent_type::built_in(),
        Arc::new(Unobserved),
    );
    let tools: Vec<Arc<dyn DynTool>> = vec![
        Arc::new(DelegateSubagent::new(tree.clone())),
        Arc::new(Nothing),
    ];
    let runtime = Arc::new(Runtime::new(
        Catalog::new(tools)?,
        Arc::new(AllowAll),
        RuntimeConfig::default(),
    ));
    tree.set_spawn(
        Arc::new(BenchSpawn {
            model: model.clone(),
            runtime: runtime.clone(),
            tree: tree.clone(),
            stamps: stamps.clone(),
        }),
        vec!["delegate_subagent".into(), "nothing".into()],
    );
    let delegate = json!({"turn": {"tool_calls": [{"name": "delegate_subagent", "arguments": {
        "agent_type": "general", "prompt": "find it"}}]}});
    let nothing = json!({"turn": {"tool_calls": [{"name": "nothing", "arguments": {}}]}});
    let (mut to_child, mut turn) = (Vec::new(), Vec::new());
    rt.block_on(async {
        for _ in 0..ROUNDS {
            to_child.push(
                one_round(
                    &model,
                    dir.path(),
                    &runtime,
                    &tree,
                    &stamps,
                    delegate.clone(),
                    "child",
                )
                .await?,
            );
            turn.push(
                one_round(
                    &model,
                    dir.path(),
                    &runtime,
                    &tree,
                    &stamps,
                    nothing.clone(),
                    "parent",
                )
                .await?,
            );
        }
        Ok::<(), Box<dyn std::error::Error>>(())
    })?;
    let child = Stats::of(&mut to_child);
    let own = Stats::of(&mut turn);
    println!("delegation, {ROUNDS} rounds each, interleaved, models answering at once:");
    println!(
        "  delegate call → child's first request  median {:>9.1?}  p99 {:>9.1?}",
        child.median, child.p99
    );
    println!(
        "  parent turn → next turn (no-op call)   median {:>9.1?}  p99 {:>9.1?}",
        own.median, own.p99
    );
    println!(
        "  ratio of medians: {:.2}x",
        child.median.as_secs_f64() / own.median.as_secs_f64()
    );
    Ok(())
}
