//! The Anthropic Messages adapter against a loopback server replaying recorded streams.

#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns: a failure should panic loudly
mod support;

use support::{Family, MockServer, Scripted, fixture, key_env, test_transport};
use tackle_llm::anthropic::{Anthropic, AnthropicConfig, request_body};
use tackle_llm::{ErrorKind, LlmError, ToolNameMap, TurnRequest, complete};
use tackle_protocol::{AssistantTurn, Message};
use tokio_util::sync::CancellationToken;

fn provider(server: &MockServer) -> Anthropic {
    let config = AnthropicConfig {
        name: "anthropic".into(),
        base_url: server.url(),
        key: Some(key_env()),
        ..AnthropicConfig::official()
    };
    Anthropic::new(config, test_transport()).expect("provider")
}

fn simple_request() -> TurnRequest {
    TurnRequest::new("claude-x", vec![Message::user_text("hi")], 256)
}

const FAMILY: Family<Anthropic> = Family {
    dir: "anthropic",
    provider,
    request: simple_request,
    provider_name: "anthropic",
    request_id_header: "request-id",
};

async fn run(script: Vec<Scripted>) -> (Result<AssistantTurn, LlmError>, usize) {
    FAMILY.run(script).await
}

#[tokio::test]
async fn recorded_streams_assemble_into_the_expected_turns_however_they_are_split() {
    FAMILY
        .assert_recorded_streams(&[
            "text_and_tools",
            "thinking",
            "unknown_types_crlf",
            "invalid_tool_json",
        ])
        .await;
}

#[tokio::test]
async fn broken_streams_fail_with_their_class() {
    FAMILY
        .assert_broken_streams(&[
            ("error_after_200", ErrorKind::Overloaded),
            ("no_message_stop", ErrorKind::StreamCut),
            ("cut_mid_event", ErrorKind::StreamCut),
            ("cut_mid_utf8", ErrorKind::StreamCut),
        ])
        .await;
}

#[tokio::test]
async fn an_oversized_event_is_refused() {
    let huge = format!(
        "event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"text_delta\",\"text\":\"{}\"}}}}\n\n",
        "x".repeat(100 << 10)
    );
    let (got, _) = run(vec![Scripted::stream(huge)]).await;
    let e = got.expect_err("oversized");
    assert_eq!(e.kind, ErrorKind::InvalidResponse, "{e}");
    assert!(e.message.contains("exceeds"), "{e}");
}

#[tokio::test]
async fn retries_follow_the_status_headers_and_body() {
    let ok = || Scripted::stream(fixture("anthropic/text_and_tools.sse"));
    let overloaded = || {
        Scripted::error(
            529,
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        )
    };
    let rate_limited = || {
        Scripted::error(
            429,
            r#"{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}"#,
        )
        .header("retry-after", "0")
    };
    let spend_limit = Scripted::error(
        429,
        r#"{"type":"error","error":{"type":"rate_limit_error","message":"spend limit"},"details":{"error_code":"enforced_spend_limit_reached"}}"#,
    )
    .header("x-should-retry", "true")
    .header("request-id", "req_spend");
    let said_no = Scripted::error(
        529,
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
    )
    .header("x-should-retry", "false");
    let bad_request = Scripted::error(
        400,
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"messages: bad"}}"#,
    );
    let too_long = Scripted::error(
        400,
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 300000 tokens > 200000 maximum"}}"#,
    );
    // (name, script, Ok or the error kind, requests the server saw)
    type Row = (&'static str, Vec<Scripted>, Result<(), ErrorKind>, usize);
    let cases: Vec<Row> = vec![
        ("529 then success", vec![overloaded(), ok()], Ok(()), 2),
        (
            "429 with retry-after then success",
            vec![rate_limited(), rate_limited(), ok()],
            Ok(()),
            3,
        ),
        (
            "retry-after-ms",
            vec![rate_limited().header("retry-after-ms", "1"), ok()],
            Ok(()),
            2,
        ),
        (
            "500 then success",
            vec![Scripted::error(500, "oops"), ok()],
            Ok(()),
            2,
        ),
        (
            "spend limit is not retried",
            vec![spend_limit, ok()],
            Err(ErrorKind::QuotaExhausted),
            1,
        ),
        (
            "x-should-retry false",
            vec![said_no, ok()],
            Err(ErrorKind::Overloaded),
            1,
        ),
        (
            "400 is final",
            vec![bad_request, ok()],
            Err(ErrorKind::InvalidRequest),
            1,
        ),
        (
            "context too long",
            vec![too_long],
            Err(ErrorKind::ContextTooLong),
            1,
        ),
        (
            "attempts run out",
            vec![overloaded(), overloaded(), overloaded(), overloaded(), ok()],
            Err(ErrorKind::Overloaded),
            4,
        ),
    ];
    for (name, script, want, requests) in cases {
        let (got, made) = run(script).await;
        match (&got, want) {
            (Ok(turn), Ok(())) => assert_eq!(turn.message.tool_calls().count(), 2, "{name}"),
            (Err(e), Err(kind)) => {
                assert_eq!(e.kind, kind, "{name}: {e}");
                assert_eq!(e.attempts as usize, requests, "{name}");
            }
            _ => panic!("{name}: got {got:?}"),
        }
        assert_eq!(made, requests, "{name}");
    }
}

#[tokio::test]
async fn spend_limit_error_names_its_request() {
    let (got, _) = run(vec![
        Scripted::error(429, r#"{"type":"error","error":{"type":"rate_limit_error","message":"limit"},"details":{"error_code":"enforced_spend_limit_reached"}}"#)
            .header("request-id", "req_spend"),
    ])
    .await;
    let e = got.expect_err("spend limit");
    assert_eq!(e.status, Some(429));
    assert!(e.to_string().contains("[request id req_spend]"), "{e}");
}

#[tokio::test]
async fn a_stalled_stream_hits_the_idle_timeout() {
    let start = fixture("anthropic/text_and_tools.sse");
    let first_event = &start[..start.windows(2).position(|w| w == b"\n\n").unwrap() + 2];
    let (got, _) = run(vec![Scripted::stream(first_event.to_vec()).hold()]).await;
    let e = got.expect_err("stall");
    assert_eq!(e.kind, ErrorKind::Timeout, "{e}");
}

#[tokio::test]
async fn cancellation_drops_the_stream_at_once() {
    let server = MockServer::start(vec![Scripted::stream(b": waiting\n\n".to_vec()).hold()]).await;
    let limits = tackle_llm::TransportLimits {
        idle_timeout: std::time::Duration::from_secs(3600),
        ..Default::default()
    };
    let config = AnthropicConfig {
        base_url: server.url(),
        key: Some(key_env()),
        ..AnthropicConfig::official()
    };
    let provider = Anthropic::new(config, tackle_llm::Transport::new(limits).unwrap()).unwrap();
    let cancel = CancellationToken::new();
    let request = simple_request();
    let turn = complete(&provider, &request, &cancel);
    tokio::pin!(turn);
    // Poll until the request has reached the server, then cancel.
    loop {
        tokio::select! {
            result = &mut turn => panic!("finished before cancel: {result:?}"),
            () = tokio::task::yield_now() => {}
        }
        if !server.requests().is_empty() {
            break;
        }
    }
    cancel.cancel();
    let e = turn.await.expect_err("cancelled");
    assert_eq!(e.kind, ErrorKind::Cancelled);
}

#[tokio::test]
async fn the_golden_request_body_is_what_the_server_receives() {
    let server = MockServer::start(vec![Scripted::stream(fixture("anthropic/thinking.sse"))]).await;
    let mut request = support::round_trip_request("claude-sonnet-4-5");
    request.thinking_budget = Some(2048);
    let names = ToolNameMap::new(request.tools.iter().map(|t| t.name.as_str()));
    let body = request_body(&request, &names);
    support::assert_golden("anthropic/golden_round_trip.json", &body);
    complete(&provider(&server), &request, &CancellationToken::new())
        .await
        .expect("turn");
    let sent = &server.requests()[0];
    assert_eq!(sent.method, "POST");
    assert_eq!(sent.path, "/v1/messages");
    assert_eq!(sent.json(), body);
    assert_eq!(sent.header("x-api-key"), Some(support::KEY_VALUE));
    assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
}

#[tokio::test]
async fn the_key_never_appears_in_errors_or_debug_output() {
    let echo = format!(
        r#"{{"type":"error","error":{{"type":"authentication_error","message":"invalid x-api-key {}"}}}}"#,
        support::KEY_VALUE
    );
    FAMILY
        .assert_key_never_leaks(401, &echo, ErrorKind::Auth)
        .await;
}

#[tokio::test]
async fn a_missing_key_variable_is_named_before_any_request() {
    let config = AnthropicConfig {
        key: Some(tackle_llm::KeySource::env("TACKLE_LLM_TEST_UNSET_KEY")),
        ..AnthropicConfig::official()
    };
    let e = Anthropic::new(config, test_transport()).expect_err("unset");
    assert_eq!(e.kind, ErrorKind::Configuration);
    assert!(e.message.contains("TACKLE_LLM_TEST_UNSET_KEY"), "{e}");
}
