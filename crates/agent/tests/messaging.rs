//! Agent messaging end to end with scripted models (seed 000, "Agent messaging"): every row
//! of the seed's error table, a parent ↔ child chain stopped by `max_hops`, steer and queue
//! to a running child, a finished child woken, the tool hidden without a `message` rule and
//! denied through the normal path, and a message a crash left unread delivered exactly once
//! by a tree rebuilt from the logs, with a retried call answered from the log.
//!
//! Each session gets its own scripted provider, which answers from what the request holds.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::{Arc, Mutex};

use common::*;
use serde_json::{Value, json};
use tackle_agent::delegate::{AgentType, DelegateSubagent, Limits, Spawn, StartRequest, Tree};
use tackle_agent::messaging::{MessagingSettings, SendMessage};
use tackle_agent::{
    Agent, AgentSetup, Bounds, DescriptionsSetting, ModelSetup, Observer, TaskBoundaries,
    WatchdogSettings,
};
use tackle_llm::Provider;
use tackle_llm::media::DeliveryFamily;
use tackle_protocol::{CallId, Event, RunOutcome, SessionId, ToolCall, ToolResult};
use tackle_runtime::{
    AllowAll, CancellationToken, Catalog, GateHook, Runtime, RuntimeConfig, Session,
};
use tackle_tool::DynTool;

fn text(t: &str) -> Value {
    json!({"turn": {"text": t}})
}

/// A send_message call under `id` (call ids are the idempotency key's last part: a scripted
/// turn of one call would otherwise repeat its first).
fn send(id: String, to: &str, body: &str) -> Value {
    json!({"turn": {"tool_calls": [
        {"id": id, "name": "send_message", "arguments": {"to": to, "body": body}}]}})
}

/// The children's model: a chain player for "ping pong", short answers otherwise.
fn child_model(seen: &str) -> Value {
    if seen.contains("ping pong") {
        if seen.contains("send_message:max_hops_exceeded") {
            return text("chain stopped");
        }
        let pings = seen.matches("[message from parent; mode steer]").count();
        let pongs = seen.matches("\"name\":\"send_message\"").count();
        if pings > pongs {
            return send(format!("pong-{pongs}"), "parent", "pong");
        }
        return text("waiting for a ping");
    }
    if seen.contains("[message from parent") {
        return text("read your message");
    }
    if seen.contains("count the apples") {
        return text("There are 3 apples.");
    }
    text("nothing to do")
}

struct TestSpawn {
    runtime: Mutex<Option<Arc<Runtime>>>,
    tree: Arc<Tree>,
    sessions: Mutex<Vec<Session>>,
    providers: Mutex<Vec<(SessionId, Arc<Scripted>)>>,
}

impl Spawn for TestSpawn {
    fn setup(&self, session: Session, _: &AgentType) -> Result<AgentSetup, String> {
        let provider = Scripted::new(child_model);
        self.sessions.lock().unwrap().push(session.clone());
        self.providers
            .lock()
            .unwrap()
            .push((session.id().clone(), provider.clone()));
        Ok(setup_for(
            self.runtime.lock().unwrap().clone().unwrap(),
            session,
            provider,
            Some(self.tree.clone()),
        ))
    }

    fn reopen(&self, id: &SessionId) -> Result<Session, String> {
        self.sessions
            .lock()
            .unwrap()
            .iter()
            .find(|s| s.id() == id)
            .cloned()
            .ok_or_else(|| format!("{} is not held by this test", id.0))
    }
}

fn setup_for(
    runtime: Arc<Runtime>,
    session: Session,
    provider: Arc<dyn Provider>,
    delegation: Option<Arc<Tree>>,
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
        system: "You are an agent.".to_owned().into(),
        bounds: Bounds::default(),
        observer: Arc::new(tackle_agent::Unobserved) as Arc<dyn Observer>,
        boundaries: TaskBoundaries::new(),
        watchdog: WatchdogSettings::default(),
        descriptions: DescriptionsSetting::Full,
        delegation,
    }
}

/// A root session that may delegate and message, in a project of its own.
struct Family {
    dir: tempfile::TempDir,
    root: Session,
    tree: Arc<Tree>,
    spawn: Arc<TestSpawn>,
    runtime: Arc<Runtime>,
}

impl Family {
    fn new(settings: MessagingSettings) -> Self {
        Self::with_gate(settings, Arc::new(AllowAll))
    }

    fn with_gate(settings: MessagingSettings, gate: Arc<dyn GateHook>) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = Session::open(dir.path()).unwrap();
        let tree = Tree::new(
            Limits::default(),
            tackle_agent::delegate::agent_type::built_in(),
            Arc::new(tackle_agent::Unobserved),
        );
        tree.add_root(root.clone());
        Self::around(dir, root, tree, settings, gate)
    }

    fn around(
        dir: tempfile::TempDir,
        root: Session,
        tree: Arc<Tree>,
        settings: MessagingSettings,
        gate: Arc<dyn GateHook>,
    ) -> Self {
        let tools: Vec<Arc<dyn DynTool>> = vec![
            Arc::new(DelegateSubagent::new(tree.clone())),
            Arc::new(SendMessage::new(tree.clone(), settings)),
        ];
        let runtime = Arc::new(Runtime::new(
            Catalog::new(tools).unwrap(),
            gate,
            RuntimeConfig::default(),
        ));
        let spawn = Arc::new(TestSpawn {
            runtime: Mutex::new(Some(runtime.clone())),
            tree: tree.clone(),
            sessions: Mutex::new(Vec::new()),
            providers: Mutex::new(Vec::new()),
        });
        tree.set_spawn(
            spawn.clone(),
            vec!["delegate_subagent".into(), "send_message".into()],
        );
        Self {
            dir,
            root,
            tree,
            spawn,
            runtime,
        }
    }

    /// Starts a child on `task` and waits until it has ended.
    async fn finished_child(&self, task: &str) -> Session {
        let node = self
            .tree
            .start(
                self.root.id(),
                StartRequest {
                    agent_type: "explore".into(),
                    prompt: task.into(),
                    description: None,
                    resume: None,
                },
            )
            .unwrap();
        self.until_ended(&node.session).await;
        self.spawn.reopen(&node.session).unwrap()
    }

    async fn until_ended(&self, id: &SessionId) {
        guarded(async {
            while self.status(id) == "running" {
                self.tree
                    .wait_for_change(self.root.id(), &CancellationToken::new())
                    .await;
                self.tree.take_notices(self.root.id());
                tokio::task::yield_now().await;
            }
        })
        .await;
    }

    fn status(&self, id: &SessionId) -> String {
        self.tree
            .children(self.root.id())
            .iter()
            .find(|n| &n.session == id)
            .map(|n| n.status.as_str().to_owned())
            .unwrap()
    }

    fn handle(&self, id: &SessionId) -> String {
        self.tree
            .children(self.root.id())
            .iter()
            .find(|n| &n.session == id)
            .unwrap()
            .handle
            .clone()
    }

    /// One send_message call from `from`, through the runtime.
    async fn send_from(&self, from: &Session, call: &str, arguments: Value) -> ToolResult {
        self.runtime
            .run_batch(
                from,
                vec![ToolCall {
                    id: CallId(call.into()),
                    name: "send_message".into(),
                    arguments,
                }],
                CancellationToken::new(),
            )
            .await
            .unwrap()
            .remove(0)
    }
}

fn log_of(beside: &Session, id: &SessionId) -> Vec<(u64, Event)> {
    let path = beside.event_log_path();
    let path = std::path::PathBuf::from(path.to_string_lossy().replace(&beside.id().0, &id.0));
    tackle_store::EventLog::read_records(&path)
        .unwrap()
        .into_iter()
        .filter_map(|r| Some((r.seq, serde_json::from_value(r.event).ok()?)))
        .collect()
}

fn kinds(beside: &Session, id: &SessionId, kind: &str) -> usize {
    log_of(beside, id)
        .iter()
        .filter(|(_, e)| serde_json::to_value(e).unwrap()["type"] == kind)
        .count()
}

fn code(result: &ToolResult) -> String {
    result
        .code
        .as_ref()
        .map(|c| c.as_str().to_owned())
        .unwrap_or_else(|| "ok".into())
}

/// What one row of the error table sets up before its call.
#[derive(Clone, Copy, Debug)]
enum Setup {
    Nothing,
    /// Two messages from the child to the root are already pending.
    TwoPending,
    /// The child is handling a message of hop 1.
    Handling,
    Shutdown,
}

/// The seed's error table, one row per code: settings, who sends, what is set up, the
/// arguments (`{child}`, `{root}`, `{other}` replaced), and the code.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_seeds_error_table() {
    let tight = MessagingSettings {
        max_pending_per_session: 2,
        ..MessagingSettings::default()
    };
    let one_per_pair = MessagingSettings {
        max_inflight_per_pair: 2,
        ..MessagingSettings::default()
    };
    let one_hop = MessagingSettings {
        max_hops: 1,
        ..MessagingSettings::default()
    };
    let off = MessagingSettings {
        enabled: false,
        ..MessagingSettings::default()
    };
    let d = MessagingSettings::default;
    let small = MessagingSettings {
        max_body_bytes: 8,
        ..MessagingSettings::default()
    };
    #[rustfmt::skip]
    let rows: Vec<(MessagingSettings, bool, Setup, Value, &str)> = vec![
        (off, false, Setup::Nothing, json!({"to": "{child}", "body": "hi"}), "send_message:disabled"),
        (d(), false, Setup::Nothing, json!({"recipient_session_id": "{child}", "body": "hi"}), "send_message:invalid_arguments"),
        (d(), false, Setup::Nothing, json!({"to": "{child}", "body": "hi", "extra": 1}), "send_message:invalid_arguments"),
        (d(), false, Setup::Nothing, json!({"to": "{child}"}), "send_message:invalid_arguments"),
        (d(), false, Setup::Nothing, json!({"to": "{child}", "body": 3}), "send_message:invalid_arguments"),
        (d(), false, Setup::Nothing, json!({"to": "{child}", "body": "hi", "mode": "shout"}), "send_message:invalid_arguments"),
        (d(), false, Setup::Nothing, json!({"to": "{child}", "body": "  "}), "send_message:invalid_body"),
        (small, false, Setup::Nothing, json!({"to": "{child}", "body": "nine bytes"}), "send_message:invalid_body"),
        (d(), false, Setup::Nothing, json!({"to": "20990101T000000Z-0123456789abcdef", "body": "hi"}), "send_message:unknown_session"),
        (d(), false, Setup::Nothing, json!({"to": "123e4567-e89b-12d3-a456-426614174000", "body": "hi"}), "send_message:unknown_session"),
        (d(), false, Setup::Nothing, json!({"to": "{other}", "body": "hi"}), "send_message:not_tree_peer"),
        (d(), false, Setup::Nothing, json!({"to": "{root}", "body": "hi"}), "send_message:self_send"),
        (d(), true, Setup::Nothing, json!({"to": "{childhandle}", "body": "hi"}), "send_message:self_send"),
        (tight, true, Setup::TwoPending, json!({"to": "parent", "body": "hi"}), "send_message:inbox_full"),
        (one_hop, true, Setup::Handling, json!({"to": "parent", "body": "hi"}), "send_message:max_hops_exceeded"),
        (one_per_pair, true, Setup::TwoPending, json!({"to": "parent", "body": "hi"}), "send_message:inflight_full"),
        (d(), true, Setup::Shutdown, json!({"to": "parent", "body": "hi"}), "send_message:engine_shutdown"),
        (d(), false, Setup::Nothing, json!({"to": "explore_00000000", "body": "hi"}), "unknown_subagent"),
        (d(), true, Setup::Nothing, json!({"to": "parent", "body": "hi"}), "ok"),
    ];
    for (n, (settings, from_child, setup, arguments, want)) in rows.into_iter().enumerate() {
        let family = Family::new(settings);
        let child = family.finished_child("count the apples").await;
        let other = Session::open(family.dir.path()).unwrap();
        let arguments: Value = serde_json::from_str(
            &arguments
                .to_string()
                .replace("{childhandle}", &family.handle(child.id()))
                .replace("{child}", &child.id().0)
                .replace("{root}", &family.root.id().0)
                .replace("{other}", &other.id().0),
        )
        .unwrap();
        let sender = if from_child { &child } else { &family.root };
        match setup {
            Setup::Nothing => {}
            Setup::TwoPending => {
                for k in 0..2 {
                    let r = family
                        .send_from(
                            &child,
                            &format!("pre-{k}"),
                            json!({"to": "parent", "body": "x"}),
                        )
                        .await;
                    assert_eq!(code(&r), "ok", "row {n}: {:?}", r.content);
                }
            }
            Setup::Handling => family.tree.handling(child.id(), 1),
            Setup::Shutdown => family.tree.shutdown(),
        }
        let result = family.send_from(sender, "the-call", arguments).await;
        assert_eq!(code(&result), want, "row {n}: {:?}", result.content);
        if want != "ok" {
            assert!(result.is_error, "row {n}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_parent_child_ping_pong_stops_at_max_hops() {
    let family = Family::new(MessagingSettings {
        max_hops: 3,
        ..MessagingSettings::default()
    });
    let root_model = Scripted::new(|seen| {
        if seen.contains("chain stopped") {
            return text("done");
        }
        let Some(i) = seen.find("[subagent session explore_") else {
            return json!({"turn": {"tool_calls": [{"name": "delegate_subagent", "arguments": {
                "agent_type": "explore", "prompt": "play ping pong"}}]}});
        };
        let start = i + "[subagent session ".len();
        let handle: String = seen[start..].chars().take("explore_".len() + 8).collect();
        let pongs = seen.matches("; mode steer]\\npong").count();
        let pings = seen.matches("\"name\":\"send_message\"").count();
        if pings <= pongs {
            return send(format!("ping-{pings}"), &handle, "ping");
        }
        text("waiting")
    });
    let mut agent = Agent::new(setup_for(
        family.runtime.clone(),
        family.root.clone(),
        root_model.clone(),
        Some(family.tree.clone()),
    ));
    let end = guarded(agent.run(Some("start the game"), CancellationToken::new())).await;
    assert_eq!(end.outcome, RunOutcome::Finished, "{}", end.reason);
    assert_eq!(
        end.last_message.as_deref(),
        Some("done"),
        "{:#?}",
        root_model.requests.lock().unwrap().last()
    );

    let child = &family.tree.children(family.root.id())[0];
    let codes: Vec<String> = log_of(&family.root, &child.session)
        .into_iter()
        .filter_map(|(_, e)| match e {
            Event::CallFinished(f) if f.tool == "send_message" => {
                Some(f.code.map_or("ok".to_owned(), |c| c.as_str().to_owned()))
            }
            _ => None,
        })
        .collect();
    // Hop 1 ping, hop 2 pong, hop 3 ping, hop 4 pong refused.
    assert_eq!(codes, ["ok", "send_message:max_hops_exceeded"]);
    // The envelope names the sender and mode, never the hop.
    let consumed: Vec<String> = log_of(&family.root, &child.session)
        .into_iter()
        .filter_map(|(_, e)| match e {
            Event::MessageConsumed(m) => Some(m.text),
            _ => None,
        })
        .collect();
    assert_eq!(
        consumed,
        [
            "[message from parent; mode steer]\nping",
            "[message from parent; mode steer]\nping"
        ]
    );
    // Messages only: the children's completion notices are recorded as consumed too.
    let root_consumed = log_of(&family.root, family.root.id())
        .into_iter()
        .filter(
            |(_, e)| matches!(e, Event::MessageConsumed(m) if !m.message_id.starts_with("notice_")),
        )
        .count();
    assert_eq!(root_consumed, 1);
    assert!(!root_model.requests.lock().unwrap().concat().contains("hop"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steer_and_queue_to_a_running_root_and_a_finished_child_woken() {
    let family = Family::new(MessagingSettings::default());
    let child = family.finished_child("count the apples").await;

    // The root is running (its loop began a run): steer says running, queue says queued.
    family.tree.run_began(family.root.id(), 1);
    let steer = family
        .send_from(&child, "c1", json!({"to": "parent", "body": "a steer"}))
        .await;
    assert_eq!(steer.metadata["recipient_state"], "running");
    assert_eq!(steer.metadata["mode"], "steer");
    let queue = family
        .send_from(
            &child,
            "c2",
            json!({"to": "parent", "body": "a queue", "mode": "queue"}),
        )
        .await;
    assert_eq!(queue.metadata["recipient_state"], "queued");
    // Steer joins at the next boundary; queue waits for the turn's end.
    assert_eq!(family.tree.take_messages(family.root.id(), false).len(), 1);
    assert_eq!(family.tree.take_messages(family.root.id(), true).len(), 1);
    family.tree.run_ended(family.root.id());
    // A root that is not running keeps a message pending until its next run.
    let idle = family
        .send_from(&child, "c3", json!({"to": "parent", "body": "later"}))
        .await;
    assert_eq!(idle.metadata["recipient_state"], "queued");
    assert_eq!(family.tree.pending_messages(family.root.id()), 1);

    // A finished child is woken: running until the run the message started ends.
    let woke = family
        .send_from(
            &family.root,
            "r1",
            json!({"to": family.handle(child.id()), "body": "one more thing"}),
        )
        .await;
    assert_eq!(code(&woke), "ok", "{:?}", woke.content);
    assert_eq!(woke.metadata["recipient_state"], "waking_finished");
    assert!(
        woke.metadata["message_id"]
            .as_str()
            .unwrap()
            .starts_with("msg_")
    );
    assert_eq!(
        kinds(&family.root, child.id(), "message_accepted"),
        1,
        "accepted before the result"
    );
    family.until_ended(child.id()).await;
    assert_eq!(family.status(child.id()), "completed");
    let consumed: Vec<String> = log_of(&family.root, child.id())
        .into_iter()
        .filter_map(|(_, e)| match e {
            Event::MessageConsumed(m) => Some(m.text),
            _ => None,
        })
        .collect();
    assert_eq!(
        consumed,
        ["[message from parent; mode steer]\none more thing"]
    );
    assert_eq!(
        family.tree.children(family.root.id())[0].output,
        "read your message"
    );
    // Then the root's next run starts with the message it was holding.
    let root_model = Scripted::new(|_| text("noted"));
    let mut agent = Agent::resume(setup_for(
        family.runtime.clone(),
        family.root.clone(),
        root_model.clone(),
        Some(family.tree.clone()),
    ))
    .unwrap();
    let end = guarded(agent.run(Some("go on"), CancellationToken::new())).await;
    assert_eq!(end.outcome, RunOutcome::Finished, "{}", end.reason);
    let handle = family.handle(child.id());
    assert!(
        root_model.requests.lock().unwrap()[0]
            .contains(&format!("[message from {handle}; mode steer]\\nlater"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tool_is_hidden_without_a_message_rule_and_denied_by_a_deny_rule() {
    use tackle_gate::{Effect, Mode, PathScope, Pattern, Policy, Rule, RuleSource, UrlScope};
    let policy = |rules: &[(Effect, &str)]| {
        Policy::new(
            rules
                .iter()
                .map(|(e, p)| Rule::new(*e, Pattern::parse(p).unwrap(), RuleSource::BuiltIn))
                .collect(),
            Mode::default(),
            PathScope::default(),
            UrlScope::default(),
        )
        .unwrap()
    };
    let tree = Tree::new(
        Limits::default(),
        Vec::new(),
        Arc::new(tackle_agent::Unobserved),
    );
    let tool = SendMessage::new(tree, MessagingSettings::default());
    let actions = DynTool::permission_actions(&tool);
    assert!(!policy(&[]).advertises("send_message", actions));
    assert!(policy(&[(Effect::Allow, "message:parent")]).advertises("send_message", actions));
    assert!(policy(&[(Effect::Ask, "message:*")]).advertises("send_message", actions));
    assert!(!policy(&[(Effect::Deny, "message:*")]).advertises("send_message", actions));

    // Allowed to the parent only: a message to a child is denied by the gate's default.
    let gate = Arc::new(tackle_runtime::PolicyGate::new(policy(&[(
        Effect::Allow,
        "message:parent",
    )])));
    let family = Family::with_gate(MessagingSettings::default(), gate);
    let child = family.finished_child("count the apples").await;
    let up = family
        .send_from(&child, "c1", json!({"to": "parent", "body": "hi"}))
        .await;
    assert_eq!(code(&up), "ok", "{:?}", up.content);
    let down = family
        .send_from(
            &family.root,
            "r1",
            json!({"to": child.id().0, "body": "hi"}),
        )
        .await;
    assert_eq!(code(&down), "permission_denied", "{:?}", down.content);
    assert_eq!(kinds(&family.root, child.id(), "message_accepted"), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_a_crash_left_unread_is_delivered_once_by_the_rebuilt_tree() {
    let family = Family::new(MessagingSettings::default());
    let child = family.finished_child("count the apples").await;
    let run = log_of(&family.root, child.id())
        .into_iter()
        .find(|(_, e)| matches!(e, Event::RunStarted(_)))
        .unwrap()
        .0;
    // The loop names a turn `<session>-turn-<n>`: the same for the call when it is retried.
    let turn = tackle_protocol::TurnId(format!("{}-turn-3", child.id()));
    child.set_turn(turn.clone());
    let first = family
        .send_from(&child, "call-7", json!({"to": "parent", "body": "unread"}))
        .await;
    let id = first.metadata["message_id"].as_str().unwrap().to_owned();
    assert_eq!(kinds(&family.root, family.root.id(), "message_accepted"), 1);

    // The process dies: a fresh tree from the logs.
    let rebuilt = |family: &Family| {
        let tree = Tree::new(
            Limits::default(),
            tackle_agent::delegate::agent_type::built_in(),
            Arc::new(tackle_agent::Unobserved),
        );
        tree.add_root(family.root.clone());
        tackle_agent::delegate::rebuild::restore(&tree, &family.root).unwrap();
        tree
    };
    let tree = rebuilt(&family);
    assert_eq!(tree.pending_messages(family.root.id()), 1);
    let after = Family::around(
        tempfile::tempdir().unwrap(),
        family.root.clone(),
        tree.clone(),
        MessagingSettings::default(),
        Arc::new(AllowAll),
    );
    after.spawn.sessions.lock().unwrap().push(child.clone());
    // The same call of the same run again: the first message, nothing appended.
    tree.run_began(child.id(), run);
    tree.run_ended(child.id());
    child.set_turn(turn);
    let retried = after
        .send_from(&child, "call-7", json!({"to": "parent", "body": "unread"}))
        .await;
    assert_eq!(retried.metadata["message_id"], id.as_str());
    assert_eq!(kinds(&family.root, family.root.id(), "message_accepted"), 1);
    assert_eq!(tree.pending_messages(family.root.id()), 1);

    // The root's next run reads it once.
    let model = Scripted::new(|_| text("seen"));
    let mut agent = Agent::resume(setup_for(
        after.runtime.clone(),
        family.root.clone(),
        model.clone(),
        Some(tree.clone()),
    ))
    .unwrap();
    let end = guarded(agent.run(Some("go on"), CancellationToken::new())).await;
    assert_eq!(end.outcome, RunOutcome::Finished, "{}", end.reason);
    assert_eq!(
        model.requests.lock().unwrap()[0].matches("unread").count(),
        1
    );
    assert_eq!(kinds(&family.root, family.root.id(), "message_consumed"), 1);
    // Another crash: nothing is owed any more, and the conversation holds it once.
    let again = rebuilt(&family);
    assert_eq!(again.pending_messages(family.root.id()), 0);
    let conversation = tackle_agent::rebuild(&family.root.event_log_path()).unwrap();
    let all = serde_json::to_string(&conversation.conversation.messages).unwrap();
    assert_eq!(all.matches("unread").count(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_id_reused_in_another_turn_is_a_new_message_and_in_the_same_turn_a_retry() {
    let family = Family::new(MessagingSettings::default());
    let child = family.finished_child("count the apples").await;
    family.tree.run_began(child.id(), 7);
    let send = |body: &str| json!({"to": "parent", "body": body});
    // A server that sends no call ids gets them by position: `tackle_call_0` in every turn.
    child.set_turn(tackle_protocol::TurnId("turn-1".into()));
    let first = family.send_from(&child, "tackle_call_0", send("one")).await;
    child.set_turn(tackle_protocol::TurnId("turn-2".into()));
    let second = family.send_from(&child, "tackle_call_0", send("two")).await;
    assert_eq!((code(&first), code(&second)), ("ok".into(), "ok".into()));
    assert_ne!(
        first.metadata["message_id"], second.metadata["message_id"],
        "a later turn's call is a new message"
    );
    // The same call in the same turn again is a retry: the first id, nothing appended.
    let retry = family.send_from(&child, "tackle_call_0", send("two")).await;
    assert_eq!(retry.metadata["message_id"], second.metadata["message_id"]);
    assert_eq!(kinds(&family.root, family.root.id(), "message_accepted"), 2);
}
