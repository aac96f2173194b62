//! Third-party MCP servers over Streamable HTTP, end to end: the Python SDK fixture server
//! (`fixtures/mcp_fixture_server.py --http`) on a loopback port the OS chose, named by a `url`
//! in `.agents/mcp.json`, seen through `tackle tools`, `tackle call` and a long-running
//! `tackle serve` (for a server that dies and comes back between calls of one process).
//!
//! The fixture prints its URL once its socket accepts connections; tests wait on that line
//! (bounded), never on a sleep.

#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns: a failure should panic loudly

mod harness;
mod mcp_venv;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use harness::{KillOnDrop, Project};
use serde_json::{Value, json};

/// How long a fixture may take to print its URL, or `tackle serve` to answer one request. Far
/// above what either needs; it only turns a hang into a failure.
const PATIENCE: Duration = Duration::from_secs(30);

fn fixture_script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp_fixture_server.py")
}

/// A running HTTP fixture server, killed when dropped.
struct HttpFixture {
    _child: KillOnDrop,
    port: u16,
}

impl HttpFixture {
    /// Start on `port` (0: the OS chooses) with extra environment, and wait for its URL line.
    fn start(port: u16, env: &[(&str, &str)]) -> Self {
        let mut cmd = Command::new(mcp_venv::venv_python());
        cmd.arg(fixture_script())
            .args(["--http", "--port", &port.to_string()])
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = KillOnDrop(cmd.spawn().unwrap());
        let stdout = child.0.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let _ = tx.send(line);
            }
        });
        let line = rx
            .recv_timeout(PATIENCE)
            .unwrap_or_else(|_| panic!("the HTTP fixture did not print its URL"));
        let port = line
            .strip_prefix("listening on http://127.0.0.1:")
            .and_then(|rest| rest.strip_suffix("/mcp"))
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("unexpected first line from the fixture: {line:?}"));
        Self {
            _child: child,
            port,
        }
    }

    fn url(&self) -> String {
        url_of(self.port)
    }
}

fn url_of(port: u16) -> String {
    format!("http://127.0.0.1:{port}/mcp")
}

/// A loopback port nothing listens on (bound by the OS, then released).
fn closed_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A project whose `.agents/mcp.json` holds `servers`.
fn project_with(servers: Value) -> Project {
    let p = Project::new();
    p.write(
        ".agents/mcp.json",
        serde_json::to_string_pretty(&json!({ "servers": servers })).unwrap(),
    );
    // The user's own servers: trusted, so they start (tests/trust.rs covers untrusted ones).
    p.trust();
    p
}

const ALLOW: [&str; 2] = ["--allow", "tool.mcp.web.*"];

#[test]
fn http_tools_join_the_catalog_and_pass_the_gate() {
    let server = HttpFixture::start(0, &[]);
    let p = project_with(json!({ "web": { "url": server.url() } }));

    let out = p.tackle(["tools", "--json"]).run();
    out.success();
    let tools = out.json();
    let echo = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "mcp__web__echo")
        .unwrap_or_else(|| out.fail("mcp__web__echo is not in the catalog"));
    assert!(
        echo["description"]
            .as_str()
            .unwrap()
            .starts_with("[MCP server `web`]"),
        "{echo:#}"
    );
    assert_eq!(echo["input_schema"]["type"], "object", "{echo:#}");

    // Allowed by a rule: the server's answer.
    let out = p
        .tackle(ALLOW)
        .args([
            "call",
            "mcp__web__echo",
            r#"{"text":"over http"}"#,
            "--json",
        ])
        .run();
    out.success();
    assert_eq!(out.text(), "over http");

    // No rule: MCP tools ask, and headless that is a refusal naming the key.
    let out = p
        .tackle(["call", "mcp__web__echo", r#"{"text":"hi"}"#, "--json"])
        .run();
    out.tool_error("approval_unavailable");
    out.stdout_contains("--allow 'tool.mcp.web.echo'");

    // Denied: not offered, so an unknown tool, while its allowed siblings still run.
    let deny = ["--allow", "tool.mcp.web.*", "--deny", "tool.mcp.web.echo"];
    p.tackle(deny)
        .args(["call", "mcp__web__echo", r#"{"text":"hi"}"#, "--json"])
        .run()
        .tool_error("unknown_tool");
    p.tackle(deny)
        .args(["call", "mcp__web__fail", r#"{"reason":"no"}"#, "--json"])
        .run()
        .tool_error("mcp_error");
}

#[test]
fn header_values_come_from_the_environment_and_the_server_checks_them() {
    let server = HttpFixture::start(0, &[("FIXTURE_TOKEN", "t0ken"), ("FIXTURE_KEY", "k3y")]);
    let p = project_with(json!({ "web": {
        "url": server.url(),
        "headers_env": {
            "Authorization": "TACKLE_TEST_WEB_TOKEN",
            "X-Fixture-Key": "TACKLE_TEST_WEB_KEY",
        },
    }}));
    let url = server.url();
    // (what, environment, expected stderr fragments when refused; None when the call works)
    type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, Option<Vec<&'a str>>);
    let table: &[Case] = &[
        (
            "both set, token with its scheme",
            vec![
                ("TACKLE_TEST_WEB_TOKEN", "Bearer t0ken"),
                ("TACKLE_TEST_WEB_KEY", "k3y"),
            ],
            None,
        ),
        (
            "both set, bare token",
            vec![
                ("TACKLE_TEST_WEB_TOKEN", "t0ken"),
                ("TACKLE_TEST_WEB_KEY", "k3y"),
            ],
            None,
        ),
        (
            "token variable unset",
            vec![("TACKLE_TEST_WEB_KEY", "k3y")],
            Some(vec!["MCP server `web`", "TACKLE_TEST_WEB_TOKEN", "not set"]),
        ),
        (
            "wrong token",
            vec![
                ("TACKLE_TEST_WEB_TOKEN", "Bearer nope"),
                ("TACKLE_TEST_WEB_KEY", "k3y"),
            ],
            Some(vec!["MCP server `web`", &url, "401", "headers_env"]),
        ),
        (
            "custom header missing",
            vec![
                ("TACKLE_TEST_WEB_TOKEN", "t0ken"),
                ("TACKLE_TEST_WEB_KEY", "wrong"),
            ],
            Some(vec!["MCP server `web`", &url, "401", "headers_env"]),
        ),
    ];
    for (what, env, refused) in table {
        let mut cmd = p.tackle(ALLOW);
        cmd.args([
            "call",
            "mcp__web__echo",
            r#"{"text":"authorized"}"#,
            "--json",
        ]);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.run();
        match refused {
            None => {
                out.success();
                assert_eq!(out.text(), "authorized", "{what}");
            }
            Some(fragments) => {
                out.tool_error("unknown_tool");
                for f in fragments {
                    out.stderr_contains(f);
                }
            }
        }
    }
}

#[test]
fn an_unreachable_url_is_named_at_once() {
    // A refused connection is an answer, not a reason to wait out a long start-up timeout.
    let url = url_of(closed_port());
    let p = project_with(json!({ "down": { "url": url, "startup_timeout_ms": 120000 } }));
    let out = p.tackle(["tools", "--json"]).timeout(PATIENCE).run();
    out.success();
    out.stderr_contains(&format!("MCP server `down` ({url}) is unavailable"));
    // The cause, not just the attempt.
    out.stderr_contains("Connection refused");
    out.stdout_lacks("mcp__down__");
}

#[test]
fn http_servers_honour_their_timeouts() {
    // A listener that never accepts: the handshake cannot complete, so start-up times out.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_url = url_of(silent.local_addr().unwrap().port());
    let server = HttpFixture::start(0, &[]);
    let p = project_with(json!({
        "web": { "url": server.url(), "timeout_ms": 300 },
        "mute": { "url": silent_url, "startup_timeout_ms": 300 },
    }));
    let out = p
        .tackle(ALLOW)
        .args(["call", "mcp__web__slow", r#"{"ms":20000}"#, "--json"])
        .timeout(PATIENCE)
        .run();
    out.tool_error("timeout");
    out.stdout_contains("timeout_ms");
    out.stderr_contains("MCP server `mute`");
    out.stderr_contains("did not start within 300 ms");
    out.stderr_contains(&silent_url);
}

/// `tackle serve` over stdio, driven one JSON-RPC request at a time.
struct Serve {
    _child: KillOnDrop,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
    next_id: u64,
}

impl Serve {
    fn start(p: &Project, args: &[&str]) -> Self {
        let mut child = p.tackle(args).arg("serve").spawn();
        let stdin = child.0.stdin.take().unwrap();
        let stdout = child.0.stdout.take().unwrap();
        let stderr = child.0.stderr.take().unwrap();
        // Drain stderr so the server never blocks on a full pipe.
        std::thread::spawn(move || for _ in BufReader::new(stderr).lines() {});
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let _ = tx.send(line);
            }
        });
        let mut s = Self {
            _child: child,
            stdin,
            lines,
            next_id: 1,
        };
        s.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "0"}}),
        );
        s.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        s
    }

    fn send(&mut self, msg: &Value) {
        writeln!(self.stdin, "{msg}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Send a request and return its response (notifications in between are skipped).
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let line = self
                .lines
                .recv_timeout(PATIENCE)
                .unwrap_or_else(|_| panic!("no answer to {method} #{id}"));
            let msg: Value = serde_json::from_str(&line).unwrap();
            if msg["id"] == id {
                return msg;
            }
        }
    }

    fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let msg = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        msg["result"].clone()
    }
}

/// The first text block: what the tool said (later blocks carry its metadata).
fn text_of(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text content in {result:#}"))
        .to_owned()
}

#[test]
fn a_server_that_dies_between_calls_is_reported_and_reconnected() {
    let server = HttpFixture::start(0, &[]);
    let port = server.port;
    let p = project_with(json!({ "web": { "url": server.url() } }));
    let mut serve = Serve::start(&p, &ALLOW);
    let echo = |serve: &mut Serve, text: &str| serve.call("mcp__web__echo", json!({"text": text}));

    let r = echo(&mut serve, "one");
    assert_eq!(r["isError"], false, "{r:#}");
    assert_eq!(text_of(&r), "one");

    // Down: the call fails naming the server and its URL, promptly.
    drop(server);
    let r = echo(&mut serve, "two");
    assert_eq!(r["isError"], true, "{r:#}");
    assert_eq!(
        r["_meta"]["tackle.dev/result"]["code"], "mcp_server_unavailable",
        "{r:#}"
    );
    let text = text_of(&r);
    assert!(text.contains("MCP server `web`"), "{text}");
    assert!(text.contains(&url_of(port)), "{text}");

    // Back (a new process, so a new session): the next call reconnects.
    let server = HttpFixture::start(port, &[]);
    let r = echo(&mut serve, "three");
    assert_eq!(r["isError"], false, "{r:#}");
    assert_eq!(text_of(&r), "three");

    // Restarted while no call was in flight: the old session is gone, and the call still
    // succeeds on a new one.
    drop(server);
    let _server = HttpFixture::start(port, &[]);
    let r = echo(&mut serve, "four");
    assert_eq!(r["isError"], false, "{r:#}");
    assert_eq!(text_of(&r), "four");
}
