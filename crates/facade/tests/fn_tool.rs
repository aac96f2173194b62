//! What `FnTool` declares reaches the runtime's layers: read-only or not decides the gate's plan
//! mode, and `parallel` lets two calls of a batch overlap.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use tackle::gate::{Mode, PathScope, Policy, UrlScope};
use tackle::protocol::{CallId, CallStatus, ErrorCode, ToolCall, ToolResult};
use tackle::runtime::{
    AllowAll, CancellationToken, Catalog, GateHook, PolicyGate, Runtime, RuntimeConfig, Session,
};
use tackle::tool::{DynTool, ExecuteContext, FnTool, ToolCompletion};
use tokio::sync::Barrier;

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct Nothing {}

fn echo(name: &'static str) -> FnTool<Nothing, impl tackle::tool::ToolFn<Nothing>> {
    FnTool::new(
        name,
        "Says its name.",
        move |_: Nothing, _: ExecuteContext| async move { Ok(ToolCompletion::single(name)) },
    )
}

async fn run(
    tools: Vec<Arc<dyn DynTool>>,
    gate: Arc<dyn GateHook>,
    names: &[&str],
) -> Vec<ToolResult> {
    let dir = tempfile::tempdir().unwrap();
    let runtime = Runtime::new(Catalog::new(tools).unwrap(), gate, RuntimeConfig::default());
    let session = Session::open(dir.path()).unwrap();
    let calls = names
        .iter()
        .enumerate()
        .map(|(i, name)| ToolCall {
            id: CallId(format!("c{i}")),
            name: (*name).to_owned(),
            arguments: serde_json::json!({}),
        })
        .collect();
    let batch = runtime.run_batch(&session, calls, CancellationToken::new());
    tokio::time::timeout(Duration::from_secs(20), batch)
        .await
        .expect("the batch hung")
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_not_said_to_be_read_only_is_denied_in_plan_mode() {
    let plan = Policy::new(
        Vec::new(),
        Mode::Plan,
        PathScope::default(),
        UrlScope::default(),
    )
    .unwrap();
    let tools: Vec<Arc<dyn DynTool>> = vec![
        Arc::new(echo("changes")),
        Arc::new(echo("looks").read_only(true)),
    ];
    let results = run(
        tools,
        Arc::new(PolicyGate::new(plan)),
        &["changes", "looks"],
    )
    .await;
    assert_eq!(
        results[0].code,
        Some(ErrorCode::PERMISSION_DENIED),
        "{}",
        results[0].text()
    );
    assert_eq!(results[1].status, CallStatus::Ok, "{}", results[1].text());
    assert_eq!(results[1].text().trim_end(), "looks");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallel_calls_of_one_batch_overlap() {
    // Each call waits for the other at a barrier: they finish only if they run together.
    let barrier = Arc::new(Barrier::new(2));
    let meet = FnTool::new(
        "meet",
        "Waits for a second call.",
        move |_: Nothing, _: ExecuteContext| {
            let barrier = barrier.clone();
            async move {
                barrier.wait().await;
                Ok(ToolCompletion::single("met"))
            }
        },
    )
    .read_only(true)
    .parallel();
    let results = run(vec![Arc::new(meet)], Arc::new(AllowAll), &["meet", "meet"]).await;
    for r in &results {
        assert_eq!(r.status, CallStatus::Ok, "{}", r.text());
    }
}
