//! wait_and_verify through the binary: polls of a real tool, and the operator's ceilings from
//! `[tools.wait_and_verify]`, which an untrusted project may lower but never raise.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use harness::{Project, call_json};
use serde_json::json;

#[test]
fn a_read_file_poll_verifies_and_is_recorded_as_its_own_call() {
    let p = Project::new();
    p.write("status.json", "{\"phase\": \"Running\"}\n");
    let out = call_json(
        &p,
        "wait_and_verify",
        &json!({
            "tool": "json_query",
            "args_json": json!({"path": "status.json", "expression": ".phase"}).to_string(),
            "expect_jq": ". == \"Running\"",
            "interval_seconds": 0.01,
        }),
    );
    out.success();
    let report = out.metadata();
    assert_eq!(report["verified"], true, "{report}");
    assert_eq!(report["attempts"], 1);
    // The poll is in the session's log beside the wait, with a start and an end.
    let events = p.sessions().concat();
    let poll = &report["observations"][0]["call_id"];
    let mine: Vec<&serde_json::Value> = events
        .iter()
        .map(|line| &line["event"])
        .filter(|e| &e["call_id"] == poll)
        .collect();
    assert_eq!(mine.len(), 2, "{events:#?}");
    assert_eq!(mine[1]["tool"], "json_query");
}

#[test]
fn a_never_matching_poll_is_a_finding_not_an_error() {
    let p = Project::new();
    p.write("status.txt", "Pending\n");
    let out = call_json(
        &p,
        "wait_and_verify",
        &json!({
            "tool": "read_file",
            "args_json": json!({"path": "status.txt"}).to_string(),
            "expect_contains": "Running",
            "interval_seconds": 0.01,
            "max_attempts": 3,
        }),
    );
    out.success();
    let report = out.metadata();
    assert_eq!(report["verified"], false);
    assert_eq!(report["outcome"], "attempts_exhausted");
    assert_eq!(report["attempts"], 3);
}

/// One row per configuration: the user's, the project's (untrusted), the request, and the
/// result code (`None`: it runs).
#[test]
fn ceilings_come_from_the_operator_and_a_project_may_only_lower_them() {
    let rows: &[(&str, &str, serde_json::Value, Option<&str>)] = &[
        ("", "", json!({"max_attempts": 60}), None),
        ("", "", json!({"max_attempts": 61}), Some("past_ceiling")),
        (
            "[tools.wait_and_verify]\nmax_attempts = 100\n",
            "",
            json!({"max_attempts": 100}),
            None,
        ),
        // The untrusted project's lower ceiling applies…
        (
            "",
            "[tools.wait_and_verify]\nmax_attempts = 2\n",
            json!({"max_attempts": 3}),
            Some("past_ceiling"),
        ),
        (
            "",
            "[tools.wait_and_verify]\nmax_timeout_seconds = 1\n",
            json!({"timeout_seconds": 2}),
            Some("past_ceiling"),
        ),
        // …its higher one does not.
        (
            "",
            "[tools.wait_and_verify]\nmax_attempts = 100\n",
            json!({"max_attempts": 61}),
            Some("past_ceiling"),
        ),
        // Nor does it make a mutating tool pollable.
        (
            "",
            "[tools.wait_and_verify]\npoll_allow = [\"mcp__x__y\"]\n",
            json!({"tool": "write_file"}),
            Some("not_pollable"),
        ),
    ];
    for (user, project, request, want) in rows {
        let p = Project::new();
        p.write("status.txt", "Running\n");
        if !user.is_empty() {
            p.user_config(user);
        }
        if !project.is_empty() {
            p.config(project);
        }
        let mut args = json!({
            "tool": "read_file",
            "args_json": json!({"path": "status.txt"}).to_string(),
            "expect_contains": "Running",
            "interval_seconds": 0.01,
        });
        for (k, v) in request.as_object().unwrap() {
            args[k] = v.clone();
        }
        let out = call_json(&p, "wait_and_verify", &args);
        match want {
            None => {
                out.success();
            }
            Some(code) => {
                out.tool_error(code);
            }
        }
    }
}

#[test]
fn a_built_in_in_poll_allow_is_a_configuration_error() {
    let p = Project::new();
    p.user_config("[tools.wait_and_verify]\npoll_allow = [\"write_file\"]\n");
    p.tackle(["tools"])
        .run()
        .code(3)
        .stderr_contains("poll_allow names the built-in `write_file`");
}
