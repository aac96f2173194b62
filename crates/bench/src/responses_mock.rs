//! A scripted OpenAI Responses server on loopback for the agent benchmarks: zero model latency,
//! so what a run costs is the agent's own work.
//!
//! Each script is a list of steps for one agent, chosen by a tool the agent offers (Codex offers
//! `exec_command`, tackle `read_file`). A request that carries `k` tool outputs is answered with
//! step `k`: a function call, or, past the last call, the final text. Every answer is streamed
//! as the Responses events a real server sends (`response.created`, the item added, its deltas,
//! done, `response.completed` with usage), with a `content-length` so connections are kept
//! alive. Every request's arrival and the moment its answer was written are kept ([`Served`]):
//! the first arrival gives "start to first model request", and the time between the two is the
//! mock's own share of a turn, which a loop benchmark takes out of the agent's.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::{Value, json};

/// One answer of a script.
#[derive(Clone, Debug)]
pub enum Step {
    /// Call `name` with these arguments.
    Call { name: String, arguments: Value },
    /// End the turn with this text.
    Text(String),
}

/// The steps of one agent, chosen when a request offers a tool named `offers`.
#[derive(Clone, Debug)]
pub struct Script {
    pub offers: String,
    pub steps: Vec<Step>,
}

/// One request the mock answered.
#[derive(Clone, Debug)]
pub struct Served {
    /// The request's path (`/v1/responses` for a model turn).
    pub path: String,
    /// When the whole request had been read.
    pub arrived: Instant,
    /// When the last byte of the answer had been written.
    pub answered: Instant,
}

impl Served {
    /// Whether this was a model turn (a `POST …/responses`), not a listing.
    pub fn is_turn(&self) -> bool {
        self.path.ends_with("/responses")
    }
}

/// A running mock; it serves until the process ends.
pub struct ResponsesMock {
    pub url: String,
    served: Arc<Mutex<Vec<Served>>>,
}

impl ResponsesMock {
    /// Listen on an OS-chosen loopback port and answer from `scripts`.
    pub fn start(scripts: Vec<Script>) -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let url = format!("http://{}", listener.local_addr()?);
        let served = Arc::new(Mutex::new(Vec::new()));
        let shared = Arc::new(Shared {
            scripts,
            served: served.clone(),
            ids: AtomicU64::new(0),
        });
        std::thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                let shared = shared.clone();
                std::thread::spawn(move || serve_connection(conn, &shared));
            }
        });
        Ok(Self { url, served })
    }

    /// The requests answered since the last call, oldest first; clears the list.
    pub fn take_served(&self) -> Vec<Served> {
        std::mem::take(&mut *self.served.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

struct Shared {
    scripts: Vec<Script>,
    served: Arc<Mutex<Vec<Served>>>,
    ids: AtomicU64,
}

impl Shared {
    fn id(&self, prefix: &str) -> String {
        format!("{prefix}_{}", self.ids.fetch_add(1, Ordering::Relaxed))
    }
}

fn serve_connection(conn: TcpStream, shared: &Shared) {
    conn.set_nodelay(true).ok();
    let Ok(write_half) = conn.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(conn);
    let mut writer = write_half;
    while let Some((method, path, body)) = read_request(&mut reader) {
        let arrived = Instant::now();
        let (content_type, payload) = if method == "POST" && path.ends_with("/responses") {
            let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            ("text/event-stream", answer(shared, &request))
        } else {
            (
                "application/json",
                br#"{"object":"list","data":[]}"#.to_vec(),
            )
        };
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\n\r\n",
            payload.len()
        );
        if writer.write_all(head.as_bytes()).is_err() || writer.write_all(&payload).is_err() {
            return;
        }
        shared
            .served
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(Served {
                path,
                arrived,
                answered: Instant::now(),
            });
    }
}

/// One request: method, path and body (by `content-length` or chunked), `None` at the end.
fn read_request(reader: &mut BufReader<TcpStream>) -> Option<(String, String, Vec<u8>)> {
    let mut line = String::new();
    if reader.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_owned();
    let path = parts.next()?.to_owned();
    let (mut length, mut chunked) = (0usize, false);
    loop {
        line.clear();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let header = line.trim_end().to_ascii_lowercase();
        if header.is_empty() {
            break;
        }
        if let Some(v) = header.strip_prefix("content-length:") {
            length = v.trim().parse().ok()?;
        }
        if header.starts_with("transfer-encoding:") && header.contains("chunked") {
            chunked = true;
        }
    }
    let mut body = Vec::new();
    if chunked {
        loop {
            line.clear();
            reader.read_line(&mut line).ok()?;
            let size = usize::from_str_radix(line.trim().split(';').next()?, 16).ok()?;
            let mut chunk = vec![0; size + 2];
            reader.read_exact(&mut chunk).ok()?;
            if size == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..size]);
        }
    } else {
        body.resize(length, 0);
        reader.read_exact(&mut body).ok()?;
    }
    Some((method, path, body))
}

/// The SSE body answering `request`.
fn answer(shared: &Shared, request: &Value) -> Vec<u8> {
    let offered: Vec<&str> = request["tools"]
        .as_array()
        .map(|tools| tools.iter().filter_map(|t| t["name"].as_str()).collect())
        .unwrap_or_default();
    let outputs = request["input"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter(|i| i["type"] == "function_call_output")
                .count()
        })
        .unwrap_or(0);
    let step = shared
        .scripts
        .iter()
        .find(|s| offered.contains(&s.offers.as_str()))
        .map(|s| {
            s.steps
                .get(outputs)
                .cloned()
                .unwrap_or_else(|| Step::Text("done".to_owned()))
        })
        .unwrap_or_else(|| Step::Text("no script offers these tools".to_owned()));
    let model = request["model"].as_str().unwrap_or("mock").to_owned();
    let response_id = shared.id("resp");
    let mut events = vec![json!({
        "type": "response.created",
        "response": {"id": response_id, "model": model, "status": "in_progress", "output": []},
    })];
    let item = match step {
        Step::Call { name, arguments } => {
            let arguments = arguments.to_string();
            let item = json!({
                "type": "function_call", "id": shared.id("fc"), "call_id": shared.id("call"),
                "name": name, "arguments": arguments, "status": "completed",
            });
            events.push(json!({
                "type": "response.output_item.added", "output_index": 0,
                "item": {"type": "function_call", "id": item["id"], "call_id": item["call_id"],
                         "name": item["name"], "arguments": "", "status": "in_progress"},
            }));
            events.push(json!({
                "type": "response.function_call_arguments.delta", "output_index": 0,
                "item_id": item["id"], "delta": arguments,
            }));
            item
        }
        Step::Text(text) => {
            let id = shared.id("msg");
            events.push(json!({
                "type": "response.output_item.added", "output_index": 0,
                "item": {"type": "message", "id": id, "role": "assistant",
                         "status": "in_progress", "content": []},
            }));
            events.push(json!({
                "type": "response.output_text.delta", "output_index": 0, "item_id": id,
                "content_index": 0, "delta": text,
            }));
            json!({"type": "message", "id": id, "role": "assistant", "status": "completed",
                   "content": [{"type": "output_text", "text": text, "annotations": []}]})
        }
    };
    events.push(json!({"type": "response.output_item.done", "output_index": 0, "item": item}));
    events.push(json!({
        "type": "response.completed",
        "response": {"id": response_id, "model": model, "status": "completed", "output": [item],
                     "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                               "output_tokens": 5,
                               "output_tokens_details": {"reasoning_tokens": 0},
                               "total_tokens": 15}},
    }));
    let mut body = Vec::new();
    for event in events {
        let name = event["type"].as_str().unwrap_or("message");
        body.extend_from_slice(format!("event: {name}\ndata: {event}\n\n").as_bytes());
    }
    body
}
