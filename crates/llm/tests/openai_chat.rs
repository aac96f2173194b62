//! The OpenAI Chat Completions adapter against a loopback server replaying recorded streams.

#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns: a failure should panic loudly
mod support;

use support::{Family, MockServer, Scripted, fixture, key_env, test_transport};
use tackle_llm::openai_chat::{OpenAiChat, OpenAiChatConfig, request_body};
use tackle_llm::{ErrorKind, LlmError, ToolNameMap, TurnRequest, complete};
use tackle_protocol::{AssistantTurn, Message};
use tokio_util::sync::CancellationToken;

fn config(server: &MockServer) -> OpenAiChatConfig {
    OpenAiChatConfig {
        base_url: format!("{}/v1", server.url()),
        key: Some(key_env()),
        ..OpenAiChatConfig::official()
    }
}

fn provider(server: &MockServer) -> OpenAiChat {
    OpenAiChat::new(config(server), test_transport()).expect("provider")
}

fn simple_request() -> TurnRequest {
    TurnRequest::new("gpt-4.1", vec![Message::user_text("hi")], 256)
}

const FAMILY: Family<OpenAiChat> = Family {
    dir: "openai_chat",
    provider,
    request: simple_request,
    provider_name: "openai",
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
            "reasoning_keepalive",
            "azure_filter_first",
            "lenient_indices",
            "invalid_tool_json",
        ])
        .await;
}

#[tokio::test]
async fn broken_streams_fail_with_their_class() {
    FAMILY
        .assert_broken_streams(&[
            ("error_after_200", ErrorKind::Server),
            ("no_done", ErrorKind::StreamCut),
            ("cut_mid_event", ErrorKind::StreamCut),
            ("cut_mid_utf8", ErrorKind::StreamCut),
        ])
        .await;
}

#[tokio::test]
async fn malformed_and_oversized_chunks_are_refused() {
    let huge = format!(
        "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{}\"}}}}]}}\n\n",
        "x".repeat(100 << 10)
    );
    let cases = [
        (huge, ErrorKind::InvalidResponse),
        ("data: {not json\n\n".to_owned(), ErrorKind::InvalidResponse),
    ];
    for (body, kind) in cases {
        let (got, _) = run(vec![Scripted::stream(body)]).await;
        assert_eq!(got.expect_err("refused").kind, kind);
    }
    let (got, _) = run(vec![Scripted::error(200, r#"{"id":"x","choices":[]}"#)]).await;
    let e = got.expect_err("json instead of a stream");
    assert_eq!(e.kind, ErrorKind::InvalidResponse);
    assert!(e.message.contains("not an event stream"), "{e}");
}

#[tokio::test]
async fn retries_follow_the_status_headers_and_body() {
    let ok = || Scripted::stream(fixture("openai_chat/text_and_tools.sse"));
    let rate_limited = || {
        Scripted::error(429, r#"{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}"#)
            .header("retry-after-ms", "1")
    };
    let quota = Scripted::error(
        429,
        r#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}"#,
    );
    // (name, script, Ok or the error kind, requests the server saw)
    type Row = (&'static str, Vec<Scripted>, Result<(), ErrorKind>, usize);
    let cases: Vec<Row> = vec![
        ("429 then success", vec![rate_limited(), ok()], Ok(()), 2),
        (
            "429 with an http-date retry-after",
            vec![
                Scripted::error(
                    429,
                    r#"{"error":{"message":"slow","code":"rate_limit_exceeded"}}"#,
                )
                .header("retry-after", "Thu, 01 Jan 1970 00:00:00 GMT"),
                ok(),
            ],
            Ok(()),
            2,
        ),
        (
            "503 then success",
            vec![Scripted::error(503, "upstream"), ok()],
            Ok(()),
            2,
        ),
        (
            "insufficient quota is not retried",
            vec![quota, ok()],
            Err(ErrorKind::QuotaExhausted),
            1,
        ),
        (
            "401 is final",
            vec![
                Scripted::error(
                    401,
                    r#"{"error":{"message":"bad key","code":"invalid_api_key"}}"#,
                ),
                ok(),
            ],
            Err(ErrorKind::Auth),
            1,
        ),
        (
            "404 is final",
            vec![Scripted::error(
                404,
                r#"{"error":{"message":"no model","code":"model_not_found"}}"#,
            )],
            Err(ErrorKind::NotFound),
            1,
        ),
    ];
    for (name, script, want, requests) in cases {
        let (got, made) = run(script).await;
        match (&got, want) {
            (Ok(turn), Ok(())) => assert_eq!(turn.message.tool_calls().count(), 3, "{name}"),
            (Err(e), Err(kind)) => assert_eq!(e.kind, kind, "{name}: {e}"),
            _ => panic!("{name}: got {got:?}"),
        }
        assert_eq!(made, requests, "{name}");
    }
}

#[tokio::test]
async fn a_refused_connection_is_a_transport_error_after_retries() {
    // Bind and drop a listener so the port is very likely closed.
    let addr = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let config = OpenAiChatConfig::compatible("local", format!("http://{addr}/v1"));
    let provider = OpenAiChat::new(config, test_transport()).unwrap();
    let e = complete(&provider, &simple_request(), &CancellationToken::new())
        .await
        .expect_err("refused");
    assert_eq!(e.kind, ErrorKind::Transport, "{e}");
    assert_eq!(e.attempts, 4, "{e}");
    assert!(e.message.contains("check the base url"), "{e}");
}

#[tokio::test]
async fn golden_request_bodies_plain_and_strict() {
    let request = support::round_trip_request("gpt-4.1");
    let names = ToolNameMap::new(request.tools.iter().map(|t| t.name.as_str()));
    for (strict, golden) in [
        (false, "golden_round_trip.json"),
        (true, "golden_round_trip_strict.json"),
    ] {
        let server = MockServer::start(vec![Scripted::stream(fixture(
            "openai_chat/text_and_tools.sse",
        ))])
        .await;
        let config = OpenAiChatConfig {
            strict_tools: strict,
            ..config(&server)
        };
        let body = request_body(&config, &request, &names);
        support::assert_golden(&format!("openai_chat/{golden}"), &body);
        let provider = OpenAiChat::new(config, test_transport()).unwrap();
        complete(&provider, &request, &CancellationToken::new())
            .await
            .expect("turn");
        let sent = &server.requests()[0];
        assert_eq!(sent.path, "/v1/chat/completions");
        assert_eq!(sent.json(), body);
        assert_eq!(
            sent.header("authorization"),
            Some(format!("Bearer {}", support::KEY_VALUE).as_str())
        );
    }
}

#[tokio::test]
async fn the_key_never_appears_in_errors_or_debug_output() {
    let echo = format!(
        r#"{{"error":{{"message":"Incorrect API key provided: {}. You can find your API key at https://platform.openai.com.","type":"invalid_request_error","code":"invalid_api_key"}}}}"#,
        support::KEY_VALUE
    );
    FAMILY
        .assert_key_never_leaks(401, &echo, ErrorKind::Auth)
        .await;
}
