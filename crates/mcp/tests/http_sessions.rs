//! Issue 13 §9 at the HTTP front door: a bounded number of MCP sessions, idle ones expire, and
//! a bearer token shorter than 32 bytes is refused before anything is served.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tackle_mcp::{HttpOptions, HttpServeError, McpServer, ServerOptions, SessionLimits};
use tackle_runtime::{AllowAll, Catalog, Runtime, RuntimeConfig, Session};
use tokio_util::sync::CancellationToken;

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;

fn server(dir: &std::path::Path) -> McpServer {
    let tools = tackle_tools::builtin_tools(&tackle_tools::BuiltinConfig::default());
    let runtime = Runtime::new(
        Catalog::new(tools).unwrap(),
        Arc::new(AllowAll),
        RuntimeConfig::default(),
    );
    McpServer::new(
        runtime,
        Session::open(dir).unwrap(),
        ServerOptions {
            elicitation: false,
            client_confirms: false,
        },
    )
}

/// One `initialize` POST; the status and body.
fn initialize(addr: SocketAddr, token: Option<&str>) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    write!(
        s,
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{auth}Content-Length: {}\r\n\
         Connection: close\r\n\r\n{INIT}",
        addr.port(),
        INIT.len()
    )
    .unwrap();
    let mut response = String::new();
    s.read_to_string(&mut response).unwrap();
    let status = response
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {response:?}"));
    (status, response)
}

/// Serves on a thread of its own until the returned token is cancelled.
fn start(options: HttpOptions) -> (SocketAddr, CancellationToken, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path());
    let shutdown = CancellationToken::new();
    let stop = shutdown.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(tackle_mcp::serve_http(server, options, stop, |a| {
            tx.send(a).unwrap()
        }))
        .unwrap();
    });
    (rx.recv().unwrap(), shutdown, dir)
}

#[test]
fn sessions_past_the_limit_are_refused_until_an_idle_one_expires() {
    let idle = Duration::from_millis(400);
    let (addr, shutdown, _dir) = start(HttpOptions {
        addr: "127.0.0.1:0".parse().unwrap(),
        bearer_token: None,
        sessions: SessionLimits {
            max_sessions: 2,
            idle_expiry: idle,
        },
    });
    assert_eq!(initialize(addr, None).0, 200);
    assert_eq!(initialize(addr, None).0, 200);
    let (status, body) = initialize(addr, None);
    assert_eq!(status, 500, "{body}");
    assert!(body.contains("2 open MCP sessions, its limit"), "{body}");
    // Both sessions are idle; once the keep-alive closes them, a new one is admitted. Polled
    // with a deadline: the expiry is the server's clock, not ours.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (status, body) = initialize(addr, None);
        if status == 200 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "idle sessions never expired: {body}"
        );
        std::thread::park_timeout(idle / 4);
    }
    shutdown.cancel();
}

#[test]
fn a_short_bearer_token_is_refused_and_a_long_one_is_required() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    for (token, refused) in [
        ("short", true),
        (&"x".repeat(31)[..], true),
        (&"x".repeat(32)[..], false),
    ] {
        let shutdown = CancellationToken::new();
        let options = HttpOptions {
            addr: "127.0.0.1:0".parse().unwrap(),
            bearer_token: Some(token.to_owned()),
            sessions: SessionLimits::DEFAULT,
        };
        if refused {
            let got = rt.block_on(tackle_mcp::serve_http(
                server(dir.path()),
                options,
                shutdown,
                |_| {},
            ));
            assert!(
                matches!(got, Err(HttpServeError::Listen(tackle_net::server_guard::ListenError::TokenTooShort { len })) if len == token.len()),
                "{token}: {got:?}"
            );
        } else {
            let (addr, stop, _d) = start(options);
            assert_eq!(initialize(addr, None).0, 401);
            assert_eq!(initialize(addr, Some(&"x".repeat(32))).0, 200);
            stop.cancel();
        }
    }
}
