//! A loopback HTTP server that answers by method and path, for tests of clients that ask a
//! server several questions (the window probe): each route's recorded answer, a fallback for
//! every other path (each server has its own 404), an optional key every route requires, and
//! hostile answers (one that never finishes, one that never ends). Every request is recorded.
//!
//! Plain threads, so both async tests and the `tackle` binary's tests use it (the binary's
//! harness includes this file). Connections are `Connection: close`; a body ends with its
//! `content-length` or, for the hostile answers, never.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// What a route answers.
#[derive(Clone, Debug)]
pub enum Reply {
    Answer {
        status: u16,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    },
    /// The head, then nothing, until the client goes away.
    Stall,
    /// The head, then bytes without end, until the client goes away.
    Endless,
    /// These bytes, whatever they are, then the connection closed.
    Raw(Vec<u8>),
}

impl Reply {
    pub fn json(status: u16, body: &str) -> Self {
        Reply::Answer {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: body.as_bytes().to_vec(),
        }
    }
}

#[derive(Clone, Debug)]
pub struct Route {
    pub method: String,
    pub path: String,
    pub reply: Reply,
}

impl Route {
    pub fn new(method: &str, path: &str, reply: Reply) -> Self {
        Self {
            method: method.into(),
            path: path.into(),
            reply,
        }
    }
}

/// A request as the server received it.
#[derive(Clone, Debug)]
pub struct Seen {
    pub method: String,
    /// The path and query.
    pub path: String,
    /// Header names lowercased.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A key every route requires: the header and its value, and the answer without them.
#[derive(Clone, Debug)]
pub struct KeyGate {
    pub header: String,
    pub value: String,
    pub refusal: Reply,
}

struct Table {
    routes: Vec<Route>,
    fallback: Reply,
    gate: Option<KeyGate>,
}

pub struct RoutedServer {
    pub addr: SocketAddr,
    seen: Arc<Mutex<Vec<Seen>>>,
    stop: Arc<AtomicBool>,
}

impl RoutedServer {
    /// Answers `routes`; any other request gets `fallback`.
    pub fn start(routes: Vec<Route>, fallback: Reply) -> Self {
        Self::start_gated(routes, fallback, None)
    }

    /// As [`RoutedServer::start`], every route behind `gate`.
    pub fn start_gated(routes: Vec<Route>, fallback: Reply, gate: Option<KeyGate>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let table = Arc::new(Table {
            routes,
            fallback,
            gate,
        });
        let (seen2, stop2) = (seen.clone(), stop.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if stop2.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(conn) = conn else { continue };
                let (table, seen) = (table.clone(), seen2.clone());
                std::thread::spawn(move || serve(conn, &table, &seen));
            }
        });
        Self { addr, seen, stop }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn requests(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

impl Drop for RoutedServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect(self.addr);
    }
}

fn serve(mut conn: TcpStream, table: &Table, seen: &Mutex<Vec<Seen>>) {
    let Some(request) = read_request(&mut conn) else {
        return;
    };
    let path_only = request.path.split('?').next().unwrap_or("").to_owned();
    let reply = match &table.gate {
        Some(gate) if request.header(&gate.header) != Some(gate.value.as_str()) => {
            gate.refusal.clone()
        }
        _ => table
            .routes
            .iter()
            .find(|r| r.method == request.method && r.path == path_only)
            .map_or_else(|| table.fallback.clone(), |r| r.reply.clone()),
    };
    seen.lock().unwrap().push(request);
    match reply {
        Reply::Answer {
            status,
            headers,
            body,
        } => {
            let mut head = format!(
                "HTTP/1.1 {status} Recorded\r\nconnection: close\r\ncontent-length: {}\r\n",
                body.len()
            );
            for (name, value) in &headers {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
            head.push_str("\r\n");
            let _ = conn.write_all(head.as_bytes());
            let _ = conn.write_all(&body);
        }
        Reply::Stall => {
            let _ = conn.write_all(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{",
            );
            // Until the client closes its side.
            let mut sink = [0u8; 256];
            while matches!(conn.read(&mut sink), Ok(n) if n > 0) {}
        }
        Reply::Raw(bytes) => {
            let _ = conn.write_all(&bytes);
        }
        Reply::Endless => {
            let _ = conn.write_all(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n",
            );
            let chunk = format!("{:x}\r\n{}\r\n", 64 * 1024, "[".repeat(64 * 1024));
            while conn.write_all(chunk.as_bytes()).is_ok() {}
        }
    }
}

fn read_request(conn: &mut TcpStream) -> Option<Seen> {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 8192];
    let header_end = loop {
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
        let n = conn.read(&mut tmp).ok()?;
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
        let n = conn.read(&mut tmp).ok()?;
        if n == 0 {
            return None;
        }
        body.extend_from_slice(&tmp[..n]);
    }
    Some(Seen {
        method,
        path,
        headers,
        body,
    })
}
