//! Every call passes the permission gate: rules from config and flags, the path scope, modes,
//! and asks that nobody can answer. A refusal names the key, the rule and how to allow it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use harness::{Project, call_json};
use serde_json::json;

#[test]
fn a_deny_rule_names_key_rule_and_source() {
    let p = Project::new();
    p.write("secrets/key.pem", "PRIVATE\n");
    p.config("[permissions]\ndeny = [\"read:secrets/**\"]\n");
    let out = call_json(&p, "read_file", &json!({"path": "secrets/key.pem"}));
    out.tool_error("permission_denied").stdout_lacks("PRIVATE");
    let denied = &out.metadata()["tool_denied"];
    assert_eq!(denied["key"], "read:secrets/key.pem");
    let rule = denied["rule"].as_str().unwrap();
    assert!(
        rule.contains("read:secrets/**") && rule.contains("config.toml:2"),
        "{rule}"
    );
    assert!(
        out.text().contains("read:secrets/key.pem"),
        "{}",
        out.text()
    );
    // The event log records the denial like any other call.
    let events: Vec<_> = p
        .sessions()
        .into_iter()
        .flatten()
        .map(|r| r["event"].clone())
        .collect();
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "call_finished" && e["status"] == "denied")
    );
}

#[test]
fn deny_beats_allow_whatever_the_layer() {
    let p = Project::new();
    p.write("a.txt", "a\n");
    p.config("[permissions]\ndeny = [\"read:a.txt\"]\n");
    p.tackle([
        "--allow",
        "read:**",
        "call",
        "read_file",
        r#"{"path":"a.txt"}"#,
    ])
    .run()
    .code(1)
    .stdout_contains("permission_denied")
    .stdout_lacks("a\n[");
}

#[test]
fn path_scope_holds_even_in_yolo() {
    let p = Project::new();
    p.write("src/lib.rs", "fn x() {}\n");
    p.write(".env", "TOKEN=abc\n");
    p.config("[path_scope]\nallow = [\"src/**\"]\n");
    call_json(&p, "read_file", &json!({"path": "src/lib.rs"})).success();
    for args in [vec!["--mode", "yolo"], vec!["--allow", "read:**"], vec![]] {
        let mut cmd = p.tackle(args);
        cmd.args(["call", "read_file", r#"{"path":".env"}"#]);
        cmd.run()
            .code(1)
            .stdout_contains("permission_denied")
            .stdout_lacks("TOKEN");
    }
    p.config("[path_scope]\ndeny = [\".env\"]\n");
    call_json(&p, "stat", &json!({"path": ".env"})).tool_error("permission_denied");
    call_json(&p, "stat", &json!({"path": "src/lib.rs"})).success();
}

#[test]
fn an_ask_with_nobody_to_ask_is_approval_unavailable_and_yolo_allows_it() {
    let p = Project::new();
    p.write("notes.md", "hello\n");
    let out = p
        .tackle([
            "--ask",
            "read:notes.md",
            "call",
            "read_file",
            r#"{"path":"notes.md"}"#,
            "--json",
        ])
        .run();
    out.tool_error("approval_unavailable").stdout_lacks("hello");
    assert!(out.text().contains("read:notes.md"), "{}", out.text());
    p.tackle([
        "--ask",
        "read:notes.md",
        "--mode",
        "yolo",
        "call",
        "read_file",
        r#"{"path":"notes.md"}"#,
    ])
    .run()
    .success()
    .stdout_contains("hello");
}

#[test]
fn plan_mode_still_reads() {
    let p = Project::new();
    p.write("a.txt", "a\n");
    p.tackle(["--mode", "plan", "call", "read_file", r#"{"path":"a.txt"}"#])
        .run()
        .success()
        .stdout_is("a\n");
}

#[test]
fn a_tool_no_rule_can_allow_is_not_advertised() {
    let p = Project::new();
    let names = |args: &[&str]| -> Vec<String> {
        let mut cmd = p.tackle(args.to_vec());
        cmd.args(["tools", "--json"]);
        cmd.run()
            .json()
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            // The file-reading tools this test is about; others come and go.
            .filter(|n| ["read_file", "stat", "list_dir"].contains(&n.as_str()))
            .collect()
    };
    let all = names(&[]);
    assert!(all.iter().any(|n| n == "stat"), "{all:?}");
    let without: Vec<String> = all.iter().filter(|n| *n != "stat").cloned().collect();
    assert_eq!(names(&["--deny", "tool.stat"]), without);
    // A narrower deny does not hide the tool: other paths can still be allowed.
    assert_eq!(names(&["--deny", "read:secrets/**"]), all);
    let without_bash: Vec<String> = all.iter().filter(|n| *n != "bash").cloned().collect();
    assert_eq!(names(&["--deny", "tool.bash"]), without_bash);
}

#[test]
fn config_shows_the_posture_line() {
    let p = Project::new();
    p.config("[permissions]\nmode = \"plan\"\n");
    p.tackle(["config"])
        .run()
        .success()
        .stdout_contains("posture: mode plan");
}
