//! Many sessions in one runtime (DESIGN.md §9, "Sessions in one process"): each batch runs in
//! its session's context, so two sessions never share a grant, a todo list or a plan flag; a
//! child session is offered only its tool filter; what `session_started` records comes back on
//! resume, and so does the todo list.

#![allow(clippy::unwrap_used)] // test approver and plan records: a poisoned lock should panic

mod common;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use common::*;
use serde_json::{Value, json};
use tackle_gate::{Mode, PathScope, Policy, UrlScope};
use tackle_protocol::{CallStatus, ErrorCode, SessionId, ToolResult};
use tackle_runtime::{
    AllowAll, Approval, ApprovalFuture, ApprovalRequest, Approver, CancellationToken, Catalog,
    ChildOptions, ForeignLogs, GateHook, LogKey, LogOrigin, Narrowing, PLAN_REQUIRED_RULE,
    PlanGate, PolicyGate, Posture, Runtime, RuntimeConfig, Session, SessionOptions, ToolFilter,
};
use tackle_tool::{DynTool, PlanRecords};
use tackle_tools::{ReadFile, Todo, WriteFile};

/// Approves "for the session" in the sessions it was told to, refuses elsewhere, and counts
/// what it was asked per session.
#[derive(Default)]
struct GrantsIn {
    approving: Mutex<HashSet<SessionId>>,
    asked: Mutex<Vec<SessionId>>,
}

impl GrantsIn {
    fn asked_in(&self, session: &Session) -> usize {
        let asked = self.asked.lock().unwrap();
        asked.iter().filter(|s| *s == session.id()).count()
    }
}

impl Approver for GrantsIn {
    fn approve<'a>(&'a self, request: ApprovalRequest<'a>) -> ApprovalFuture<'a> {
        self.asked.lock().unwrap().push(request.session.clone());
        let answer = if self.approving.lock().unwrap().contains(request.session) {
            Approval::Session
        } else {
            Approval::Unavailable {
                reason: "this session has no one to ask".to_owned(),
            }
        };
        Box::pin(std::future::ready(answer))
    }
}

/// Sessions with a plan on file, as the test files them.
#[derive(Default)]
struct Filed(Mutex<HashSet<SessionId>>);

impl PlanRecords for Filed {
    fn on_file(&self, session: &SessionId) -> bool {
        self.0.lock().unwrap().contains(session)
    }
}

fn runtime(tools: Vec<Arc<dyn DynTool>>, gate: Arc<dyn GateHook>) -> Runtime {
    Runtime::new(
        Catalog::new(tools).unwrap(),
        gate,
        RuntimeConfig {
            preview: WIDE,
            call_timeout: LONG_TIMEOUT,
            ..RuntimeConfig::default()
        },
    )
}

async fn one(
    runtime: &Runtime,
    session: &Session,
    id: &str,
    tool: &str,
    args: Value,
) -> ToolResult {
    let calls = vec![call(id, tool, args)];
    let mut results = guarded(runtime.run_batch(session, calls, CancellationToken::new()))
        .await
        .unwrap();
    results.pop().unwrap()
}

fn text(result: &ToolResult) -> String {
    match &result.content[0] {
        tackle_protocol::ContentBlock::Text { text } => text.clone(),
        other => panic!("not text: {other:?}"),
    }
}

fn first_event(session: &Session) -> Value {
    let records = tackle_store::EventLog::read_records(&session.event_log_path()).unwrap();
    records.into_iter().next().unwrap().event
}

fn write(path: &str) -> Value {
    json!({ "path": path, "content": "x\n" })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subagents_rules_narrow_its_parents_policy_and_never_widen_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "n\n").unwrap();
    std::fs::create_dir(dir.path().join("secrets")).unwrap();
    std::fs::write(dir.path().join("secrets/key.txt"), "k\n").unwrap();
    // The parent runs in yolo: every ask it meets is allowed.
    let policy = Policy::new(
        vec![tackle_gate::Rule::new(
            tackle_gate::Effect::Deny,
            tackle_gate::Pattern::parse("write:locked.txt").unwrap(),
            tackle_gate::RuleSource::BuiltIn,
        )],
        Mode::Yolo,
        PathScope::default(),
        UrlScope::default(),
    )
    .unwrap();
    let rt = runtime(
        vec![Arc::new(WriteFile), Arc::new(ReadFile::new())],
        Arc::new(PolicyGate::new(policy)),
    );
    let parent = Session::open(dir.path()).unwrap();
    let child = parent
        .open_subagent(ChildOptions {
            handle: Some("explore_00000000".into()),
            narrowing: vec![
                Narrowing::Deny("read:secrets/**".into()),
                Narrowing::Deny("write:*".into()),
            ],
            ..ChildOptions::default()
        })
        .unwrap();
    let read = |p: &str| json!({ "path": p });
    // The parent reads and writes what its policy allows.
    let r = one(&rt, &parent, "p1", "read_file", read("secrets/key.txt")).await;
    assert_eq!(r.status, CallStatus::Ok, "{}", text(&r));
    let r = one(&rt, &parent, "p2", "write_file", write("a.txt")).await;
    assert_eq!(r.status, CallStatus::Ok, "{}", text(&r));
    // The child is denied what its type's rules deny, and keeps the rest of the parent's.
    let r = one(&rt, &child, "c1", "read_file", read("secrets/key.txt")).await;
    assert_eq!(r.code, Some(ErrorCode::PERMISSION_DENIED), "{}", text(&r));
    assert!(text(&r).contains("subagent"), "{}", text(&r));
    let r = one(&rt, &child, "c2", "write_file", write("b.txt")).await;
    assert_eq!(r.code, Some(ErrorCode::PERMISSION_DENIED), "{}", text(&r));
    let r = one(&rt, &child, "c3", "read_file", read("notes.txt")).await;
    assert_eq!(r.status, CallStatus::Ok, "{}", text(&r));
    // A grandchild with no rules of its own still has its parent's.
    let grandchild = child.open_subagent(ChildOptions::default()).unwrap();
    let r = one(&rt, &grandchild, "g1", "read_file", read("secrets/key.txt")).await;
    assert_eq!(r.code, Some(ErrorCode::PERMISSION_DENIED), "{}", text(&r));
    // What the parent's policy denies, no child is allowed.
    let free = parent.open_subagent(ChildOptions::default()).unwrap();
    let r = one(&rt, &free, "f1", "write_file", write("locked.txt")).await;
    assert_eq!(r.code, Some(ErrorCode::PERMISSION_DENIED), "{}", text(&r));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_sessions_in_one_runtime_never_share_a_grant() {
    let dir = tempfile::tempdir().unwrap();
    let policy = Policy::new(
        Vec::new(),
        Mode::Ask,
        PathScope::default(),
        UrlScope::default(),
    );
    let approver = Arc::new(GrantsIn::default());
    let rt = runtime(
        vec![Arc::new(WriteFile)],
        Arc::new(PolicyGate::new(policy.unwrap())),
    )
    .with_approver(approver.clone());
    let (a, b) = (
        Session::open(dir.path()).unwrap(),
        Session::open(dir.path()).unwrap(),
    );
    approver.approving.lock().unwrap().insert(a.id().clone());

    let (in_a, in_b) = tokio::join!(
        one(&rt, &a, "a1", "write_file", write("a.txt")),
        one(&rt, &b, "b1", "write_file", write("a.txt")),
    );
    assert_eq!(in_a.status, CallStatus::Ok, "{}", text(&in_a));
    assert_eq!(in_b.code, Some(ErrorCode::APPROVAL_UNAVAILABLE));

    // A's grant answers A's next call without asking; B is asked again, and refused again.
    let (in_a, in_b) = tokio::join!(
        one(&rt, &a, "a2", "write_file", write("a.txt")),
        one(&rt, &b, "b2", "write_file", write("a.txt")),
    );
    assert_eq!(in_a.status, CallStatus::Ok, "{}", text(&in_a));
    assert_eq!(in_b.code, Some(ErrorCode::APPROVAL_UNAVAILABLE));
    assert_eq!((approver.asked_in(&a), approver.asked_in(&b)), (1, 2));

    // A child of A starts with none of A's grants.
    let child = a.open_child(None, ToolFilter::All).unwrap();
    let in_child = one(&rt, &child, "c1", "write_file", write("a.txt")).await;
    assert_eq!(in_child.code, Some(ErrorCode::APPROVAL_UNAVAILABLE));
    assert_eq!(approver.asked_in(&child), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_sessions_in_one_runtime_never_share_a_todo_list() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(vec![Arc::new(Todo::new())], Arc::new(AllowAll));
    let (a, b) = (
        Session::open(dir.path()).unwrap(),
        Session::open(dir.path()).unwrap(),
    );
    let add = |text: &str| json!({ "action": "add", "text": text });
    let (in_a, in_b) = tokio::join!(
        one(&rt, &a, "a1", "todo", add("only in a")),
        one(&rt, &b, "b1", "todo", add("only in b")),
    );
    assert_eq!(text(&in_a), "todo (0/1 done):\n[ ] 1. only in a\n");
    assert_eq!(text(&in_b), "todo (0/1 done):\n[ ] 1. only in b\n");
    let listed = one(&rt, &a, "a2", "todo", json!({ "action": "list" })).await;
    assert_eq!(text(&listed), "todo (0/1 done):\n[ ] 1. only in a\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_on_file_in_one_session_opens_nothing_in_another() {
    let dir = tempfile::tempdir().unwrap();
    let filed = Arc::new(Filed::default());
    let gate = PlanGate::new(Arc::new(AllowAll), filed.clone());
    let rt = runtime(vec![Arc::new(WriteFile)], Arc::new(gate));
    let (a, b) = (
        Session::open(dir.path()).unwrap(),
        Session::open(dir.path()).unwrap(),
    );
    filed.0.lock().unwrap().insert(a.id().clone());
    let (in_a, in_b) = tokio::join!(
        one(&rt, &a, "a1", "write_file", write("a.txt")),
        one(&rt, &b, "b1", "write_file", write("b.txt")),
    );
    assert_eq!(in_a.status, CallStatus::Ok, "{}", text(&in_a));
    assert_eq!(in_b.status, CallStatus::Denied);
    assert_eq!(in_b.metadata["tool_denied"]["rule"], PLAN_REQUIRED_RULE);
    assert!(!dir.path().join("b.txt").exists());
}

#[tokio::test]
async fn a_child_is_offered_only_its_filter_and_a_filtered_tool_is_unknown_to_it() {
    let h = Harness::new(
        vec![Arc::new(ReadFile::new()), Arc::new(WriteFile)],
        WIDE,
        LONG_TIMEOUT,
    );
    std::fs::write(h.root().join("notes.txt"), "hello\n").unwrap();
    let parent = &h.session;
    let child = parent
        .open_child(Some("explorer".into()), ToolFilter::only(["read_file"]))
        .unwrap();
    let offered: Vec<String> = h
        .runtime
        .offered(&child)
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(offered, ["read_file"]);
    assert_eq!(h.runtime.offered(parent).len(), 2);

    let refused = one(&h.runtime, &child, "c1", "write_file", write("w.txt")).await;
    assert_eq!(refused.code, Some(ErrorCode::UNKNOWN_TOOL));
    // Answered as if the catalog had no such tool: only what the child may call is suggested.
    assert_eq!(
        text(&refused),
        "error [unknown_tool]: unknown tool `write_file`; did you mean read_file?\n"
    );
    assert_eq!(refused.metadata["closest"], json!(["read_file"]));
    assert!(!h.root().join("w.txt").exists());
    let read = one(
        &h.runtime,
        &child,
        "c2",
        "read_file",
        json!({ "path": "notes.txt" }),
    )
    .await;
    assert_eq!(read.status, CallStatus::Ok, "{}", text(&read));
    let written = one(&h.runtime, parent, "p1", "write_file", write("w.txt")).await;
    assert_eq!(written.status, CallStatus::Ok, "{}", text(&written));

    // Its log says whose child it is, which agent it runs and what it may call; a grandchild
    // asking for more than its parent gets no more.
    let started = first_event(&child);
    assert_eq!(started["parent"], json!(parent.id().0));
    assert_eq!(started["agent"], "explorer");
    assert_eq!(started["tools"], json!(["read_file"]));
    let grandchild = child
        .open_child(None, ToolFilter::only(["read_file", "write_file"]))
        .unwrap();
    assert_eq!(
        grandchild.context().tools(),
        &ToolFilter::only(["read_file"])
    );
    let top = first_event(parent);
    assert!(
        top.get("parent").is_none() && top.get("agent").is_none(),
        "{top}"
    );
}

#[test]
fn posture_parent_and_agent_round_trip_through_session_started() {
    let dir = tempfile::tempdir().unwrap();
    let options = SessionOptions {
        parent: Some(SessionId("s-parent".into())),
        agent: Some("reviewer".into()),
        posture: Posture::Sealed,
        tools: ToolFilter::only(["grep", "read_file"]),
        handle: Some("reviewer_0a1b2c3d".into()),
        narrowing: vec![
            Narrowing::Deny("read:secrets/**".into()),
            Narrowing::Ask("tool.bash.cmd:git push *".into()),
        ],
    };
    let key = LogKey::from_bytes(&[9; 32]);
    let opened = Session::open_sealed(dir.path(), options.clone(), &key).unwrap();
    assert_eq!(first_event(&opened)["posture"], "sealed");
    let resumed = resume(dir.path(), &opened.id().0, &key);
    let context = resumed.context();
    assert_eq!(context.posture(), Posture::Sealed);
    assert_eq!(context.parent(), options.parent.as_ref());
    assert_eq!(context.agent(), Some("reviewer"));
    assert_eq!(context.tools(), &options.tools);
    assert_eq!(context.handle(), Some("reviewer_0a1b2c3d"));
    assert_eq!(context.narrowing(), options.narrowing.as_slice());
    // A child keeps its parent's rules and adds its own once.
    let child = resumed
        .open_subagent(ChildOptions {
            handle: Some("explore_00000000".into()),
            narrowing: vec![
                Narrowing::Deny("read:secrets/**".into()),
                Narrowing::Deny("write:*".into()),
            ],
            ..ChildOptions::default()
        })
        .unwrap();
    assert_eq!(
        child.context().narrowing(),
        [
            Narrowing::Deny("read:secrets/**".into()),
            Narrowing::Ask("tool.bash.cmd:git push *".into()),
            Narrowing::Deny("write:*".into()),
        ]
    );
    // A top-level session resumes standard, with no parent, offered everything.
    let plain = Session::open_sealed(dir.path(), SessionOptions::default(), &key).unwrap();
    let plain = resume(dir.path(), &plain.id().0, &key);
    assert_eq!(plain.context().posture(), Posture::Standard);
    assert_eq!(
        (plain.context().parent(), plain.context().agent()),
        (None, None)
    );
    assert_eq!(plain.context().tools(), &ToolFilter::All);
}

#[tokio::test]
async fn the_todo_list_survives_resume() {
    let dir = tempfile::tempdir().unwrap();
    let key = LogKey::from_bytes(&[9; 32]);
    let id = {
        let rt = runtime(vec![Arc::new(Todo::new())], Arc::new(AllowAll));
        let session = Session::open_sealed(dir.path(), SessionOptions::default(), &key).unwrap();
        let calls = vec![
            call(
                "t1",
                "todo",
                json!({ "action": "add", "text": "read the code" }),
            ),
            call(
                "t2",
                "todo",
                json!({ "action": "add", "text": "write the test" }),
            ),
            call(
                "t3",
                "todo",
                json!({ "action": "set_status", "id": 1, "status": "done" }),
            ),
            // Refused: changes nothing, now or on replay.
            call(
                "t4",
                "todo",
                json!({ "action": "set_status", "id": 9, "status": "done" }),
            ),
        ];
        let results = guarded(rt.run_batch(&session, calls, CancellationToken::new()))
            .await
            .unwrap();
        assert_eq!(results[3].code, Some(tackle_tools::todo::UNKNOWN_ITEM));
        // Ids repeat across turns; each call pairs with its own start.
        one(
            &rt,
            &session,
            "t1",
            "todo",
            json!({ "action": "add", "text": "ship" }),
        )
        .await;
        session.id().0.clone()
    };
    let expected = "todo (1/3 done):\n[x] 1. read the code\n[ ] 2. write the test\n[ ] 3. ship\n";

    // A new process: a fresh tool with nothing in memory.
    let rt = runtime(vec![Arc::new(Todo::new())], Arc::new(AllowAll));
    let resumed = resume(dir.path(), &id, &key);
    let listed = one(&rt, &resumed, "r1", "todo", json!({ "action": "list" })).await;
    assert_eq!(text(&listed), expected);
    let added = one(
        &rt,
        &resumed,
        "r2",
        "todo",
        json!({ "action": "add", "text": "next" }),
    )
    .await;
    assert!(text(&added).ends_with("[ ] 4. next\n"), "{}", text(&added));

    // Resumed again in the same process, the list is rebuilt, not replayed on top of itself.
    let again = resume(dir.path(), &id, &key);
    let listed = one(&rt, &again, "r3", "todo", json!({ "action": "list" })).await;
    assert_eq!(
        text(&listed),
        "todo (1/4 done):\n[x] 1. read the code\n[ ] 2. write the test\n[ ] 3. ship\n[ ] 4. next\n"
    );
}

/// Resumes session `id`, which must be the user's own.
fn resume(root: &std::path::Path, id: &str, key: &LogKey) -> Session {
    let resumed = Session::resume(root, id, key, ForeignLogs::Refuse).unwrap();
    assert_eq!(resumed.origin, LogOrigin::Own);
    resumed.session
}
