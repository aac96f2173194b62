//! The Gemini API and Vertex AI adapters against a loopback server replaying recorded streams.

#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns: a failure should panic loudly
mod support;

use support::{Family, KEY_VALUE, MockServer, Scripted, fixture, key_env, test_transport};
use tackle_llm::gemini::{Gemini, GeminiConfig, TokenSource, Vertex, VertexConfig, request_body};
use tackle_llm::{ErrorKind, LlmError, Provider, ToolNameMap, TurnRequest, complete};
use tackle_protocol::{AssistantTurn, Message, Part};
use tokio_util::sync::CancellationToken;

fn provider(server: &MockServer) -> Gemini {
    let config = GeminiConfig {
        base_url: server.url(),
        key: Some(key_env()),
        ..GeminiConfig::official()
    };
    Gemini::new(config, test_transport()).expect("provider")
}

fn simple_request() -> TurnRequest {
    let mut request = TurnRequest::new("gemini-2.5-flash", vec![Message::user_text("hi")], 256);
    request.tools = support::round_trip_request("m").tools;
    request
}

const FAMILY: Family<Gemini> = Family {
    dir: "gemini",
    provider,
    request: simple_request,
    provider_name: "gemini",
    request_id_header: "x-request-id",
};

async fn run(script: Vec<Scripted>) -> (Result<AssistantTurn, LlmError>, usize) {
    FAMILY.run(script).await
}

#[tokio::test]
async fn recorded_streams_assemble_into_the_expected_turns_however_they_are_split() {
    FAMILY
        .assert_recorded_streams(&[
            "text_and_tools",
            "thinking_crlf",
            "late_usage",
            "safety",
            "unknown_reason",
        ])
        .await;
}

#[tokio::test]
async fn broken_streams_fail_with_their_class() {
    FAMILY
        .assert_broken_streams(&[
            ("no_finish", ErrorKind::StreamCut),
            ("cut_mid_event", ErrorKind::StreamCut),
            ("cut_mid_utf8", ErrorKind::StreamCut),
            ("unframed_error_after_200", ErrorKind::Overloaded),
            ("framed_error", ErrorKind::RateLimit),
            ("blocked_prompt", ErrorKind::InvalidRequest),
            ("malformed_call", ErrorKind::InvalidResponse),
            ("not_json", ErrorKind::InvalidResponse),
        ])
        .await;
}

#[tokio::test]
async fn failures_name_what_the_provider_said() {
    let cases = [
        ("blocked_prompt", "PROHIBITED_CONTENT"),
        ("malformed_call", "MALFORMED_FUNCTION_CALL"),
        ("unframed_error_after_200", "overloaded"),
    ];
    for (name, said) in cases {
        let (got, _) = run(vec![Scripted::stream(fixture(&format!(
            "gemini/{name}.sse"
        )))])
        .await;
        let e = got.expect_err(name);
        assert!(e.message.contains(said), "{name}: {e}");
    }
}

#[tokio::test]
async fn a_bare_json_error_with_http_200_is_classified() {
    let body =
        r#"[{"error":{"code":429,"message":"Quota exceeded","status":"RESOURCE_EXHAUSTED"}}]"#;
    for content_type in ["application/json", "text/event-stream"] {
        let mut ok_json = Scripted::error(200, body).header("x-request-id", "req_bare");
        ok_json.headers[0].1 = content_type.into();
        let (got, requests) = run(vec![ok_json]).await;
        let e = got.expect_err(content_type);
        assert_eq!(e.kind, ErrorKind::RateLimit, "{content_type}: {e}");
        assert_eq!(e.request_id.as_deref(), Some("req_bare"));
        assert_eq!(requests, 1);
    }
}

#[tokio::test]
async fn retries_follow_the_status_and_body() {
    let ok = || Scripted::stream(fixture("gemini/text_and_tools.sse"));
    let google = |code: u16, status: &str| {
        Scripted::error(
            code,
            &format!(r#"{{"error":{{"code":{code},"message":"m","status":"{status}"}}}}"#),
        )
    };
    let daily = Scripted::error(
        429,
        r#"{"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaId":"GenerateRequestsPerDayPerProjectPerModel"}]}]}}"#,
    );
    type Row = (&'static str, Vec<Scripted>, Result<(), ErrorKind>, usize);
    let cases: Vec<Row> = vec![
        (
            "429 with retry-after then success",
            vec![
                google(429, "RESOURCE_EXHAUSTED").header("retry-after", "0"),
                ok(),
            ],
            Ok(()),
            2,
        ),
        (
            "503 then success",
            vec![google(503, "UNAVAILABLE").header("retry-after", "0"), ok()],
            Ok(()),
            2,
        ),
        (
            "daily quota is not retried",
            vec![daily, ok()],
            Err(ErrorKind::QuotaExhausted),
            1,
        ),
        (
            "invalid argument is final",
            vec![google(400, "INVALID_ARGUMENT"), ok()],
            Err(ErrorKind::InvalidRequest),
            1,
        ),
        (
            "not found",
            vec![google(404, "NOT_FOUND")],
            Err(ErrorKind::NotFound),
            1,
        ),
        (
            "permission denied",
            vec![google(403, "PERMISSION_DENIED")],
            Err(ErrorKind::Permission),
            1,
        ),
    ];
    for (name, script, want, requests) in cases {
        let (got, made) = run(script).await;
        match (&got, want) {
            (Ok(turn), Ok(())) => assert_eq!(turn.message.tool_calls().count(), 2, "{name}"),
            (Err(e), Err(kind)) => assert_eq!(e.kind, kind, "{name}: {e}"),
            _ => panic!("{name}: got {got:?}"),
        }
        assert_eq!(made, requests, "{name}");
    }
}

#[tokio::test]
async fn the_golden_request_body_is_what_the_server_receives() {
    let server =
        MockServer::start(vec![Scripted::stream(fixture("gemini/text_and_tools.sse"))]).await;
    let mut request = support::round_trip_request("gemini-3-pro-preview");
    request.thinking_budget = Some(2048);
    // The assistant turn as Gemini returned it: a signed call with an id, one without.
    let assistant = &mut request.messages[1].content;
    assistant.insert(
        3,
        Part::ThoughtSignature {
            signature: "sig-gemini-1".into(),
        },
    );
    let names = ToolNameMap::new(request.tools.iter().map(|t| t.name.as_str()));
    let body = request_body(&request, &names).expect("body");
    support::assert_golden("gemini/golden_round_trip.json", &body);
    complete(&provider(&server), &request, &CancellationToken::new())
        .await
        .expect("turn");
    let sent = &server.requests()[0];
    assert_eq!(sent.method, "POST");
    assert_eq!(
        sent.path,
        "/v1beta/models/gemini-3-pro-preview:streamGenerateContent?alt=sse"
    );
    assert_eq!(sent.json(), body);
    assert_eq!(sent.header("x-goog-api-key"), Some(KEY_VALUE));
    assert!(!sent.path.contains(KEY_VALUE));
}

#[tokio::test]
async fn a_turn_replays_its_own_signatures_and_pairs_results_by_name() {
    let server = MockServer::start(vec![
        Scripted::stream(fixture("gemini/text_and_tools.sse")),
        Scripted::stream(fixture("gemini/thinking_crlf.sse")),
    ])
    .await;
    let p = provider(&server);
    let mut request = simple_request();
    let turn = complete(&p, &request, &CancellationToken::new())
        .await
        .unwrap();
    let results: Vec<Part> = turn
        .message
        .tool_calls()
        .map(|call| {
            Part::ToolResult(tackle_protocol::ToolResultPart {
                call_id: call.id.clone(),
                content: vec![tackle_protocol::ContentBlock::Text { text: "ok".into() }],
                is_error: false,
                media: Vec::new(),
            })
        })
        .collect();
    request.messages.push(turn.message);
    request.messages.push(Message {
        role: tackle_protocol::Role::User,
        content: results,
    });
    complete(&p, &request, &CancellationToken::new())
        .await
        .unwrap();
    let second = server.requests()[1].json();
    let model = &second["contents"][1];
    assert_eq!(model["role"], "model");
    assert_eq!(
        model["parts"][1],
        serde_json::json!({"functionCall": {"name": "read_file", "args": {"path": "a.txt"}}, "thoughtSignature": "CsoBAb4sig1"})
    );
    assert_eq!(
        second["contents"][2]["parts"],
        serde_json::json!([
            {"functionResponse": {"name": "read_file", "response": {"output": "ok"}}},
            {"functionResponse": {"name": "mcp_fs_list", "response": {"output": "ok"}}},
        ])
    );
}

#[tokio::test]
async fn the_key_never_appears_in_errors_or_debug_output() {
    let echo = format!(
        r#"{{"error":{{"code":400,"message":"API key not valid: {KEY_VALUE}","status":"INVALID_ARGUMENT"}}}}"#
    );
    FAMILY
        .assert_key_never_leaks(400, &echo, ErrorKind::InvalidRequest)
        .await;
}

fn vertex(server: &MockServer, token: TokenSource, location: &str) -> Vertex {
    let config = VertexConfig {
        name: "vertex".into(),
        project: "my-proj".into(),
        location: location.into(),
        base_url: Some(server.url()),
        token,
    };
    Vertex::new(config, test_transport()).expect("vertex")
}

#[tokio::test]
async fn vertex_sends_to_the_project_and_location_with_a_bearer_token() {
    key_env();
    let server =
        MockServer::start(vec![Scripted::stream(fixture("gemini/text_and_tools.sse"))]).await;
    let p = vertex(
        &server,
        TokenSource::Env(support::KEY_ENV.into()),
        "us-central1",
    );
    let turn = complete(&p, &simple_request(), &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(turn.message.tool_calls().count(), 2);
    let sent = &server.requests()[0];
    assert_eq!(
        sent.path,
        "/v1/projects/my-proj/locations/us-central1/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    );
    assert_eq!(
        sent.header("authorization"),
        Some(format!("Bearer {KEY_VALUE}").as_str())
    );
    assert!(!format!("{p:?}").contains(KEY_VALUE));
    assert_eq!(
        VertexConfig::default_base_url("global"),
        "https://aiplatform.googleapis.com"
    );
    assert_eq!(
        VertexConfig::default_base_url("europe-west4"),
        "https://europe-west4-aiplatform.googleapis.com"
    );
}

/// A script that prints a new token each run, counting its runs in a file beside it.
fn token_script(dir: &std::path::Path) -> Vec<String> {
    let script = dir.join("token.sh");
    let count = dir.join("runs");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nn=$(cat '{0}' 2>/dev/null || echo 0)\nn=$((n+1))\necho $n > '{0}'\necho \"  ya29.token-$n  \"\necho 'not shown' >&2\n",
            count.display()
        ),
    )
    .unwrap();
    vec!["/bin/sh".into(), script.display().to_string()]
}

#[tokio::test]
async fn vertex_runs_the_token_command_and_again_after_a_401() {
    let dir = tempfile::tempdir().unwrap();
    let unauthenticated = Scripted::error(
        401,
        r#"{"error":{"code":401,"message":"Request had invalid authentication credentials.","status":"UNAUTHENTICATED"}}"#,
    );
    let server = MockServer::start(vec![
        unauthenticated,
        Scripted::stream(fixture("gemini/text_and_tools.sse")),
        Scripted::stream(fixture("gemini/thinking_crlf.sse")),
    ])
    .await;
    let p = vertex(
        &server,
        TokenSource::Command(token_script(dir.path())),
        "global",
    );
    for _ in 0..2 {
        complete(&p, &simple_request(), &CancellationToken::new())
            .await
            .unwrap();
    }
    let tokens: Vec<String> = server
        .requests()
        .iter()
        .map(|r| r.header("authorization").unwrap().to_owned())
        .collect();
    assert_eq!(
        tokens,
        [
            "Bearer ya29.token-1",
            "Bearer ya29.token-2",
            "Bearer ya29.token-2"
        ]
    );
}

#[tokio::test]
async fn a_failing_token_command_is_a_configuration_error_without_its_output() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("fail.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\necho secret-output\necho secret-err >&2\nexit 3\n",
    )
    .unwrap();
    let server = MockServer::start(vec![]).await;
    let cases = [
        vec!["/bin/sh".to_owned(), script.display().to_string()],
        vec![dir.path().join("missing").display().to_string()],
    ];
    for argv in cases {
        let p = vertex(&server, TokenSource::Command(argv.clone()), "global");
        let e = p.stream(&simple_request()).await.err().expect("fails");
        assert_eq!(e.kind, ErrorKind::Configuration, "{e}");
        assert!(e.message.contains(&argv[0]), "{e}");
        assert!(!e.to_string().contains("secret"), "{e}");
    }
    assert!(server.requests().is_empty());
}
