//! What a real llama.cpp server says about its window: Qwen2.5-Coder-1.5B behind llama-server
//! (`local_server/mod.rs`, the one launcher) started with a small context, `-c 512` in one
//! slot, so a short prompt already overflows it.
//!
//! The overflow answer each adapter meets is checked against the one recorded in
//! `tests/fixtures/overflow/llama_cpp.json`: when llama.cpp changes its wording, this test
//! fails and the fixture is recorded again from its answer.

#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns: a failure should panic loudly

use std::time::Duration;

use tackle_llm::catalog::{ProviderKind, ProviderSpec};
use tackle_llm::{ErrorKind, OverflowSizes, Transport, TransportLimits, TurnRequest, complete};
use tackle_protocol::Message;
use tokio_util::sync::CancellationToken;

#[path = "local_server/mod.rs"]
mod local_server;

/// The server's whole context, in its one slot.
const CONTEXT: u32 = 512;

fn server() -> Option<&'static local_server::LocalServer> {
    local_server::server(CONTEXT, 1)
}

/// The prompt the fixture was recorded with: 1230 tokens under the test chat template.
fn over_long_prompt() -> String {
    "The quick brown fox jumps over the lazy dog. ".repeat(120)
}

fn transport() -> Transport {
    Transport::new(TransportLimits {
        idle_timeout: Duration::from_secs(120),
        deadline: Duration::from_secs(180),
        ..TransportLimits::default()
    })
    .unwrap()
}

fn spec(kind: ProviderKind, base_url: String) -> ProviderSpec {
    ProviderSpec {
        name: "local".into(),
        kind,
        base_url: Some(base_url),
        api_key_env: None,
        project: None,
        location: None,
        token_command: None,
        token_env: None,
        region: None,
        api_version: None,
    }
}

/// The recorded answer of `adapter`: its message and the sizes it names.
fn recorded(adapter: &str) -> (String, OverflowSizes) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/overflow/llama_cpp.json");
    let file: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let answer = file["answers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["adapter"] == adapter && a["source"].as_str().unwrap().starts_with("Recorded"))
        .unwrap_or_else(|| panic!("no recorded answer for {adapter}"));
    let body: serde_json::Value = serde_json::from_str(answer["body"].as_str().unwrap()).unwrap();
    (
        body["error"]["message"].as_str().unwrap().to_owned(),
        OverflowSizes {
            prompt: answer["prompt"].as_u64(),
            window: answer["window"].as_u64(),
        },
    )
}

#[tokio::test]
async fn each_adapter_meets_the_recorded_overflow_answer() {
    let Some(server) = server() else {
        return;
    };
    let root = server.base_url.clone();
    for (kind, base_url) in [
        (ProviderKind::OpenAiChat, format!("{root}/v1")),
        (ProviderKind::OpenAiResponses, format!("{root}/v1")),
        (ProviderKind::Anthropic, root.clone()),
    ] {
        let provider = tackle_llm::connect(&spec(kind, base_url), transport()).unwrap();
        let request = TurnRequest::new(
            "local-qwen",
            vec![Message::user_text(over_long_prompt())],
            64,
        );
        let error = complete(provider.as_ref(), &request, &CancellationToken::new())
            .await
            .expect_err("a prompt over the window is refused");
        let (message, sizes) = recorded(kind.as_str());
        assert_eq!(error.kind, ErrorKind::ContextTooLong, "{kind}: {error}");
        assert_eq!(error.status, Some(400), "{kind}: {error}");
        assert_eq!(error.attempts, 1, "{kind}: an overflow is never retried");
        assert_eq!(error.message, message, "{kind}: the wording changed");
        assert_eq!(error.overflow_sizes(), Some(sizes), "{kind}: {error}");
        assert_eq!(
            error.stated_sizes.as_deref(),
            Some(&sizes),
            "{kind}: the fields"
        );
        assert_eq!(sizes.window, Some(u64::from(CONTEXT)));
    }
}

/// The window the server runs with, learned from the server: llama.cpp's `/props`, the same
/// for each format's base URL, and the same a request that overflows it names.
#[tokio::test]
async fn the_probe_learns_the_servers_window() {
    use tackle_llm::window_probe::{ProbeLimits, ProbeTarget, ServerKind, SizeMeaning, probe};
    let Some(server) = server() else {
        return;
    };
    let root = server.base_url.clone();
    for (kind, base_url) in [
        (ProviderKind::OpenAiChat, format!("{root}/v1")),
        (ProviderKind::Anthropic, root.clone()),
    ] {
        let target = ProbeTarget::for_provider(&spec(kind, base_url)).unwrap();
        let learned = probe(&target, "any-name", &ProbeLimits::default())
            .await
            .unwrap_or_else(|e| panic!("{kind}: {e}"));
        assert_eq!(learned.server, ServerKind::LlamaCpp, "{kind}");
        assert_eq!(learned.model, "local-qwen", "{kind}: the server's alias");
        assert_eq!(learned.window, u64::from(CONTEXT), "{kind}: {learned:?}");
        let deciding = learned.deciding().unwrap();
        assert_eq!(deciding.meaning, SizeMeaning::Serving);
        assert_eq!(
            deciding.source,
            "GET /props: default_generation_settings.n_ctx"
        );
        assert_eq!(Some(learned.window), recorded("openai-chat").1.window);
    }
}
