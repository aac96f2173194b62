//! `tackle store migrate` against the real servers of `scripts/start-fleet-services`: a
//! project's sessions and artifacts into the database and the bucket (a log the user's tackle
//! did not write stays behind), again as a checked no-op, then out into another project,
//! where the session resumes and its artifacts read back.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use harness::Project;
use harness::fleet;
use harness::replay::{json_lines, model, script};
use serde_json::{Value, json};

fn migrate(p: &Project, url: &str, from: &str, to: &str) -> (Vec<Value>, i32) {
    let mut cmd = p.tackle(["store", "migrate", "--from", from, "--to", to, "--json"]);
    for (k, v) in fleet::env(url) {
        cmd.env(k, v);
    }
    let out = cmd.run();
    (json_lines(&out.stdout), out.code.unwrap_or(-1))
}

fn summary(lines: &[Value]) -> &Value {
    &lines.last().expect("a summary line")["summary"]
}

#[test]
fn sessions_and_artifacts_move_to_the_fleet_and_back_verified() {
    let url = fleet::fresh_schema_url();
    let config = fleet::user_config(&fleet::unique("mig"), 5.0);
    // Made before the fleet is configured: its session is in the project's files alone.
    let a = Project::new();
    let file = script(
        &a,
        "s.jsonl",
        &[
            json!({"turn": {"tool_calls": [
                {"id": "c1", "name": "bash", "arguments": {"command": "echo migrated-output"}}
            ]}}),
            json!({"turn": {"text": "done on A"}}),
        ],
    );
    let out = a
        .tackle(["--mode", "yolo", "--allow", "tool.bash.cmd:*"])
        .args(["--model", &model(&file), "run", "--json", "echo something"])
        .run();
    out.success();
    let session = json_lines(&out.stdout)[0]["session"]
        .as_str()
        .unwrap()
        .to_owned();
    a.user_config(&config);
    // Not yet in the fleet: resuming it says how to move it there.
    let mut resume = a.tackle([
        "--model",
        &model(&file),
        "run",
        "--resume",
        &session,
        "again",
    ]);
    fleet::set_env(&mut resume, &url);
    let refused = resume.run();
    assert_ne!(refused.code, Some(0));
    assert!(
        refused
            .stderr
            .contains("tackle store migrate --from files --to postgres"),
        "{}",
        refused.stderr
    );
    // A log the user's tackle did not write: a repository can ship one.
    let foreign = a.join(".agents/store/sessions/20260101T000000Z-0000000000000000");
    std::fs::create_dir_all(&foreign).unwrap();
    std::fs::copy(
        a.join(format!(".agents/store/sessions/{session}/events.jsonl")),
        foreign.join("events.jsonl"),
    )
    .unwrap();

    let (lines, code) = migrate(&a, &url, "files", "postgres");
    assert_eq!(code, 0, "{lines:#?}");
    let s = summary(&lines);
    assert_eq!(s["sessions_moved"], 1, "{lines:#?}");
    assert_eq!(
        s["sessions_skipped"], 1,
        "the foreign log stays: {lines:#?}"
    );
    assert!(s["artifacts_moved"].as_u64().unwrap() >= 1, "{lines:#?}");
    assert!(
        lines
            .iter()
            .any(|l| l["state"] == "skipped" && l["detail"].as_str().unwrap().contains("not yours")),
        "{lines:#?}"
    );
    // The bucket's collection runs with the store's: fresh objects are listed, none marked.
    let mut gc = a.tackle(["artifacts", "gc", "--json"]);
    fleet::set_env(&mut gc, &url);
    let gc = gc.run();
    gc.success();
    let report: Value = serde_json::from_str(&gc.stdout).unwrap();
    assert_eq!(report["bucket"]["ran"], true, "{report}");
    assert!(
        report["bucket"]["listed"].as_u64().unwrap() >= 1,
        "{report}"
    );
    assert_eq!(report["bucket"]["marked"], 0, "{report}");
    assert_eq!(report["bucket"]["deleted"], json!([]), "{report}");
    // `tackle config` names the variable, never the URL in it.
    let mut shown = a.tackle(["config"]);
    fleet::set_env(&mut shown, &url);
    let shown = shown.run();
    shown.success();
    shown.stdout_contains("postgres at $TACKLE_TEST_DB");
    shown.stdout_lacks("postgres://");

    let (again, code) = migrate(&a, &url, "files", "postgres");
    assert_eq!(code, 0);
    let s = summary(&again);
    assert_eq!(s["sessions_moved"], 0, "{again:#?}");
    assert_eq!(s["sessions_already_there"], 1, "{again:#?}");
    assert_eq!(s["artifacts_moved"], 0, "{again:#?}");

    // Out into a project that has none of it.
    let b = Project::new();
    b.user_config(&config);
    let (down, code) = migrate(&b, &url, "postgres", "files");
    assert_eq!(code, 0, "{down:#?}");
    let s = summary(&down);
    assert_eq!(s["sessions_moved"], 1, "{down:#?}");
    assert!(s["artifacts_moved"].as_u64().unwrap() >= 1, "{down:#?}");
    let shown = b.tackle(["sessions", "show", &session]).run();
    shown.success();
    shown.stdout_contains("done on A");
    let digests = b.artifact_digests();
    assert!(!digests.is_empty());
    let catted: Vec<String> = digests
        .iter()
        .map(|d| b.tackle(["artifacts", "cat", d]).run().stdout)
        .collect();
    assert!(
        catted.iter().any(|c| c.contains("migrated-output")),
        "{catted:?}"
    );

    // A local copy holding the first records only is completed from the database.
    let log = b.join(format!(".agents/store/sessions/{session}/events.jsonl"));
    let text = std::fs::read_to_string(&log).unwrap();
    let first_line_end = text.find('\n').unwrap() + 1;
    std::fs::write(&log, &text[..first_line_end]).unwrap();
    let (partial, code) = migrate(&b, &url, "postgres", "files");
    assert_eq!(code, 0, "a prefix is completed: {partial:#?}");
    assert!(
        partial.iter().any(|l| l["state"] == "completed"),
        "{partial:#?}"
    );
    assert_eq!(
        std::fs::read_to_string(&log).unwrap().lines().count(),
        text.lines().count()
    );
}

#[test]
fn without_a_database_configured_migrate_names_the_setting() {
    let p = Project::new();
    let out = p
        .tackle(["store", "migrate", "--from", "files", "--to", "postgres"])
        .run();
    assert_eq!(out.code, Some(2));
    assert!(
        out.stderr.contains("[store] backend = \"postgres\""),
        "{}",
        out.stderr
    );
    // The URL never comes from a file, and a project cannot choose the database.
    p.config("[store]\nbackend = \"postgres\"\n");
    let out = p
        .tackle(["store", "migrate", "--from", "files", "--to", "postgres"])
        .run();
    assert_eq!(
        out.code,
        Some(3),
        "a configuration error, as for any other key"
    );
    assert!(
        out.stderr
            .contains("a project config may not define [store]"),
        "{}",
        out.stderr
    );
}
