//! `tackle run --autonomous` end to end: schedule_next_turn's sleep, file and message wakes
//! each start the next run with what woke the model; the wake limit ends the run with exit 4;
//! without --autonomous the tool is not offered. Waits are observed through the `sleeping`
//! event on stdout, never timed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use std::io::{BufRead as _, BufReader};
use std::time::{Duration, Instant};

use harness::Project;
use harness::replay::{json_lines, model, recorded_requests, script};
use serde_json::{Value, json};

const FLAGS: [&str; 4] = ["--mode", "yolo", "--allow", "tool.bash.cmd:*"];

/// A turn that asks to be woken, and the turn that ends the run after it.
fn schedule(args: Value) -> [Value; 2] {
    [
        json!({"turn": {"tool_calls": [{"name": "schedule_next_turn", "arguments": args}]}}),
        json!({"turn": {"text": "waiting"}}),
    ]
}

fn user_inputs(p: &Project) -> Vec<String> {
    p.sessions()
        .concat()
        .iter()
        .map(|l| &l["event"])
        .filter(|e| e["type"] == "user_input")
        .map(|e| e["text"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_sleep_wakes_the_next_run_and_the_model_ending_without_a_wake_ends_it() {
    let p = Project::new();
    let file = script(
        &p,
        "sleep.jsonl",
        &[
            schedule(json!({"reason": "check the build", "sleep_seconds": 0.05})).as_slice(),
            &[json!({"turn": {"text": "the build is green"}})],
        ]
        .concat(),
    );
    let out = p
        .tackle(FLAGS)
        .args([
            "--model",
            &model(&file),
            "run",
            "--autonomous",
            "--json",
            "watch the build",
        ])
        .run();
    out.success();
    let events = json_lines(&out.stdout);
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    let sleeping = types.iter().position(|t| *t == "sleeping").unwrap();
    assert_eq!(types[sleeping + 1], "woken", "{types:?}");
    assert_eq!(types.iter().filter(|t| **t == "run_finished").count(), 2);
    assert_eq!(
        types[sleeping - 1],
        "run_finished",
        "the wait is between runs"
    );
    assert_eq!(events[sleeping]["reason"], "check the build");
    assert_eq!(events.last().unwrap()["outcome"], "finished");
    let inputs = user_inputs(&p);
    assert_eq!(inputs.len(), 2, "{inputs:?}");
    assert!(
        inputs[1].starts_with("[woken] the wait after 0.05 s is over."),
        "{inputs:?}"
    );
    assert!(inputs[1].ends_with("to: check the build"), "{inputs:?}");
}

/// Starts an autonomous run and returns it once its `sleeping` line is out, with that line.
fn start_until_sleeping(p: &Project, file: &std::path::Path) -> (harness::KillOnDrop, Value) {
    let mut child = p
        .tackle(FLAGS)
        .args([
            "--model",
            &model(file),
            "run",
            "--autonomous",
            "--json",
            "wait",
        ])
        .spawn();
    let stdout = child.0.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    loop {
        let line = lines
            .next()
            .expect("the run ended before it slept")
            .unwrap();
        let event: Value = serde_json::from_str(&line).unwrap();
        if event["type"] == "sleeping" {
            // Keep reading (and discarding) so the run never blocks on a full pipe.
            std::thread::spawn(move || for _ in lines {});
            return (child, event);
        }
    }
}

fn wait_exit(child: &mut harness::KillOnDrop) -> i32 {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = child.0.try_wait().unwrap() {
            return status.code().unwrap();
        }
        assert!(Instant::now() < deadline, "the run did not end");
        std::thread::yield_now();
    }
}

#[test]
fn a_file_change_and_a_message_wake_the_model() {
    let p = Project::new();
    let file = script(
        &p,
        "file.jsonl",
        &[
            schedule(
                json!({"reason": "read the flag", "on_file_change": "flag.txt",
                "timeout_seconds": 120}),
            )
            .as_slice(),
            &[json!({"turn": {"text": "flag seen"}})],
        ]
        .concat(),
    );
    let (mut child, sleeping) = start_until_sleeping(&p, &file);
    assert_eq!(sleeping["wake"], "when flag.txt changes (or after 120 s)");
    p.write("flag.txt", "up");
    assert_eq!(wait_exit(&mut child), 0);
    let inputs = user_inputs(&p);
    assert!(
        inputs[1].starts_with("[woken] flag.txt was created."),
        "{inputs:?}"
    );

    let p = Project::new();
    let file = script(
        &p,
        "message.jsonl",
        &[
            schedule(json!({"reason": "hear back", "on_message": true})).as_slice(),
            &[json!({"turn": {"text": "heard"}})],
        ]
        .concat(),
    );
    let (mut child, _) = start_until_sleeping(&p, &file);
    let id = latest_session(&p);
    p.tackle(["sessions", "message", &id, "ship it"])
        .run()
        .success();
    assert_eq!(wait_exit(&mut child), 0);
    assert_eq!(user_inputs(&p)[1], "ship it");

    let out = p
        .tackle(["sessions", "message", "no-such-session", "x"])
        .run();
    out.code(2);
}

/// The id of the project's newest session.
fn latest_session(p: &Project) -> String {
    let list = json_lines(&p.tackle(["sessions", "ls", "--json"]).run().stdout);
    list[0]["id"].as_str().unwrap().to_owned()
}

/// `tackle run --autonomous --continue --json`, with `task` when given.
fn continue_autonomous(p: &Project, file: &std::path::Path, task: Option<&str>) -> harness::Output {
    let model = model(file);
    let mut args = vec![
        "--model",
        &model,
        "run",
        "--autonomous",
        "--continue",
        "--json",
    ];
    args.extend(task);
    p.tackle(FLAGS).args(args).run()
}

/// A process killed while it waits leaves the wait in the log: `--continue --autonomous` takes
/// it up again (a message sent meanwhile wakes it), and a plain `--continue` does not wait.
#[test]
fn a_wait_the_process_died_in_goes_on_after_continue() {
    let p = Project::new();
    let file = script(
        &p,
        "killed.jsonl",
        &[
            schedule(json!({"reason": "hear back", "on_message": true})).as_slice(),
            &[json!({"turn": {"text": "heard after the restart"}})],
            &[json!({"turn": {"text": "plain run"}})],
        ]
        .concat(),
    );
    let (mut child, _) = start_until_sleeping(&p, &file);
    child.0.kill().unwrap();
    child.0.wait().unwrap();
    let id = latest_session(&p);
    p.tackle(["sessions", "message", &id, "the reply"])
        .run()
        .success();
    let out = continue_autonomous(&p, &file, None);
    out.success();
    let types: Vec<String> = json_lines(&out.stdout)
        .iter()
        .map(|e| e["type"].as_str().unwrap_or("").to_owned())
        .collect();
    let sleeping = types.iter().position(|t| t == "sleeping").unwrap();
    let woken = types.iter().position(|t| t == "woken").unwrap();
    let first_run = types.iter().position(|t| t == "turn_started").unwrap();
    assert!(sleeping < woken && woken < first_run, "{types:?}");
    assert_eq!(user_inputs(&p), ["wait", "the reply"]);
    let records: Vec<String> = p.sessions()[0]
        .iter()
        .map(|l| l["event"]["type"].as_str().unwrap().to_owned())
        .filter(|t| t.starts_with("wake_"))
        .collect();
    // The killed wait, then the resumed one and its end.
    assert_eq!(records, ["wake_pending", "wake_pending", "wake_ended"]);

    // Nothing is pending now: --continue waits for nothing, and a new task runs at once.
    let out = continue_autonomous(&p, &file, None);
    out.success();
    assert!(out.stdout.contains("give a new task"), "{}", out.stdout);
    assert!(!out.stdout.contains("\"sleeping\""), "{}", out.stdout);
    let out = continue_autonomous(&p, &file, Some("go on"));
    out.success();
    assert!(out.stdout.contains("plain run"), "{}", out.stdout);
}

#[test]
fn the_wake_limit_ends_the_run_and_the_tool_is_only_offered_autonomous() {
    let p = Project::new();
    let again = schedule(json!({"reason": "again", "sleep_seconds": 0.01}));
    let file = script(
        &p,
        "loop.jsonl",
        &[again.clone(), again.clone(), again].concat(),
    );
    let out = p
        .tackle(FLAGS)
        .args([
            "--model",
            &model(&file),
            "run",
            "--autonomous",
            "--max-wakes",
            "1",
        ])
        .arg("loop")
        .run();
    out.code(4);
    assert!(out.stderr.contains("--max-wakes"), "{}", out.stderr);
    assert_eq!(user_inputs(&p).len(), 2, "one wake, then the limit");

    // Bad requests are the model's invalid_arguments, and the run goes on.
    let p = Project::new();
    let file = script(
        &p,
        "bad.jsonl",
        &[
            schedule(json!({"reason": "x", "sleep_seconds": 1, "on_message": true}))[0].clone(),
            schedule(json!({"reason": "x", "on_file_change": "../outside.txt"}))[0].clone(),
            schedule(json!({"reason": "x", "wake_at": "tomorrow"}))[0].clone(),
            json!({"turn": {"text": "gave up"}}),
        ],
    );
    let record = p.outside("bad-requests.jsonl");
    p.tackle(FLAGS)
        .args(["--model", &model(&file), "run", "--autonomous", "go"])
        .env("TACKLE_REPLAY_RECORD", &record)
        .run()
        .success();
    let codes: Vec<String> = p
        .sessions()
        .concat()
        .iter()
        .map(|l| &l["event"])
        .filter(|e| e["type"] == "call_finished")
        .map(|e| e["code"].as_str().unwrap_or("ok").to_owned())
        .collect();
    assert_eq!(
        codes,
        [
            "invalid_arguments",
            "path_outside_root",
            "invalid_arguments"
        ],
        "no wake was scheduled"
    );
    let tools = recorded_requests(&record)[0]["tools"].to_string();
    assert!(tools.contains("schedule_next_turn"), "{tools}");

    let file = script(&p, "plain.jsonl", &[json!({"turn": {"text": "ok"}})]);
    let record = p.outside("plain-requests.jsonl");
    p.tackle(FLAGS)
        .args(["--model", &model(&file), "run", "go"])
        .env("TACKLE_REPLAY_RECORD", &record)
        .run()
        .success();
    let tools = recorded_requests(&record)[0]["tools"].to_string();
    assert!(!tools.contains("schedule_next_turn"), "{tools}");
    p.tackle(FLAGS)
        .args(["run", "--max-wakes", "3", "go"])
        .run()
        .code(2);
}
