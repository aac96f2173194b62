//! Third-party MCP servers as tackle tools, end to end: `.agents/mcp.json` naming the Python
//! SDK fixture server (`fixtures/mcp_fixture_server.py`), seen through `tackle tools` and
//! `tackle call`. Turn order, overlap and restart within one process are tested at the runtime
//! level (`crates/mcp/tests/client.rs`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns: a failure should panic loudly

mod harness;
mod mcp_venv;

use std::path::PathBuf;

use harness::Project;
use serde_json::json;

fn fixture_script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp_fixture_server.py")
}

/// A project whose `.agents/mcp.json` holds the fixture server (as `fixture`) and `extra`.
fn project_with(extra: serde_json::Value) -> Project {
    let p = Project::new();
    let mut servers = json!({
        "fixture": {
            "command": mcp_venv::venv_python(),
            "args": [fixture_script()],
            // A server that floods its stderr must not block.
            "env": { "FIXTURE_NOISY": "1" },
        }
    });
    if let serde_json::Value::Object(extra) = extra {
        servers.as_object_mut().unwrap().extend(extra);
    }
    p.write(
        ".agents/mcp.json",
        serde_json::to_string_pretty(&json!({ "servers": servers })).unwrap(),
    );
    // The user's own servers: trusted, so they start (tests/trust.rs covers untrusted ones).
    p.trust();
    p
}

fn project() -> Project {
    project_with(json!({}))
}

const ALLOW: [&str; 2] = ["--allow", "tool.mcp.fixture.*"];

#[test]
fn mcp_tools_join_the_catalog() {
    let p = project();
    let out = p.tackle(["tools", "--json"]).run();
    out.success();
    let tools = out.json();
    let echo = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "mcp__fixture__echo")
        .unwrap_or_else(|| out.fail("mcp__fixture__echo is not in the catalog"));
    assert!(
        echo["description"]
            .as_str()
            .unwrap()
            .starts_with("[MCP server `fixture`]"),
        "{echo:#}"
    );
    assert_eq!(echo["input_schema"]["type"], "object");
    assert!(
        tools
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "read_file")
    );
}

#[test]
fn an_allowed_call_returns_the_servers_text() {
    let p = project();
    let out = p
        .tackle(ALLOW)
        .args(["call", "mcp__fixture__echo", r#"{"text":"hi"}"#, "--json"])
        .run();
    out.success();
    assert_eq!(out.text(), "hi");
}

#[test]
fn an_unmatched_mcp_key_asks() {
    // MCP tools default to ask (what a third-party tool does is unknown); headless, that is a
    // refusal naming the key to allow.
    let p = project();
    let out = p
        .tackle(["call", "mcp__fixture__echo", r#"{"text":"hi"}"#, "--json"])
        .run();
    out.tool_error("approval_unavailable");
    out.stdout_contains("--allow 'tool.mcp.fixture.echo'");
}

#[test]
fn a_denied_mcp_tool_is_not_offered() {
    // As for built-ins, a tool whose key is denied is left out of the catalog, so calling it is
    // an unknown tool; the deny wins over a broader allow, and its siblings stay.
    let p = project();
    let deny = [
        "--allow",
        "tool.mcp.fixture.*",
        "--deny",
        "tool.mcp.fixture.echo",
    ];
    let out = p.tackle(deny).args(["tools", "--json"]).run();
    out.success();
    out.stdout_lacks("mcp__fixture__echo");
    out.stdout_contains("mcp__fixture__fail");
    p.tackle(deny)
        .args(["call", "mcp__fixture__echo", r#"{"text":"hi"}"#, "--json"])
        .run()
        .tool_error("unknown_tool");
}

#[test]
fn server_failures_become_tool_errors() {
    let p = project();
    let cases = [
        ("mcp__fixture__fail", json!({"reason": "nope"}), "mcp_error"),
        ("mcp__fixture__crash", json!({}), "mcp_server_unavailable"),
    ];
    for (tool, args, code) in cases {
        p.tackle(ALLOW)
            .args(["call", tool, &args.to_string(), "--json"])
            .run()
            .tool_error(code);
    }
}

#[test]
fn a_server_that_cannot_start_costs_only_its_tools() {
    let p = project_with(json!({ "ghost": { "command": "/nonexistent/mcp-server" } }));
    let out = p.tackle(["tools", "--json"]).run();
    out.success();
    out.stderr_contains("MCP server `ghost` (/nonexistent/mcp-server) is unavailable");
    out.stdout_lacks("mcp__ghost__");
    out.stdout_contains("mcp__fixture__echo");
    p.tackle(ALLOW)
        .args(["call", "mcp__fixture__echo", r#"{"text":"ok"}"#, "--json"])
        .run()
        .success();
}

#[test]
fn a_malformed_mcp_json_names_the_nearest_key() {
    let p = Project::new();
    p.write(
        ".agents/mcp.json",
        r#"{"servers": {"x": {"command": "true", "read_onyl": true}}}"#,
    );
    let out = p.tackle(["tools"]).run();
    out.stderr_contains("servers.x.read_only");
    assert_ne!(
        out.code,
        Some(0),
        "a malformed mcp.json must not be ignored"
    );
}
