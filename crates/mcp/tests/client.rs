//! The MCP client at the runtime level: third-party servers (the Python SDK fixture in
//! `crates/cli/tests/fixtures/mcp_fixture_server.py`) as tools in a [`Runtime`] batch.
//!
//! Orderings, never times: the fixture logs each call's start and end to a file, and a call
//! that waits for a file another server creates proves two servers overlapped.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../cli/tests/mcp_venv/mod.rs"]
mod mcp_venv;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tackle_mcp::client::{ServerConfig, Transport, as_dyn, start_servers};
use tackle_protocol::{CallId, ToolCall, ToolResult};
use tackle_runtime::{
    CancellationToken, Catalog, GateHook, GateRequest, GateVerdict, Runtime, RuntimeConfig, Session,
};

fn fixture_script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../cli/tests/fixtures/mcp_fixture_server.py")
        .canonicalize()
        .unwrap()
}

fn server(name: &str, log: &Path) -> ServerConfig {
    ServerConfig {
        name: name.to_owned(),
        transport: Transport::Stdio {
            command: mcp_venv::venv_python().display().to_string(),
            args: vec![fixture_script().display().to_string()],
            env: BTreeMap::from([("FIXTURE_LOG".to_owned(), log.display().to_string())]),
        },
        read_only: false,
        poll_allow: vec!["echo".into()],
        call_timeout: Duration::from_secs(60),
        startup_timeout: Duration::from_secs(30),
    }
}

/// Allows everything and remembers the first key of every call.
#[derive(Default)]
struct RecordingGate(Mutex<Vec<String>>);

impl GateHook for RecordingGate {
    fn check(&self, request: &GateRequest<'_>) -> GateVerdict {
        self.0.lock().unwrap().push(request.keys[0].clone());
        GateVerdict::Allow
    }
}

struct Fixture {
    dir: tempfile::TempDir,
    runtime: Runtime,
    session: Session,
    gate: Arc<RecordingGate>,
}

fn fixture(names: &[&str]) -> Fixture {
    fixture_with(names, Vec::new())
}

/// A fixture whose catalog also holds `extra` (built-in tools beside the servers').
fn fixture_with(names: &[&str], extra: Vec<Arc<dyn tackle_tool::DynTool>>) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.log");
    let configs = names.iter().map(|n| server(n, &log)).collect();
    let (tools, problems) = start_servers(
        configs,
        dir.path(),
        &[],
        &tackle_process::EnvPolicy::default(),
        &tackle_mcp::client::TokenDir::none(),
    );
    assert!(problems.is_empty(), "{problems:?}");
    let gate = Arc::new(RecordingGate::default());
    let runtime = Runtime::new(
        Catalog::new(as_dyn(tools).into_iter().chain(extra).collect()).unwrap(),
        gate.clone(),
        RuntimeConfig::default(),
    );
    let session = Session::open(dir.path()).unwrap();
    Fixture {
        dir,
        runtime,
        session,
        gate,
    }
}

fn call(id: &str, name: &str, arguments: Value) -> ToolCall {
    ToolCall {
        id: CallId(id.into()),
        name: name.into(),
        arguments,
    }
}

impl Fixture {
    fn run(&self, calls: Vec<ToolCall>) -> Vec<ToolResult> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(
            self.runtime
                .run_batch(&self.session, calls, CancellationToken::new()),
        )
        .unwrap()
    }

    fn log(&self) -> Vec<String> {
        std::fs::read_to_string(self.dir.path().join("calls.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

#[test]
fn one_server_runs_in_turn_order_while_another_overlaps() {
    let f = fixture(&["a", "b"]);
    let flag = f.dir.path().join("b-ran");
    let flag = flag.display().to_string();
    let results = f.run(vec![
        call("1", "mcp__a__wait_for", json!({ "path": flag })),
        call("2", "mcp__a__echo", json!({ "text": "after" })),
        call("3", "mcp__b__touch", json!({ "path": flag })),
    ]);
    for r in &results {
        assert!(!r.is_error, "{r:?}");
    }
    // Server b's call ran while server a's first call was waiting for it.
    assert_eq!(results[0].text(), "seen");
    // Server a's second call started only after its first ended.
    assert_eq!(
        f.log(),
        ["wait_for start", "wait_for end", "echo after"],
        "calls to one server must run one at a time in turn order"
    );
    let keys = f.gate.0.lock().unwrap().clone();
    assert_eq!(
        keys,
        ["tool.mcp.a.wait_for", "tool.mcp.a.echo", "tool.mcp.b.touch"]
    );
}

#[test]
fn tackle_introduces_itself_as_tackle() {
    let f = fixture(&["fixture"]);
    let results = f.run(vec![call("1", "mcp__fixture__whoami", json!({}))]);
    assert!(!results[0].is_error, "{results:?}");
    assert_eq!(
        results[0].text(),
        format!("tackle {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn a_crashed_server_is_unavailable_then_restarted() {
    let f = fixture(&["fixture"]);
    let crashed = f.run(vec![call("1", "mcp__fixture__crash", json!({}))]);
    assert_eq!(
        crashed[0].code.as_ref().map(|c| c.as_str()),
        Some("mcp_server_unavailable"),
        "{crashed:?}"
    );
    let again = f.run(vec![call(
        "2",
        "mcp__fixture__echo",
        json!({ "text": "back" }),
    )]);
    assert!(!again[0].is_error, "{again:?}");
    assert_eq!(again[0].text(), "back");
}

#[test]
fn results_are_remote_and_errors_have_codes() {
    let f = fixture(&["fixture"]);
    let results = f.run(vec![
        call("1", "mcp__fixture__fail", json!({ "reason": "nope" })),
        call("2", "mcp__fixture__echo", json!("not an object")),
        call("3", "mcp__fixture__echo", json!({ "text": 3 })),
    ]);
    let codes: Vec<Option<&str>> = results
        .iter()
        .map(|r| r.code.as_ref().map(|c| c.as_str()))
        .collect();
    assert_eq!(
        codes,
        [
            Some("mcp_error"),
            Some("invalid_arguments"),
            Some("mcp_error")
        ],
        "{results:?}"
    );
    let specs = f.runtime.catalog().specs();
    let echo = specs
        .iter()
        .find(|s| s.name == "mcp__fixture__echo")
        .unwrap();
    assert!(
        echo.description.starts_with("[MCP server `fixture`]"),
        "{}",
        echo.description
    );
    assert_eq!(echo.input_schema["type"], "object");
}

#[test]
fn garbage_on_a_servers_stdout_does_not_take_tackle_down() {
    let f = fixture(&["fixture"]);
    let first = f.run(vec![call("1", "mcp__fixture__garbage", json!({}))]);
    // Whether the SDK skips the line or drops the connection, the call ends in a result.
    let code = first[0].code.as_ref().map(|c| c.as_str().to_owned());
    assert!(
        code.is_none() || code.as_deref() == Some("mcp_server_unavailable"),
        "{first:?}"
    );
    let next = f.run(vec![call(
        "2",
        "mcp__fixture__echo",
        json!({ "text": "still" }),
    )]);
    assert_eq!(next[0].text(), "still", "{next:?}");
}

/// wait_and_verify polls a third-party tool only when it is vouched for (`poll_allow` here;
/// `read_only` or `readOnlyHint` likewise), and each poll reaches the server as a call of its own.
#[test]
fn wait_and_verify_polls_only_a_vouched_for_mcp_tool() {
    let f = fixture_with(
        &["a"],
        vec![Arc::new(tackle_tools::WaitAndVerify::new(
            tackle_tools::WaitSettings::DEFAULT,
        ))],
    );
    let flag = f.dir.path().join("never").display().to_string();
    let results = f.run(vec![
        call(
            "w1",
            "wait_and_verify",
            json!({
                "tool": "mcp__a__echo",
                "args_json": json!({"text": "up"}).to_string(),
                "expect_contains": "up",
                "interval_seconds": 0.01,
            }),
        ),
        call(
            "w2",
            "wait_and_verify",
            json!({
                "tool": "mcp__a__touch",
                "args_json": json!({"path": flag}).to_string(),
                "expect_contains": "x",
            }),
        ),
    ]);
    assert!(!results[0].is_error, "{}", results[0].text());
    assert_eq!(results[0].metadata["verified"], true);
    assert_eq!(
        results[1].code.as_ref().map(|c| c.as_str()),
        Some("not_pollable"),
        "{}",
        results[1].text()
    );
    assert_eq!(f.log(), ["echo up"], "touch must never run");
    let keys = f.gate.0.lock().unwrap().clone();
    assert!(keys.contains(&"tool.mcp.a.echo".to_owned()), "{keys:?}");
}
