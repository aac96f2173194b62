//! Every adapter against a real model: Qwen2.5-Coder-1.5B behind llama.cpp's server, which
//! speaks OpenAI Chat at `/v1/chat/completions`, OpenAI Responses at `/v1/responses` and
//! Anthropic Messages at `/v1/messages`.
//!
//! The server is installed and started by `local_server/mod.rs` (shared with `tackle run`'s and
//! `tackle chat`'s local-model tests): once per test binary, stopped when the binary exits.
//!
//! A 1.5B model is reliable for one tool step at temperature 0, so each test asserts structure,
//! never wording: a tool call to the offered tool with parseable arguments, then, after the
//! result is sent back, a turn that ends with text. Tokens, steps and wall clock are bounded.

#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns: a failure should panic loudly

use std::time::{Duration, Instant};

use tackle_llm::anthropic::{Anthropic, AnthropicConfig};
use tackle_llm::openai_chat::{OpenAiChat, OpenAiChatConfig};
use tackle_llm::openai_responses::{OpenAiResponses, OpenAiResponsesConfig};
use tackle_llm::{Provider, Transport, TransportLimits, TurnRequest, complete};
use tackle_protocol::{
    ContentBlock, Message, Part, Role, StopReason, ToolArguments, ToolResultPart, ToolSpec,
};
use tokio_util::sync::CancellationToken;

/// Wall clock for one turn on a 2-core CPU.
const TURN_LIMIT: Duration = Duration::from_secs(180);

#[path = "local_server/mod.rs"]
mod local_server;

/// The server, with a slot per test of this binary, so none waits in the queue of another.
fn server() -> Option<&'static local_server::LocalServer> {
    local_server::server(12288, 3)
}

fn transport() -> Transport {
    Transport::new(TransportLimits {
        idle_timeout: TURN_LIMIT,
        deadline: TURN_LIMIT,
        ..TransportLimits::default()
    })
    .unwrap()
}

fn read_file_tool() -> ToolSpec {
    ToolSpec {
        name: "read_file".into(),
        description: "Read a text file of the project and return its contents.".into(),
        input_schema: serde_json::json!({
            "type": "object",
            "properties": {"path": {"type": "string", "description": "Path of the file"}},
            "required": ["path"]
        }),
    }
}

/// One tool step and the answer after it; the elapsed time is printed, never asserted.
async fn tool_round_trip(provider: &dyn Provider, family: &str) {
    let started = Instant::now();
    let mut request = TurnRequest::new(
        "local-qwen",
        vec![Message::user_text(
            "What does the file notes.txt say? Read it with the read_file tool.",
        )],
        200,
    );
    request.system = Some("You are a coding assistant. Use tools to read files.".into());
    request.tools = vec![read_file_tool()];
    request.temperature = Some(0.0);
    let cancel = CancellationToken::new();

    let first = tokio::time::timeout(TURN_LIMIT, complete(provider, &request, &cancel))
        .await
        .expect("first turn within the wall-clock bound")
        .unwrap_or_else(|e| panic!("{family}: first turn: {e}"));
    assert_eq!(
        first.stop_reason,
        StopReason::ToolUse,
        "{family}: {first:?}"
    );
    let calls: Vec<_> = first.message.tool_calls().cloned().collect();
    assert_eq!(calls.len(), 1, "{family}: one call: {first:?}");
    assert_eq!(calls[0].name, "read_file", "{family}");
    let ToolArguments::Valid { value } = &calls[0].arguments else {
        panic!("{family}: arguments do not parse: {:?}", calls[0].arguments);
    };
    assert!(
        value["path"].is_string(),
        "{family}: a path argument: {value}"
    );
    assert!(
        first.usage.output_tokens > 0,
        "{family}: usage reported: {first:?}"
    );

    request.messages.push(first.message.clone());
    request.messages.push(Message {
        role: Role::User,
        content: vec![Part::ToolResult(ToolResultPart {
            call_id: calls[0].id.clone(),
            content: vec![ContentBlock::Text {
                text: "Remember to water the plants on Tuesday.".into(),
            }],
            is_error: false,
            media: Vec::new(),
        })],
    });
    let second = tokio::time::timeout(TURN_LIMIT, complete(provider, &request, &cancel))
        .await
        .expect("second turn within the wall-clock bound")
        .unwrap_or_else(|e| panic!("{family}: second turn: {e}"));
    assert_eq!(
        second.stop_reason,
        StopReason::EndTurn,
        "{family}: {second:?}"
    );
    assert_eq!(
        second.message.tool_calls().count(),
        0,
        "{family}: {second:?}"
    );
    assert!(
        !second.message.text().trim().is_empty(),
        "{family}: ends with text: {second:?}"
    );
    eprintln!(
        "{family}: tool round trip in {:.1?} ({} + {} output tokens)",
        started.elapsed(),
        first.usage.output_tokens,
        second.usage.output_tokens
    );
}

#[tokio::test]
async fn openai_chat_tool_round_trip_with_a_real_model() {
    let Some(server) = server() else { return };
    let config = OpenAiChatConfig::compatible("local", format!("{}/v1", server.base_url));
    let provider = OpenAiChat::new(config, transport()).unwrap();
    tool_round_trip(&provider, "openai-chat").await;
}

#[tokio::test]
async fn anthropic_messages_tool_round_trip_with_a_real_model() {
    let Some(server) = server() else { return };
    let config = AnthropicConfig {
        name: "local".into(),
        base_url: server.base_url.clone(),
        key: None,
        ..AnthropicConfig::official()
    };
    let provider = Anthropic::new(config, transport()).unwrap();
    tool_round_trip(&provider, "anthropic").await;
}

#[tokio::test]
async fn openai_responses_tool_round_trip_with_a_real_model() {
    let Some(server) = server() else { return };
    let config = OpenAiResponsesConfig::compatible("local", format!("{}/v1", server.base_url));
    let provider = OpenAiResponses::new(config, transport()).unwrap();
    tool_round_trip(&provider, "openai-responses").await;
}
