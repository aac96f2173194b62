//! The MCP server driven by the official Rust SDK's client over an in-memory pipe: the
//! catalog, results, protocol errors, progress, cancellation and elicitation approvals.
//!
//! Cancellation and progress are tested here, at the Rust level, with test-only tools (`slow`
//! waits for cancellation after reporting progress), so the shipped binary carries no test
//! tools. The same behaviour through the real binary and the Python SDK is in
//! `crates/cli/tests/mcp_interop.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::borrow::Cow;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ClientRequest, ElicitRequestParams,
    ElicitResult, ElicitationAction, Implementation, PaginatedRequestParams,
    ProgressNotificationParam, Request, ServerResult,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RequestContext, RunningService};
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tackle_mcp::{McpServer, ServerOptions};
use tackle_protocol::{CallStatus, Concurrency, Event};
use tackle_runtime::{
    Catalog, EventObserver, GateHook, GateRequest, GateVerdict, Runtime, RuntimeConfig, Session,
};
use tackle_tool::{
    ExecuteContext, PrepareContext, Prepared, Routing, Tool, ToolCompletion, ToolError,
    ToolProgress,
};
use tokio::sync::mpsc;

// ---------------------------------------------------------------------------------------------
// Test tools and gate.

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

/// Reports progress, then waits until the call is cancelled.
struct Slow;

impl Tool for Slow {
    type Args = NoArgs;
    type Plan = ();
    fn name(&self) -> &str {
        "slow"
    }
    fn description(&self) -> Cow<'static, str> {
        "Test tool: reports progress and waits to be cancelled.".into()
    }
    fn concurrency(&self) -> Concurrency {
        Concurrency::Parallel
    }
    fn read_only(&self) -> bool {
        true
    }
    fn prepare(&self, _: NoArgs, _: &PrepareContext<'_>) -> Result<Prepared<()>, ToolError> {
        Ok(Prepared::new(Routing::default(), ()))
    }
    async fn execute(&self, _: (), cx: ExecuteContext) -> Result<ToolCompletion, ToolError> {
        cx.output.progress(ToolProgress {
            message: Some("started".into()),
            ..ToolProgress::default()
        })?;
        cx.cancel.cancelled().await;
        Ok(ToolCompletion::single("cancelled"))
    }
}

/// Reports three progress steps, then finishes.
struct Steps;

impl Tool for Steps {
    type Args = NoArgs;
    type Plan = ();
    fn name(&self) -> &str {
        "steps"
    }
    fn description(&self) -> Cow<'static, str> {
        "Test tool: three progress steps.".into()
    }
    fn read_only(&self) -> bool {
        true
    }
    fn prepare(&self, _: NoArgs, _: &PrepareContext<'_>) -> Result<Prepared<()>, ToolError> {
        Ok(Prepared::new(Routing::default(), ()))
    }
    async fn execute(&self, _: (), cx: ExecuteContext) -> Result<ToolCompletion, ToolError> {
        for i in 1..=3 {
            cx.output.progress(ToolProgress {
                message: Some(format!("step {i}")),
                ..ToolProgress::default()
            })?;
        }
        Ok(ToolCompletion::single("done"))
    }
}

/// A mutating test tool the gate asks about.
struct Touch;

impl Tool for Touch {
    type Args = NoArgs;
    type Plan = ();
    fn name(&self) -> &str {
        "touch"
    }
    fn description(&self) -> Cow<'static, str> {
        "Test tool: a write the gate asks about.".into()
    }
    fn read_only(&self) -> bool {
        false
    }
    fn permission_actions(&self) -> &'static [&'static str] {
        &["write"]
    }
    fn prepare(&self, _: NoArgs, _: &PrepareContext<'_>) -> Result<Prepared<()>, ToolError> {
        Ok(Prepared::new(Routing::default(), ()))
    }
    async fn execute(&self, _: (), _: ExecuteContext) -> Result<ToolCompletion, ToolError> {
        Ok(ToolCompletion::single("touched"))
    }
}

/// Denies `stat`; asks about `touch`, `grep` (a read-only tool) and `delete_file` (whose key
/// it asks about every time, like a protected path); allows the rest.
struct TestGate;

impl GateHook for TestGate {
    fn check(&self, request: &GateRequest<'_>) -> GateVerdict {
        match request.tool {
            "stat" => GateVerdict::Deny {
                key: "tool.stat".into(),
                rule: "test".into(),
                message: "tool.stat is denied by the test gate".into(),
            },
            "touch" => GateVerdict::Ask {
                keys: vec!["tool.touch".into()],
                message: "tool.touch asks (test gate)".into(),
            },
            "grep" | "delete_file" => GateVerdict::Ask {
                keys: vec![format!("tool.{}", request.tool)],
                message: format!("tool.{} asks (test gate)", request.tool),
            },
            _ => GateVerdict::Allow,
        }
    }

    fn session_grantable(&self, key: &str) -> bool {
        key != "tool.delete_file"
    }
}

struct Events(mpsc::UnboundedSender<Event>);

impl EventObserver for Events {
    fn on_recorded(&self, _: u64, event: &Event) {
        let _ = self.0.send(event.clone());
    }
}

struct Fixture {
    _dir: tempfile::TempDir,
    server: McpServer,
    events: mpsc::UnboundedReceiver<Event>,
}

fn fixture(elicitation: bool) -> Fixture {
    fixture_with(ServerOptions {
        elicitation,
        client_confirms: false,
    })
}

fn fixture_with(options: ServerOptions) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("hello.txt"), "hello\nworld\n").unwrap();
    let mut tools = tackle_tools::builtin_tools(&tackle_tools::BuiltinConfig::default());
    tools.push(Arc::new(Slow));
    tools.push(Arc::new(Steps));
    tools.push(Arc::new(Touch));
    tools.push(Arc::new(tackle_runtime::RetrieveRaw));
    let (tx, events) = mpsc::unbounded_channel();
    let runtime = Runtime::new(
        Catalog::new(tools).unwrap(),
        Arc::new(TestGate),
        RuntimeConfig::default(),
    )
    .with_event_observer(Arc::new(Events(tx)));
    let session = Session::open(dir.path()).unwrap();
    Fixture {
        _dir: dir,
        server: McpServer::new(runtime, session, options),
        events,
    }
}

// ---------------------------------------------------------------------------------------------
// A client that records progress and answers elicitations from a script.

#[derive(Clone, Default)]
struct TestClient {
    elicitation_answer: Option<(ElicitationAction, Option<Value>)>,
    progress: Arc<Mutex<Vec<String>>>,
    progress_tx: Option<mpsc::UnboundedSender<String>>,
    log_tx: Option<mpsc::UnboundedSender<Value>>,
}

impl ClientHandler for TestClient {
    fn get_info(&self) -> ClientConfig {
        let caps = if self.elicitation_answer.is_some() {
            ClientCapabilities::builder().enable_elicitation().build()
        } else {
            ClientCapabilities::default()
        };
        ClientConfig::new(caps, Implementation::new("tackle-test-client", "0"))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let ElicitRequestParams::FormElicitationParams { message, .. } = request else {
            return Err(ErrorData::invalid_params("expected a form", None));
        };
        assert!(message.contains("tool.touch"), "{message}");
        let (action, content) = self.elicitation_answer.clone().unwrap();
        let mut result = ElicitResult::new(action);
        result.content = content;
        Ok(result)
    }

    #[allow(deprecated)] // logging: retired by the 2026-07-28 revision, served for older clients
    async fn on_logging_message(
        &self,
        params: rmcp::model::LoggingMessageNotificationParam,
        _: NotificationContext<RoleClient>,
    ) {
        if let Some(tx) = &self.log_tx {
            let _ = tx.send(serde_json::to_value(&params).unwrap());
        }
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _: NotificationContext<RoleClient>,
    ) {
        let message = params.message.unwrap_or_default();
        self.progress.lock().unwrap().push(message.clone());
        if let Some(tx) = &self.progress_tx {
            let _ = tx.send(message);
        }
    }
}

async fn connect(server: McpServer, client: TestClient) -> RunningService<RoleClient, TestClient> {
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    let (read, write) = tokio::io::split(server_io);
    tokio::spawn(async move {
        let _ = tackle_mcp::serve_io(server, read, write).await;
    });
    client.serve(client_io).await.unwrap()
}

fn args(v: Value) -> serde_json::Map<String, Value> {
    v.as_object().unwrap().clone()
}

// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn lists_the_catalog_with_annotations() {
    let f = fixture(false);
    let client = connect(f.server, TestClient::default()).await;
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    for want in ["read_file", "stat", "list_dir", "slow", "touch"] {
        assert!(names.contains(&want), "{names:?}");
    }
    let read_file = tools.iter().find(|t| t.name == "read_file").unwrap();
    let a = read_file.annotations.as_ref().unwrap();
    assert_eq!(a.read_only_hint, Some(true));
    assert_eq!(a.destructive_hint, Some(false));
    assert_eq!(
        read_file.input_schema.get("additionalProperties"),
        Some(&json!(false))
    );
    let touch = tools.iter().find(|t| t.name == "touch").unwrap();
    assert_eq!(
        touch.annotations.as_ref().unwrap().destructive_hint,
        Some(true)
    );
}

/// Gemini CLI's `wait_for_previous` is taken off at the boundary (a boolean only); every other
/// unknown field still reaches the strict parser.
#[tokio::test]
async fn wait_for_previous_is_accepted_and_other_unknown_fields_are_not() {
    let f = fixture(false);
    let client = connect(f.server, TestClient::default()).await;
    let call = |arguments: Value| {
        client.call_tool(CallToolRequestParams::new("read_file").with_arguments(args(arguments)))
    };
    for wait in [true, false] {
        let ok = call(json!({"path": "hello.txt", "wait_for_previous": wait}))
            .await
            .unwrap();
        assert_eq!(ok.is_error, Some(false), "{ok:?}");
        assert!(ok.content[0].as_text().unwrap().text.contains("hello"));
    }
    for (arguments, field) in [
        (
            json!({"path": "hello.txt", "wait_for_previous": "yes"}),
            "$.wait_for_previous",
        ),
        (
            json!({"path": "hello.txt", "wait_for_prev": true}),
            "$.wait_for_prev",
        ),
    ] {
        let bad = call(arguments).await.unwrap();
        assert_eq!(result_meta(&bad)["code"], "invalid_arguments");
        assert_eq!(result_meta(&bad)["path"], field);
    }
}

/// The posture line a terminal would show reaches a client through MCP logging once it asks for
/// info; a client that never sets a level gets nothing below warning.
#[tokio::test]
#[allow(deprecated)] // logging: retired by the 2026-07-28 revision, served for older clients
async fn announcements_follow_the_level_the_client_set() {
    use rmcp::model::{LoggingLevel, SetLevelRequestParams};
    let f = fixture(false);
    f.server.announce("posture: mode ask, test");
    let (tx, mut log) = mpsc::unbounded_channel();
    let client = connect(
        f.server,
        TestClient {
            log_tx: Some(tx),
            ..TestClient::default()
        },
    )
    .await;
    assert!(
        client.peer_info().unwrap().capabilities.logging.is_some(),
        "the server declares logging"
    );
    client
        .set_level(SetLevelRequestParams::new(LoggingLevel::Warning))
        .await
        .unwrap();
    client
        .set_level(SetLevelRequestParams::new(LoggingLevel::Info))
        .await
        .unwrap();
    let message = tokio::time::timeout(std::time::Duration::from_secs(10), log.recv())
        .await
        .expect("the announcement arrives")
        .unwrap();
    assert_eq!(message["level"], "info");
    assert_eq!(message["logger"], "tackle");
    assert_eq!(message["data"], "posture: mode ask, test");
    // Sent once per level that includes it: the warning level sent nothing.
    assert!(log.try_recv().is_err());
}

#[tokio::test]
async fn results_errors_and_protocol_errors() {
    let f = fixture(false);
    let client = connect(f.server, TestClient::default()).await;

    let ok = client
        .call_tool(
            CallToolRequestParams::new("read_file")
                .with_arguments(args(json!({"path": "hello.txt"}))),
        )
        .await
        .unwrap();
    assert_eq!(ok.is_error, Some(false));
    assert!(ok.content[0].as_text().unwrap().text.contains("hello"));
    assert_eq!(result_meta(&ok)["total_lines"], 2);

    let bad = client
        .call_tool(CallToolRequestParams::new("read_file").with_arguments(args(json!({"path": 3}))))
        .await
        .unwrap();
    assert_eq!(bad.is_error, Some(true));
    assert_eq!(result_meta(&bad)["code"], "invalid_arguments");
    assert_eq!(result_meta(&bad)["path"], "$.path");

    let denied = client
        .call_tool(
            CallToolRequestParams::new("stat").with_arguments(args(json!({"path": "hello.txt"}))),
        )
        .await
        .unwrap();
    assert_eq!(denied.is_error, Some(true));
    assert_eq!(result_meta(&denied)["code"], "permission_denied");

    // Without elicitation, an ask is refused as approval_unavailable.
    let ask = client
        .call_tool(CallToolRequestParams::new("touch"))
        .await
        .unwrap();
    assert_eq!(result_meta(&ask)["code"], "approval_unavailable");

    let unknown = client
        .call_tool(CallToolRequestParams::new("read_fil"))
        .await
        .unwrap_err();
    let msg = unknown.to_string();
    assert!(
        msg.contains("unknown tool") && msg.contains("read_file"),
        "{msg}"
    );

    let cursor = client
        .list_tools(Some(
            PaginatedRequestParams::default().with_cursor(Some("bogus".into())),
        ))
        .await
        .unwrap_err();
    assert!(cursor.to_string().contains("invalid cursor"), "{cursor}");

    // The server still serves after every error above.
    let again = client
        .call_tool(
            CallToolRequestParams::new("list_dir").with_arguments(args(json!({"path": "."}))),
        )
        .await
        .unwrap();
    assert_eq!(again.is_error, Some(false));
}

/// A survey tool's listing is the result itself in structured form: its `_meta` carries the
/// counts, and the listing only when the call asks for it.
#[tokio::test]
async fn a_survey_listing_reaches_meta_only_when_the_call_asks() {
    let f = fixture(false);
    let client = connect(f.server, TestClient::default()).await;
    for (tool, arguments, key) in [
        ("list_dir", json!({"path": "."}), "entries"),
        ("glob", json!({"pattern": "*.txt"}), "files"),
    ] {
        let plain = client
            .call_tool(CallToolRequestParams::new(tool).with_arguments(args(arguments.clone())))
            .await
            .unwrap();
        assert_eq!(plain.is_error, Some(false), "{tool}: {}", text_of(&plain));
        assert!(text_of(&plain).contains("hello.txt"), "{tool}");
        let meta = result_meta(&plain);
        assert!(meta.get(key).is_none(), "{tool}: {meta}");
        assert!(
            meta.as_object().is_some_and(|m| !m.is_empty()),
            "{tool}: {meta}"
        );

        let mut asking = CallToolRequestParams::new(tool).with_arguments(args(arguments));
        asking.meta = Some(rmcp::model::RequestMetaObject::from(args(
            json!({ (tackle_mcp::LISTING_REQUEST_KEY): true }),
        )));
        let listed = client.call_tool(asking).await.unwrap();
        assert_eq!(text_of(&listed), text_of(&plain), "{tool}");
        let meta = result_meta(&listed);
        assert!(
            meta[key].to_string().contains("hello.txt"),
            "{tool}: {meta}"
        );
    }
}

#[tokio::test]
async fn progress_reaches_the_client_before_the_result() {
    let f = fixture(false);
    let client = connect(f.server, TestClient::default()).await;
    let handle = client
        .peer()
        .send_cancellable_request(
            ClientRequest::CallToolRequest(Request::new(CallToolRequestParams::new("steps"))),
            PeerRequestOptions::no_options(),
        )
        .await
        .unwrap();
    let result = handle.await_response().await.unwrap();
    assert!(
        matches!(result, ServerResult::CallToolResult(_)),
        "{result:?}"
    );
    assert_eq!(
        *client.service().progress.lock().unwrap(),
        vec!["step 1", "step 2", "step 3"]
    );
}

#[tokio::test]
async fn cancellation_stops_the_call() {
    let mut f = fixture(false);
    let (tx, mut progress) = mpsc::unbounded_channel();
    let client = connect(
        f.server,
        TestClient {
            progress_tx: Some(tx),
            ..TestClient::default()
        },
    )
    .await;
    let handle = client
        .peer()
        .send_cancellable_request(
            ClientRequest::CallToolRequest(Request::new(CallToolRequestParams::new("slow"))),
            PeerRequestOptions::no_options(),
        )
        .await
        .unwrap();
    assert_eq!(progress.recv().await.unwrap(), "started");
    handle.cancel(Some("test".into())).await.unwrap();
    loop {
        match f.events.recv().await.unwrap() {
            Event::CallFinished(done) if done.tool == "slow" => {
                assert_eq!(done.status, CallStatus::Cancelled);
                break;
            }
            _ => {}
        }
    }
    // Still serving.
    let tools = client.list_all_tools().await.unwrap();
    assert!(!tools.is_empty());
}

/// Each answer to the approval form, given by a client that `initialize`d (`modern: false`,
/// asked with an elicitation request) or by a 2026-07-28 client (asked through an
/// input-required result that the SDK answers and retries).
async fn approvals_reach_the_client(modern: bool) {
    let table = [
        (
            ElicitationAction::Accept,
            Some(json!({"decision": "once"})),
            None,
        ),
        (
            ElicitationAction::Accept,
            Some(json!({"decision": "deny", "message": "not now"})),
            Some("not now"),
        ),
        (ElicitationAction::Decline, None, Some("refused")),
    ];
    for (action, content, refusal) in table {
        let f = fixture(true);
        let answering = TestClient {
            elicitation_answer: Some((action, content.clone())),
            ..TestClient::default()
        };
        let client = if modern {
            connect_2026(f.server, answering).await
        } else {
            connect(f.server, answering).await
        };
        let r = client
            .call_tool(CallToolRequestParams::new("touch"))
            .await
            .unwrap();
        let text = r.content[0].as_text().unwrap().text.clone();
        match refusal {
            None => assert_eq!(
                (r.is_error, text.as_str()),
                (Some(false), "touched"),
                "{content:?}"
            ),
            Some(why) => {
                assert_eq!(r.is_error, Some(true), "{content:?}");
                assert_eq!(result_meta(&r)["code"], "permission_denied");
                assert!(text.contains(why), "{text}");
            }
        }
    }
}

#[tokio::test]
async fn asks_go_to_the_client_as_elicitation() {
    approvals_reach_the_client(false).await;
}

#[tokio::test]
async fn a_2026_client_discovers_and_calls() {
    let f = fixture(false);
    let client = connect_2026(f.server, TestClient::default()).await;
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "read_file"));
    let ok = client
        .call_tool(
            CallToolRequestParams::new("read_file")
                .with_arguments(args(json!({"path": "hello.txt"}))),
        )
        .await
        .unwrap();
    assert_eq!(ok.is_error, Some(false));
}

async fn connect_2026(
    server: McpServer,
    client: TestClient,
) -> RunningService<RoleClient, TestClient> {
    use rmcp::model::ProtocolVersion;
    use rmcp::service::{ClientLifecycleMode, serve_client_with_lifecycle};
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    let (read, write) = tokio::io::split(server_io);
    tokio::spawn(async move {
        let _ = tackle_mcp::serve_io(server, read, write).await;
    });
    serve_client_with_lifecycle(
        client,
        client_io,
        ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
    )
    .await
    .unwrap()
}

/// A 2026-07-28 client cannot be sent requests, so an ask comes back as an input-required
/// result holding the approval form; the SDK's client answers it and retries the call.
#[tokio::test]
async fn a_2026_client_is_asked_through_input_required_results() {
    approvals_reach_the_client(true).await;
}

/// The answer a retry carries is good once, for the very call that was asked about.
#[tokio::test]
async fn an_answer_is_used_once_and_only_for_its_call() {
    use rmcp::model::{CallToolResponse, InputResponses};
    let f = fixture(true);
    let client = connect_2026(
        f.server,
        TestClient {
            elicitation_answer: Some((
                ElicitationAction::Accept,
                Some(json!({"decision": "once"})),
            )),
            ..TestClient::default()
        },
    )
    .await;
    let first = client
        .call_tool_once(CallToolRequestParams::new("touch"))
        .await
        .unwrap();
    let CallToolResponse::InputRequired(asked) = first else {
        panic!("expected an input-required result, got {first:?}");
    };
    let requests = asked.input_requests.clone().unwrap();
    assert!(requests.contains_key("approval"), "{requests:?}");
    let state = asked.request_state.clone().unwrap();
    let mut answer = InputResponses::new();
    answer.insert(
        "approval".into(),
        json!({"action": "accept", "content": {"decision": "once"}}),
    );

    // The same answer for another call (other arguments) is refused.
    let other = client
        .call_tool_once(
            CallToolRequestParams::new("touch")
                .with_arguments(args(json!({"unexpected": 1})))
                .with_input_responses(answer.clone())
                .with_request_state(state.clone()),
        )
        .await;
    assert!(other.is_err(), "{other:?}");

    // Refused once, the question is gone: even the right call must be asked again.
    let replay = client
        .call_tool_once(
            CallToolRequestParams::new("touch")
                .with_input_responses(answer.clone())
                .with_request_state(state.clone()),
        )
        .await;
    assert!(replay.is_err(), "{replay:?}");

    // Asked again and answered: it runs, and the same state cannot be used twice.
    let CallToolResponse::InputRequired(asked) = client
        .call_tool_once(CallToolRequestParams::new("touch"))
        .await
        .unwrap()
    else {
        panic!("expected an input-required result");
    };
    let state = asked.request_state.unwrap();
    let done = client
        .call_tool_once(
            CallToolRequestParams::new("touch")
                .with_input_responses(answer.clone())
                .with_request_state(state.clone()),
        )
        .await
        .unwrap();
    let CallToolResponse::Complete(done) = done else {
        panic!("expected the call's result, got {done:?}");
    };
    assert_eq!(done.is_error, Some(false));
    let again = client
        .call_tool_once(
            CallToolRequestParams::new("touch")
                .with_input_responses(answer)
                .with_request_state(state),
        )
        .await;
    assert!(again.is_err(), "{again:?}");
}

/// Without the elicitation capability a 2026-07-28 client gets the headless refusal.
#[tokio::test]
async fn a_2026_client_without_elicitation_gets_approval_unavailable() {
    let f = fixture(true);
    let client = connect_2026(f.server, TestClient::default()).await;
    let r = client
        .call_tool(CallToolRequestParams::new("touch"))
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(true));
    assert_eq!(result_meta(&r)["code"], "approval_unavailable");
}

/// `--approvals client`: a client without elicitation that sends a call has confirmed it, so an
/// ask about a mutating tool runs; a deny, a key asked about every time, and a read-only tool
/// are not covered by that confirmation.
#[tokio::test]
async fn under_client_approvals_the_clients_confirmation_stands_for_an_ask() {
    let table = [
        ("touch", json!({}), None),
        (
            "stat",
            json!({"path": "hello.txt"}),
            Some("permission_denied"),
        ),
        (
            "delete_file",
            json!({"path": "hello.txt"}),
            Some("approval_unavailable"),
        ),
        (
            "grep",
            json!({"pattern": "hello"}),
            Some("approval_unavailable"),
        ),
    ];
    for modern in [false, true] {
        for (tool, arguments, refusal) in &table {
            let f = fixture_with(ServerOptions {
                elicitation: true,
                client_confirms: true,
            });
            let client = if modern {
                connect_2026(f.server, TestClient::default()).await
            } else {
                connect(f.server, TestClient::default()).await
            };
            let r = client
                .call_tool(
                    CallToolRequestParams::new(*tool).with_arguments(args(arguments.clone())),
                )
                .await
                .unwrap();
            let text = text_of(&r);
            match refusal {
                None => assert_eq!((r.is_error, text.as_str()), (Some(false), "touched")),
                Some(code) => {
                    assert_eq!(r.is_error, Some(true), "{tool}: {text}");
                    assert_eq!(result_meta(&r)["code"], *code, "{tool}: {text}");
                }
            }
            assert!(
                f._dir.path().join("hello.txt").exists(),
                "{tool} removed the file"
            );
        }
    }
}

/// The text of a call's first content block (the model-facing text; metadata follows it).
/// The result's metadata object (`_meta` under [`tackle_mcp::RESULT_META_KEY`]).
fn result_meta(result: &rmcp::model::CallToolResult) -> Value {
    assert!(
        result.structured_content.is_none(),
        "no built-in tool declares an outputSchema, so no result carries structuredContent"
    );
    result
        .meta
        .as_ref()
        .and_then(|m| m.get(tackle_mcp::RESULT_META_KEY))
        .cloned()
        .expect("the result carries its metadata in _meta")
}

fn text_of(result: &rmcp::model::CallToolResult) -> String {
    result
        .content
        .first()
        .and_then(|c| c.as_text().map(|t| t.text.clone()))
        .unwrap_or_default()
}

/// Issue 13 §9: two clients of one server are apart. A digested call's id is unguessable, and
/// another client holding it still cannot `retrieve_raw` it: each client's calls run in a
/// session of its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_of_one_server_cannot_read_each_others_calls() {
    let f = fixture(false);
    for i in 0..400 {
        std::fs::write(
            f._dir.path().join(format!("listed-file-number-{i:04}.txt")),
            "",
        )
        .unwrap();
    }
    let a = connect(f.server.for_new_client(), TestClient::default()).await;
    let b = connect(f.server.for_new_client(), TestClient::default()).await;
    let listing = a
        .call_tool(
            CallToolRequestParams::new("list_dir").with_arguments(args(json!({"path": "."}))),
        )
        .await
        .unwrap();
    let text = text_of(&listing);
    let id = text
        .split("\"call_id\": \"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_else(|| panic!("no retrieve_raw hint in the digest: {text}"))
        .to_owned();
    assert!(
        !text.contains("listed-file-number-0123.txt"),
        "a digest, not the listing: {text}"
    );
    let hex = id
        .strip_prefix("mcp-")
        .unwrap_or_else(|| panic!("call id {id}"));
    assert_eq!(hex.len(), 32, "an unguessable call id: {id}");
    let retrieve = |id: &str| {
        CallToolRequestParams::new("retrieve_raw").with_arguments(args(json!({"call_id": id})))
    };
    let own = a.call_tool(retrieve(&id)).await.unwrap();
    assert_ne!(own.is_error, Some(true), "{}", text_of(&own));
    assert!(
        text_of(&own).contains("listed-file-number-0123.txt"),
        "{}",
        text_of(&own)
    );
    let other = b.call_tool(retrieve(&id)).await.unwrap();
    assert_eq!(other.is_error, Some(true), "{}", text_of(&other));
    assert!(
        text_of(&other).contains("unknown_call") || text_of(&other).contains("no call"),
        "{}",
        text_of(&other)
    );
    assert!(
        !text_of(&other).contains("listed-file-number"),
        "{}",
        text_of(&other)
    );
    a.cancel().await.unwrap();
    b.cancel().await.unwrap();
}

/// Waits for the progress message of an interactive bash call that names its call id.
async fn stdin_call_id(progress: &mut mpsc::UnboundedReceiver<String>) -> String {
    loop {
        let message = progress.recv().await.unwrap();
        if let Some(rest) = message.strip_prefix("stdin open: call_id=") {
            return rest.split(';').next().unwrap().to_owned();
        }
    }
}

fn interactive_bash(command: &str) -> ClientRequest {
    ClientRequest::CallToolRequest(Request::new(
        CallToolRequestParams::new("bash")
            .with_arguments(args(json!({"command": command, "interactive": true}))),
    ))
}

fn bash_stdin(arguments: Value) -> CallToolRequestParams {
    CallToolRequestParams::new("bash_stdin").with_arguments(args(arguments))
}

fn tool_result(result: ServerResult) -> rmcp::model::CallToolResult {
    match result {
        ServerResult::CallToolResult(r) => r,
        other => panic!("not a tool result: {other:?}"),
    }
}

/// Issue 14: an MCP client learns the id of its running interactive bash call from the call's
/// progress, feeds it a line with `bash_stdin`, and gets the command's answer in the result;
/// another client cannot feed it, and each state after that is refused by name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bash_stdin_feeds_a_running_interactive_call() {
    let f = fixture(false);
    let (tx, mut progress) = mpsc::unbounded_channel();
    let a = connect(
        f.server.for_new_client(),
        TestClient {
            progress_tx: Some(tx),
            ..TestClient::default()
        },
    )
    .await;
    let b = connect(f.server.for_new_client(), TestClient::default()).await;
    let listed = a.list_all_tools().await.unwrap();
    assert!(listed.iter().any(|t| t.name == "bash_stdin"));

    let running = a
        .peer()
        .send_cancellable_request(
            interactive_bash("read line; echo got:$line"),
            PeerRequestOptions::no_options(),
        )
        .await
        .unwrap();
    let id = stdin_call_id(&mut progress).await;
    assert!(id.starts_with("mcp-"), "{id}");

    // Another client (another session) holding the id cannot reach the call.
    let other = b
        .call_tool(bash_stdin(json!({"call_id": id, "data": "intruder\n"})))
        .await
        .unwrap();
    assert_eq!(other.is_error, Some(true));
    assert!(
        text_of(&other).contains("unknown_call"),
        "{}",
        text_of(&other)
    );

    // Gemini CLI's `wait_for_previous` does not hold input back behind the call it feeds.
    let fed = a
        .call_tool(bash_stdin(
            json!({"call_id": id, "data": "hello\n", "wait_for_previous": true}),
        ))
        .await
        .unwrap();
    assert_ne!(fed.is_error, Some(true), "{}", text_of(&fed));
    let done = tool_result(running.await_response().await.unwrap());
    assert_ne!(done.is_error, Some(true), "{}", text_of(&done));
    let text = text_of(&done);
    assert!(text.contains("got:hello"), "{text}");
    assert!(!text.contains("intruder"), "{text}");

    // A call that is still running after its stdin was closed: it waits on a fifo the test
    // opens once the refusals are checked.
    let fifo = f._dir.path().join("release.fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let held = a
        .peer()
        .send_cancellable_request(
            interactive_bash("cat; echo eof-seen; read x < release.fifo; echo released:$x"),
            PeerRequestOptions::no_options(),
        )
        .await
        .unwrap();
    let held_id = stdin_call_id(&mut progress).await;
    let eof = a
        .call_tool(bash_stdin(json!({"call_id": held_id, "eof": true})))
        .await
        .unwrap();
    assert_ne!(eof.is_error, Some(true), "{}", text_of(&eof));

    // (arguments, the state the refusal names), while the second call is held.
    let refusals: &[(Value, &str)] = &[
        (
            json!({"call_id": held_id, "data": "late\n"}),
            "stdin_closed",
        ),
        (json!({"call_id": held_id, "eof": true}), "stdin_closed"),
        (json!({"call_id": id, "data": "again\n"}), "call_finished"),
        (json!({"call_id": "mcp-0000", "data": "x"}), "unknown_call"),
        (json!({"call_id": held_id}), "invalid_arguments"),
        (json!({"data": "x"}), "invalid_arguments"),
    ];
    for (arguments, state) in refusals {
        let refused = a.call_tool(bash_stdin(arguments.clone())).await.unwrap();
        assert_eq!(refused.is_error, Some(true), "{arguments}");
        assert!(
            text_of(&refused).contains(state),
            "{arguments}: {}",
            text_of(&refused)
        );
    }
    tokio::task::spawn_blocking(move || std::fs::write(fifo, "go\n"))
        .await
        .unwrap()
        .unwrap();
    let released = tool_result(held.await_response().await.unwrap());
    let text = text_of(&released);
    assert!(
        text.contains("eof-seen") && text.contains("released:go"),
        "{text}"
    );
    a.cancel().await.unwrap();
    b.cancel().await.unwrap();
}
