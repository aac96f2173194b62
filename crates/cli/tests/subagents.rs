//! Subagents through the real binary: `tackle run` delegating to the built-in `explore` type
//! with a scripted model (the child inherits it, so parent and child draw answers from one
//! script), then `--continue`, which rebuilds the tree from the logs so the parent can still
//! read its child's result by handle; and `tackle run` with `[delegation] max_depth = 0`,
//! which offers no delegation tool.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use harness::Project;
use harness::replay::{json_lines as lines, model, script};
use serde_json::{Value, json};

fn record(log: &[Value], kind: &str) -> Vec<Value> {
    log.iter()
        .map(|l| &l["event"])
        .filter(|e| e["type"] == kind)
        .cloned()
        .collect()
}

#[test]
fn a_run_delegates_to_explore_reads_the_notice_and_finds_the_child_again_on_continue() {
    let p = Project::new();
    p.write("notes.txt", "the answer is 42\n");
    let file = script(
        &p,
        "s.jsonl",
        &[
            json!({"turn": {"tool_calls": [{"id": "d1", "name": "delegate_subagent", "arguments": {
                "agent_type": "explore", "prompt": "what does notes.txt say?",
                "description": "notes"}}]}}),
            // Parent and child take these two in whichever order they ask.
            json!({"turn": {"text": "The notes say 42."}}),
            json!({"turn": {"text": "The notes say 42."}}),
            json!({"turn": {"text": "The explorer found 42."}}),
        ],
    );
    let out = p
        .tackle(["--model", &model(&file), "run", "--json", "find the answer"])
        .run();
    out.success();
    let events = lines(&out.stdout);
    let subagent: Vec<&Value> = events.iter().filter(|e| e["type"] == "subagent").collect();
    assert_eq!(subagent.len(), 2, "{events:?}");
    assert_eq!(subagent[0]["status"], "running");
    assert_eq!(subagent[1]["status"], "completed");
    let handle = subagent[0]["handle"].as_str().unwrap().to_owned();
    assert!(handle.starts_with("explore_") && handle.len() == "explore_".len() + 8);
    assert_eq!(events.last().unwrap()["outcome"], "finished");

    // Two logs: the root's and the child's, which names its parent, handle and type.
    let logs = p.sessions();
    assert_eq!(logs.len(), 2);
    let started = |log: &[Value]| log[0]["event"].clone();
    let (root, child): (Vec<_>, Vec<_>) = logs.iter().partition(|l| started(l)["parent"].is_null());
    let (root, child) = (&root[0], &child[0]);
    assert_eq!(started(child)["parent"], started(root)["session"]);
    assert_eq!(started(child)["handle"], handle.as_str());
    assert_eq!(started(child)["agent"], "explore");
    // The child was offered the explore type's tools only.
    let offered = started(child)["tools"].as_array().unwrap().clone();
    assert!(offered.iter().any(|t| t == "read_file"));
    assert!(!offered.iter().any(|t| t == "bash" || t == "write_file"));
    // The completion notice reached the parent in the seed's form, as a message it read
    // (never as the user's words).
    assert!(
        !record(root, "user_input")
            .iter()
            .any(|i| i["text"].as_str().unwrap().starts_with("[subagent session"))
    );
    let inputs = record(root, "message_consumed");
    let notice = inputs
        .iter()
        .map(|i| i["text"].as_str().unwrap())
        .find(|t| t.starts_with("[subagent session"))
        .unwrap();
    assert_eq!(
        notice,
        format!(
            "[subagent session {handle}; completed; 1 line; full output shown]\nThe notes say 42."
        )
    );

    // `sessions ls` shows the child under its parent, with its handle.
    let ls = p.tackle(["sessions", "ls"]).run();
    ls.success();
    let rows: Vec<&str> = ls.stdout.lines().collect();
    assert_eq!(rows.len(), 2, "{}", ls.stdout);
    let root_id = started(root)["session"].as_str().unwrap().to_owned();
    assert!(rows[0].starts_with(&root_id), "{}", ls.stdout);
    assert!(
        rows[1].starts_with(&format!("  └ {handle} ")),
        "{}",
        ls.stdout
    );
    let ls = p.tackle(["sessions", "ls", "--json"]).run();
    ls.success();
    assert!(
        ls.stdout.contains(&format!("\"parent\":\"{root_id}\"")),
        "{}",
        ls.stdout
    );

    // --continue: the tree is rebuilt from the logs, so the handle still resolves.
    let file = script(
        &p,
        "s2.jsonl",
        &[
            // A resumed replay starts after the turns the session's log already answered,
            // which depends on whether the child ended before or after the parent's second
            // request: every turn it may start at asks for the child's result.
            json!({"turn": {"tool_calls": [{"id": "g0", "name": "get_subagent_result",
                "arguments": {"session_id": handle}}]}}),
            json!({"turn": {"tool_calls": [{"id": "g1", "name": "get_subagent_result",
                "arguments": {"session_id": handle}}]}}),
            json!({"turn": {"tool_calls": [{"id": "g2", "name": "get_subagent_result",
                "arguments": {"session_id": handle}}]}}),
            json!({"turn": {"tool_calls": [{"id": "g3", "name": "get_subagent_result",
                "arguments": {"session_id": handle}}]}}),
            json!({"turn": {"tool_calls": [{"id": "g4", "name": "get_subagent_result",
                "arguments": {"session_id": handle}}]}}),
            json!({"turn": {"text": "Still 42."}}),
        ],
    );
    let out = p
        .tackle([
            "--model",
            &model(&file),
            "run",
            "--json",
            "--continue",
            "again",
        ])
        .run();
    out.success();
    let logs = p.sessions();
    let root = logs
        .iter()
        .find(|l| started(l)["parent"].is_null())
        .unwrap();
    let batches = record(root, "tool_batch_finished");
    let last = serde_json::to_string(batches.last().unwrap()).unwrap();
    assert!(last.contains("The notes say 42."), "{last}\n{}", out.stdout);
    assert!(!last.contains("unknown subagent"), "{last}");
}

#[test]
fn max_depth_zero_offers_no_delegation() {
    let p = Project::new();
    p.config("[delegation]\nmax_depth = 0\n");
    let file = script(
        &p,
        "s.jsonl",
        &[
            json!({"turn": {"tool_calls": [{"id": "d1", "name": "delegate_subagent", "arguments": {
                "agent_type": "explore", "prompt": "x"}}]}}),
            json!({"turn": {"text": "Could not."}}),
        ],
    );
    let out = p
        .tackle(["--model", &model(&file), "run", "--json", "try"])
        .run();
    out.success();
    let events = lines(&out.stdout);
    let finished = events
        .iter()
        .find(|e| e["type"] == "tool_call_finished")
        .unwrap();
    assert_eq!(finished["code"], "unknown_tool", "{finished}");
}

#[test]
fn send_message_is_offered_only_under_a_message_rule() {
    let p = Project::new();
    let call = json!({"turn": {"tool_calls": [{"id": "m1", "name": "send_message", "arguments": {
        "to": "explore_deadbeef", "body": "hello"}}]}});
    let file = script(
        &p,
        "s.jsonl",
        &[call.clone(), json!({"turn": {"text": "Done."}})],
    );
    let code_of = |out: &harness::Output| {
        let events = lines(&out.stdout);
        events
            .iter()
            .find(|e| e["type"] == "tool_call_finished")
            .map(|e| e["code"].clone())
            .unwrap()
    };
    // No rule: the tool is not in the catalog.
    let out = p
        .tackle(["--model", &model(&file), "run", "--json", "say hello"])
        .run();
    out.success();
    assert_eq!(code_of(&out), "unknown_tool", "{}", out.stdout);
    // An allow rule offers it: a handle that names no child gets the tree's listing.
    let out = p
        .tackle(["--allow", "message:*", "--model", &model(&file)])
        .args(["run", "--json", "say hello"])
        .run();
    out.success();
    assert_eq!(code_of(&out), "unknown_subagent", "{}", out.stdout);
}
