//! `tackle sessions ls|show|replay|fork` over sessions `tackle run` made (scripted turns), and
//! the fork resumed by `tackle run --resume`: the forked conversation is the source's through
//! the turn it was cut at, and going on from it adds to the fork only.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use harness::Project;
use harness::replay::{json_lines, model, script};
use serde_json::{Value, json};

const FLAGS: [&str; 4] = ["--mode", "yolo", "--allow", "tool.bash.cmd:*"];

/// A two-turn run: a bash call, then the answer. Returns its session id.
fn two_turn_run(p: &Project) -> String {
    let file = script(
        p,
        "two.jsonl",
        &[
            json!({"turn": {"text": "Writing.", "tool_calls": [
                {"id": "c1", "name": "bash", "arguments": {"command": "echo one >> out.txt"}}
            ]}}),
            json!({"turn": {"text": "Wrote one.", "usage": {"input_tokens": 10, "output_tokens": 3}}}),
        ],
    );
    let out = p
        .tackle(FLAGS)
        .args(["--model", &model(&file), "run", "--json", "write one"])
        .run();
    out.success();
    json_lines(&out.stdout)[0]["session"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn ls_show_and_replay_read_what_run_recorded() {
    let p = Project::new();
    let id = two_turn_run(&p);
    // A tool-only session beside it, which ls leaves out unless --all.
    p.tackle(["call", "stat", r#"{"path":"out.txt"}"#])
        .run()
        .success();

    let ls = p.tackle(["sessions", "ls", "--json"]).run();
    ls.success();
    let rows = json_lines(&ls.stdout);
    assert_eq!(rows.len(), 1, "{}", ls.stdout);
    let row = &rows[0];
    assert_eq!(row["id"], id.as_str());
    assert_eq!(row["task"], "write one");
    assert_eq!(row["turns"], 2);
    assert_eq!(row["calls"], 1);
    assert_eq!(row["outcome"], "finished");
    assert_eq!(row["agent"], true);
    let all = p.tackle(["sessions", "ls", "--json", "--all"]).run();
    assert_eq!(json_lines(&all.stdout).len(), 2, "{}", all.stdout);
    let text = p.tackle(["sessions", "ls"]).run();
    assert!(
        text.stdout.contains(&id) && text.stdout.contains("finished"),
        "{}",
        text.stdout
    );

    let show = p.tackle(["sessions", "show", &id]).run();
    show.success();
    for expected in [
        "── user",
        "write one",
        "→ bash",
        "✓ result [c1]",
        "Wrote one.",
    ] {
        assert!(
            show.stdout.contains(expected),
            "{expected:?} not in:\n{}",
            show.stdout
        );
    }
    let messages: Value =
        serde_json::from_str(&p.tackle(["sessions", "show", &id, "--json"]).run().stdout).unwrap();
    assert_eq!(messages.as_array().unwrap().len(), 4, "{messages:#}");

    let replay = p.tackle(["sessions", "replay", &id, "--json"]).run();
    let records = json_lines(&replay.stdout);
    let kinds: Vec<&str> = records
        .iter()
        .map(|r| r["event"]["type"].as_str().unwrap())
        .collect();
    for kind in [
        "session_started",
        "user_input",
        "model_turn",
        "call_started",
        "call_finished",
        "tool_batch_finished",
        "run_finished",
    ] {
        assert!(kinds.contains(&kind), "{kind} not in {kinds:?}");
    }
    let seqs: Vec<u64> = records.iter().map(|r| r["seq"].as_u64().unwrap()).collect();
    assert!(seqs.windows(2).all(|w| w[1] == w[0] + 1), "{seqs:?}");
    let lines = p.tackle(["sessions", "replay", &id]).run();
    assert!(
        lines.stdout.contains("call_finished · bash c1 ok"),
        "{}",
        lines.stdout
    );
}

#[test]
fn a_fork_keeps_the_turns_before_its_cut_and_goes_on_alone() {
    let p = Project::new();
    let id = two_turn_run(&p);
    let forked = p
        .tackle(["sessions", "fork", &id, "--turn", "1", "--json"])
        .run();
    forked.success();
    let forked: Value = serde_json::from_str(&forked.stdout).unwrap();
    let new_id = forked["session"].as_str().unwrap().to_owned();
    assert_ne!(new_id, id);
    assert_eq!(forked["forked_from"], id.as_str());

    // Through turn 1: the task, the call and its result; not the answer.
    let show = p.tackle(["sessions", "show", &new_id, "--json"]).run();
    let messages: Value = serde_json::from_str(&show.stdout).unwrap();
    assert_eq!(messages.as_array().unwrap().len(), 3, "{messages:#}");
    let source: Value =
        serde_json::from_str(&p.tackle(["sessions", "show", &id, "--json"]).run().stdout).unwrap();
    assert_eq!(
        messages.as_array().unwrap()[..],
        source.as_array().unwrap()[..3]
    );

    // Going on from the fork: the model answers differently; the source is untouched.
    let next = script(
        &p,
        "next.jsonl",
        // A replay scripts the whole session: a resumed one is answered from the turn it is at.
        &[
            json!({"turn": {"text": "already answered in the source"}}),
            json!({"turn": {"text": "Took the other way."}}),
        ],
    );
    let out = p
        .tackle(FLAGS)
        .args([
            "--model",
            &model(&next),
            "run",
            "--json",
            "--resume",
            &new_id,
        ])
        .run();
    out.success();
    let fork_text = p.tackle(["sessions", "show", &new_id]).run().stdout;
    assert!(fork_text.contains("Took the other way."), "{fork_text}");
    assert!(!fork_text.contains("Wrote one."), "{fork_text}");
    let source_text = p.tackle(["sessions", "show", &id]).run().stdout;
    assert!(
        !source_text.contains("Took the other way."),
        "{source_text}"
    );
    // The bash call ran once, in the source run only.
    assert_eq!(std::fs::read_to_string(p.join("out.txt")).unwrap(), "one\n");
}

#[test]
fn bad_ids_and_turns_are_usage_errors_that_say_what_to_do() {
    let p = Project::new();
    let id = two_turn_run(&p);
    let unknown = p.tackle(["sessions", "show", "nope"]).run();
    unknown.code(2);
    assert!(
        unknown.stderr.contains("tackle sessions ls"),
        "{}",
        unknown.stderr
    );
    let traversal = p.tackle(["sessions", "replay", "../x"]).run();
    traversal.code(2);
    let beyond = p.tackle(["sessions", "fork", &id, "--turn", "9"]).run();
    beyond.code(2);
    assert!(beyond.stderr.contains("has 2 turn(s)"), "{}", beyond.stderr);
    let zero = p.tackle(["sessions", "fork", &id, "--turn", "0"]).run();
    zero.code(2);
}

#[test]
fn show_ends_with_the_todo_list_as_the_model_last_saw_it() {
    let p = Project::new();
    let add = |id: &str, text: &str| json!({"id": id, "name": "todo", "arguments": {"action": "add", "text": text}});
    let file = script(
        &p,
        "todo.jsonl",
        &[
            json!({"turn": {"tool_calls": [add("t1", "write the parser")]}}),
            json!({"turn": {"tool_calls": [add("t2", "test the parser\u{1b}[2J")]}}),
            json!({"turn": {"text": "planned"}}),
        ],
    );
    p.tackle(FLAGS)
        .args(["--model", &model(&file), "run", "plan it"])
        .run()
        .success();
    let list = json_lines(&p.tackle(["sessions", "ls", "--json"]).run().stdout);
    let id = list[0]["id"].as_str().unwrap().to_owned();
    let show = p.tackle(["sessions", "show", &id]).run();
    show.success();
    let (_, todo) = show
        .stdout
        .split_once("── todo (as the model last saw it) ──")
        .unwrap_or_else(|| panic!("no todo section:\n{}", show.stdout));
    assert!(todo.contains("write the parser"), "{todo}");
    assert!(todo.contains("test the parser\\x1b[2J"), "{todo}");
    assert!(!show.stdout.contains('\u{1b}'));
}
