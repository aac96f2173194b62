//! The OpenAI Responses adapter against a loopback server replaying recorded streams.

#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns: a failure should panic loudly
mod support;

use support::{Family, MockServer, Scripted, expected_turn, fixture, key_env, test_transport};
use tackle_llm::openai_responses::{OpenAiResponses, OpenAiResponsesConfig, request_body};
use tackle_llm::{ErrorKind, LlmError, ToolNameMap, TurnRequest, complete};
use tackle_protocol::{
    AssistantTurn, ContentBlock, Message, Part, ReasoningPart, Role, ToolArguments, ToolResultPart,
};
use tokio_util::sync::CancellationToken;

fn config(server: &MockServer) -> OpenAiResponsesConfig {
    OpenAiResponsesConfig {
        base_url: format!("{}/v1", server.url()),
        key: Some(key_env()),
        ..OpenAiResponsesConfig::official()
    }
}

fn provider(server: &MockServer) -> OpenAiResponses {
    OpenAiResponses::new(config(server), test_transport()).expect("provider")
}

fn simple_request() -> TurnRequest {
    TurnRequest::new("gpt-5", vec![Message::user_text("hi")], 256)
}

const FAMILY: Family<OpenAiResponses> = Family {
    dir: "openai_responses",
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
            "reasoning",
            "whole_items",
            "invalid_tool_json",
            "refusal",
            "no_output_index",
        ])
        .await;
}

#[tokio::test]
async fn broken_streams_fail_with_their_class() {
    FAMILY
        .assert_broken_streams(&[
            ("failed_after_200", ErrorKind::Server),
            ("rate_limited_after_200", ErrorKind::RateLimit),
            ("error_event", ErrorKind::ContextTooLong),
            ("no_completed", ErrorKind::StreamCut),
            ("cut_mid_event", ErrorKind::StreamCut),
            ("cut_mid_utf8", ErrorKind::StreamCut),
        ])
        .await;
}

#[tokio::test]
async fn malformed_events_are_refused_not_guessed() {
    let created = "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"r\",\"model\":\"m\"}}\n\n";
    let cases = [
        ("not json", "data: {not json\n\n".to_owned()),
        (
            "a known type without its fields",
            format!("{created}data: {{\"type\":\"response.output_text.delta\"}}\n\n"),
        ),
        (
            "arguments for a call never opened",
            format!(
                "{created}data: {{\"type\":\"response.function_call_arguments.delta\",\"item_id\":\"fc_x\",\"output_index\":4,\"delta\":\"{{}}\"}}\n\n"
            ),
        ),
        (
            "an oversized event",
            format!(
                "data: {{\"type\":\"response.output_text.delta\",\"delta\":\"{}\"}}\n\n",
                "x".repeat(100 << 10)
            ),
        ),
    ];
    for (name, body) in cases {
        let (got, _) = run(vec![Scripted::stream(body)]).await;
        let e = got.expect_err(name);
        assert_eq!(e.kind, ErrorKind::InvalidResponse, "{name}: {e}");
    }
    let chat_style = "data: {\"error\":{\"message\":\"slot unavailable\",\"type\":\"server_error\",\"code\":503}}\n\n";
    let (got, _) = run(vec![Scripted::stream(chat_style)]).await;
    let e = got.expect_err("chat-style error object");
    assert_eq!(e.kind, ErrorKind::Server, "{e}");
    assert!(e.message.contains("slot unavailable"), "{e}");
    let (got, _) = run(vec![Scripted::error(200, r#"{"id":"resp_1","output":[]}"#)]).await;
    let e = got.expect_err("json instead of a stream");
    assert!(e.message.contains("not an event stream"), "{e}");
}

#[tokio::test]
async fn retries_follow_the_status_headers_and_body() {
    let ok = || Scripted::stream(fixture("openai_responses/text_and_tools.sse"));
    let rate_limited = || {
        Scripted::error(
            429,
            r#"{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}"#,
        )
        .header("retry-after-ms", "1")
    };
    let quota = || {
        Scripted::error(
            429,
            r#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}"#,
        )
    };
    type Row = (&'static str, Vec<Scripted>, Result<(), ErrorKind>, usize);
    let cases: Vec<Row> = vec![
        ("429 then success", vec![rate_limited(), ok()], Ok(()), 2),
        (
            "500 then success",
            vec![Scripted::error(500, "oops"), ok()],
            Ok(()),
            2,
        ),
        (
            "insufficient quota is not retried",
            vec![quota(), ok()],
            Err(ErrorKind::QuotaExhausted),
            1,
        ),
        (
            "context too long is final",
            vec![Scripted::error(
                400,
                r#"{"error":{"message":"too long","type":"invalid_request_error","code":"context_length_exceeded"}}"#,
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

/// The shared round trip plus a reasoning item the previous turn returned.
fn round_trip_with_reasoning() -> TurnRequest {
    let mut request = support::round_trip_request("gpt-5");
    if let Some(assistant) = request
        .messages
        .iter_mut()
        .find(|m| m.role == Role::Assistant)
    {
        assistant.content.insert(
            0,
            Part::Reasoning(ReasoningPart {
                id: "rs_prev".into(),
                summary: vec!["Read it first.".into()],
                encrypted_content: Some("gAAAAprev==".into()),
            }),
        );
    }
    request.thinking_budget = Some(4096);
    request
}

#[tokio::test]
async fn golden_request_bodies_plain_and_strict() {
    let request = round_trip_with_reasoning();
    let names = ToolNameMap::new(request.tools.iter().map(|t| t.name.as_str()));
    for (strict, golden) in [
        (false, "golden_round_trip.json"),
        (true, "golden_round_trip_strict.json"),
    ] {
        let server = MockServer::start(vec![Scripted::stream(fixture(
            "openai_responses/text_and_tools.sse",
        ))])
        .await;
        let config = OpenAiResponsesConfig {
            strict_tools: strict,
            ..config(&server)
        };
        let body = request_body(&config, &request, &names);
        support::assert_golden(&format!("openai_responses/{golden}"), &body);
        assert!(
            !body.to_string().contains("rs_prev"),
            "a stateless request never replays item ids"
        );
        let provider = OpenAiResponses::new(config, test_transport()).unwrap();
        complete(&provider, &request, &CancellationToken::new())
            .await
            .expect("turn");
        let sent = &server.requests()[0];
        assert_eq!(sent.path, "/v1/responses");
        assert_eq!(sent.json(), body);
        assert_eq!(
            sent.header("authorization"),
            Some(format!("Bearer {}", support::KEY_VALUE).as_str())
        );
    }
}

#[tokio::test]
async fn reasoning_and_invalid_arguments_are_replayed_in_the_next_request() {
    let reasoning = expected_turn("openai_responses/reasoning.turn.json");
    let invalid = expected_turn("openai_responses/invalid_tool_json.turn.json");
    let call = invalid.message.tool_calls().next().unwrap().clone();
    assert!(matches!(call.arguments, ToolArguments::Invalid { .. }));
    let mut request = simple_request();
    request.messages.push(reasoning.message);
    request
        .messages
        .push(Message::user_text("and the other file?"));
    request.messages.push(invalid.message);
    request.messages.push(Message {
        role: Role::User,
        content: vec![Part::ToolResult(ToolResultPart {
            call_id: call.id.clone(),
            content: vec![ContentBlock::Text {
                text: "invalid_arguments: arguments are not valid JSON".into(),
            }],
            is_error: true,
            media: Vec::new(),
        })],
    });
    let server = MockServer::start(vec![Scripted::stream(fixture(
        "openai_responses/reasoning.sse",
    ))])
    .await;
    complete(&provider(&server), &request, &CancellationToken::new())
        .await
        .expect("turn");
    let input = server.requests()[0].json()["input"].clone();
    let want = serde_json::json!([
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        {"type": "reasoning", "summary": [{"type": "summary_text", "text": "Look at the file first."}],
         "encrypted_content": "gAAAAABencrypted=="},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "It is fine."}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "and the other file?"}]},
        {"type": "function_call", "call_id": "call_X", "name": "read_file",
         "arguments": "{\"path\": \"unterminated"},
        {"type": "function_call_output", "call_id": "call_X",
         "output": "invalid_arguments: arguments are not valid JSON"}
    ]);
    assert_eq!(input, want);
}

#[tokio::test]
async fn the_key_never_appears_in_errors_or_debug_output() {
    let echo = format!(
        r#"{{"error":{{"message":"Incorrect API key provided: {}.","type":"invalid_request_error","code":"invalid_api_key"}}}}"#,
        support::KEY_VALUE
    );
    FAMILY
        .assert_key_never_leaks(401, &echo, ErrorKind::Auth)
        .await;
}

#[tokio::test]
async fn a_missing_key_variable_is_named_before_any_request() {
    let config = OpenAiResponsesConfig {
        key: Some(tackle_llm::KeySource::env("TACKLE_LLM_TEST_UNSET_KEY")),
        ..OpenAiResponsesConfig::official()
    };
    let e = OpenAiResponses::new(config, test_transport()).expect_err("unset");
    assert_eq!(e.kind, ErrorKind::Configuration);
    assert!(e.message.contains("TACKLE_LLM_TEST_UNSET_KEY"), "{e}");
}
