//! `tackle serve` end to end: the official MCP Python SDK as the client over stdio and
//! Streamable HTTP, the HTTP front door's refusals, and stdio hygiene (nothing but protocol on
//! stdout, exit on stdin EOF).
//!
//! The Python SDK lives in a venv at `target/mcp-venv` (`scripts/install-test-deps` builds it). Under `CI` a
//! missing venv fails the test with the command to fix it; elsewhere the test builds it on first
//! use. Progress and cancellation are tested at the Rust level with test-only tools
//! (`crates/mcp/tests/server.rs`), so the shipped binary carries no test tools.

#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns: a failure should panic loudly

mod harness;
mod mcp_venv;

use mcp_venv::venv_python;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::Command;

use harness::{KillOnDrop, Output, Project};
use serde_json::Value;

fn client_script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp_client.py")
}

fn project() -> Project {
    let p = Project::new();
    p.write("hello.txt", "hello\nworld\n");
    p.write("secret.txt", "s3cret\n");
    p
}

/// What every transport must show the Python client.
fn assert_interop(out: &Value) {
    assert_eq!(out["server"], "tackle", "{out:#}");
    assert_eq!(out["tools"]["read_file"]["read_only"], true, "{out:#}");
    assert_eq!(out["tools"]["read_file"]["destructive"], false, "{out:#}");
    assert_eq!(out["read"]["is_error"], false, "{out:#}");
    assert!(
        out["read"]["text"]
            .as_str()
            .unwrap()
            .starts_with("hello\nworld\n"),
        "{out:#}"
    );
    assert_eq!(out["read"]["meta"]["total_lines"], 2, "{out:#}");
    // What Claude Code and Codex show their model when structuredContent is present is only
    // that, and Gemini CLI and opencode show every text block: so there is none, and one text.
    for call in ["read", "denied", "bad_args"] {
        assert!(out[call]["structured"].is_null(), "{out:#}");
        assert_eq!(out[call]["texts"], 1, "{out:#}");
    }
    assert!(
        out["bad_args"]["text"].as_str().unwrap().contains("$.path"),
        "an error's text is its whole message: {out:#}"
    );
    assert_eq!(out["denied"]["is_error"], true, "{out:#}");
    assert_eq!(
        out["denied"]["meta"]["code"], "permission_denied",
        "{out:#}"
    );
    assert_eq!(out["bad_args"]["is_error"], true, "{out:#}");
    assert_eq!(
        out["bad_args"]["meta"]["code"], "invalid_arguments",
        "{out:#}"
    );
    assert_eq!(out["bad_args"]["meta"]["path"], "$.path", "{out:#}");
    assert!(
        out["unknown"]
            .as_str()
            .unwrap()
            .contains("unknown tool `no_such_tool`"),
        "{out:#}"
    );
    assert_eq!(out["after_errors"]["is_error"], false, "{out:#}");
}

fn run_client(args: &[&str]) -> Value {
    run_client_with(args, None)
}

/// The client, sending `bearer` as its token when given.
fn run_client_with(args: &[&str], bearer: Option<&str>) -> Value {
    let mut cmd = Command::new(venv_python());
    if let Some(bearer) = bearer {
        cmd.env("MCP_BEARER", bearer);
    }
    let out = cmd
        .arg(client_script())
        .args(args)
        .env("XDG_CONFIG_HOME", "/nonexistent/tackle-tests-user-config")
        .env("TACKLE_HEADLESS", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "python client failed\n--- stdout ---\n{stdout}\n--- stderr ---\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("client output is not JSON ({e}): {stdout}"))
}

#[test]
fn python_sdk_over_stdio() {
    let p = project();
    let root = p.path().to_str().unwrap().to_owned();
    let out = run_client(&[
        "stdio",
        env!("CARGO_BIN_EXE_tackle"),
        "--root",
        &root,
        "--deny",
        "read:secret.txt",
        "serve",
    ]);
    assert_interop(&out);
}

/// An `initialize` request, as every HTTP test opens with.
const INITIALIZE: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;

/// Start `tackle serve --http 127.0.0.1:0` and return it with the address it bound and the
/// token it asks for (this user's kept one: the project's HOME stands for the user's).
fn serve_http(p: &Project) -> (KillOnDrop, SocketAddr, String) {
    let mut child = p
        .tackle([
            "--deny",
            "read:secret.txt",
            "serve",
            "--http",
            "127.0.0.1:0",
        ])
        .spawn();
    let addr: SocketAddr = child.http_address();
    let token = std::fs::read_to_string(p.home().join(".local/state/tackle/serve/token")).unwrap();
    (child, addr, token)
}

/// `tackle serve --http 127.0.0.1:0 --no-token`, for the tests of what a body gets.
fn serve_http_open(p: &Project) -> (KillOnDrop, SocketAddr) {
    let mut child = p
        .tackle([
            "--deny",
            "read:secret.txt",
            "serve",
            "--http",
            "127.0.0.1:0",
            "--no-token",
        ])
        .spawn();
    let addr: SocketAddr = child.http_address();
    (child, addr)
}

#[test]
fn python_sdk_over_http() {
    let p = project();
    let (_server, addr, token) = serve_http(&p);
    let out = run_client_with(&["http", &format!("http://{addr}/mcp")], Some(&token));
    assert_interop(&out);
}

/// A loopback port is open to every local user: without `--token-env`, the server asks for
/// this user's kept token (drawn once, 0600), and `--no-token` is the explicit way out.
#[test]
fn http_on_loopback_asks_for_the_users_kept_token_unless_told_no_token() {
    let p = project();
    let (server, addr, token) = serve_http(&p);
    let bearer = format!("Bearer {token}");
    assert_eq!(post(addr, &[], INITIALIZE), 401, "no token");
    assert_eq!(
        post(
            addr,
            &[("Authorization", "Bearer not-the-token-0123456789abcdef0123")],
            INITIALIZE
        ),
        401,
        "a wrong token"
    );
    assert_eq!(post(addr, &[("Authorization", &bearer)], INITIALIZE), 200);
    let path = p.home().join(".local/state/tackle/serve/token");
    use std::os::unix::fs::PermissionsExt as _;
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    drop(server);
    // Started again, the same token: a client's configuration keeps working.
    let (_again, addr, again) = serve_http(&p);
    assert_eq!(again, token);
    assert_eq!(post(addr, &[("Authorization", &bearer)], INITIALIZE), 200);
    // The user's way out, on loopback only, said when it starts.
    let mut open = p
        .tackle(["serve", "--http", "127.0.0.1:0", "--no-token"])
        .spawn();
    let open_addr = open.http_address();
    assert_eq!(post(open_addr, &[], INITIALIZE), 200);
    p.tackle(["serve", "--http", "0.0.0.0:0", "--no-token"])
        .run()
        .code(2)
        .stderr_contains("--no-token serves loopback only");
}

/// One raw HTTP/1.1 POST; returns the status code.
fn post(addr: SocketAddr, headers: &[(&str, &str)], body: &[u8]) -> u16 {
    let mut s = TcpStream::connect(addr).unwrap();
    let mut req = format!(
        "POST /mcp HTTP/1.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        req.push_str(&format!("Host: {addr}\r\n"));
    }
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).unwrap();
    let _ = s.write_all(body);
    let mut response = String::new();
    let _ = s.read_to_string(&mut response);
    response
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {response:?}"))
}

#[test]
fn http_refuses_foreign_origins_hosts_and_oversized_bodies() {
    let p = project();
    let (_server, addr, token) = serve_http(&p);
    let bearer = format!("Bearer {token}");
    let authorized = ("Authorization", bearer.as_str());
    let port = addr.port().to_string();
    let same_origin = format!("http://127.0.0.1:{port}");
    let rebinding_with_port = format!("evil.example:{port}");
    type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, u16);
    let table: &[Case] = &[
        ("same origin", vec![("Origin", same_origin.as_str())], 200),
        ("no origin (a non-browser client)", vec![], 200),
        (
            "foreign origin",
            vec![("Origin", "http://evil.example")],
            403,
        ),
        (
            "foreign origin on a loopback port",
            vec![("Origin", "http://127.0.0.1:1")],
            403,
        ),
        ("rebinding host", vec![("Host", "evil.example")], 403),
        (
            "rebinding host with our port",
            vec![("Host", rebinding_with_port.as_str())],
            403,
        ),
    ];
    for (what, headers, want) in table {
        let mut headers = headers.clone();
        headers.push(authorized);
        assert_eq!(post(addr, &headers, INITIALIZE), *want, "{what}");
    }
    let huge = vec![b' '; tackle_mcp::MAX_MESSAGE_BYTES + 1];
    assert_eq!(post(addr, &[authorized], &huge), 413, "oversized body");
}

#[test]
fn http_refuses_a_public_bind_without_a_token() {
    let p = project();
    p.tackle(["serve", "--http", "0.0.0.0:0"])
        .run()
        .code(2)
        .stderr_contains("not a loopback address, without a bearer token");
}

/// Issue 13 §9: a bearer token must be at least 32 bytes, so it cannot be guessed.
#[test]
fn http_refuses_a_short_token() {
    let p = project();
    p.tackle([
        "serve",
        "--http",
        "127.0.0.1:0",
        "--token-env",
        "TACKLE_TEST_SERVE_TOKEN",
    ])
    .env("TACKLE_TEST_SERVE_TOKEN", "hunter2")
    .run()
    .code(2)
    .stderr_contains("the token is 7 bytes; use at least 32 random bytes");
}

/// What the stdio test sends: start-up, a listing, an unknown method, a bad cursor, a call.
const STDIO_SESSION: [&str; 6] = [
    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#,
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    r#"{"jsonrpc":"2.0","id":3,"method":"no/such/method"}"#,
    r#"{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"cursor":"bogus"}}"#,
    r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"hello.txt"}}}"#,
];

/// Every stdout line is a JSON-RPC message, and each request got its answer.
/// The posture line reaches stderr only with `--verbose` (stderr is no terminal here): clients
/// log a server's stderr as errors.
fn check_stdio_session(out: &Output, stdout: &str, verbose: bool) {
    out.success();
    assert_eq!(
        out.stderr.contains("posture: mode ask"),
        verbose,
        "stderr: {}",
        out.stderr
    );
    let mut by_id = std::collections::BTreeMap::new();
    for line in stdout.lines() {
        let msg: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| out.fail(&format!("stdout line is not JSON ({e}): {line:?}")));
        if msg["jsonrpc"] != "2.0" {
            out.fail(&format!("stdout line is not JSON-RPC: {line:?}"));
        }
        if let Some(id) = msg["id"].as_u64() {
            by_id.insert(id, msg);
        }
    }
    assert!(
        by_id
            .get(&1)
            .is_some_and(|m| m["result"]["serverInfo"]["name"] == "tackle"),
        "{by_id:#?}"
    );
    assert!(
        by_id[&2]["result"]["tools"]
            .as_array()
            .is_some_and(|t| !t.is_empty())
    );
    assert_eq!(by_id[&3]["error"]["code"], -32601);
    assert_eq!(by_id[&4]["error"]["code"], -32602);
    assert_eq!(by_id[&5]["result"]["isError"], false);
}

/// Hosts connect stdio through pipes (tokio, Python), socketpairs (Node's libuv), or, by hand,
/// files: each is served, only protocol reaches stdout, and end of input ends the server.
#[test]
fn stdio_serves_only_protocol_on_stdout_and_exits_on_eof() {
    use std::os::unix::net::UnixStream;
    use std::process::Stdio;
    let input = STDIO_SESSION.join("\n") + "\n";
    for kind in ["pipe", "socketpair", "file"] {
        let p = project();
        let (out, stdout) = match kind {
            "pipe" => {
                let out = p.tackle(["serve", "--verbose"]).stdin(&input).run();
                let stdout = out.stdout.clone();
                (out, stdout)
            }
            "socketpair" => {
                let (mut ours_in, theirs_in) = UnixStream::pair().unwrap();
                let (mut ours_out, theirs_out) = UnixStream::pair().unwrap();
                ours_in.write_all(input.as_bytes()).unwrap();
                ours_in.shutdown(std::net::Shutdown::Write).unwrap();
                let reader = std::thread::spawn(move || {
                    let mut s = String::new();
                    ours_out.read_to_string(&mut s).unwrap();
                    s
                });
                let out = p.tackle(["serve"]).run_with_stdio(
                    Stdio::from(std::os::fd::OwnedFd::from(theirs_in)),
                    Stdio::from(std::os::fd::OwnedFd::from(theirs_out)),
                );
                (out, reader.join().unwrap())
            }
            "file" => {
                let dir = tempfile::tempdir().unwrap();
                let (in_path, out_path) = (dir.path().join("in"), dir.path().join("out"));
                std::fs::write(&in_path, &input).unwrap();
                let out = p.tackle(["serve"]).run_with_stdio(
                    Stdio::from(std::fs::File::open(&in_path).unwrap()),
                    Stdio::from(std::fs::File::create(&out_path).unwrap()),
                );
                (out, std::fs::read_to_string(&out_path).unwrap())
            }
            _ => unreachable!(),
        };
        eprintln!("stdio kind: {kind}");
        check_stdio_session(&out, &stdout, kind == "pipe");
    }
}

/// Issue 18 §3 and §5: notifications before `initialize` do not end the server, a request
/// before it is answered, a line over the limit is answered with its id, and every malformed
/// request is answered with its own id and the right code; the server then serves a call.
#[test]
fn stdio_answers_every_request_and_survives_what_comes_before_initialize() {
    let p = project();
    let huge = format!(
        r#"{{"jsonrpc":"2.0","id":"huge","method":"tools/call","params":{{"name":"write_file","arguments":{{"path":"x","content":"{}"}}}}}}"#,
        "x".repeat(tackle_mcp::MAX_MESSAGE_BYTES)
    );
    let lines: Vec<String> = [
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
        r#"{"jsonrpc":"2.0","id":"early","method":"tools/list"}"#,
        STDIO_SESSION[0],
        STDIO_SESSION[1],
        &huge,
        r#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":[1,2]}"#,
        r#"{"jsonrpc":"2.0","id":11,"method":"tools/call","params":1.5}"#,
        r#"{"jsonrpc":2.0,"id":12,"method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","id":9223372036854775808,"method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","id":true,"method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","id":13,"method":"no/such","params":[1]}"#,
        r#"{"jsonrpc":"2.0","id":14}"#,
        r#"{"jsonrpc":"2.0","id":15,"method":"tools/call""#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":[1]}"#,
        STDIO_SESSION[5],
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let out = p.tackle(["serve"]).stdin(lines.join("\n") + "\n").run();
    out.success();
    let mut answers: Vec<(Value, Value)> = Vec::new();
    for line in out.stdout.lines() {
        let msg: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| out.fail(&format!("stdout line is not JSON ({e}): {line:?}")));
        if msg.get("id").is_some() {
            answers.push((msg["id"].clone(), msg["error"]["code"].clone()));
        }
    }
    let want: Vec<(Value, Value)> = [
        (serde_json::json!("early"), serde_json::json!(-32600)),
        (serde_json::json!(1), Value::Null),
        (serde_json::json!("huge"), serde_json::json!(-32600)),
        (serde_json::json!(10), serde_json::json!(-32602)),
        (serde_json::json!(11), serde_json::json!(-32602)),
        (serde_json::json!(12), serde_json::json!(-32600)),
        (
            serde_json::json!(9223372036854775808u64),
            serde_json::json!(-32600),
        ),
        (Value::Null, serde_json::json!(-32600)),
        (serde_json::json!(13), serde_json::json!(-32601)),
        (serde_json::json!(14), serde_json::json!(-32600)),
        (serde_json::json!(15), serde_json::json!(-32700)),
        (serde_json::json!(5), Value::Null),
    ]
    .into_iter()
    .collect();
    // Our answers are written in order; the SDK's (initialize, the call) may interleave.
    let mut got = answers.clone();
    let mut want_sorted = want.clone();
    let key = |a: &(Value, Value)| format!("{a:?}");
    got.sort_by_key(key);
    want_sorted.sort_by_key(key);
    assert_eq!(got, want_sorted, "stdout:\n{}", out.stdout);
    let call = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|m| m["id"] == 5)
        .unwrap();
    assert_eq!(call["result"]["isError"], false, "{call}");
}

/// Issue 18 §10: malformed JSON is 400 with -32700 (not 415), a body that is JSON but not a
/// request is 400 with its id and code, and a 50 MB body is a readable 413 (not a reset).
#[test]
fn http_answers_malformed_and_oversized_bodies_readably() {
    let p = project();
    let (_server, addr) = serve_http_open(&p);
    let mut huge = br#"{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{"name":"x","arguments":{"s":""#.to_vec();
    huge.resize(50 * 1000 * 1000, b'a');
    type Row<'a> = (&'a str, &'a [u8], u16, Value, i64);
    let table: &[Row] = &[
        ("malformed json", b"{not json", 400, Value::Null, -32700),
        ("empty body", b"", 400, Value::Null, -32700),
        (
            "array params",
            br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":[1,2]}"#,
            400,
            serde_json::json!(3),
            -32602,
        ),
        (
            "numeric jsonrpc",
            br#"{"jsonrpc":2.0,"id":"s","method":"initialize"}"#,
            400,
            serde_json::json!("s"),
            -32600,
        ),
        (
            "an id past i64",
            br#"{"jsonrpc":"2.0","id":9223372036854775808,"method":"ping"}"#,
            400,
            serde_json::json!(9223372036854775808u64),
            -32600,
        ),
        ("50 MB", &huge, 413, serde_json::json!(77), -32600),
    ];
    for (what, body, status, id, code) in table {
        let answer = harness::http::post(addr, None, body);
        let (got, text) = (answer.status, answer.body);
        assert_eq!(got, *status, "{what}: {text}");
        let error: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{what}: the body is not JSON ({e}): {text}"));
        assert_eq!(&error["id"], id, "{what}: {text}");
        assert_eq!(error["error"]["code"], *code, "{what}: {text}");
    }
    // And the server still serves.
    assert_eq!(post(addr, &[], INITIALIZE), 200);
}

/// Inside an MCP session every request is answered with its id and the right code: a body the
/// SDK refuses (params that are not an object, malformed JSON, a numeric `jsonrpc`) with 400 and
/// the screen's error; a served method whose params decode only as a custom request (no tool
/// name) with -32602 and why, and an unserved one with -32601, both on the session's stream.
#[test]
fn http_answers_bad_requests_inside_a_session_with_their_ids() {
    let p = project();
    let (_server, addr) = serve_http_open(&p);
    let opened = harness::http::post(addr, None, INITIALIZE);
    assert_eq!(opened.status, 200, "{:?}", opened.messages);
    let session = opened.session.expect("initialize gave no Mcp-Session-Id");
    let session = Some(session.as_str());
    let initialized = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(harness::http::post(addr, session, initialized).status, 202);
    type Row<'a> = (&'a str, &'a [u8], u16, Value, i64, &'a str);
    let table: &[Row] = &[
        (
            "array params",
            br#"{"jsonrpc":"2.0","id":21,"method":"tools/call","params":[1,2]}"#,
            400,
            serde_json::json!(21),
            -32602,
            "invalid params for `tools/call`",
        ),
        (
            "no tool name",
            br#"{"jsonrpc":"2.0","id":"n","method":"tools/call","params":{"arguments":{}}}"#,
            200,
            serde_json::json!("n"),
            -32602,
            "name",
        ),
        (
            "unserved method",
            br#"{"jsonrpc":"2.0","id":23,"method":"tools/frobnicate","params":{}}"#,
            200,
            serde_json::json!(23),
            -32601,
            "tools/frobnicate",
        ),
        (
            "malformed json",
            br#"{"jsonrpc":"2.0","id":24,"method":"#,
            400,
            serde_json::json!(24),
            -32700,
            "not valid JSON",
        ),
        (
            "numeric jsonrpc",
            br#"{"jsonrpc":2.0,"id":25,"method":"ping"}"#,
            400,
            serde_json::json!(25),
            -32600,
            "jsonrpc",
        ),
    ];
    for (what, body, status, id, code, says) in table {
        let got = harness::http::post(addr, session, body);
        assert_eq!(got.status, *status, "{what}: {:?}", got.messages);
        // A 200 answers on an SSE stream, a 400 with one JSON object: either way, one answer.
        let answer = got
            .messages
            .iter()
            .find(|m| m.get("id").is_some())
            .unwrap_or_else(|| panic!("{what}: no JSON-RPC answer in {:?}", got.messages));
        assert_eq!(&answer["id"], id, "{what}: {answer}");
        assert_eq!(answer["error"]["code"], *code, "{what}: {answer}");
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(says), "{what}: {message}");
    }
    // The session still serves.
    let ping = br#"{"jsonrpc":"2.0","id":30,"method":"ping"}"#;
    let pong = harness::http::post(addr, session, ping);
    assert_eq!(pong.status, 200);
    assert!(
        pong.messages
            .iter()
            .any(|m| m["id"] == 30 && m.get("result").is_some()),
        "{:?}",
        pong.messages
    );
}
