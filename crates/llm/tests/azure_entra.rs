//! Azure OpenAI with Microsoft Entra ID tokens: `Authorization: Bearer` from a variable or a
//! `token_command`, never an `api-key`, built by `connect` and sent to a loopback server.

#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns: a failure should panic loudly
mod support;

use std::path::Path;
use std::sync::Arc;

use support::{KEY_ENV, KEY_VALUE, MockServer, Scripted, fixture, key_env, test_transport};
use tackle_llm::catalog::{ProviderKind, ProviderSpec};
use tackle_llm::{ErrorKind, Provider, TurnRequest, complete, connect};
use tackle_protocol::Message;
use tokio_util::sync::CancellationToken;

const KINDS: [ProviderKind; 2] = [ProviderKind::AzureChat, ProviderKind::AzureResponses];

fn spec(server: &MockServer, kind: ProviderKind) -> ProviderSpec {
    ProviderSpec {
        name: "azure".into(),
        kind,
        base_url: Some(server.url()),
        api_key_env: None,
        project: None,
        location: None,
        token_command: None,
        token_env: None,
        region: None,
        api_version: None,
    }
}

fn ok(kind: ProviderKind) -> Scripted {
    Scripted::stream(fixture(match kind {
        ProviderKind::AzureChat => "openai_chat/text_and_tools.sse",
        _ => "openai_responses/text_and_tools.sse",
    }))
}

fn request() -> TurnRequest {
    TurnRequest::new("my-gpt-4o", vec![Message::user_text("hi")], 256)
}

async fn turn(p: &Arc<dyn Provider>) -> Result<(), tackle_llm::LlmError> {
    complete(p.as_ref(), &request(), &CancellationToken::new())
        .await
        .map(|_| ())
}

#[tokio::test]
async fn a_token_variable_goes_as_a_bearer_token_and_no_api_key() {
    key_env();
    for kind in KINDS {
        let server = MockServer::start(vec![ok(kind)]).await;
        let p = connect(
            &ProviderSpec {
                token_env: Some(KEY_ENV.into()),
                ..spec(&server, kind)
            },
            test_transport(),
        )
        .unwrap();
        turn(&p).await.expect("turn");
        let sent = &server.requests()[0];
        let bearer = format!("Bearer {KEY_VALUE}");
        assert_eq!(
            sent.header("authorization"),
            Some(bearer.as_str()),
            "{kind}"
        );
        assert_eq!(sent.header("api-key"), None, "{kind}");
    }
}

/// A script that prints a new token each run, counting its runs in a file beside it.
fn token_script(dir: &Path) -> Vec<String> {
    let script = dir.join("token.sh");
    let count = dir.join("runs");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nn=$(cat '{0}' 2>/dev/null || echo 0)\nn=$((n+1))\necho $n > '{0}'\necho \"eyJentra-DO-NOT-LEAK-$n\"\n",
            count.display()
        ),
    )
    .unwrap();
    vec!["/bin/sh".into(), script.display().to_string()]
}

#[tokio::test]
async fn the_token_command_runs_again_after_a_401_and_no_error_shows_a_token() {
    for kind in KINDS {
        let dir = tempfile::tempdir().unwrap();
        let expired = Scripted::error(
            401,
            r#"{"error":{"code":"401","message":"Access token has expired or is not yet valid."}}"#,
        );
        let echo = r#"{"error":{"code":"invalid_request","message":"bad request from bearer eyJentra-DO-NOT-LEAK-2"}}"#;
        let server = MockServer::start(vec![expired, ok(kind), Scripted::error(400, echo)]).await;
        let p = connect(
            &ProviderSpec {
                token_command: Some(token_script(dir.path())),
                ..spec(&server, kind)
            },
            test_transport(),
        )
        .unwrap();
        turn(&p).await.expect("turn after a fresh token");
        let e = turn(&p).await.expect_err("echoed");
        assert_eq!(e.kind, ErrorKind::InvalidRequest, "{kind}: {e}");
        assert!(!format!("{e} {e:?}").contains("DO-NOT-LEAK"), "{kind}: {e}");
        let sent: Vec<String> = server
            .requests()
            .iter()
            .map(|r| r.header("authorization").unwrap().to_owned())
            .collect();
        assert_eq!(
            sent,
            [
                "Bearer eyJentra-DO-NOT-LEAK-1",
                "Bearer eyJentra-DO-NOT-LEAK-2",
                "Bearer eyJentra-DO-NOT-LEAK-2"
            ],
            "{kind}"
        );
        assert!(
            server
                .requests()
                .iter()
                .all(|r| r.header("api-key").is_none())
        );
    }
}

#[tokio::test]
async fn a_failing_token_command_names_its_exit_and_the_login() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("fail.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\necho eyJsecret-DO-NOT-LEAK\necho secret-err-DO-NOT-LEAK >&2\nexit 3\n",
    )
    .unwrap();
    let server = MockServer::start(vec![]).await;
    for kind in KINDS {
        let argv = vec!["/bin/sh".to_owned(), script.display().to_string()];
        let p = connect(
            &ProviderSpec {
                token_command: Some(argv),
                ..spec(&server, kind)
            },
            test_transport(),
        )
        .unwrap();
        let e = turn(&p).await.expect_err("fails");
        assert_eq!(e.kind, ErrorKind::Configuration, "{e}");
        for want in ["fail.sh", "exit status: 3", "run it yourself", "az login"] {
            assert!(e.message.contains(want), "{want}: {e}");
        }
        assert!(!format!("{e} {e:?}").contains("DO-NOT-LEAK"), "{e}");
    }
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn a_missing_token_variable_is_named_before_any_turn() {
    let server = MockServer::start(vec![]).await;
    let var = "TACKLE_AZURE_TEST_UNSET_TOKEN";
    // Nothing sets the variable; reading it only observes that.
    assert!(std::env::var_os(var).is_none());
    let e = connect(
        &ProviderSpec {
            token_env: Some(var.into()),
            ..spec(&server, ProviderKind::AzureChat)
        },
        test_transport(),
    )
    .err()
    .expect("unset");
    assert_eq!(e.kind, ErrorKind::Configuration);
    assert!(
        e.message.contains(var) && e.message.contains("az account get-access-token"),
        "{e}"
    );
}
