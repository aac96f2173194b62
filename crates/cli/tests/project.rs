//! The project around a call: root discovery, `.agents/config.toml`, and the event log a call
//! leaves behind.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use harness::{Project, call_json};
use serde_json::json;

#[test]
fn one_call_writes_one_started_and_one_finished_event() {
    let p = Project::new();
    p.write("a.txt", "a\n");
    p.tackle(["call", "read_file", r#"{"path":"a.txt"}"#, "--id", "c-42"])
        .run()
        .success();
    let sessions = p.sessions();
    assert_eq!(sessions.len(), 1, "one call opens one session");
    let records = &sessions[0];
    for (i, r) in records.iter().enumerate() {
        assert_eq!(r["seq"], i as u64 + 1, "sequence numbers count from 1: {r}");
        assert!(r["crc"].as_str().is_some_and(|c| !c.is_empty()), "{r}");
    }
    let events: Vec<&serde_json::Value> = records.iter().map(|r| &r["event"]).collect();
    assert_eq!(events[0]["type"], "session_started", "{events:?}");
    let of = |kind: &str| -> Vec<&serde_json::Value> {
        events
            .iter()
            .copied()
            .filter(|e| e["type"] == kind && e["call_id"] == "c-42")
            .collect()
    };
    let started = of("call_started");
    let finished = of("call_finished");
    assert_eq!(started.len(), 1, "{events:?}");
    assert_eq!(finished.len(), 1, "{events:?}");
    assert_eq!(started[0]["tool"], "read_file");
    assert_eq!(started[0]["arguments"], json!({"path": "a.txt"}));
    assert_eq!(finished[0]["status"], "ok");
    let pos = |e: &serde_json::Value| events.iter().position(|x| std::ptr::eq(*x, e)).unwrap();
    assert!(pos(started[0]) < pos(finished[0]));
}

#[test]
fn a_failed_call_is_recorded_too() {
    let p = Project::new();
    call_json(&p, "read_file", &json!({"path": "missing"})).tool_error("not_found");
    let sessions = p.sessions();
    let finished: Vec<_> = sessions[0]
        .iter()
        .map(|r| &r["event"])
        .filter(|e| e["type"] == "call_finished")
        .collect();
    assert_eq!(finished.len(), 1);
    assert_ne!(finished[0]["status"], "ok", "{}", finished[0]);
}

#[test]
fn root_is_found_from_a_subdirectory_of_a_git_checkout() {
    let p = Project::bare();
    p.mkdir(".git");
    p.write("src/deep/a.txt", "found\n");
    // Paths are root-relative, not relative to the working directory.
    p.tackle_in(
        "src/deep",
        ["call", "read_file", r#"{"path":"src/deep/a.txt"}"#],
    )
    .run()
    .success()
    .stdout_is("found\n");
    assert_eq!(
        p.sessions().len(),
        1,
        "state goes under the discovered root"
    );
}

#[test]
fn nearest_agents_dir_wins_over_an_outer_git() {
    let p = Project::bare();
    p.mkdir(".git");
    p.mkdir("inner/.agents");
    p.write("inner/a.txt", "inner root\n");
    p.tackle_in("inner", ["call", "read_file", r#"{"path":"a.txt"}"#])
        .run()
        .success()
        .stdout_is("inner root\n");
}

#[test]
fn no_root_is_an_engine_error_mentioning_root() {
    let p = Project::bare();
    p.mkdir("sub");
    if p.outside("")
        .ancestors()
        .any(|d| d.join(".agents").is_dir() || d.join(".git").exists())
    {
        eprintln!("skipped: the temp dir lies inside a project");
        return;
    }
    for args in [
        vec!["call", "stat", r#"{"path":"."}"#],
        vec!["artifacts", "ls"],
    ] {
        p.tackle_in("sub", args)
            .run()
            .code(3)
            .stdout_is("")
            .stderr_contains("--root");
    }
    p.tackle_in("sub", ["--root", "nope", "artifacts", "ls"])
        .run()
        .code(3)
        .stderr_contains("--root");
}

#[test]
fn config_typo_is_an_engine_error_naming_it() {
    let p = Project::new();
    p.write("a.txt", "a\n");
    p.config("[tool_ouput]\nlines = 3\n");
    p.tackle(["call", "read_file", r#"{"path":"a.txt"}"#])
        .run()
        .code(3)
        .stdout_is("")
        .stderr_contains("tool_ouput")
        .stderr_contains("config.toml");
    p.config("[tool_output]\nline = 3\n");
    p.tackle(["artifacts", "ls"])
        .run()
        .code(3)
        .stderr_contains("line");
    p.config("[tool_output]\nlines = 0\n");
    p.tackle(["call", "stat", r#"{"path":"."}"#])
        .run()
        .code(3)
        .stderr_contains("at least 1");
    p.config("[tool_output\n");
    p.tackle(["call", "stat", r#"{"path":"."}"#])
        .run()
        .code(3)
        .stderr_contains("config.toml");
}

#[test]
fn tool_output_lines_changes_truncation() {
    let p = Project::new();
    for i in 0..6 {
        p.write(format!("d/f{i}"), "");
    }
    // Default limits: the whole listing, nothing retained.
    let out = call_json(&p, "list_dir", &json!({"path": "d"}));
    out.success();
    assert_eq!(out.text(), "f0\nf1\nf2\nf3\nf4\nf5\n");
    assert!(
        out.json()
            .get("retained_output")
            .is_none_or(|r| r[0]["truncated"] == false),
        "{}",
        out.stdout
    );

    p.config("[tool_output]\nlines = 3\n");
    let out = call_json(&p, "list_dir", &json!({"path": "d"}));
    out.success();
    assert!(
        out.text().starts_with("f0\nf1\nf2\n[output truncated"),
        "{}",
        out.text()
    );
    assert_eq!(out.json()["retained_output"][0]["truncated"], true);

    // read_file opts out: its page is never truncated by [tool_output].
    p.write(
        "ten.txt",
        (1..=10).map(|i| format!("{i}\n")).collect::<String>(),
    );
    let out = call_json(&p, "read_file", &json!({"path": "ten.txt"}));
    out.success();
    assert_eq!(out.metadata()["lines"], 10);
    assert!(!out.text().contains("output truncated"));
}

/// The one session's id, from `.agents/store/sessions/<id>/`.
fn only_session_id(p: &Project) -> String {
    let mut ids: Vec<String> = std::fs::read_dir(p.join(".agents/store/sessions"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(ids.len(), 1, "{ids:?}");
    ids.pop().unwrap()
}

#[test]
fn a_corrupt_session_log_exits_3_naming_the_file_and_line_and_an_unknown_session_exits_2() {
    let p = Project::new();
    p.write("a.txt", "a\n");
    p.tackle(["call", "stat", r#"{"path":"a.txt"}"#])
        .run()
        .success();
    let id = only_session_id(&p);
    let log = p.join(format!(".agents/store/sessions/{id}/events.jsonl"));
    let mut bytes = std::fs::read(&log).unwrap();
    let lines = bytes.iter().filter(|b| **b == b'\n').count();
    // One flipped byte in the last complete line: an acknowledged event, not a torn write.
    let last_start = bytes[..bytes.len() - 1]
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |i| i + 1);
    bytes[last_start + 10] ^= 1;
    std::fs::write(&log, &bytes).unwrap();
    p.tackle(["call", "stat", r#"{"path":"a.txt"}"#, "--session", &id])
        .run()
        .code(3)
        .stderr_contains("events.jsonl")
        .stderr_contains(&format!("corrupt at line {lines}"))
        .stderr_contains("move it aside");
    assert_eq!(
        std::fs::read(&log).unwrap(),
        bytes,
        "the log is left as found"
    );
    p.tackle([
        "call",
        "stat",
        r#"{"path":"a.txt"}"#,
        "--session",
        "no-such-session",
    ])
    .run()
    .code(2)
    .stderr_contains("no session `no-such-session`");
}
