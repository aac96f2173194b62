//! One raw MCP request over HTTP, for tests that send what no SDK client would.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use serde_json::Value;

/// What came back for one POST.
pub struct Answer {
    pub status: u16,
    /// The response's `Mcp-Session-Id`, when it set one.
    pub session: Option<String>,
    /// The body as sent (lossily UTF-8), for messages that quote it.
    pub body: String,
    /// Every JSON-RPC message in the body: the body itself when it is JSON, else each SSE
    /// `data:` line that is.
    pub messages: Vec<Value>,
}

/// POSTs `body` to `/mcp` as JSON over HTTP/1.0 (so the body ends at close, with no chunking),
/// in `session` when given.
pub fn post(addr: SocketAddr, session: Option<&str>, body: &[u8]) -> Answer {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut head = format!(
        "POST /mcp HTTP/1.0\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
        body.len()
    );
    if let Some(id) = session {
        head.push_str(&format!(
            "Mcp-Session-Id: {id}\r\nMcp-Protocol-Version: 2025-06-18\r\n"
        ));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(body).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let raw = String::from_utf8_lossy(&raw);
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let session = head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.eq_ignore_ascii_case("mcp-session-id")
            .then(|| v.trim().to_owned())
    });
    let mut messages = Vec::new();
    if let Ok(v) = serde_json::from_str::<Value>(body) {
        messages.push(v);
    } else {
        for line in body.lines() {
            if let Some(data) = line.strip_prefix("data:")
                && let Ok(v) = serde_json::from_str::<Value>(data.trim())
            {
                messages.push(v);
            }
        }
    }
    Answer {
        status,
        session,
        messages,
        body: body.to_owned(),
    }
}
