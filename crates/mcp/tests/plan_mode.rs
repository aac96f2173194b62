//! Plan mode over MCP (seed 003, record_plan): under `plan_mode = "required"` each client of
//! one server is a session of its own, and a plan one client records opens nothing for another.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use rmcp::ServiceExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation,
};
use serde_json::{Value, json};
use tackle_mcp::{McpServer, ServerOptions};
use tackle_runtime::{AllowAll, Catalog, PlanGate, Runtime, RuntimeConfig, Session};
use tackle_tool::PlanMode;
use tackle_tools::{BuiltinConfig, PlanBook};

fn server(dir: &std::path::Path) -> McpServer {
    let book = PlanBook::new(dir);
    let config = BuiltinConfig {
        plan_mode: PlanMode::Required,
        plans: Some(book.clone()),
        ..BuiltinConfig::default()
    };
    let catalog = Catalog::new(tackle_tools::builtin_tools(&config)).unwrap();
    book.report_gated(catalog.plan_gated());
    let runtime = Runtime::new(
        catalog,
        Arc::new(PlanGate::new(Arc::new(AllowAll), book)),
        RuntimeConfig::default(),
    );
    let session = Session::open(dir).unwrap();
    McpServer::new(
        runtime,
        session,
        ServerOptions {
            elicitation: false,
            client_confirms: false,
        },
    )
}

async fn connect(
    server: McpServer,
) -> rmcp::service::RunningService<rmcp::RoleClient, ClientConfig> {
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    let (read, write) = tokio::io::split(server_io);
    tokio::spawn(async move {
        let _ = tackle_mcp::serve_io(server, read, write).await;
    });
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("plan-test-client", "0"),
    )
    .serve(client_io)
    .await
    .unwrap()
}

fn call(name: &str, arguments: Value) -> CallToolRequestParams {
    CallToolRequestParams::new(name.to_owned())
        .with_arguments(arguments.as_object().unwrap().clone())
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_client_needs_its_own_plan() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path());
    let a = connect(server.for_new_client()).await;
    let b = connect(server.for_new_client()).await;
    let write = || call("write_file", json!({"path": "a.txt", "content": "x\n"}));

    let denied = a.call_tool(write()).await.unwrap();
    assert_eq!(denied.is_error, Some(true), "{}", text(&denied));
    assert!(text(&denied).contains("record_plan"), "{}", text(&denied));
    assert!(!dir.path().join("a.txt").exists());

    let plan = a
        .call_tool(call("record_plan", json!({"plan": "1. write a.txt\n"})))
        .await
        .unwrap();
    let said = text(&plan);
    assert_ne!(plan.is_error, Some(true), "{said}");
    assert!(said.contains("Now unblocked for this session: "), "{said}");
    assert!(
        said.contains("write_file") && said.contains("bash"),
        "{said}"
    );
    assert!(
        !said.contains("read_file"),
        "read-only tools were never held: {said}"
    );

    let written = a.call_tool(write()).await.unwrap();
    assert_ne!(written.is_error, Some(true), "{}", text(&written));
    assert!(dir.path().join("a.txt").exists());

    // Another client is another session: its gate is still closed.
    let other = b.call_tool(write()).await.unwrap();
    assert_eq!(other.is_error, Some(true), "{}", text(&other));

    // The same plan again, from the first client: nothing written, said so, gate unchanged.
    let again = a
        .call_tool(call("record_plan", json!({"plan": "1. write a.txt\n"})))
        .await
        .unwrap();
    assert!(text(&again).contains("Plan unchanged"), "{}", text(&again));
    assert!(!text(&again).contains("Now unblocked"), "{}", text(&again));
    let plans: Vec<_> = std::fs::read_dir(dir.path().join(".agents/plans"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".md"))
        .collect();
    assert_eq!(plans, ["plan-1.md"]);
    a.cancel().await.unwrap();
    b.cancel().await.unwrap();
}
