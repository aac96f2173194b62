//! Delegation end to end with scripted models: a parent starts two children in parallel, one
//! of which starts a grandchild; the parent's model reads their completion notices at its
//! next boundaries and does not finish while they run. Also: cancelling, continuing a
//! finished child, paging its output, the depth ceiling and the running cap, references that
//! name no child of the caller, and the system prompt's list of types.
//!
//! Each session gets its own scripted provider, which answers from what the request holds
//! (so the order in which parallel children finish does not matter).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::{Arc, Mutex};

use common::*;
use serde_json::{Value, json};
use tackle_agent::delegate::{
    AgentType, CancelSubagent, DelegateSubagent, GetSubagentResult, Limits, ModelChoice, Origin,
    Overlay, Spawn, Tree,
};
use tackle_agent::{
    Agent, AgentEvent, AgentSetup, Bounds, DescriptionsSetting, ModelSetup, Observer,
    TaskBoundaries, WatchdogSettings,
};
use tackle_llm::Provider;
use tackle_llm::media::DeliveryFamily;
use tackle_protocol::{Event, RunOutcome, SessionId};
use tackle_runtime::CancellationToken;
use tackle_runtime::{AllowAll, Catalog, Runtime, RuntimeConfig, Session};
use tackle_tool::DynTool;

/// The handles a request's messages mention, in order of first mention.
fn handles(seen: &str, ty: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let needle = format!("subagent session {ty}_");
    let mut rest = seen;
    while let Some(i) = rest.find(&needle) {
        let start = i + "subagent session ".len();
        let h: String = rest[start..].chars().take(ty.len() + 9).collect();
        if !out.contains(&h) {
            out.push(h);
        }
        rest = &rest[start..];
    }
    out
}

fn text(t: &str) -> Value {
    json!({"turn": {"text": t}})
}

fn calls(calls: Value) -> Value {
    json!({"turn": {"tool_calls": calls}})
}

/// The child models, by the task each is given (a continued child's newest task first: its
/// request holds its earlier ones too).
fn child_model(seen: &str) -> Value {
    if seen.contains("organise the pears") {
        if seen.contains("inner answer: 42") {
            return text("Pears organised; the helper said 42.");
        }
        if seen.contains("Subagent started") {
            return text("Waiting for my helper.");
        }
        return calls(json!([{"name": "delegate_subagent", "arguments": {
            "agent_type": "explore", "prompt": "inner question", "description": "inner"}}]));
    }
    if seen.contains("try to delegate") {
        if seen.contains("unknown tool") || seen.contains("Subagent started") {
            return text("Could not delegate.");
        }
        return calls(json!([{"name": "delegate_subagent", "arguments": {
            "agent_type": "explore", "prompt": "count the apples"}}]));
    }
    if seen.contains("lengthy report") {
        let lines: Vec<String> = (1..=30).map(|n| format!("finding {n}")).collect();
        return text(&lines.join("\n"));
    }
    if seen.contains("wait forever") {
        return calls(json!([{"name": "hang", "arguments": {}}]));
    }
    if seen.contains("inner question") {
        return text("inner answer: 42");
    }
    if seen.contains("count the apples") {
        return text("There are 3 apples.");
    }
    text("I do not know this task.")
}

struct TestSpawn {
    runtime: Mutex<Option<Arc<Runtime>>>,
    tree: Arc<Tree>,
    providers: Mutex<Vec<(SessionId, Arc<Scripted>)>>,
}

impl Spawn for TestSpawn {
    fn setup(&self, session: Session, agent_type: &AgentType) -> Result<AgentSetup, String> {
        let provider = Scripted::new(child_model);
        self.providers
            .lock()
            .unwrap()
            .push((session.id().clone(), provider.clone()));
        let system = if agent_type.prompt.is_empty() {
            "You are a child.".to_owned()
        } else {
            agent_type.prompt.clone()
        };
        Ok(setup_for(
            self.runtime.lock().unwrap().clone().unwrap(),
            session,
            provider,
            system,
            Some(self.tree.clone()),
            Arc::new(tackle_agent::Unobserved),
        ))
    }

    fn reopen(&self, session: &SessionId) -> Result<Session, String> {
        Err(format!("{} is not held by this test", session.0))
    }
}

fn setup_for(
    runtime: Arc<Runtime>,
    session: Session,
    provider: Arc<dyn Provider>,
    system: String,
    delegation: Option<Arc<Tree>>,
    observer: Arc<dyn Observer>,
) -> AgentSetup {
    AgentSetup {
        runtime,
        session,
        provider,
        model: ModelSetup {
            model: "scripted".into(),
            entry: entry(200_000),
            family: DeliveryFamily::Anthropic,
            max_tokens: 500,
        },
        system: system.into(),
        bounds: Bounds::default(),
        observer,
        boundaries: TaskBoundaries::new(),
        watchdog: WatchdogSettings::default(),
        descriptions: DescriptionsSetting::Full,
        delegation,
    }
}

fn types() -> Vec<AgentType> {
    let mut types = tackle_agent::delegate::agent_type::built_in();
    types[0].tools = Some(vec!["hang".into(), "get_subagent_result".into()]);
    types.push(AgentType {
        name: "waiter".into(),
        description: "Waits.".into(),
        prompt: String::new(),
        tools: Some(vec!["hang".into()]),
        disallowed_tools: Vec::new(),
        model: ModelChoice::Inherit,
        max_turns: None,
        permissions: Overlay::default(),
        origin: Origin::BuiltIn,
    });
    types
}

/// A project whose root session may delegate.
struct Family {
    _dir: tempfile::TempDir,
    root: Session,
    tree: Arc<Tree>,
    spawn: Arc<TestSpawn>,
    runtime: Arc<Runtime>,
    observer: Arc<Collect>,
}

impl Family {
    fn new(limits: Limits) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = Session::open(dir.path()).unwrap();
        let observer = Arc::new(Collect::default());
        let lab = Lab::new();
        let names = [
            "delegate_subagent",
            "get_subagent_result",
            "cancel_subagent",
            "hang",
        ]
        .map(String::from)
        .to_vec();
        let tree = Tree::new(limits, types(), observer.clone());
        tree.add_root(root.clone());
        let tools: Vec<Arc<dyn DynTool>> = vec![
            Arc::new(DelegateSubagent::new(tree.clone())),
            Arc::new(GetSubagentResult::new(tree.clone())),
            Arc::new(CancelSubagent::new(tree.clone())),
            Arc::new(Hang(lab)),
        ];
        let runtime = Arc::new(Runtime::new(
            Catalog::new(tools).unwrap(),
            Arc::new(AllowAll),
            RuntimeConfig::default(),
        ));
        let spawn = Arc::new(TestSpawn {
            runtime: Mutex::new(Some(runtime.clone())),
            tree: tree.clone(),
            providers: Mutex::new(Vec::new()),
        });
        tree.set_spawn(spawn.clone(), names);
        Self {
            _dir: dir,
            root,
            tree,
            spawn,
            runtime,
            observer,
        }
    }

    fn parent(
        &self,
        script: impl Fn(&str) -> Value + Send + Sync + 'static,
    ) -> (Agent, Arc<Scripted>) {
        let provider = Scripted::new(script);
        let agent = Agent::new(setup_for(
            self.runtime.clone(),
            self.root.clone(),
            provider.clone(),
            "You are the parent.".into(),
            Some(self.tree.clone()),
            self.observer.clone(),
        ));
        (agent, provider)
    }

    fn subagent_events(&self) -> Vec<(String, String)> {
        self.observer
            .events
            .lock()
            .unwrap()
            .iter()
            .filter_map(|e| match e {
                AgentEvent::Subagent { handle, status, .. } => {
                    Some((handle.clone(), status.clone()))
                }
                _ => None,
            })
            .collect()
    }
}

fn records(session: &Session) -> Vec<Event> {
    tackle_store::EventLog::read_records(&session.event_log_path())
        .unwrap()
        .into_iter()
        .filter_map(|r| serde_json::from_value(r.event).ok())
        .collect()
}

/// The records of `id`'s log, a session of the same store as `beside`.
fn records_of(beside: &Session, id: &SessionId) -> Vec<Event> {
    let path = beside.event_log_path();
    let path = std::path::PathBuf::from(path.to_string_lossy().replace(&beside.id().0, &id.0));
    tackle_store::EventLog::read_records(&path)
        .unwrap()
        .into_iter()
        .filter_map(|r| serde_json::from_value(r.event).ok())
        .collect()
}

/// The notices a session's model read: recorded as consumed messages, never as user input.
fn user_inputs(session: &Session) -> Vec<String> {
    let records = records(session);
    assert!(
        !records
            .iter()
            .any(|e| matches!(e, Event::UserInput(u) if u.text.starts_with("[subagent session"))),
        "a notice was recorded as the user's words"
    );
    records
        .into_iter()
        .filter_map(|e| match e {
            Event::MessageConsumed(m) => Some(m.text),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_parallel_children_and_a_grandchild_report_back_before_the_parent_finishes() {
    let family = Family::new(Limits::default());
    let (mut agent, parent_model) = family.parent(|seen| {
        let explore = handles(seen, "explore");
        let general = handles(seen, "general");
        let done = |h: &[String]| {
            h.iter()
                .any(|h| seen.contains(&format!("[subagent session {h}; completed")))
        };
        if done(&explore) && done(&general) {
            return text("Both reported.");
        }
        if !seen.contains("Subagent started") {
            return calls(json!([
                {"name": "delegate_subagent", "arguments": {
                    "agent_type": "explore", "prompt": "count the apples",
                    "description": "apples"}},
                // An empty resume_session_id (small models fill optional fields so) is none.
                {"name": "delegate_subagent", "arguments": {
                    "agent_type": "general", "prompt": "organise the pears",
                    "resume_session_id": "", "description": ""}}
            ]));
        }
        text("Waiting for them.")
    });
    let end = guarded(agent.run(Some("sort the fruit"), CancellationToken::new())).await;
    assert_eq!(end.outcome, RunOutcome::Finished, "{}", end.reason);
    assert_eq!(end.last_message.as_deref(), Some("Both reported."));

    // The notices reached the parent's log as input, in the seed's form.
    let inputs = user_inputs(&family.root);
    let apples = inputs
        .iter()
        .find(|t| t.contains("There are 3 apples."))
        .expect("the explore child's notice");
    // The two children start in parallel: which is listed first is not fixed.
    let children = family.tree.children(family.root.id());
    let explore = children
        .iter()
        .find(|c| c.handle.starts_with("explore_"))
        .expect("the explore child");
    assert_eq!(
        apples,
        &format!(
            "[subagent session {}; completed; 1 line; full output shown]\nThere are 3 apples.",
            explore.handle
        )
    );
    assert!(inputs.iter().any(|t| t.contains("the helper said 42")));

    // The tree: two children of the root, one grandchild under the general one.
    let children = family.tree.children(family.root.id());
    assert_eq!(children.len(), 2);
    let mut types: Vec<&str> = children.iter().map(|c| c.agent_type.as_str()).collect();
    types.sort();
    assert_eq!(types, ["explore", "general"]);
    assert!(children.iter().all(|c| c.status.as_str() == "completed"));
    let general = children
        .iter()
        .find(|c| c.agent_type == "general")
        .expect("the general child");
    let grandchildren = family.tree.children(&general.session);
    assert_eq!(grandchildren.len(), 1);
    assert_eq!(grandchildren[0].depth, 2);
    assert_eq!(grandchildren[0].output, "inner answer: 42");

    // Each child has its own log naming its parent and handle.
    for (child, parent) in [
        (explore, family.root.id()),
        (&grandchildren[0], &general.session),
    ] {
        let path = family
            .root
            .event_log_path()
            .to_string_lossy()
            .replace(&family.root.id().0, &child.session.0);
        let first =
            &tackle_store::EventLog::read_records(std::path::Path::new(&path)).unwrap()[0].event;
        assert_eq!(first["type"], "session_started");
        assert_eq!(first["parent"], parent.0);
        assert_eq!(first["handle"], child.handle);
        assert_eq!(first["agent"], child.agent_type);
    }
    // The explore child was offered its type's tools only, and told what it is.
    let (_, explore_model) = family
        .spawn
        .providers
        .lock()
        .unwrap()
        .iter()
        .find(|(id, _)| id == &explore.session)
        .cloned()
        .unwrap();
    let first = explore_model.requests.lock().unwrap()[0].clone();
    assert!(first.contains("read-only research agent"), "{first}");
    // Every start and end was announced to the root's front end.
    let events = family.subagent_events();
    assert_eq!(events.iter().filter(|(_, s)| s == "running").count(), 3);
    assert_eq!(events.iter().filter(|(_, s)| s == "completed").count(), 3);
    // The parent's model was told which types it may start.
    let first = parent_model.requests.lock().unwrap()[0].clone();
    assert!(
        first.contains("<tool_instructions provider=\"builtin.delegate\">"),
        "{first}"
    );
    assert!(first.contains("- explore — Read-only research"), "{first}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_child_stops_and_says_so() {
    let family = Family::new(Limits::default());
    let (mut agent, _) = family.parent(|seen| {
        let waiter = handles(seen, "waiter");
        if seen.contains("; cancelled") {
            return text("Stopped it.");
        }
        match waiter.first() {
            None => calls(json!([{"name": "delegate_subagent", "arguments": {
                "agent_type": "waiter", "prompt": "wait forever"}}])),
            Some(h) => calls(json!([{"name": "cancel_subagent", "arguments": {"session_id": h}}])),
        }
    });
    let end = guarded(agent.run(Some("start and stop"), CancellationToken::new())).await;
    assert_eq!(end.outcome, RunOutcome::Finished, "{}", end.reason);
    let child = &family.tree.children(family.root.id())[0];
    assert_eq!(child.status.as_str(), "cancelled");
    let child_log = records_of(&family.root, &child.session);
    assert!(child_log.iter().any(|e| matches!(
        e,
        Event::RunFinished(r) if r.outcome == RunOutcome::Cancelled
    )));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_child_is_continued_and_its_output_paged() {
    let family = Family::new(Limits::default());
    let (mut agent, _) = family.parent(|seen| {
        let explore = handles(seen, "explore");
        let started = seen.matches("Subagent started").count();
        if seen.contains("finding 30") {
            return text("Read it all.");
        }
        if seen.contains("; completed; 30 lines") {
            let offset = if seen.contains("\"offset\":10") {
                20
            } else {
                10
            };
            return calls(json!([{"name": "get_subagent_result", "arguments": {
                "session_id": explore[0], "offset": offset, "limit": 10}}]));
        }
        if started == 1 && seen.contains("; completed; 1 line") {
            return calls(json!([{"name": "delegate_subagent", "arguments": {
                "agent_type": "explore", "prompt": "now the lengthy report",
                "resume_session_id": explore[0]}}]));
        }
        if explore.is_empty() {
            return calls(json!([{"name": "delegate_subagent", "arguments": {
                "agent_type": "explore", "prompt": "count the apples"}}]));
        }
        text("Waiting.")
    });
    let end = guarded(agent.run(Some("go"), CancellationToken::new())).await;
    assert_eq!(end.outcome, RunOutcome::Finished, "{}", end.reason);
    let children = family.tree.children(family.root.id());
    assert_eq!(children.len(), 1, "resuming made no new child");
    assert!(children[0].output.starts_with("finding 1\n"));
    // The notice of the long output was cut and pointed at get_subagent_result.
    let inputs = user_inputs(&family.root);
    let long = inputs.iter().find(|t| t.contains("30 lines")).unwrap();
    assert!(long.contains(&format!(
        "use get_subagent_result with session_id \"{}\" for the full output",
        children[0].handle
    )));
    assert_eq!(long.lines().count(), 21);
    // The pages came back whole, with the next offset while more remained.
    let results: Vec<String> = records(&family.root)
        .into_iter()
        .filter_map(|e| match e {
            Event::ToolBatchFinished(f)
                if f.results.iter().any(|r| r.tool == "get_subagent_result") =>
            {
                Some(serde_json::to_string(&f).unwrap())
            }
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), 2);
    assert!(
        results[0].contains("finding 11\\nfinding 12") && results[0].contains("finding 20"),
        "{}",
        results[0]
    );
    assert!(!results[0].contains("finding 21"), "{}", results[0]);
    assert!(
        results[0].contains("[lines 11–20 of 30; the rest from offset 20]"),
        "{}",
        results[0]
    );
    assert!(results[1].contains("finding 30"), "{}", results[1]);
    assert!(!results[1].contains("the rest from"), "{}", results[1]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn depth_and_running_bounds_refuse_and_say_not_to_retry() {
    // Depth 1: a child may not delegate, and is not told of types it cannot start.
    let family = Family::new(Limits {
        max_depth: 1,
        max_running: 4,
    });
    let (mut agent, _) = family.parent(|seen| {
        if seen.contains("Could not delegate") {
            return text("Fine.");
        }
        if seen.contains("Subagent started") {
            return text("Waiting.");
        }
        calls(json!([{"name": "delegate_subagent", "arguments": {
            "agent_type": "general", "prompt": "try to delegate"}}]))
    });
    let end = guarded(agent.run(Some("go"), CancellationToken::new())).await;
    assert_eq!(end.outcome, RunOutcome::Finished, "{}", end.reason);
    let child = &family.tree.children(family.root.id())[0];
    let (_, model) = family.spawn.providers.lock().unwrap()[0].clone();
    let requests = model.requests.lock().unwrap().clone();
    // At the ceiling the child is offered no delegation tool and told of no type.
    assert!(!requests[0].contains("builtin.delegate"), "{}", requests[0]);
    assert!(
        requests[0].contains("tools offered: hang\n")
            || requests[0].ends_with("tools offered: hang"),
        "{}",
        requests[0]
    );
    assert!(
        requests[1].contains("unknown tool `delegate_subagent`"),
        "{}",
        requests[1]
    );
    assert!(family.tree.children(&child.session).is_empty());

    // One running at most: the second of two parallel starts is refused.
    let family = Family::new(Limits {
        max_depth: 2,
        max_running: 1,
    });
    let (mut agent, parent_model) = family.parent(|seen| {
        if let Some(h) = handles(seen, "waiter").first()
            && !seen.contains("; cancelled")
        {
            return calls(json!([{"name": "cancel_subagent", "arguments": {"session_id": h}}]));
        }
        if seen.contains("; cancelled") {
            return text("Done.");
        }
        calls(json!([
            {"name": "delegate_subagent", "arguments": {"agent_type": "waiter", "prompt": "wait forever"}},
            {"name": "delegate_subagent", "arguments": {"agent_type": "waiter", "prompt": "wait forever"}}
        ]))
    });
    let end = guarded(agent.run(Some("go"), CancellationToken::new())).await;
    assert_eq!(end.outcome, RunOutcome::Finished, "{}", end.reason);
    assert_eq!(family.tree.children(family.root.id()).len(), 1);
    let second = parent_model.requests.lock().unwrap()[1].clone();
    assert!(
        second.contains("1 subagents are already running in this tree")
            && second.contains("do not retry now"),
        "{second}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reference_to_no_child_of_the_caller_lists_the_children() {
    let family = Family::new(Limits::default());
    let (mut agent, parent_model) = family.parent(|seen| {
        if seen.contains("unknown subagent reference") {
            return text("I see.");
        }
        if seen.contains("; completed") {
            return calls(json!([{"name": "get_subagent_result", "arguments": {
                "session_id": "explore_deadbeef"}}]));
        }
        if seen.contains("Subagent started") {
            return text("Waiting.");
        }
        calls(json!([{"name": "delegate_subagent", "arguments": {
            "agent_type": "explore", "prompt": "count the apples", "description": "apples"}}]))
    });
    let end = guarded(agent.run(Some("go"), CancellationToken::new())).await;
    assert_eq!(end.outcome, RunOutcome::Finished, "{}", end.reason);
    let child = &family.tree.children(family.root.id())[0];
    let last = parent_model
        .requests
        .lock()
        .unwrap()
        .last()
        .cloned()
        .unwrap();
    assert!(
        last.contains(&format!(
            "- {} — apples — completed (session_id {})",
            child.handle, child.session.0
        )),
        "{last}"
    );
    // An unknown type names the types there are.
    let err = family
        .tree
        .start(
            family.root.id(),
            tackle_agent::delegate::StartRequest {
                agent_type: "nope".into(),
                prompt: "x".into(),
                description: None,
                resume: None,
            },
        )
        .unwrap_err();
    assert!(
        err.message.contains("explore, general, waiter"),
        "{}",
        err.message
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rebuilt_tree_keeps_finished_children_and_reports_a_killed_one_interrupted() {
    use tackle_protocol::{RunFinished, RunStarted, UserInput};
    use tackle_runtime::ChildOptions;
    let dir = tempfile::tempdir().unwrap();
    let root = Session::open(dir.path()).unwrap();
    let child = |handle: &str| {
        root.open_subagent(ChildOptions {
            agent: Some("explore".into()),
            handle: Some(handle.into()),
            ..ChildOptions::default()
        })
        .unwrap()
    };
    let run = |text: &str| {
        [
            Event::RunStarted(RunStarted {
                model: "replay:x".into(),
                at_ms: 1,
            }),
            Event::UserInput(UserInput {
                text: text.into(),
                at_ms: 1,
            }),
        ]
    };
    // One child ran to its end; the other's process was killed mid-turn.
    let done = child("explore_00000001");
    for e in run("count the apples") {
        done.append_event(&e).await.unwrap();
    }
    done.append_event(&Event::RunFinished(RunFinished {
        outcome: RunOutcome::Finished,
        reason: "finished".into(),
        at_ms: 2,
    }))
    .await
    .unwrap();
    let killed = child("explore_00000002");
    for e in run("read everything") {
        killed.append_event(&e).await.unwrap();
    }
    // A grandchild under the killed one, and an unrelated top-level session.
    let grand = killed
        .open_subagent(ChildOptions {
            agent: Some("explore".into()),
            handle: Some("explore_00000003".into()),
            ..ChildOptions::default()
        })
        .unwrap();
    let _other = Session::open(dir.path()).unwrap();

    let tree = Tree::new(
        Limits::default(),
        types(),
        Arc::new(tackle_agent::Unobserved),
    );
    tree.add_root(root.clone());
    tackle_agent::delegate::rebuild::restore(&tree, &root).unwrap();
    let children = tree.children(root.id());
    assert_eq!(children.len(), 2);
    let by = |h: &str| children.iter().find(|c| c.handle == h).unwrap().clone();
    assert_eq!(by("explore_00000001").status.as_str(), "completed");
    assert_eq!(by("explore_00000001").description, "count the apples");
    let interrupted = by("explore_00000002");
    assert_eq!(interrupted.status.as_str(), "interrupted");
    assert!(
        interrupted.output.contains("it was not re-run"),
        "{}",
        interrupted.output
    );
    let grandchildren = tree.children(killed.id());
    assert_eq!(grandchildren.len(), 1);
    assert_eq!(grandchildren[0].session, *grand.id());
    assert_eq!(grandchildren[0].depth, 2);
    // Handles and ids resolve for their parent only.
    assert!(tree.resolve(root.id(), "explore_00000002").is_ok());
    assert!(tree.resolve(root.id(), &interrupted.session.0).is_ok());
    assert!(tree.resolve(root.id(), "explore_00000003").is_err());
    assert!(tree.resolve(root.id(), "explore_0000000").is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_log_another_key_wrote_is_never_taken_for_a_child() {
    use tackle_runtime::{ChildOptions, LogKey, SessionOptions};
    let dir = tempfile::tempdir().unwrap();
    let key = LogKey::from_bytes(&[1; 32]);
    let root = Session::open_sealed(dir.path(), SessionOptions::default(), &key).unwrap();
    let own = root
        .open_subagent(ChildOptions {
            agent: Some("explore".into()),
            handle: Some("explore_00000001".into()),
            ..ChildOptions::default()
        })
        .unwrap();
    // A log that came with the repository, naming the root as its parent.
    let forged = Session::open_sealed(
        dir.path(),
        SessionOptions {
            parent: Some(root.id().clone()),
            agent: Some("explore".into()),
            handle: Some("explore_0000dead".into()),
            ..SessionOptions::default()
        },
        &LogKey::from_bytes(&[2; 32]),
    )
    .unwrap();
    let tree = Tree::new(
        Limits::default(),
        types(),
        Arc::new(tackle_agent::Unobserved),
    );
    tree.add_root(root.clone());
    tackle_agent::delegate::rebuild::restore(&tree, &root).unwrap();
    let children: Vec<SessionId> = tree
        .children(root.id())
        .into_iter()
        .map(|c| c.session)
        .collect();
    assert_eq!(children, [own.id().clone()]);
    assert!(tree.resolve(root.id(), "explore_0000dead").is_err());
    assert!(tree.resolve(root.id(), &forged.id().0).is_err());
}
