//! The Cohere v2 Chat adapter against a loopback server replaying recorded streams.

#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns: a failure should panic loudly
mod support;

use support::{Family, MockServer, Scripted, fixture, key_env, test_transport};
use tackle_llm::cohere::{Cohere, CohereConfig, request_body};
use tackle_llm::{ErrorKind, LlmError, ToolChoice, ToolNameMap, TurnRequest, complete};
use tackle_protocol::{AssistantTurn, Message};
use tokio_util::sync::CancellationToken;

fn config(server: &MockServer) -> CohereConfig {
    CohereConfig {
        base_url: server.url(),
        key: Some(key_env()),
        ..CohereConfig::official()
    }
}

fn provider(server: &MockServer) -> Cohere {
    Cohere::new(config(server), test_transport()).expect("provider")
}

fn simple_request() -> TurnRequest {
    TurnRequest::new("command-a-03-2025", vec![Message::user_text("hi")], 256)
}

const FAMILY: Family<Cohere> = Family {
    dir: "cohere",
    provider,
    request: simple_request,
    provider_name: "cohere",
    request_id_header: "x-request-id",
};

async fn run(script: Vec<Scripted>) -> (Result<AssistantTurn, LlmError>, usize) {
    FAMILY.run(script).await
}

#[tokio::test]
async fn recorded_streams_assemble_into_the_expected_turns_however_they_are_split() {
    FAMILY
        .assert_recorded_streams(&["text_and_tools", "thinking", "invalid_tool_json"])
        .await;
}

#[tokio::test]
async fn broken_streams_fail_with_their_class() {
    FAMILY
        .assert_broken_streams(&[
            ("error_after_200", ErrorKind::Server),
            ("timeout", ErrorKind::Timeout),
            ("error_object", ErrorKind::Server),
            ("orphan_delta", ErrorKind::InvalidResponse),
            ("no_message_end", ErrorKind::StreamCut),
            ("cut_mid_event", ErrorKind::StreamCut),
            ("cut_mid_utf8", ErrorKind::StreamCut),
        ])
        .await;
}

#[tokio::test]
async fn an_error_after_200_carries_the_providers_message() {
    let (got, _) = run(vec![Scripted::stream(fixture(
        "cohere/error_after_200.sse",
    ))])
    .await;
    let e = got.expect_err("error after 200");
    assert!(e.message.contains("internal error while generating"), "{e}");
}

#[tokio::test]
async fn malformed_and_oversized_events_are_refused() {
    let huge = format!(
        "data: {{\"type\":\"content-delta\",\"delta\":{{\"message\":{{\"content\":{{\"text\":\"{}\"}}}}}}}}\n\n",
        "x".repeat(100 << 10)
    );
    for body in [huge, "data: {not json\n\n".to_owned()] {
        let (got, _) = run(vec![Scripted::stream(body)]).await;
        assert_eq!(got.expect_err("refused").kind, ErrorKind::InvalidResponse);
    }
}

#[tokio::test]
async fn retries_follow_the_status_and_body() {
    let ok = || Scripted::stream(fixture("cohere/text_and_tools.sse"));
    let trial_minute = || {
        Scripted::error(
            429,
            r#"{"message":"You are using a Trial key, which is limited to 10 API calls / minute. Upgrade to a Production key to increase your rate limit."}"#,
        )
        .header("retry-after", "0")
    };
    let trial_month = Scripted::error(
        429,
        r#"{"message":"You are using a Trial key, which is limited to 1000 API calls / month. Upgrade to a Production key."}"#,
    );
    // (name, script, Ok or the error kind, requests the server saw)
    type Row = (&'static str, Vec<Scripted>, Result<(), ErrorKind>, usize);
    let cases: Vec<Row> = vec![
        (
            "per-minute limit then success",
            vec![trial_minute(), ok()],
            Ok(()),
            2,
        ),
        (
            "503 then success",
            vec![Scripted::error(503, r#"{"message":"unavailable"}"#), ok()],
            Ok(()),
            2,
        ),
        (
            "a trial key's monthly allowance is not retried",
            vec![trial_month, ok()],
            Err(ErrorKind::QuotaExhausted),
            1,
        ),
        (
            "498 invalid token is final",
            vec![Scripted::error(498, r#"{"message":"invalid token"}"#), ok()],
            Err(ErrorKind::Auth),
            1,
        ),
        (
            "499 cancelled is final",
            vec![
                Scripted::error(499, r#"{"message":"request cancelled"}"#),
                ok(),
            ],
            Err(ErrorKind::Cancelled),
            1,
        ),
        (
            "too many tokens",
            vec![Scripted::error(
                400,
                r#"{"message":"too many tokens: size limit exceeded by 11326 tokens."}"#,
            )],
            Err(ErrorKind::ContextTooLong),
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
async fn golden_request_body_and_what_is_sent() {
    let mut request = support::round_trip_request("command-a-03-2025");
    request.thinking_budget = Some(2048);
    request.tool_choice = ToolChoice::Required;
    let names = ToolNameMap::new(request.tools.iter().map(|t| t.name.as_str()));
    let body = request_body(&request, &names);
    support::assert_golden("cohere/golden_round_trip.json", &body);

    let server =
        MockServer::start(vec![Scripted::stream(fixture("cohere/text_and_tools.sse"))]).await;
    complete(&provider(&server), &request, &CancellationToken::new())
        .await
        .expect("turn");
    let sent = &server.requests()[0];
    assert_eq!(
        (sent.method.as_str(), sent.path.as_str()),
        ("POST", "/v2/chat")
    );
    assert_eq!(sent.json(), body);
    assert_eq!(
        sent.header("authorization"),
        Some(format!("Bearer {}", support::KEY_VALUE).as_str())
    );
}

#[tokio::test]
async fn a_named_tool_choice_offers_only_that_tool_and_requires_a_call() {
    let mut request = support::round_trip_request("command-a-03-2025");
    request.tool_choice = ToolChoice::Tool("mcp.fs.list".into());
    let names = ToolNameMap::new(request.tools.iter().map(|t| t.name.as_str()));
    let body = request_body(&request, &names);
    assert_eq!(body["tool_choice"], "REQUIRED");
    let offered = body["tools"].as_array().unwrap();
    assert_eq!(offered.len(), 1);
    assert_eq!(offered[0]["function"]["name"], names.wire("mcp.fs.list"));
    request.tool_choice = ToolChoice::Auto;
    assert!(request_body(&request, &names).get("tool_choice").is_none());
}

#[tokio::test]
async fn the_key_never_appears_in_errors_or_debug_output() {
    let echo = format!(
        r#"{{"message":"invalid api token: {}"}}"#,
        support::KEY_VALUE
    );
    FAMILY
        .assert_key_never_leaks(401, &echo, ErrorKind::Auth)
        .await;
}
