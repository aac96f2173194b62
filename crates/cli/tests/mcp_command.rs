//! `tackle mcp list|get|add|remove` end to end: servers added to the user scope and to the
//! project's `.agents/mcp.json`, the Python SDK fixture server (`fixtures/mcp_fixture_server.py`)
//! as a real server, and what each state looks like: connected, failed with the client's cause,
//! not started in an untrusted folder.

#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns: a failure should panic loudly

mod harness;
mod mcp_venv;

use std::os::unix::fs::PermissionsExt as _;
use std::path::PathBuf;

use harness::Project;
use serde_json::Value;

fn fixture_script() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/mcp_fixture_server.py")
        .display()
        .to_string()
}

fn python() -> String {
    mcp_venv::venv_python().display().to_string()
}

fn user_file(p: &Project) -> PathBuf {
    p.xdg().join("tackle/mcp.json")
}

/// `tackle mcp list --json`, as rows.
fn list(p: &Project) -> Vec<Value> {
    let out = p.tackle(["mcp", "list", "--json"]).run();
    out.success();
    out.json().as_array().unwrap().clone()
}

fn row<'a>(rows: &'a [Value], name: &str, scope: &str) -> &'a Value {
    rows.iter()
        .find(|r| r["name"] == name && r["scope"] == scope)
        .unwrap_or_else(|| panic!("no {scope} row `{name}` in {rows:#?}"))
}

#[test]
fn a_user_server_is_added_listed_shown_and_removed() {
    let p = Project::new();
    let py = python();
    let script = fixture_script();
    p.tackle(["mcp", "add", "fixture", "--", &py, &script])
        .run()
        .success()
        .stdout_contains("added MCP server `fixture` to the user scope");
    let mode = std::fs::metadata(user_file(&p))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600, "the user file is private");

    let rows = list(&p);
    assert_eq!(rows.len(), 1, "{rows:#?}");
    let r = row(&rows, "fixture", "user");
    assert_eq!(r["state"], "connected", "{r:#}");
    assert_eq!(r["transport"], "stdio");
    assert_eq!(r["command"], py.as_str());
    assert!(r["tools"].as_u64().unwrap() >= 1, "{r:#}");
    assert!(
        r["tool_names"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t == "echo"),
        "{r:#}"
    );
    p.tackle(["mcp", "list"])
        .run()
        .success()
        .stdout_contains("fixture (user, stdio): ")
        .stdout_contains(" - connected (");

    let got = p.tackle(["mcp", "get", "fixture", "--json"]).run();
    got.success();
    assert_eq!(got.json()["state"], "connected");
    p.tackle(["mcp", "get", "fixture"])
        .run()
        .success()
        .stdout_contains("scope: user")
        .stdout_contains("mcp__fixture__echo");

    // The catalog starts the same server from the user scope, with no trust involved.
    let tools = p.tackle(["tools", "--json"]).run();
    tools.success();
    assert!(
        tools
            .json()
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "mcp__fixture__echo"),
        "{}",
        tools.stdout
    );

    p.tackle(["mcp", "remove", "fixture"])
        .run()
        .success()
        .stdout_contains("removed MCP server `fixture` from the user scope");
    assert!(list(&p).is_empty());
    p.tackle(["mcp", "list"])
        .run()
        .success()
        .stdout_contains("no MCP servers configured");
    p.tackle(["mcp", "remove", "fixture"])
        .run()
        .code(2)
        .stderr_contains("no MCP server named `fixture`");
    p.tackle(["mcp", "get", "fixture"])
        .run()
        .code(2)
        .stderr_contains("tackle mcp list");
}

#[test]
fn a_duplicate_name_is_refused_naming_remove() {
    let p = Project::new();
    p.tackle(["mcp", "add", "a", "--", "one"]).run().success();
    let before = std::fs::read_to_string(user_file(&p)).unwrap();
    p.tackle(["mcp", "add", "a", "--", "two"])
        .run()
        .code(2)
        .stderr_contains("already in the user scope")
        .stderr_contains("tackle mcp remove --scope user a");
    assert_eq!(std::fs::read_to_string(user_file(&p)).unwrap(), before);
    // The same name in the other scope is a different entry.
    p.tackle(["mcp", "add", "--scope", "project", "a", "--", "two"])
        .run()
        .success();
    p.tackle(["mcp", "remove", "a"])
        .run()
        .code(2)
        .stderr_contains("--scope user or --scope project");
}

#[test]
fn a_server_that_cannot_start_is_failed_with_the_cause() {
    let p = Project::new();
    let missing = p.outside("no-such-server").display().to_string();
    p.tackle(["mcp", "add", "gone", "--", &missing])
        .run()
        .success();
    p.tackle([
        "mcp",
        "add",
        "--transport",
        "http",
        "refused",
        "http://127.0.0.1:1/mcp",
    ])
    .run()
    .success();
    let rows = list(&p);
    let gone = row(&rows, "gone", "user");
    assert_eq!(gone["state"], "failed", "{gone:#}");
    let cause = gone["error"].as_str().unwrap();
    assert!(
        cause.contains("cannot start") && cause.contains("no-such-server"),
        "{cause}"
    );
    let refused = row(&rows, "refused", "user");
    assert_eq!(refused["state"], "failed", "{refused:#}");
    assert_eq!(refused["url"], "http://127.0.0.1:1/mcp");
    p.tackle(["mcp", "get", "gone"])
        .run()
        .success()
        .stdout_contains("state: failed: cannot start");
}

#[test]
fn an_untrusted_projects_server_is_never_started_and_says_how_to_trust() {
    let p = Project::new();
    let marker = p.outside("started");
    let script = format!("touch '{}'", marker.display());
    let add = p
        .tackle([
            "mcp", "add", "--scope", "project", "toucher", "--", "sh", "-c", &script,
        ])
        .run();
    add.success()
        .stdout_contains("added MCP server `toucher` to the project scope")
        .stdout_contains("run `tackle trust`");
    assert!(p.join(".agents/mcp.json").exists());

    let rows = list(&p);
    let r = row(&rows, "toucher", "project");
    assert_eq!(r["state"], "untrusted", "{r:#}");
    assert!(
        r["hint"].as_str().unwrap().contains("tackle trust"),
        "{r:#}"
    );
    p.tackle(["mcp", "get", "toucher"])
        .run()
        .success()
        .stdout_contains("not started: this folder is not trusted");
    assert!(!marker.exists(), "an untrusted project's server ran");

    // Once trusted it is started (and fails the handshake: it is not an MCP server).
    p.trust();
    let rows = list(&p);
    let r = row(&rows, "toucher", "project");
    assert_eq!(r["state"], "failed", "{r:#}");
    assert!(
        marker.exists(),
        "the trusted project's server was not started"
    );
}

#[test]
fn a_trusted_project_entry_replaces_the_users_of_the_same_name() {
    let p = Project::new();
    p.tackle(["mcp", "add", "--scope", "project", "same", "--", "proj-cmd"])
        .run()
        .success();
    p.tackle(["mcp", "add", "same", "--", "user-cmd"])
        .run()
        .success();
    // Untrusted: the user's entry stands.
    let got = p.tackle(["mcp", "get", "same", "--json"]).run();
    got.success();
    assert_eq!(got.json()["scope"], "user");
    assert_eq!(got.json()["command"], "user-cmd");
    p.trust();
    let rows = list(&p);
    assert_eq!(row(&rows, "same", "user")["state"], "replaced", "{rows:#?}");
    assert_eq!(
        row(&rows, "same", "project")["state"],
        "failed",
        "{rows:#?}"
    );
    let got = p.tackle(["mcp", "get", "same", "--json"]).run();
    assert_eq!(got.json()["scope"], "project");
}

#[test]
fn each_server_is_started_once_per_listing() {
    let p = Project::new();
    let log = p.outside("starts.log");
    let script = format!(
        "echo start >> '{}'; exec '{}' '{}'",
        log.display(),
        python(),
        fixture_script()
    );
    p.tackle(["mcp", "add", "counted", "--", "sh", "-c", &script])
        .run()
        .success();
    let rows = list(&p);
    assert_eq!(
        row(&rows, "counted", "user")["state"],
        "connected",
        "{rows:#?}"
    );
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "start\n");
}

#[test]
fn secret_values_are_never_printed() {
    let p = Project::new();
    p.tackle([
        "mcp",
        "add",
        "--env",
        "API_KEY=hunter2-literal",
        "--env",
        "GH=${GH_PAT}",
        "s",
        "--",
        "true",
    ])
    .run()
    .success()
    .stdout_lacks("hunter2");
    p.tackle([
        "mcp",
        "add",
        "--transport",
        "http",
        "--header-env",
        "Authorization=WEB_TOKEN",
        "h",
        "https://user:pa55word@example.invalid/mcp",
    ])
    .run()
    .success()
    .stdout_lacks("pa55word");
    for args in [
        vec!["mcp", "list"],
        vec!["mcp", "list", "--json"],
        vec!["mcp", "get", "s"],
        vec!["mcp", "get", "s", "--json"],
        vec!["mcp", "get", "h"],
        vec!["mcp", "get", "h", "--json"],
    ] {
        let mut cmd = p.tackle(&args);
        cmd.env("GH_PAT", "gh-secret-value")
            .env("WEB_TOKEN", "web-secret-value");
        let out = cmd.run();
        out.success();
        for secret in ["hunter2", "gh-secret-value", "web-secret-value", "pa55word"] {
            if out.stdout.contains(secret) || out.stderr.contains(secret) {
                out.fail(&format!("`{secret}` was printed"));
            }
        }
    }
    let s = p.tackle(["mcp", "get", "s"]).run();
    s.stdout_contains("env API_KEY=***")
        .stdout_contains("env GH=${GH_PAT}");
    p.tackle(["mcp", "get", "h"])
        .run()
        .stdout_contains("header Authorization: from $WEB_TOKEN");
}

/// Each row: the `add` arguments after `mcp add`, and what the refusal must say.
const REFUSED_ADDS: &[(&[&str], &str)] = &[
    (&["a.b", "--", "x"], "server name `a.b` is invalid"),
    (&["", "--", "x"], "server name `` is invalid"),
    (
        &["--transport", "http", "w", "file:///etc/passwd"],
        "not an http or https URL",
    ),
    (&["--transport", "http", "w", "not a url"], "is not a URL"),
    (&["--transport", "http", "w"], "no URL given"),
    (
        &["--transport", "http", "w", "https://h/mcp", "--", "x"],
        "takes a URL, not a command",
    ),
    (
        &["--transport", "http", "--env", "A=1", "w", "https://h/mcp"],
        "--env applies to stdio servers",
    ),
    (
        &[
            "--transport",
            "http",
            "--header-env",
            "Authorization",
            "w",
            "https://h/mcp",
        ],
        "HEADER=VAR",
    ),
    (
        &[
            "--transport",
            "http",
            "--header-env",
            "Authorization=1X",
            "w",
            "https://h/mcp",
        ],
        "not an environment variable name",
    ),
    (
        &[
            "--transport",
            "http",
            "--header-env",
            "Bad Header=X",
            "w",
            "https://h/mcp",
        ],
        "not an HTTP header name",
    ),
    (
        &["--header-env", "Authorization=X", "s", "--", "x"],
        "--header-env applies to HTTP servers",
    ),
    (&["--env", "1A=x", "s", "--", "x"], "not a variable name"),
    (
        &["--env", "K=${A-B}", "s", "--", "x"],
        "not a variable reference",
    ),
    (&["s"], "no command given"),
    (&["s", "npx"], "comes before `--`"),
];

#[test]
fn what_the_loader_would_refuse_is_refused_and_nothing_is_written() {
    let p = Project::new();
    for (args, want) in REFUSED_ADDS {
        let out = p.tackle(["mcp", "add"].iter().chain(args.iter())).run();
        out.code(2);
        if !out.stderr.contains(want) {
            out.fail(&format!("stderr lacks `{want}`"));
        }
        assert!(!user_file(&p).exists(), "{args:?} wrote the file");
    }
}

#[test]
fn a_project_file_tackle_cannot_read_is_left_alone() {
    let p = Project::new();
    p.write(".agents/mcp.json", r#"{"servers": {"a": {"comand": "x"}}}"#);
    p.tackle(["mcp", "add", "--scope", "project", "b", "--", "y"])
        .run()
        .code(3)
        .stderr_contains("did you mean `servers.a.command`")
        .stderr_contains("fix the file by hand");
    assert!(
        std::fs::read_to_string(p.join(".agents/mcp.json"))
            .unwrap()
            .contains("comand")
    );
}
