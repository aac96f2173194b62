//! Goals end to end (seed 000, "Goal checklist tools"): the user's `tackle goal` controls, the
//! model's goal_get and goal_update, offered only while the goal is active or paused when the
//! catalog is built, and every state surviving the process (each command is a new one).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use harness::{Project, call_json};
use serde_json::{Value, json};

fn tool_names(p: &Project) -> Vec<String> {
    let out = p.tackle(["tools", "--json"]).run();
    out.success();
    out.json()
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_owned())
        .collect()
}

fn offers_goal_tools(p: &Project) -> bool {
    let names = tool_names(p);
    let get = names.iter().any(|n| n == "goal_get");
    let update = names.iter().any(|n| n == "goal_update");
    assert_eq!(get, update, "{names:?}");
    get
}

fn goal(p: &Project, args: &[&str]) -> Value {
    let mut all = vec!["goal"];
    all.extend_from_slice(args);
    all.push("--json");
    let out = p.tackle(all).run();
    out.success();
    out.json()["goal"].clone()
}

fn update(p: &Project, items: Value) -> harness::Output {
    p.tackle([
        "--allow",
        "write:goal:current",
        "call",
        "goal_update",
        &json!({ "items": items }).to_string(),
        "--json",
    ])
    .run()
}

#[test]
fn a_goal_lives_across_processes_and_the_tools_follow_its_lifecycle() {
    let p = Project::new();
    assert_eq!(goal(&p, &["show"]), Value::Null);
    assert!(!offers_goal_tools(&p));

    let g = goal(&p, &["set", "make the suite pass"]);
    assert_eq!(g["goal_id"], "goal-1");
    assert_eq!(g["status"], "active");
    assert_eq!(g["revision"], 1);
    assert!(offers_goal_tools(&p));

    // The model replaces the checklist in one process and reads it back in another.
    let out = update(
        &p,
        json!([
            {"description": "reproduce the failure", "finished": true},
            {"description": "fix it", "finished": false},
        ]),
    );
    out.success();
    assert_eq!(out.metadata()["revision"], 2);
    let read = call_json(&p, "goal_get", &json!({}));
    read.success();
    let state = read.metadata();
    assert_eq!(state["objective"], "make the suite pass");
    assert_eq!(state["checklist"][1]["description"], "fix it");
    assert_eq!(state["checklist"][1]["finished"], false);
    assert_eq!(state["revision"], 2);

    // A control based on a stale view is refused and changes nothing.
    let stale = p
        .tackle([
            "goal",
            "pause",
            "--goal-id",
            "goal-1",
            "--expected-revision",
            "1",
            "--json",
        ])
        .run();
    stale.code(1);
    assert_eq!(stale.json()["error"]["code"], "stale_revision");
    assert_eq!(goal(&p, &["show"])["status"], "active");
    let wrong = p
        .tackle([
            "goal",
            "cancel",
            "--goal-id",
            "goal-9",
            "--expected-revision",
            "2",
        ])
        .run();
    wrong.code(1).stderr_contains("not the current goal");

    let paused = goal(
        &p,
        &["pause", "--goal-id", "goal-1", "--expected-revision", "2"],
    );
    assert_eq!(
        (paused["status"].as_str(), paused["revision"].as_u64()),
        (Some("paused"), Some(3))
    );
    // Paused goals keep their tools; an empty checklist keeps the lifecycle.
    assert!(offers_goal_tools(&p));
    let kept = update(&p, json!([]));
    kept.success();
    assert_eq!(kept.metadata()["status"], "paused");

    // Every item finished completes the goal even while paused; then the tools are gone and
    // the lifecycle controls no longer apply.
    let done = update(&p, json!([{"description": "fix it", "finished": true}]));
    done.success();
    assert_eq!(done.metadata()["status"], "complete");
    assert!(!offers_goal_tools(&p));
    let resume = p
        .tackle([
            "goal",
            "resume",
            "--goal-id",
            "goal-1",
            "--expected-revision",
            "5",
            "--json",
        ])
        .run();
    resume.code(1);
    assert_eq!(resume.json()["error"]["code"], "control_does_not_apply");
    let show = p.tackle(["goal", "show"]).run();
    show.success()
        .stdout_contains("goal-1 (complete, revision 5): make the suite pass")
        .stdout_contains("[x] fix it");
}

#[test]
fn a_checklist_update_is_gated_as_a_write_of_the_goal() {
    let p = Project::new();
    goal(&p, &["set", "x"]);
    // write:goal:current asks by default; without a terminal nobody can approve it.
    p.tackle([
        "--headless",
        "call",
        "goal_update",
        r#"{"items": []}"#,
        "--json",
    ])
    .run()
    .tool_error("approval_unavailable");
    // A deny rule on the resource holds for goal_get too.
    let denied = p
        .tackle([
            "--deny",
            "read:goal:current",
            "call",
            "goal_get",
            "{}",
            "--json",
        ])
        .run();
    denied.tool_error("permission_denied");
    assert_eq!(goal(&p, &["show"])["revision"], 1);
}

#[test]
fn a_canceled_goal_rejects_updates_from_an_already_admitted_run() {
    let p = Project::new();
    goal(&p, &["set", "x"]);
    let server = p
        .tackle([
            "goal",
            "cancel",
            "--goal-id",
            "goal-1",
            "--expected-revision",
            "1",
        ])
        .run();
    server.success().stdout_contains("canceled");
    // The book refuses, whatever a catalog built earlier still offers: a new objective is the
    // only way on.
    let book = tackle_goals::GoalBook::new(&p.join(".agents/store"));
    let e = book.replace_checklist(Vec::new()).unwrap_err();
    assert_eq!(e.code(), "goal_closed");
    let next = goal(&p, &["set", "y"]);
    assert_eq!(next["goal_id"], "goal-2");
}
