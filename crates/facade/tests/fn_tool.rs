//! What `FnTool` declares reaches the runtime's layers: read-only or not decides the gate's plan
//! mode, `parallel` lets two calls of a batch overlap, and declared permission actions are
//! what the catalog's readers see.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use tackle::gate::{Mode, PathScope, Policy, UrlScope};
use tackle::protocol::{CallId, CallStatus, ErrorCode, ToolCall, ToolResult};
use tackle::runtime::{
    AllowAll, CancellationToken, Catalog, GateHook, PolicyGate, Runtime, RuntimeConfig, Session,
};
use tackle::tool::{Action, DynTool, ExecuteContext, FnTool, PermissionResource, ToolCompletion};
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

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct Target {
    /// Where the call lands.
    path: String,
}

fn deploy(
    actions: &'static [&'static str],
    key: fn(String) -> PermissionResource,
) -> FnTool<Target, impl tackle::tool::ToolFn<Target>> {
    FnTool::new(
        "deploy",
        "Deploys a file.",
        |args: Target, _: ExecuteContext| async move { Ok(ToolCompletion::single(args.path)) },
    )
    .permission(move |args: &Target| vec![key(args.path.clone())])
    .permission_actions(actions)
}

#[test]
fn declared_permission_actions_reach_the_catalog_as_a_built_ins_do() {
    let yolo = Policy::new(
        Vec::new(),
        Mode::Yolo,
        PathScope::default(),
        UrlScope::default(),
    )
    .unwrap();
    let fetching = deploy(&["fetch"], |p| PermissionResource {
        action: Action::Fetch,
        target: p,
    });
    assert_eq!(DynTool::permission_actions(&fetching), ["fetch"]);
    // As for fetch_url: with no URL scope, no rule could allow a fetch, so it is not offered.
    assert!(!yolo.advertises(fetching.name(), DynTool::permission_actions(&fetching)));
    let reading = deploy(&["read"], PermissionResource::read);
    assert!(yolo.advertises(reading.name(), DynTool::permission_actions(&reading)));
    // Undeclared, the tool is keyed by `tool.deploy` alone, which yolo allows.
    let undeclared = echo("plain");
    assert!(DynTool::permission_actions(&undeclared).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_of_an_undeclared_action_is_refused_naming_the_action_to_add() {
    let tools: Vec<Arc<dyn DynTool>> = vec![Arc::new(deploy(&["read"], PermissionResource::write))];
    let dir = tempfile::tempdir().unwrap();
    let runtime = Runtime::new(
        Catalog::new(tools).unwrap(),
        Arc::new(AllowAll),
        RuntimeConfig::default(),
    );
    let session = Session::open(dir.path()).unwrap();
    let call = ToolCall {
        id: CallId("d1".into()),
        name: "deploy".into(),
        arguments: serde_json::json!({ "path": "out.txt" }),
    };
    let results = runtime
        .run_batch(&session, vec![call], CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(
        results[0].code,
        Some(ErrorCode::PROTOCOL),
        "{}",
        results[0].text()
    );
    assert!(
        results[0].text().contains("add `write`"),
        "{}",
        results[0].text()
    );
}
