//! sciontool_status end to end: offered only when the hub's `sciontool` is on PATH (outside
//! the project), run without a shell with the event as two arguments, its failure the call's
//! error; a project cannot choose the command.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use std::os::unix::fs::PermissionsExt;

use harness::Project;
use serde_json::Value;

/// A `sciontool` that records its arguments, one a line, beside the project; `fail` makes it
/// exit 3 after saying why.
fn fake_sciontool(p: &Project, fail: bool) -> std::path::PathBuf {
    let record = p.outside("sciontool-args.txt");
    let script = format!(
        "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\" >> '{}'; done\n{}",
        record.display(),
        if fail {
            "echo 'hub unreachable' >&2\nexit 3\n"
        } else {
            "echo 'recorded'\n"
        }
    );
    let bin = p.write_outside("bin/sciontool", script);
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    record
}

fn path_with_bin(p: &Project) -> String {
    format!(
        "{}:{}",
        p.outside("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

fn tool_names(p: &Project, path: &str) -> Vec<String> {
    let out = p.tackle(["tools", "--json"]).env("PATH", path).run();
    out.success();
    let specs: Value = out.json();
    specs
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn offered_only_where_the_binary_is_and_the_event_is_two_arguments() {
    let p = Project::new();
    let without = tool_names(&p, "/usr/bin:/bin");
    assert!(
        !without.iter().any(|n| n == "sciontool_status"),
        "{without:?}"
    );

    let record = fake_sciontool(&p, false);
    let path = path_with_bin(&p);
    assert!(
        tool_names(&p, &path)
            .iter()
            .any(|n| n == "sciontool_status")
    );
    let message = "stuck on the schema; need the\nowner's answer; $(touch pwned)";
    let out = p
        .tackle([
            "call",
            "sciontool_status",
            &serde_json::json!({"status_type": "blocked", "message": message}).to_string(),
        ])
        .env("PATH", &path)
        .run();
    out.success();
    assert!(
        out.stdout.contains("the hub has the blocked event"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("sciontool said: recorded"),
        "{}",
        out.stdout
    );
    let args = std::fs::read_to_string(&record).unwrap();
    assert_eq!(args, format!("status\nblocked\n{message}\n"));
    assert!(!p.join("pwned").exists() && !p.outside("pwned").exists());
}

#[test]
fn a_failing_binary_is_the_calls_error_and_a_project_cannot_choose_the_command() {
    let p = Project::new();
    fake_sciontool(&p, true);
    let path = path_with_bin(&p);
    let out = p
        .tackle([
            "call",
            "--json",
            "sciontool_status",
            r#"{"status_type": "task_completed", "message": "done"}"#,
        ])
        .env("PATH", &path)
        .run();
    out.tool_error("status_failed");
    assert!(out.stdout.contains("hub unreachable"), "{}", out.stdout);

    // A project's command is a widening: ignored until trusted, so the tool is not offered
    // through a program the repository names.
    let q = Project::new();
    q.write(
        ".agents/config.toml",
        "[tools.sciontool_status]\ncommand = [\"/bin/true\"]\n",
    );
    let names = tool_names(&q, "/usr/bin:/bin");
    assert!(!names.iter().any(|n| n == "sciontool_status"), "{names:?}");
}
