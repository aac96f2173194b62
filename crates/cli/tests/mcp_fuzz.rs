//! The JSON-RPC fuzz target: mutated messages to a real `tackle serve`, over stdio and over
//! HTTP. Bounded, seeded and deterministic: the seed is printed, and `TACKLE_FUZZ_SEED`,
//! `TACKLE_FUZZ_STDIO` (default 5,000 messages) and `TACKLE_FUZZ_HTTP` (default 1,000) change
//! it and the counts.
//!
//! Messages are generated from a grammar of MCP requests, notifications and responses, then
//! mutated (params, ids, `jsonrpc`, `method` replaced by values of other types; ids past i64;
//! members removed; text truncated or a byte changed; nesting thousands deep; batches; lines
//! over the 4 MiB limit). Asserted: the server never exits, every message with a readable id
//! gets exactly one answer with that id, a message whose id cannot be read gets at most one
//! answer (with `null`, or its id when the text's start still shows it), notifications and
//! responses get none, and a valid `tools/call` is served at the end. Each class of failure
//! this found is a row of the screening corpus (`crates/mcp/src/screen/tests.rs`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::SocketAddr;
use std::sync::mpsc;
use std::time::Duration;

use harness::{KillOnDrop, Project};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use serde_json::{Value, json};

const DEFAULT_SEED: u64 = 18;

fn env_count(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn seed() -> u64 {
    let seed = std::env::var("TACKLE_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_SEED);
    eprintln!("mcp fuzz seed: {seed} (set TACKLE_FUZZ_SEED to change it)");
    seed
}

fn project() -> Project {
    let p = Project::new();
    p.write("hello.txt", "hello\nworld\n");
    p.write("src/a.rs", "fn main() {}\n");
    p
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"fuzz","version":"0"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const FINAL: &str = r#"{"jsonrpc":"2.0","id":"final","method":"tools/call","params":{"name":"read_file","arguments":{"path":"hello.txt"}}}"#;

/// One generated message: its text and the id it was generated with (before mutation).
struct Case {
    text: Vec<u8>,
    original_id: Value,
}

/// The message grammar and its mutations.
struct Generator {
    rng: StdRng,
    serial: u64,
}

impl Generator {
    fn new(seed: u64) -> Self {
        Self {
            rng: StdRng::seed_from_u64(seed),
            serial: 0,
        }
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.rng.random_range(0..items.len())]
    }

    /// A unique id, a number or a string.
    fn id(&mut self) -> Value {
        self.serial += 1;
        if self.rng.random_bool(0.5) {
            json!(self.serial)
        } else {
            json!(format!("f{}", self.serial))
        }
    }

    /// A small JSON value of any type.
    fn value(&mut self, depth: u32) -> Value {
        match self.rng.random_range(0..if depth > 2 { 5 } else { 7 }) {
            0 => Value::Null,
            1 => json!(self.rng.random_bool(0.5)),
            2 => json!(self.rng.random_range(-1000i64..1000)),
            3 => json!(self.rng.random_range(-1e6f64..1e6)),
            4 => json!(
                self.pick(&["", "x", ".", "hello.txt", "../etc", "\u{0}", "é"])
                    .to_owned()
            ),
            5 => Value::Array(
                (0..self.rng.random_range(0..4))
                    .map(|_| self.value(depth + 1))
                    .collect(),
            ),
            _ => {
                let mut m = serde_json::Map::new();
                for _ in 0..self.rng.random_range(0..4) {
                    let k = self
                        .pick(&["name", "arguments", "path", "cursor", "uri", "_meta", "k"])
                        .to_string();
                    m.insert(k, self.value(depth + 1));
                }
                Value::Object(m)
            }
        }
    }

    /// A well-formed message from the grammar.
    fn base(&mut self, id: &Value) -> Value {
        let tool_call = |name: &str, args: Value| json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":name,"arguments":args}});
        match self.rng.random_range(0..10) {
            0 => json!({"jsonrpc":"2.0","id":id,"method":"tools/list"}),
            1 => json!({"jsonrpc":"2.0","id":id,"method":"ping"}),
            2 => tool_call("stat", json!({"path":"hello.txt"})),
            3 => tool_call(
                "read_file",
                json!({"path":"hello.txt","offset":1,"limit":1}),
            ),
            4 => tool_call("list_dir", json!({"path":"."})),
            5 => tool_call("no_such_tool", json!({})),
            6 => {
                json!({"jsonrpc":"2.0","id":id,"method":"resources/read","params":{"uri":"artifact://nope"}})
            }
            // Never names a request in flight: a cancelled request is, by the protocol, not answered.
            7 => {
                json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":format!("never-{}", self.serial)}})
            }
            8 => json!({"jsonrpc":"2.0","id":id,"result":{}}),
            _ => json!({"jsonrpc":"2.0","id":id,"method":"resources/list"}),
        }
    }

    fn case(&mut self) -> Case {
        let id = self.id();
        let mut message = self.base(&id);
        let object = message.as_object_mut().unwrap();
        let text = match self.rng.random_range(0..16) {
            0 => {
                object.insert("params".into(), self.value(0));
                None
            }
            1 => {
                object.insert("jsonrpc".into(), self.value(0));
                None
            }
            2 => {
                object.remove("jsonrpc");
                None
            }
            3 => {
                // Ids the SDK cannot carry, still unique: past i64, fractional, or of another type.
                let n = self.serial;
                let odd = match self.rng.random_range(0..4) {
                    0 => json!(9_223_372_036_854_775_808u64 + n),
                    1 => json!(n as f64 + 0.5),
                    2 => json!(-(n as f64) * 1e30),
                    _ => self
                        .pick(&[json!(null), json!(true), json!([n]), json!({"n": n})])
                        .clone(),
                };
                object.insert("id".into(), odd);
                None
            }
            4 => {
                object.remove("id");
                None
            }
            5 => {
                object.remove("method");
                None
            }
            6 => {
                let m = self.value(0);
                object.insert("method".into(), m);
                None
            }
            7 => {
                let m = self
                    .pick(&[
                        "no/such",
                        "tools/cal",
                        "initialize",
                        "notifications/progress",
                        "sampling/createMessage",
                        "",
                    ])
                    .to_string();
                object.insert("method".into(), json!(m));
                None
            }
            8 => {
                object.insert("result".into(), json!({}));
                None
            }
            9 => {
                // Thousands deep: past serde_json's nesting limit.
                let depth = self.rng.random_range(100..3000);
                let deep = format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
                let mut text = serde_json::to_vec(&message).unwrap();
                text.truncate(text.len() - 1);
                text.extend(format!(r#","deep":{deep}}}"#).as_bytes());
                Some(text)
            }
            10 => {
                let mut text = serde_json::to_vec(&message).unwrap();
                let at = self.rng.random_range(0..text.len());
                text.truncate(at);
                Some(text)
            }
            11 => {
                // A byte changed anywhere but in the id, which must stay unique.
                let mut text = serde_json::to_vec(&message).unwrap();
                let id_text = format!(r#""id":{}"#, serde_json::to_string(&id).unwrap());
                let id_at = find(&text, id_text.as_bytes());
                let mut at = self.rng.random_range(0..text.len());
                if let Some(start) = id_at
                    && (start..start + id_text.len()).contains(&at)
                {
                    at = (start + id_text.len()) % text.len();
                }
                text[at] = self.rng.random_range(0u8..=255);
                Some(text)
            }
            12 => Some(serde_json::to_vec(&json!([message])).unwrap()),
            13 => Some(serde_json::to_vec(&self.value(0)).unwrap()),
            _ => None,
        };
        let mut text = text.unwrap_or_else(|| serde_json::to_vec(&message).unwrap());
        // One message per line: a newline the mutation made is another byte instead.
        for b in &mut text {
            if *b == b'\n' {
                *b = b' ';
            }
        }
        Case {
            text,
            original_id: id,
        }
    }

    /// A message over the 4 MiB limit, its id first.
    fn oversized(&mut self) -> Case {
        let id = self.id();
        let mut text = serde_json::to_vec(&json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":"read_file","arguments":{"path":""}}})).unwrap();
        let tail = text.split_off(text.len() - 4);
        text.extend(std::iter::repeat_n(b'a', tackle_mcp::MAX_MESSAGE_BYTES));
        text.extend(tail);
        Case {
            text,
            original_id: id,
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// What a message must get back.
#[derive(Debug, Clone, PartialEq)]
enum Expect {
    /// Exactly one answer with this id.
    Id(Value),
    /// At most one answer, with `null` or (read from the text's start) the original id.
    Unreadable,
    /// No answer.
    Nothing,
}

/// The oracle: read independently of the server, from the message as plain JSON.
fn expect(text: &[u8]) -> Expect {
    let text = text.strip_suffix(b"\r").unwrap_or(text);
    if text.iter().all(u8::is_ascii_whitespace) {
        return Expect::Nothing;
    }
    let Ok(value) = serde_json::from_slice::<Value>(text) else {
        return Expect::Unreadable;
    };
    let Value::Object(o) = value else {
        return Expect::Unreadable;
    };
    let is_response =
        !o.contains_key("method") && (o.contains_key("result") || o.contains_key("error"));
    match o.get("id") {
        _ if is_response => Expect::Nothing,
        None if o.contains_key("method") => Expect::Nothing,
        Some(id @ (Value::String(_) | Value::Number(_))) => Expect::Id(id.clone()),
        _ => Expect::Unreadable,
    }
}

/// A key under which equal ids meet: numbers by value (1.0 is 1), strings as themselves.
fn id_key(id: &Value) -> String {
    match id {
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => format!("n{i}"),
            (_, Some(u), _) => format!("n{u}"),
            (_, _, Some(f)) if f.fract() == 0.0 && f.abs() < 9e15 => format!("n{}", f as i64),
            // Exact: ids are echoed as written (serde_json's float_roundtrip reads them exactly).
            (_, _, Some(f)) => format!("f{f:e}"),
            _ => format!("?{n}"),
        },
        Value::String(s) => format!("s{s}"),
        other => format!("x{other}"),
    }
}

/// Checks the answers against the cases; `answers` are the ids of every message received
/// that had an `id` member.
fn check(cases: &[Case], answers: &[Value]) -> Result<(), String> {
    let mut got: BTreeMap<String, usize> = BTreeMap::new();
    let mut nulls = 0usize;
    for id in answers {
        if id.is_null() {
            nulls += 1;
        } else {
            *got.entry(id_key(id)).or_default() += 1;
        }
    }
    let mut problems = Vec::new();
    let mut unreadable = 0usize;
    for case in cases {
        let shown = String::from_utf8_lossy(&case.text[..case.text.len().min(300)]).into_owned();
        match expect(&case.text) {
            Expect::Id(id) => match got.remove(&id_key(&id)) {
                Some(1) => {}
                n => problems.push(format!("{n:?} answers (want 1) with id {id} to {shown}")),
            },
            Expect::Unreadable => {
                unreadable += 1;
                // Its own id, read from the start of the text, stands for the null.
                if let Some(1) = got.remove(&id_key(&case.original_id)) {
                    nulls += 1;
                }
            }
            Expect::Nothing => {
                if let Some(n) = got.remove(&id_key(&case.original_id)) {
                    problems.push(format!("{n} answers (want none) to {shown}"));
                }
            }
        }
    }
    if nulls > unreadable {
        problems.push(format!(
            "{nulls} answers with id null for {unreadable} messages whose id is unreadable"
        ));
    }
    for (id, n) in got {
        problems.push(format!("{n} answers with id {id}, which no message had"));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} problems:\n{}",
            problems.len(),
            problems.join("\n")
        ))
    }
}

#[test]
fn stdio_answers_every_mutated_message_and_keeps_serving() {
    let count = env_count("TACKLE_FUZZ_STDIO", 5000);
    let mut generator = Generator::new(seed());
    let mut cases: Vec<Case> = (0..count).map(|_| generator.case()).collect();
    for at in [count / 4, count / 2, count * 3 / 4] {
        cases.insert(at.min(cases.len()), generator.oversized());
    }
    let p = project();
    let mut server = p
        .tackle(["serve"])
        .timeout(Duration::from_secs(120))
        .spawn();
    let mut stdin = server.0.stdin.take().unwrap();
    let stdout = server.0.stdout.take().unwrap();
    let stderr = server.0.stderr.take().unwrap();
    let errors = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = BufReader::new(stderr).read_to_string(&mut s);
        s
    });
    let (tx, rx) = mpsc::channel::<Value>();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let msg: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"));
            if tx.send(msg).is_err() {
                break;
            }
        }
    });
    let mut input = Vec::new();
    for line in [INIT, INITIALIZED] {
        input.extend(line.as_bytes());
        input.push(b'\n');
    }
    for case in &cases {
        input.extend(&case.text);
        input.push(b'\n');
    }
    input.extend(FINAL.as_bytes());
    input.push(b'\n');
    let writer = std::thread::spawn(move || {
        stdin.write_all(&input).unwrap();
        stdin
    });
    let mut answers = Vec::new();
    let last = loop {
        let Ok(msg) = rx.recv_timeout(Duration::from_secs(60)) else {
            let status = server.0.try_wait().unwrap();
            panic!(
                "no answer to the final call within 60 s (server status {status:?}); stderr:\n{}",
                {
                    let _ = server.0.kill();
                    errors.join().unwrap()
                }
            );
        };
        if msg["id"] == "final" {
            break msg;
        }
        if let Some(id) = msg.get("id") {
            answers.push(id.clone());
        }
    };
    // Everything sent before the final call is answered before it, except the SDK's own
    // answers still in flight: end the input and collect the rest.
    drop(writer.join().unwrap());
    for msg in rx.iter() {
        if let Some(id) = msg.get("id") {
            answers.push(id.clone());
        }
    }
    reader.join().unwrap();
    let status = server.0.wait().unwrap();
    let stderr = errors.join().unwrap();
    assert!(
        status.success(),
        "tackle serve ended with {status}; stderr:\n{stderr}"
    );
    assert_eq!(last["result"]["isError"], false, "{last}");
    answers.retain(|id| id != "init");
    if let Err(problems) = check(&cases, &answers) {
        panic!("{problems}");
    }
    eprintln!(
        "stdio: {} messages, {} answers, no crash",
        cases.len(),
        answers.len()
    );
}

/// Start `tackle serve --http 127.0.0.1:0` and return it with the address it bound.
fn serve_http(p: &Project) -> (KillOnDrop, SocketAddr) {
    let mut child = p
        .tackle(["serve", "--http", "127.0.0.1:0", "--no-token"])
        .spawn();
    let addr: SocketAddr = child.http_address();
    (child, addr)
}

/// One HTTP POST: the status, the session header, and every JSON-RPC message in the body.
fn post(addr: SocketAddr, session: Option<&str>, body: &[u8]) -> (u16, Option<String>, Vec<Value>) {
    let answer = harness::http::post(addr, session, body);
    (answer.status, answer.session, answer.messages)
}

#[test]
fn http_answers_every_mutated_message_and_keeps_serving() {
    let count = env_count("TACKLE_FUZZ_HTTP", 1000);
    let mut generator = Generator::new(seed() ^ 0x4854_5450);
    let mut cases: Vec<Case> = (0..count).map(|_| generator.case()).collect();
    cases.insert(cases.len() / 2, generator.oversized());
    let p = project();
    let (_server, addr) = serve_http(&p);
    let (status, session, _) = post(addr, None, INIT.as_bytes());
    assert_eq!(status, 200);
    let session = session.expect("initialize gave no Mcp-Session-Id");
    post(addr, Some(&session), INITIALIZED.as_bytes());
    let mut answers = Vec::new();
    let mut problems = Vec::new();
    for case in &cases {
        let (status, _, messages) = post(addr, Some(&session), &case.text);
        if status == 0 || status >= 500 {
            problems.push(format!(
                "status {status} for {}",
                String::from_utf8_lossy(&case.text[..case.text.len().min(300)])
            ));
        }
        answers.extend(messages.iter().filter_map(|m| m.get("id").cloned()));
    }
    let (status, _, last) = post(addr, Some(&session), FINAL.as_bytes());
    assert_eq!(status, 200);
    assert_eq!(
        last.last().map(|m| &m["result"]["isError"]),
        Some(&json!(false)),
        "{last:?}"
    );
    // Over HTTP every body is answered: a notification or response that does not decode gets
    // 400 with id null, which the oracle counts as the "no answer" it is on stdio.
    let answered_nobody = cases
        .iter()
        .filter(|c| {
            expect(&c.text) == Expect::Nothing
                && matches!(
                    tackle_mcp::screen::screen(&c.text),
                    tackle_mcp::screen::Screened::Reject(_)
                )
        })
        .count();
    let mut surplus_nulls = answered_nobody;
    answers.retain(|a| {
        let drop = a.is_null() && surplus_nulls > 0;
        surplus_nulls -= usize::from(drop);
        !drop
    });
    if let Err(p) = check(&cases, &answers) {
        problems.push(p);
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    eprintln!("http: {} messages, no crash", cases.len());
}
