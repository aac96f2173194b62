//! Azure OpenAI: the Chat and Responses adapters on Azure's routes, built by `connect` from a
//! catalog provider, against a loopback server.

#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns: a failure should panic loudly
mod support;

use std::sync::Arc;

use support::{
    KEY_ENV, KEY_VALUE, MockServer, Recorded, Scripted, fixture, key_env, test_transport,
};
use tackle_llm::azure::AZURE_CHAT_API_VERSION;
use tackle_llm::catalog::{ProviderKind, ProviderSpec};
use tackle_llm::{ErrorKind, LlmError, Provider, TurnRequest, complete, connect};
use tackle_protocol::{AssistantTurn, Message};
use tokio_util::sync::CancellationToken;

fn provider(
    server: &MockServer,
    kind: ProviderKind,
    api_version: Option<&str>,
) -> Arc<dyn Provider> {
    key_env();
    let spec = ProviderSpec {
        name: "azure".into(),
        kind,
        base_url: Some(server.url()),
        api_key_env: Some(KEY_ENV.into()),
        api_version: api_version.map(str::to_owned),
        project: None,
        location: None,
        token_command: None,
        token_env: None,
        region: None,
    };
    connect(&spec, test_transport()).expect("connect")
}

fn request() -> TurnRequest {
    TurnRequest::new("my-gpt-4o", vec![Message::user_text("hi")], 256)
}

/// One turn against `script`, with the requests the server saw.
async fn turn(
    kind: ProviderKind,
    api_version: Option<&str>,
    script: Vec<Scripted>,
) -> (Result<AssistantTurn, LlmError>, Vec<Recorded>) {
    let server = MockServer::start(script).await;
    let p = provider(&server, kind, api_version);
    let got = complete(p.as_ref(), &request(), &CancellationToken::new()).await;
    (got, server.requests())
}

#[tokio::test]
async fn chat_goes_to_the_deployment_with_an_api_version_and_the_key_in_api_key() {
    for (configured, query) in [
        (None, AZURE_CHAT_API_VERSION),
        (Some("2025-04-01-preview"), "2025-04-01-preview"),
    ] {
        let stream = Scripted::stream(fixture("openai_chat/azure_filter_first.sse"));
        let (got, sent) = turn(ProviderKind::AzureChat, configured, vec![stream]).await;
        let want = support::expected_turn("openai_chat/azure_filter_first.turn.json");
        assert_eq!(got.expect("turn"), want);
        let sent = &sent[0];
        assert_eq!(
            sent.path,
            format!("/openai/deployments/my-gpt-4o/chat/completions?api-version={query}")
        );
        assert_eq!(sent.header("api-key"), Some(KEY_VALUE));
        assert_eq!(sent.header("authorization"), None);
        let body = sent.json();
        assert_eq!(body["max_completion_tokens"], 256);
        assert_eq!(body["stream_options"]["include_usage"], true);
    }
}

#[tokio::test]
async fn responses_go_to_the_v1_path_with_an_api_version_only_when_configured() {
    for (configured, path) in [
        (None, "/openai/v1/responses".to_owned()),
        (
            Some("preview"),
            "/openai/v1/responses?api-version=preview".to_owned(),
        ),
    ] {
        let stream = Scripted::stream(fixture("openai_responses/text_and_tools.sse"));
        let (got, sent) = turn(ProviderKind::AzureResponses, configured, vec![stream]).await;
        let want = support::expected_turn("openai_responses/text_and_tools.turn.json");
        assert_eq!(got.expect("turn"), want);
        assert_eq!(sent[0].path, path);
        assert_eq!(sent[0].header("api-key"), Some(KEY_VALUE));
        assert_eq!(sent[0].json()["model"], "my-gpt-4o");
        assert_eq!(sent[0].json()["store"], false);
    }
}

#[tokio::test]
async fn azure_error_bodies_are_classified() {
    let missing = r#"{"error":{"code":"DeploymentNotFound","message":"The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again."}}"#;
    let filtered = r#"{"error":{"message":"The response was filtered due to the prompt triggering Azure OpenAI's content management policy.","type":null,"param":"prompt","code":"content_filter","status":400,"innererror":{"code":"ResponsibleAIPolicyViolation","content_filter_result":{"hate":{"filtered":false,"severity":"safe"},"self_harm":{"filtered":false,"severity":"safe"},"sexual":{"filtered":false,"severity":"safe"},"violence":{"filtered":true,"severity":"medium"}}}}}"#;
    let throttled = r#"{"error":{"code":"429","message":"Requests to the ChatCompletions_Create Operation under Azure OpenAI API version 2024-10-21 have exceeded token rate limit of your current OpenAI S0 pricing tier. Please retry after 1 second."}}"#;
    for kind in [ProviderKind::AzureChat, ProviderKind::AzureResponses] {
        let (got, sent) = turn(kind, None, vec![Scripted::error(404, missing)]).await;
        let e = got.expect_err("deployment not found");
        assert_eq!(e.kind, ErrorKind::NotFound, "{kind}: {e}");
        assert_eq!(sent.len(), 1, "{kind}: not found is final");

        let (got, _) = turn(kind, None, vec![Scripted::error(400, filtered)]).await;
        let e = got.expect_err("filtered");
        assert_eq!(e.kind, ErrorKind::InvalidRequest, "{kind}: {e}");
        assert!(
            e.message.contains("content filter") && e.message.contains("violence"),
            "{e}"
        );
        assert!(
            !e.message.contains("hate"),
            "only flagged categories are named: {e}"
        );

        let ok = match kind {
            ProviderKind::AzureChat => fixture("openai_chat/text_and_tools.sse"),
            _ => fixture("openai_responses/text_and_tools.sse"),
        };
        let script = vec![
            Scripted::error(429, throttled).header("retry-after-ms", "1"),
            Scripted::stream(ok),
        ];
        let (got, sent) = turn(kind, None, script).await;
        assert!(got.is_ok(), "{kind}: {got:?}");
        assert_eq!(sent.len(), 2, "{kind}: a rate limit is retried");
    }
}
