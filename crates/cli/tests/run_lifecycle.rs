//! `tackle run` and the loop's lifecycle: mark_task_done writes a completion record before the
//! next turn (and `--checkpoint operator` withholds the tool), and the watchdog reports calls
//! repeated verbatim to the model and, under `--watchdog enforce`, ends the run (exit 4).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use harness::Project;
use harness::replay::{json_lines as lines, model, recorded_requests, script};
use serde_json::{Value, json};

const FLAGS: [&str; 4] = ["--mode", "yolo", "--allow", "tool.bash.cmd:*"];

fn tool_names(request: &Value) -> Vec<&str> {
    request["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect()
}

/// The session log's records of one type.
fn records(p: &Project, kind: &str) -> Vec<Value> {
    let dir = std::fs::read_dir(p.join(".agents/store/sessions"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::fs::read_to_string(dir.join("events.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["event"].clone())
        .filter(|e| e["type"] == kind)
        .collect()
}

#[test]
fn mark_task_done_writes_a_completion_record_before_the_next_turn() {
    let p = Project::new();
    let file = script(
        &p,
        "done.jsonl",
        &[
            json!({"turn": {"text": "Done with the parser.", "tool_calls": [
                {"id": "c1", "name": "mark_task_done", "arguments": {"task": "fixed the parser"}}
            ]}}),
            // The completion record's summary request.
            json!({"turn": {"text": "Completed task: fixed the parser. Nothing open."}}),
            json!({"turn": {"text": "Ready for the next task."}}),
        ],
    );
    let record = p.outside("done-requests.jsonl");
    let out = p
        .tackle(FLAGS)
        .args(["--model", &model(&file), "run", "--json"])
        .arg("TASK-ONE: fix the parser")
        .env("TACKLE_REPLAY_RECORD", &record)
        .run();
    out.success();
    let events = lines(&out.stdout);
    let checkpoint = events
        .iter()
        .find(|e| e["type"] == "checkpoint")
        .unwrap_or_else(|| panic!("no checkpoint event in {events:#?}"));
    assert_eq!(checkpoint["task_done"], "fixed the parser");
    let finished = events.iter().find(|e| e["type"] == "tool_call_finished");
    assert_eq!(finished.unwrap()["status"], "ok");
    assert_eq!(events.last().unwrap()["outcome"], "finished");

    let logged = records(&p, "checkpoint");
    assert_eq!(logged.len(), 1, "{logged:#?}");
    assert_eq!(logged[0]["task_done"], "fixed the parser");
    assert!(
        logged[0]["summary"]
            .as_str()
            .is_some_and(|s| s.contains("Completed task")),
        "{logged:#?}"
    );

    let requests = recorded_requests(&record);
    assert_eq!(requests.len(), 3, "task, summary, next turn");
    assert!(tool_names(&requests[0]).contains(&"mark_task_done"));
    // The turn after the boundary starts from the record (and the turn that marked it), not
    // from the conversation before it.
    let next = requests[2]["messages"].to_string();
    assert!(next.contains("Completed task: fixed the parser"), "{next}");
    assert!(
        !next.contains("TASK-ONE"),
        "the task's input is sliced out: {next}"
    );
}

#[test]
fn checkpoint_operator_withholds_mark_task_done() {
    let p = Project::new();
    let file = script(&p, "op.jsonl", &[json!({"turn": {"text": "ok"}})]);
    let record = p.outside("op-requests.jsonl");
    p.tackle(FLAGS)
        .args(["--checkpoint", "operator"])
        .args(["--model", &model(&file), "run", "--json"])
        .arg("go")
        .env("TACKLE_REPLAY_RECORD", &record)
        .run()
        .success();
    let requests = recorded_requests(&record);
    let tools = tool_names(&requests[0]);
    assert!(tools.contains(&"read_file"), "{tools:?}");
    assert!(!tools.contains(&"mark_task_done"), "{tools:?}");

    let out = p
        .tackle(FLAGS)
        .args(["--checkpoint", "agent", "run", "go"])
        .run();
    // A bad flag value is a command-line error, exit 2, naming the values there are.
    out.code(2);
    assert!(
        out.stderr.contains("--checkpoint") && out.stderr.contains("model, operator"),
        "{}",
        out.stderr
    );
}

#[test]
fn the_watchdog_reports_repeats_and_by_default_ends_the_run() {
    let p = Project::new();
    let same = json!({"turn": {"tool_calls": [
        {"name": "bash", "arguments": {"command": "true"}}
    ]}});
    let mut turns = vec![same.clone(); 6];
    turns.push(json!({"turn": {"text": "stopped"}}));

    let file = script(&p, "warn.jsonl", &turns);
    let out = p
        .tackle(FLAGS)
        .args(["--watchdog", "warn"])
        .args(["--model", &model(&file), "run", "--json"])
        .arg("loop")
        .run();
    out.success();
    let events = lines(&out.stdout);
    let trips: Vec<&Value> = events.iter().filter(|e| e["type"] == "watchdog").collect();
    assert!(!trips.is_empty(), "{events:#?}");
    assert!(trips.iter().all(|t| t["cut"] == false), "{trips:#?}");
    // The model was told, in the result of the repeated call.
    let batches = records(&p, "tool_batch_finished");
    let third = batches[2].to_string();
    assert!(third.contains("watchdog"), "{third}");

    let p = Project::new();
    let file = script(&p, "enforce.jsonl", &turns);
    // No flag: enforce is the default.
    let out = p
        .tackle(FLAGS)
        .args(["--model", &model(&file), "run", "--json"])
        .arg("loop")
        .run();
    out.code(4);
    let events = lines(&out.stdout);
    let last = events.last().unwrap();
    assert_eq!(last["outcome"], "bound_hit", "{last}");
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "watchdog" && e["cut"] == true),
        "{events:#?}"
    );
    let ran = events
        .iter()
        .filter(|e| e["type"] == "tool_call_finished")
        .count();
    assert_eq!(ran, 6, "cut after twice the limit, never before");
}

#[test]
fn ask_user_is_answered_on_stdin_refused_when_headless_and_absent_unasked_for() {
    let p = Project::new();
    let turns = [
        json!({"turn": {"tool_calls": [{"id": "q1", "name": "ask_user",
            "arguments": {"question": "Which colour?\u{1b}[2J", "default": "red"}}]}}),
        json!({"turn": {"tool_calls": [{"id": "q2", "name": "ask_user",
            "arguments": {"question": "And the size?", "default": "small"}}]}}),
        json!({"turn": {"text": "noted"}}),
    ];
    let result_text = |p: &Project, call: &str| {
        records(p, "tool_batch_finished")
            .iter()
            .flat_map(|b| b["results"].as_array().unwrap().clone())
            .find(|r| r["result"]["call_id"] == call)
            .map(|r| {
                r["result"]["content"][0]["text"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .unwrap_or_else(|| panic!("no result for {call}"))
    };

    let file = script(&p, "ask.jsonl", &turns);
    let out = p
        .tackle(FLAGS)
        .args([
            "--model",
            &model(&file),
            "run",
            "--ask-user",
            "stdin",
            "pick",
        ])
        .stdin("blue\n\n")
        .run();
    out.success();
    assert_eq!(result_text(&p, "q1"), "The user answered: blue");
    assert_eq!(
        result_text(&p, "q2"),
        "The user gave no answer; the default applies: small"
    );
    assert!(
        out.stderr.contains("Which colour?\\x1b[2J"),
        "{}",
        out.stderr
    );
    assert!(
        !out.stderr.contains('\u{1b}'),
        "an escape reached the terminal"
    );

    let p = Project::new();
    let file = script(&p, "ask.jsonl", &turns);
    p.tackle(FLAGS)
        .args(["--headless", "--model", &model(&file)])
        .args(["run", "--ask-user", "auto", "pick"])
        .run()
        .success();
    let refused = result_text(&p, "q1");
    assert!(
        refused.starts_with("No one can answer here") && refused.contains("headless"),
        "{refused}"
    );

    let p = Project::new();
    let file = script(&p, "ask.jsonl", &turns[2..]);
    let record = p.outside("ask-requests.jsonl");
    p.tackle(FLAGS)
        .args(["--model", &model(&file), "run", "pick"])
        .env("TACKLE_REPLAY_RECORD", &record)
        .run()
        .success();
    let tools = tool_names(&recorded_requests(&record)[0]).join(",");
    assert!(!tools.contains("ask_user"), "{tools}");
}
