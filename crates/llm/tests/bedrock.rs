//! The Bedrock Converse adapter against a loopback server replaying binary event-stream frames
//! encoded from the fixtures by the AWS SDK's encoder.

#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns: a failure should panic loudly
mod support;

use std::path::PathBuf;
use std::sync::OnceLock;

use support::eventstream::{eventstream, eventstream_fixture, frames};
use support::{Family, KEY_VALUE, MockServer, Scripted, key_env, test_transport};
use tackle_llm::bedrock::{
    AwsChain, Bedrock, BedrockAuth, BedrockConfig, model_path, request_body,
};
use tackle_llm::{ErrorKind, LlmError, ToolNameMap, TurnRequest, complete};
use tackle_protocol::{AssistantTurn, Message};
use tokio_util::sync::CancellationToken;

const MODEL: &str = "us.anthropic.claude-x-v1:0";
const SECRET: &str = "aws-secret-DO-NOT-LEAK-9d8c7b";
const SESSION_TOKEN: &str = "aws-session-DO-NOT-LEAK-1a2b3c";

/// Shared files with one profile that has a session token, written once per binary.
fn chain() -> AwsChain {
    static DIR: OnceLock<(tempfile::TempDir, PathBuf, PathBuf)> = OnceLock::new();
    let (_, config, credentials) = DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config");
        let credentials = dir.path().join("credentials");
        std::fs::write(&config, "[profile tests]\nregion = eu-central-1\n").unwrap();
        std::fs::write(
            &credentials,
            format!(
                "[tests]\naws_access_key_id = AKIDTESTS\naws_secret_access_key = {SECRET}\naws_session_token = {SESSION_TOKEN}\n"
            ),
        )
        .unwrap();
        (dir, config, credentials)
    });
    AwsChain {
        environment: false,
        metadata_endpoints: false,
        profile: Some("tests".into()),
        config_file: Some(config.clone()),
        credentials_file: Some(credentials.clone()),
    }
}

fn provider_with(server: &MockServer, auth: BedrockAuth) -> Bedrock {
    let config = BedrockConfig {
        name: "bedrock".into(),
        region: Some("us-east-1".into()),
        base_url: Some(server.url()),
        auth,
    };
    Bedrock::new(config, test_transport()).expect("provider")
}

fn provider(server: &MockServer) -> Bedrock {
    provider_with(server, BedrockAuth::Aws(chain()))
}

fn bearer_provider(server: &MockServer) -> Bedrock {
    provider_with(server, BedrockAuth::ApiKey(key_env()))
}

fn simple_request() -> TurnRequest {
    TurnRequest::new(MODEL, vec![Message::user_text("hi")], 256)
}

const FAMILY: Family<Bedrock> = Family {
    dir: "bedrock",
    provider,
    request: simple_request,
    provider_name: "bedrock",
    request_id_header: "x-amzn-requestid",
};

async fn run(script: Vec<Scripted>) -> (Result<AssistantTurn, LlmError>, usize) {
    FAMILY.run(script).await
}

#[tokio::test]
async fn recorded_frames_assemble_into_the_expected_turns_however_they_are_split() {
    FAMILY
        .assert_recorded_bodies(
            &[
                "text_and_tools",
                "thinking",
                "unknown_types",
                "invalid_tool_json",
            ],
            eventstream_fixture,
        )
        .await;
}

#[tokio::test]
async fn exception_frames_and_broken_streams_fail_with_their_class() {
    FAMILY
        .assert_broken_bodies(
            &[
                ("exception_after_200", ErrorKind::RateLimit),
                ("too_long_exception", ErrorKind::ContextTooLong),
                ("model_stream_error", ErrorKind::Server),
                ("no_message_stop", ErrorKind::StreamCut),
                ("malformed_payload", ErrorKind::InvalidResponse),
            ],
            eventstream_fixture,
        )
        .await;
}

#[tokio::test]
async fn a_bad_crc_is_invalid_and_a_cut_frame_is_a_cut() {
    let good = frames("bedrock/text_and_tools");
    // The second frame's message CRC: the first frame's length, then its total length − 1.
    let first = u32::from_be_bytes(good[..4].try_into().unwrap()) as usize;
    let second = u32::from_be_bytes(good[first..first + 4].try_into().unwrap()) as usize;
    let mut bad = good.clone();
    bad[first + second - 1] ^= 0xff;
    for chunk in [0, 7, 1] {
        let (got, _) = run(vec![eventstream(bad.clone()).chunked(chunk)]).await;
        let e = got.expect_err("bad crc");
        assert_eq!(e.kind, ErrorKind::InvalidResponse, "{e}");
        assert!(e.message.contains("checksum"), "{e}");
    }
    // Mid-prelude, mid-headers and mid-payload of the second frame.
    for cut in [first + 2, first + 20, first + second - 3] {
        let (got, _) = run(vec![eventstream(good[..cut].to_vec()).chunked(7)]).await;
        let e = got.expect_err("cut");
        assert_eq!(e.kind, ErrorKind::StreamCut, "cut at {cut}: {e}");
    }
}

#[tokio::test]
async fn an_oversized_frame_is_refused_before_it_is_read() {
    let huge = format!(
        r#"{{"contentBlockIndex":0,"delta":{{"text":"{}"}}}}"#,
        "x".repeat(100 << 10)
    );
    let body = support::eventstream::frame(
        &[
            (":message-type", "event"),
            (":event-type", "contentBlockDelta"),
        ],
        huge.as_bytes(),
    );
    let (got, _) = run(vec![eventstream(body[..1024].to_vec()).hold()]).await;
    let e = got.expect_err("oversized");
    assert_eq!(e.kind, ErrorKind::InvalidResponse, "{e}");
    assert!(e.message.contains("exceeds"), "{e}");
}

#[tokio::test]
async fn throttling_is_retried_and_validation_is_final() {
    let ok = || eventstream_fixture("bedrock/text_and_tools");
    let aws_error = |status: u16, kind: &str, message: &str| {
        Scripted::error(status, &format!(r#"{{"message":"{message}"}}"#))
            .header(
                "x-amzn-errortype",
                &format!("{kind}:http://internal.amazon.com/coral/com.amazon.bedrock/"),
            )
            .header("x-amzn-requestid", "req-aws-1")
    };
    type Row = (&'static str, Vec<Scripted>, Result<(), ErrorKind>, usize);
    let cases: Vec<Row> = vec![
        (
            "429 throttling then success",
            vec![
                aws_error(429, "ThrottlingException", "Too many requests")
                    .header("retry-after", "0"),
                ok(),
            ],
            Ok(()),
            2,
        ),
        (
            "503 unavailable then success",
            vec![aws_error(503, "ServiceUnavailableException", "later"), ok()],
            Ok(()),
            2,
        ),
        (
            "400 validation is final",
            vec![aws_error(400, "ValidationException", "bad field"), ok()],
            Err(ErrorKind::InvalidRequest),
            1,
        ),
        (
            "input too long",
            vec![aws_error(
                400,
                "ValidationException",
                "Input is too long for requested model.",
            )],
            Err(ErrorKind::ContextTooLong),
            1,
        ),
        (
            "quota is not retried",
            vec![
                aws_error(429, "ServiceQuotaExceededException", "quota"),
                ok(),
            ],
            Err(ErrorKind::QuotaExhausted),
            1,
        ),
        (
            "403 access denied",
            vec![aws_error(403, "AccessDeniedException", "no model access")],
            Err(ErrorKind::Permission),
            1,
        ),
    ];
    for (name, script, want, requests) in cases {
        let (got, made) = run(script).await;
        match (&got, want) {
            (Ok(turn), Ok(())) => assert_eq!(turn.message.tool_calls().count(), 2, "{name}"),
            (Err(e), Err(kind)) => {
                assert_eq!(e.kind, kind, "{name}: {e}");
                assert_eq!(e.request_id.as_deref(), Some("req-aws-1"), "{name}");
            }
            _ => panic!("{name}: got {got:?}"),
        }
        assert_eq!(made, requests, "{name}");
    }
}

#[tokio::test]
async fn the_golden_body_is_sent_signed_to_the_encoded_model_path() {
    let server = MockServer::start(vec![eventstream_fixture("bedrock/thinking")]).await;
    let mut request = support::round_trip_request("us.anthropic.claude-sonnet-4-5-20250929-v1:0");
    request.thinking_budget = Some(2048);
    let names = ToolNameMap::new(request.tools.iter().map(|t| t.name.as_str()));
    let body = request_body(&request, &names);
    support::assert_golden("bedrock/golden_round_trip.json", &body);
    complete(&provider(&server), &request, &CancellationToken::new())
        .await
        .expect("turn");
    let sent = &server.requests()[0];
    assert_eq!(sent.method, "POST");
    assert_eq!(sent.path, model_path(&request.model));
    assert_eq!(
        sent.path,
        "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream"
    );
    assert_eq!(sent.json(), body);
    let auth = sent.header("authorization").expect("authorization");
    assert!(
        auth.starts_with("AWS4-HMAC-SHA256 Credential=AKIDTESTS/"),
        "{auth}"
    );
    assert!(auth.contains("/us-east-1/bedrock/aws4_request"), "{auth}");
    assert!(
        auth.contains("SignedHeaders=") && auth.contains("Signature="),
        "{auth}"
    );
    assert!(
        sent.header("x-amz-date")
            .is_some_and(|d| d.len() == 16 && d.ends_with('Z'))
    );
    assert_eq!(sent.header("x-amz-security-token"), Some(SESSION_TOKEN));
    assert!(!auth.contains(SECRET));
}

#[tokio::test]
async fn a_bedrock_api_key_goes_as_a_bearer_token_unsigned() {
    let server = MockServer::start(vec![eventstream_fixture("bedrock/thinking")]).await;
    complete(
        &bearer_provider(&server),
        &simple_request(),
        &CancellationToken::new(),
    )
    .await
    .expect("turn");
    let sent = &server.requests()[0];
    assert_eq!(
        sent.header("authorization"),
        Some(format!("Bearer {KEY_VALUE}").as_str())
    );
    assert!(sent.header("x-amz-date").is_none());
}

#[tokio::test]
async fn the_api_key_never_appears_in_errors_or_debug_output() {
    let bearer = Family {
        provider: bearer_provider,
        ..FAMILY
    };
    let echo = format!(r#"{{"message":"The bearer token {KEY_VALUE} is invalid"}}"#);
    bearer
        .assert_key_never_leaks(403, &echo, ErrorKind::Permission)
        .await;
}

#[tokio::test]
async fn aws_secrets_never_appear_in_errors_or_debug_output() {
    let echo = format!(
        r#"{{"message":"The request signature we calculated does not match. Canonical request: x-amz-security-token:{SESSION_TOKEN} secret {SECRET}"}}"#
    );
    let server = MockServer::start(vec![
        Scripted::error(403, &echo).header("x-amzn-errortype", "InvalidSignatureException"),
    ])
    .await;
    let provider = provider(&server);
    let e = complete(&provider, &simple_request(), &CancellationToken::new())
        .await
        .expect_err("echo");
    assert_eq!(e.kind, ErrorKind::Auth, "{e}");
    for shown in [e.to_string(), format!("{e:?}"), format!("{provider:?}")] {
        assert!(!shown.contains("DO-NOT-LEAK"), "secret leaked: {shown}");
    }
}

#[tokio::test]
async fn a_missing_region_names_the_table_key_and_both_variables() {
    // Only observes the two variables; nothing in these tests sets them.
    if std::env::var_os("AWS_REGION").is_some() || std::env::var_os("AWS_DEFAULT_REGION").is_some()
    {
        let e = Bedrock::new(
            BedrockConfig {
                region: Some(" ".into()),
                ..BedrockConfig::standard()
            },
            test_transport(),
        );
        assert!(e.is_ok(), "a region from the environment applies");
        return;
    }
    let config = BedrockConfig {
        auth: BedrockAuth::Aws(chain()),
        ..BedrockConfig::standard()
    };
    let e = Bedrock::new(config, test_transport()).expect_err("no region");
    assert_eq!(e.kind, ErrorKind::Configuration);
    for name in [
        "region",
        "[providers.bedrock]",
        "AWS_REGION",
        "AWS_DEFAULT_REGION",
    ] {
        assert!(e.message.contains(name), "{name}: {e}");
    }
}
