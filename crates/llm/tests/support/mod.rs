//! A loopback HTTP server that plays scripted responses, for the provider tests.
//!
//! Hand-rolled over a `TcpListener` rather than a framework so a test controls every byte and
//! every write: the body is written in chunks of a chosen size (splitting events, lines and
//! UTF-8 sequences), the connection can be closed mid-event, or held open with no bytes to
//! exercise the idle timeout. Each request is answered by the next scripted response and
//! recorded (headers and body) for golden comparisons. Responses are `Connection: close`, and
//! a body ends when the socket does, as HTTP/1.1 allows.

#![allow(dead_code)] // each test binary uses part of it

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

pub mod aws;
pub mod eventstream;
mod family;
pub mod routes;
#[allow(unused_imports)] // the binaries that build providers through `connect` have no family
pub use family::Family;

/// How a scripted body ends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum End {
    /// Close the connection after the last byte.
    Close,
    /// Keep the connection open without sending anything more, until the client goes away.
    Hold,
}

#[derive(Clone, Debug)]
pub struct Scripted {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// Bytes per write; 0 writes the body at once.
    pub chunk: usize,
    pub end: End,
}

impl Scripted {
    /// A 200 event stream.
    pub fn stream(body: impl Into<Vec<u8>>) -> Self {
        Self {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            body: body.into(),
            chunk: 0,
            end: End::Close,
        }
    }

    /// An error response with a JSON body.
    pub fn error(status: u16, body: &str) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: body.as_bytes().to_vec(),
            chunk: 0,
            end: End::Close,
        }
    }

    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    pub fn chunked(mut self, chunk: usize) -> Self {
        self.chunk = chunk;
        self
    }

    pub fn hold(mut self) -> Self {
        self.end = End::Hold;
        self
    }
}

/// A request as the server received it.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    /// Header names lowercased.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).expect("request body is json")
    }
}

pub struct MockServer {
    pub addr: SocketAddr,
    recorded: Arc<Mutex<Vec<Recorded>>>,
    task: tokio::task::JoinHandle<()>,
}

impl MockServer {
    /// Serves `script` in order, one response per request; a request past the end gets a 500.
    pub async fn start(script: Vec<Scripted>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let addr = listener.local_addr().expect("local addr");
        let recorded = Arc::new(Mutex::new(Vec::new()));
        let script = Arc::new(Mutex::new(VecDeque::from(script)));
        let rec = recorded.clone();
        let task = tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let next = script.lock().unwrap().pop_front();
                let rec = rec.clone();
                tokio::spawn(async move { serve(socket, next, rec).await });
            }
        });
        Self {
            addr,
            recorded,
            task,
        }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.recorded.lock().unwrap().clone()
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve(
    mut socket: TcpStream,
    scripted: Option<Scripted>,
    recorded: Arc<Mutex<Vec<Recorded>>>,
) {
    socket.set_nodelay(true).ok();
    let Some(request) = read_request(&mut socket).await else {
        return;
    };
    recorded.lock().unwrap().push(request);
    let scripted = scripted
        .unwrap_or_else(|| Scripted::error(500, r#"{"error":{"message":"script exhausted"}}"#));
    let mut head = format!(
        "HTTP/1.1 {} Scripted\r\nconnection: close\r\n",
        scripted.status
    );
    for (name, value) in &scripted.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    if socket.write_all(head.as_bytes()).await.is_err() {
        return;
    }
    let chunk = if scripted.chunk == 0 {
        scripted.body.len().max(1)
    } else {
        scripted.chunk
    };
    for piece in scripted.body.chunks(chunk) {
        if socket.write_all(piece).await.is_err() || socket.flush().await.is_err() {
            return;
        }
    }
    if scripted.end == End::Hold {
        // Wait for the client to close its side; anything it sends is discarded.
        let mut sink = [0u8; 256];
        while matches!(socket.read(&mut sink).await, Ok(n) if n > 0) {}
    }
}

async fn read_request(socket: &mut TcpStream) -> Option<Recorded> {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 8192];
    let header_end = loop {
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
        let n = socket.read(&mut tmp).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&tmp[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..header_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next()?.split(' ');
    let method = request_line.next()?.to_owned();
    let path = request_line.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[header_end + 4..].to_vec();
    while body.len() < length {
        let n = socket.read(&mut tmp).await.ok()?;
        if n == 0 {
            return None;
        }
        body.extend_from_slice(&tmp[..n]);
    }
    Some(Recorded {
        method,
        path,
        headers,
        body,
    })
}

/// A fixture file's bytes.
pub fn fixture(path: &str) -> Vec<u8> {
    let full = fixture_path(path);
    std::fs::read(&full).unwrap_or_else(|e| panic!("read {}: {e}", full.display()))
}

pub fn fixture_path(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(path)
}

/// The variable the tests' providers read their key from, and its value.
pub const KEY_ENV: &str = "TACKLE_LLM_TEST_KEY";
pub const KEY_VALUE: &str = "sk-test-DO-NOT-LEAK-4f9c2e7a1b";

/// Sets [`KEY_ENV`] once per test binary, before any test reads the environment.
pub fn key_env() -> tackle_llm::KeySource {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: every test calls this before it builds a provider (the only environment
        // reads in these binaries), and `Once` makes them wait until the write is done.
        unsafe { std::env::set_var(KEY_ENV, KEY_VALUE) };
    });
    tackle_llm::KeySource::env(KEY_ENV)
}

/// Limits for tests: retries without real backoff, a short idle timeout.
pub fn test_transport() -> tackle_llm::Transport {
    let mut limits = tackle_llm::TransportLimits::default();
    limits.retry.initial_backoff = std::time::Duration::from_millis(1);
    limits.retry.max_backoff = std::time::Duration::from_millis(4);
    limits.idle_timeout = std::time::Duration::from_millis(300);
    limits.deadline = std::time::Duration::from_secs(30);
    limits.max_event_bytes = 64 << 10;
    tackle_llm::Transport::new(limits).expect("transport")
}

/// The expected turn stored beside a fixture.
pub fn expected_turn(path: &str) -> tackle_protocol::AssistantTurn {
    serde_json::from_slice(&fixture(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A conversation with a tool round trip and a signed thinking block, for golden bodies.
pub fn round_trip_request(model: &str) -> tackle_llm::TurnRequest {
    use tackle_protocol::{
        CallId, ContentBlock, Message, Part, Role, ToolArguments, ToolCallPart, ToolResultPart,
        ToolSpec,
    };
    let messages = vec![
        Message::user_text("Summarize a.txt and list the directory."),
        Message {
            role: Role::Assistant,
            content: vec![
                Part::Thinking {
                    text: "I should read the file.".into(),
                    signature: Some("sig-abc".into()),
                },
                Part::Text {
                    text: "Reading it.".into(),
                },
                Part::ToolCall(ToolCallPart {
                    id: CallId("toolu_01A".into()),
                    name: "read_file".into(),
                    arguments: ToolArguments::parse(r#"{"path":"a.txt"}"#),
                }),
                Part::ToolCall(ToolCallPart {
                    id: CallId("call.with:odd/chars".into()),
                    name: "mcp.fs.list".into(),
                    arguments: ToolArguments::parse(r#"{"path": "."#),
                }),
            ],
        },
        Message {
            role: Role::User,
            content: vec![
                Part::Text {
                    text: "Here you go.".into(),
                },
                Part::ToolResult(ToolResultPart {
                    call_id: CallId("toolu_01A".into()),
                    content: vec![
                        ContentBlock::Text {
                            text: "hello world".into(),
                        },
                        ContentBlock::Attachment {
                            mime_type: "image/png".into(),
                            bytes: 1234,
                            artifact: "artifact://sha256/00ff".into(),
                        },
                    ],
                    is_error: false,
                    media: Vec::new(),
                }),
                Part::ToolResult(ToolResultPart {
                    call_id: CallId("call.with:odd/chars".into()),
                    content: vec![ContentBlock::Text {
                        text: "invalid_arguments: arguments are not valid JSON".into(),
                    }],
                    is_error: true,
                    media: Vec::new(),
                }),
            ],
        },
    ];
    let mut request = tackle_llm::TurnRequest::new(model, messages, 1024);
    request.system = Some("You are a coding agent.".into());
    request.tools = vec![
        ToolSpec {
            name: "read_file".into(),
            description: "Read a file".into(),
            input_schema: serde_json::json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "properties": {"path": {"type": "string"}, "offset": {"type": "integer"}},
                "required": ["path"]
            }),
        },
        ToolSpec {
            name: "mcp.fs.list".into(),
            description: "List a directory".into(),
            input_schema: serde_json::json!({"type": "object"}),
        },
    ];
    request
}

/// Compares a body with a golden file; `TACKLE_BLESS=1` rewrites the file instead.
pub fn assert_golden(path: &str, body: &serde_json::Value) {
    let full = fixture_path(path);
    let pretty = serde_json::to_string_pretty(body).expect("json") + "\n";
    if std::env::var_os("TACKLE_BLESS").is_some() {
        std::fs::write(&full, &pretty).expect("bless golden");
        return;
    }
    let want: serde_json::Value = serde_json::from_slice(&fixture(path)).expect("golden json");
    assert_eq!(
        body, &want,
        "{path} differs; run with TACKLE_BLESS=1 to accept:\n{pretty}"
    );
}
