//! A loopback HTTP/1.1 server for network-tool tests, a stub resolver and a recording dialer.
//!
//! The server runs on plain threads (one per connection) so it needs nothing from the async
//! runtime under test; routes are closures over the request path. It counts the connections it
//! accepted, so a test can prove a refused URL never reached it. The stub resolver answers from
//! a table (a name absent from it fails: no test ever resolves a real name), and the recording
//! dialer notes every address the client asked for before connecting to the loopback server.

#![allow(dead_code)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // test scaffolding: a failure should panic loudly

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tackle_net::{Dialer, Resolver};

/// What a route answers.
pub enum Reply {
    /// Status, headers, body.
    Full(u16, Vec<(String, String)>, Vec<u8>),
    /// Read the request and never answer (until the client goes away).
    Hang,
    /// Send the head with a Content-Length, then stall before the body.
    HangBody,
}

pub fn reply(status: u16, content_type: Option<&str>, body: impl Into<Vec<u8>>) -> Reply {
    let headers = content_type
        .map(|c| vec![("Content-Type".to_owned(), c.to_owned())])
        .unwrap_or_default();
    Reply::Full(status, headers, body.into())
}

pub fn redirect(status: u16, location: &str) -> Reply {
    Reply::Full(
        status,
        vec![("Location".to_owned(), location.to_owned())],
        Vec::new(),
    )
}

/// A received request: method, path, headers, body.
#[derive(Clone, Debug)]
pub struct Seen {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

type Route = dyn Fn(&str) -> Reply + Send + Sync;

pub struct Server {
    pub addr: SocketAddr,
    accepted: Arc<AtomicUsize>,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Server {
    /// Starts a server on 127.0.0.1 with an ephemeral port.
    pub fn start(route: impl Fn(&str) -> Reply + Send + Sync + 'static) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let addr = listener.local_addr().expect("local addr");
        let accepted = Arc::new(AtomicUsize::new(0));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let route: Arc<Route> = Arc::new(route);
        let (a, s) = (accepted.clone(), seen.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { continue };
                a.fetch_add(1, Ordering::SeqCst);
                let (route, seen) = (route.clone(), s.clone());
                std::thread::spawn(move || serve(conn, &*route, &seen));
            }
        });
        Server {
            addr,
            accepted,
            seen,
        }
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// `http://127.0.0.1:<port><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub fn connections(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }

    pub fn requests(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

fn serve(mut conn: TcpStream, route: &Route, seen: &Mutex<Vec<Seen>>) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        match conn.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next().unwrap_or("").split(' ');
    let method = first.next().unwrap_or("").to_owned();
    let path = first.next().unwrap_or("").to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[head_end..].to_vec();
    while body.len() < length {
        match conn.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => body.extend_from_slice(&chunk[..n]),
        }
    }
    seen.lock().unwrap().push(Seen {
        method,
        path: path.clone(),
        headers,
        body,
    });
    match route(&path) {
        Reply::Full(status, headers, body) => {
            let mut out = format!(
                "HTTP/1.1 {status} X\r\nContent-Length: {}\r\nConnection: close\r\n",
                body.len()
            );
            for (k, v) in headers {
                out.push_str(&format!("{k}: {v}\r\n"));
            }
            out.push_str("\r\n");
            // The client may stop reading at its cap and close; a failed write is expected then.
            let _ = conn.write_all(out.as_bytes());
            let _ = conn.write_all(&body);
        }
        Reply::Hang => {
            // Block until the client closes the connection.
            let _ = conn.read(&mut chunk);
        }
        Reply::HangBody => {
            let _ = conn.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\nstart",
            );
            let _ = conn.read(&mut chunk);
        }
    }
}

/// Answers names from a table: each name has a sequence of answers, used in turn (the last
/// one repeats). A name not in the table fails, so no test falls through to real DNS.
#[derive(Default)]
pub struct StubResolver {
    answers: Mutex<HashMap<String, Vec<Vec<IpAddr>>>>,
    calls: Mutex<Vec<String>>,
}

impl StubResolver {
    pub fn new(table: &[(&str, &[&str])]) -> Arc<StubResolver> {
        let stub = StubResolver::default();
        for (name, ips) in table {
            stub.answer(name, ips);
        }
        Arc::new(stub)
    }

    /// Adds one more answer for `name`.
    pub fn answer(&self, name: &str, ips: &[&str]) {
        self.answers
            .lock()
            .unwrap()
            .entry(name.to_owned())
            .or_default()
            .push(ips.iter().map(|i| i.parse().unwrap()).collect());
    }

    pub fn calls(&self) -> Vec<String> {
        self.calls.lock().unwrap().clone()
    }
}

#[async_trait::async_trait]
impl Resolver for StubResolver {
    async fn resolve(&self, host: &str, _port: u16) -> std::io::Result<Vec<IpAddr>> {
        self.calls.lock().unwrap().push(host.to_owned());
        let mut answers = self.answers.lock().unwrap();
        let Some(list) = answers.get_mut(host) else {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("stub resolver: no answer for {host}"),
            ));
        };
        Ok(if list.len() > 1 {
            list.remove(0)
        } else {
            list[0].clone()
        })
    }
}

/// Records every address the client dials, then connects to `target` (the loopback server)
/// instead, so a test can see which address was dialed without leaving the machine.
pub struct RecordingDialer {
    pub target: SocketAddr,
    dialed: Mutex<Vec<SocketAddr>>,
}

impl RecordingDialer {
    pub fn new(target: SocketAddr) -> Arc<RecordingDialer> {
        Arc::new(RecordingDialer {
            target,
            dialed: Mutex::new(Vec::new()),
        })
    }

    pub fn dialed(&self) -> Vec<SocketAddr> {
        self.dialed.lock().unwrap().clone()
    }
}

#[async_trait::async_trait]
impl Dialer for RecordingDialer {
    async fn dial(&self, addr: SocketAddr) -> std::io::Result<tokio::net::TcpStream> {
        self.dialed.lock().unwrap().push(addr);
        tokio::net::TcpStream::connect(self.target).await
    }
}
