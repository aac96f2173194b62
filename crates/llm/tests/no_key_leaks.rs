//! Credentials never land anywhere: every adapter of this crate runs turns against the mock
//! server with a recognisable key, the good and the failing ones (401 and 500 bodies that echo
//! the key, a cut stream, an error after the 200 that echoes it, a request id that carries it),
//! each through `replay::RecordingProvider` into a temporary directory. Every error's `Display`
//! and `Debug`, every provider's `Debug` and every file written must be free of the key.

#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns: a failure should panic loudly
mod support;

use std::sync::Arc;

use support::{KEY_VALUE, MockServer, Scripted, fixture, key_env, test_transport};
use tackle_llm::anthropic::{Anthropic, AnthropicConfig};
use tackle_llm::cohere::{Cohere, CohereConfig};
use tackle_llm::openai_chat::{OpenAiChat, OpenAiChatConfig};
use tackle_llm::openai_responses::{OpenAiResponses, OpenAiResponsesConfig};
use tackle_llm::replay::RecordingProvider;
use tackle_llm::{Provider, TurnRequest, azure, complete};
use tackle_protocol::Message;
use tokio_util::sync::CancellationToken;

/// One adapter: how it is built against the server, and its family's shapes.
struct Adapter {
    name: &'static str,
    /// The provider, and its `Debug` print.
    build: fn(&MockServer) -> (Arc<dyn Provider>, String),
    /// A stream that assembles, and a prefix of it that is cut mid-event.
    ok: &'static str,
    /// An error response body in the family's shape, saying `message`.
    error_body: fn(&str) -> String,
    /// A 200 stream that fails with `message`.
    after_200: fn(&str) -> String,
}

fn shown<P: Provider + std::fmt::Debug + 'static>(p: P) -> (Arc<dyn Provider>, String) {
    let debug = format!("{p:?}");
    (Arc::new(p), debug)
}

fn openai_error(message: &str) -> String {
    serde_json::json!({"error": {"message": message, "type": "invalid_request_error", "code": "invalid_api_key"}})
        .to_string()
}

fn chat_after_200(message: &str) -> String {
    format!("data: {}\n\n", openai_error(message))
}

fn responses_after_200(message: &str) -> String {
    let event = serde_json::json!({"type": "error", "code": "server_error", "message": message});
    format!("event: error\ndata: {event}\n\n")
}

const ADAPTERS: &[Adapter] = &[
    Adapter {
        name: "anthropic",
        build: |s| {
            shown(
                Anthropic::new(
                    AnthropicConfig {
                        base_url: s.url(),
                        key: Some(key_env()),
                        ..AnthropicConfig::official()
                    },
                    test_transport(),
                )
                .unwrap(),
            )
        },
        ok: "anthropic/text_and_tools.sse",
        error_body: |m| {
            serde_json::json!({"type": "error", "error": {"type": "authentication_error", "message": m}})
                .to_string()
        },
        after_200: |m| {
            let event =
                serde_json::json!({"type": "error", "error": {"type": "api_error", "message": m}});
            format!("event: error\ndata: {event}\n\n")
        },
    },
    Adapter {
        name: "openai-chat",
        build: |s| {
            shown(
                OpenAiChat::new(
                    OpenAiChatConfig {
                        base_url: s.url(),
                        key: Some(key_env()),
                        ..OpenAiChatConfig::official()
                    },
                    test_transport(),
                )
                .unwrap(),
            )
        },
        ok: "openai_chat/text_and_tools.sse",
        error_body: openai_error,
        after_200: chat_after_200,
    },
    Adapter {
        name: "openai-responses",
        build: |s| {
            shown(
                OpenAiResponses::new(
                    OpenAiResponsesConfig {
                        base_url: s.url(),
                        key: Some(key_env()),
                        ..OpenAiResponsesConfig::official()
                    },
                    test_transport(),
                )
                .unwrap(),
            )
        },
        ok: "openai_responses/text_and_tools.sse",
        error_body: openai_error,
        after_200: responses_after_200,
    },
    Adapter {
        name: "cohere",
        build: |s| {
            shown(
                Cohere::new(
                    CohereConfig {
                        base_url: s.url(),
                        key: Some(key_env()),
                        ..CohereConfig::official()
                    },
                    test_transport(),
                )
                .unwrap(),
            )
        },
        ok: "cohere/text_and_tools.sse",
        error_body: |m| serde_json::json!({ "message": m }).to_string(),
        after_200: |m| format!("data: {}\n\n", serde_json::json!({ "message": m })),
    },
    Adapter {
        name: "azure-chat",
        build: |s| {
            let config =
                azure::chat_config("azure", s.url(), None, azure::AzureAuth::ApiKey(key_env()));
            shown(OpenAiChat::new(config, test_transport()).unwrap())
        },
        ok: "openai_chat/azure_filter_first.sse",
        error_body: openai_error,
        after_200: chat_after_200,
    },
    Adapter {
        name: "azure-responses",
        build: |s| {
            let config = azure::responses_config(
                "azure",
                s.url(),
                None,
                azure::AzureAuth::ApiKey(key_env()),
            );
            shown(OpenAiResponses::new(config, test_transport()).unwrap())
        },
        ok: "openai_responses/text_and_tools.sse",
        error_body: openai_error,
        after_200: responses_after_200,
    },
];

/// How a provider might echo what it was sent.
fn echoes() -> String {
    format!("Incorrect API key provided: {KEY_VALUE} (sent as Bearer {KEY_VALUE})")
}

#[tokio::test]
async fn no_error_print_or_file_written_holds_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let mut shown = Vec::new();
    for adapter in ADAPTERS {
        let ok = fixture(adapter.ok);
        let cut_at = ok.len() / 2;
        let cut = ok[..cut_at].to_vec();
        let body = (adapter.error_body)(&echoes());
        let scripts: Vec<(&str, Vec<Scripted>)> = vec![
            ("ok", vec![Scripted::stream(ok.clone())]),
            ("401", vec![Scripted::error(401, &body)]),
            ("500", (0..4).map(|_| Scripted::error(500, &body)).collect()),
            ("cut", vec![Scripted::stream(cut)]),
            (
                "error after 200",
                vec![Scripted::stream((adapter.after_200)(&echoes()))],
            ),
            (
                "key in the request id",
                vec![Scripted::error(401, &body).header("x-request-id", KEY_VALUE)],
            ),
        ];
        let file = dir.path().join(format!("{}.jsonl", adapter.name));
        for (case, script) in scripts {
            let server = MockServer::start(script).await;
            let (inner, debug) = (adapter.build)(&server);
            shown.push((format!("{} provider", adapter.name), debug));
            let recording = RecordingProvider::create(inner, &file).unwrap();
            let request = TurnRequest::new("model-x", vec![Message::user_text("hi")], 64);
            let got = complete(&recording, &request, &CancellationToken::new()).await;
            let sent = server.requests();
            assert!(
                sent.iter()
                    .all(|r| r.headers.iter().any(|(_, v)| v.contains(KEY_VALUE))),
                "{} {case}: every request carries the key (else this test proves nothing)",
                adapter.name
            );
            match (case, got) {
                ("ok", Ok(turn)) => assert!(!turn.message.content.is_empty()),
                ("ok", Err(e)) => panic!("{} ok: {e}", adapter.name),
                (_, Ok(turn)) => panic!("{} {case}: a turn came back: {turn:?}", adapter.name),
                (_, Err(e)) => {
                    shown.push((format!("{} {case}", adapter.name), e.to_string()));
                    shown.push((format!("{} {case} (debug)", adapter.name), format!("{e:?}")));
                }
            }
        }
    }
    assert_eq!(
        shown.len(),
        ADAPTERS.len() * (6 + 2 * 5),
        "every case was shown"
    );
    for (what, text) in &shown {
        assert!(!text.contains(KEY_VALUE), "{what} holds the key: {text}");
        assert!(
            !text.contains("DO-NOT-LEAK"),
            "{what} holds part of the key: {text}"
        );
    }
    let mut files = 0;
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        // The header and one exchange per case.
        assert_eq!(text.lines().count(), 1 + 6, "{}", path.display());
        assert!(
            !text.contains(KEY_VALUE),
            "{} holds the key",
            path.display()
        );
        assert!(
            !text.contains("DO-NOT-LEAK"),
            "{} holds part of the key",
            path.display()
        );
        files += 1;
    }
    assert_eq!(files, ADAPTERS.len());
}
