//! Web identity from the environment (`AWS_WEB_IDENTITY_TOKEN_FILE` and `AWS_ROLE_ARN`, as an
//! EKS pod or a CI job's OIDC token gets it), exchanged at a loopback STS named by
//! `AWS_ENDPOINT_URL_STS`. The variables are the process's, so this binary holds one test,
//! which sets them on a single-threaded runtime with nothing else running.

#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns: a failure should panic loudly
mod support;

use support::MockServer;
use support::aws::{assert_signed_with, bedrock, chain, sts_credentials, sts_error};
use support::eventstream::eventstream_fixture;
use tackle_llm::{ErrorKind, TurnRequest, complete};
use tackle_protocol::Message;
use tokio_util::sync::CancellationToken;

const JWT: &str = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ0YWNrbGUifQ.sig-DO-NOT-LEAK";
const SECRET: &str = "wi-secret-DO-NOT-LEAK-81";
const TOKEN: &str = "wi-token-DO-NOT-LEAK-82";

#[test]
fn a_web_identity_token_is_exchanged_at_sts_and_a_refusal_says_what_to_check() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, JWT).unwrap();
    let sts = runtime.block_on(MockServer::start(vec![
        sts_credentials("AssumeRoleWithWebIdentity", "ASIAWEB", SECRET, TOKEN),
        sts_error(400, "InvalidIdentityToken", "Token is expired"),
    ]));
    // SAFETY: the only test of this binary, on a runtime with no worker threads, before any
    // provider exists; nothing else reads the environment meanwhile.
    unsafe {
        std::env::set_var("AWS_WEB_IDENTITY_TOKEN_FILE", &token_file);
        std::env::set_var("AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/ci");
        std::env::set_var("AWS_ROLE_SESSION_NAME", "tackle-test");
        std::env::set_var("AWS_ENDPOINT_URL_STS", sts.url());
    }
    runtime.block_on(async {
        let request = TurnRequest::new("amazon.nova-pro-v1:0", vec![Message::user_text("hi")], 64);
        // A profile with no credentials, so the walk reaches web identity.
        let shared = || {
            chain(
                dir.path(),
                "[profile empty]\nregion = us-east-1\n",
                "",
                "empty",
            )
        };

        let server = MockServer::start(vec![eventstream_fixture("bedrock/text_and_tools")]).await;
        complete(
            &bedrock(&server, shared()),
            &request,
            &CancellationToken::new(),
        )
        .await
        .expect("turn");
        let asked = &sts.requests()[0];
        let body = String::from_utf8_lossy(&asked.body).into_owned();
        assert!(body.contains("Action=AssumeRoleWithWebIdentity"), "{body}");
        assert!(body.contains("RoleSessionName=tackle-test"), "{body}");
        assert!(body.contains(&format!("WebIdentityToken={JWT}")), "{body}");
        assert_signed_with(&server.requests()[0], "ASIAWEB", TOKEN);

        let server = MockServer::start(vec![]).await;
        let e = complete(
            &bedrock(&server, shared()),
            &request,
            &CancellationToken::new(),
        )
        .await
        .expect_err("refused");
        assert_eq!(e.kind, ErrorKind::Configuration, "{e}");
        for want in ["AWS_WEB_IDENTITY_TOKEN_FILE", "Token is expired", "check"] {
            assert!(e.message.contains(want), "{want}: {e}");
        }
        assert!(!format!("{e} {e:?}").contains("DO-NOT-LEAK"), "{e}");
        assert!(server.requests().is_empty());
    });
}
