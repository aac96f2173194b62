//! Every family's context-overflow answer, as recorded in `tests/fixtures/overflow/<family>.json`
//! (status, the headers that matter, the body, and where it comes from), served by a loopback
//! server to the adapter that meets it, built by `connect` as a configuration would build it.
//! Each must fail the turn as `context_too_long`, unretried, with the sizes the answer names
//! and a message a person can read (the server's sentence, never a JSON document).

#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns: a failure should panic loudly
mod support;

use std::path::PathBuf;

use serde::Deserialize;
use support::{KEY_ENV, MockServer, Scripted, key_env, test_transport};
use tackle_llm::catalog::{ProviderKind, ProviderSpec};
use tackle_llm::{ErrorKind, OverflowSizes, TurnRequest, complete};
use tackle_protocol::Message;
use tokio_util::sync::CancellationToken;

#[derive(Deserialize)]
struct Family {
    family: String,
    answers: Vec<Answer>,
}

#[derive(Deserialize)]
struct Answer {
    name: String,
    /// The provider kind whose adapter meets this answer.
    adapter: String,
    source: String,
    status: u16,
    headers: std::collections::BTreeMap<String, String>,
    body: String,
    prompt: Option<u64>,
    window: Option<u64>,
}

fn families() -> Vec<(PathBuf, Family)> {
    let dir = support::fixture_path("overflow");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let family = serde_json::from_slice(&std::fs::read(&path).unwrap())
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            (path, family)
        })
        .collect()
}

/// The provider a user would configure for `kind` at the mock server.
fn spec(kind: ProviderKind, server: &MockServer) -> ProviderSpec {
    let base_url = match kind {
        ProviderKind::OpenAiChat | ProviderKind::OpenAiResponses => format!("{}/v1", server.url()),
        _ => server.url(),
    };
    ProviderSpec {
        name: "under-test".into(),
        kind,
        base_url: Some(base_url),
        api_key_env: Some(key_env().env),
        project: None,
        location: None,
        token_command: None,
        token_env: None,
        region: Some("us-east-1".into()),
        api_version: None,
    }
}

#[tokio::test]
async fn every_recorded_overflow_answer_is_context_too_long_with_its_sizes() {
    let families = families();
    let names: Vec<&str> = families.iter().map(|(_, f)| f.family.as_str()).collect();
    for want in [
        "llama.cpp",
        "Ollama",
        "vLLM",
        "LM Studio",
        "OpenAI",
        "Anthropic",
        "Gemini",
        "Bedrock",
    ] {
        assert!(names.contains(&want), "no fixture for {want}: {names:?}");
    }
    let mut failures = Vec::new();
    for (path, family) in &families {
        for answer in &family.answers {
            let case = format!("{} / {}", family.family, answer.name);
            assert!(!answer.source.trim().is_empty(), "{case}: no source");
            let kind: ProviderKind = answer
                .adapter
                .parse()
                .unwrap_or_else(|e| panic!("{}: {case}: {e}", path.display()));
            let scripted = Scripted {
                status: answer.status,
                headers: answer
                    .headers
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
                body: answer.body.clone().into_bytes(),
                chunk: 0,
                end: support::End::Close,
            };
            let server = MockServer::start(vec![scripted]).await;
            let provider = tackle_llm::connect(&spec(kind, &server), test_transport())
                .unwrap_or_else(|e| panic!("{case}: {e}"));
            let request = TurnRequest::new("model-x", vec![Message::user_text("hi")], 64);
            let result = complete(provider.as_ref(), &request, &CancellationToken::new()).await;
            let Err(error) = result else {
                failures.push(format!("{case}: the turn succeeded"));
                continue;
            };
            let sizes = OverflowSizes {
                prompt: answer.prompt,
                window: answer.window,
            };
            let requests = server.requests().len();
            if error.kind != ErrorKind::ContextTooLong
                || error.overflow_sizes() != Some(sizes)
                || requests != 1
                || error.message.trim_start().starts_with(['{', '['])
                || error.message.contains(support::KEY_VALUE)
            {
                failures.push(format!(
                    "{case} (through {kind}): got {:?}, sizes {:?} (want {sizes:?}), {requests} request(s): {error}",
                    error.kind,
                    error.overflow_sizes()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The variable is this binary's own; nothing else reads it.
    assert!(std::env::var_os(KEY_ENV).is_some());
}
