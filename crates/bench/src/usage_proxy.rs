//! A loopback HTTP proxy in front of a model server (llama.cpp's `llama-server`) that counts
//! what each agent asks of it: every request, and the tokens the server says it read and wrote
//! for it. Agents point their base URL at the proxy, so one count serves every agent, whatever
//! it reports about itself.
//!
//! **Where the count comes from.** The server's own report, read from the answer as it passes:
//! llama-server ends every completion, on each endpoint it serves (Chat Completions, Responses,
//! Anthropic Messages), streamed or not, with a `timings` object: `prompt_n` tokens of the
//! prompt evaluated, `cache_n` taken from its prompt cache, `predicted_n` generated. The
//! prompt's size is `prompt_n + cache_n`, which is what `usage.prompt_tokens` says when a
//! client asks for usage. `usage` is read only where `timings` is missing, since whether it is
//! sent depends on the request's shape (a streamed Chat Completions answer carries it only
//! when the client asked with `stream_options.include_usage`). Rejected: counting from the
//! agents' own reports (`tackle run --json`'s `usage`, opencode's session), which would count
//! each agent its own way.
//!
//! **How a request passes.** Each request is read whole from the client and sent to the server
//! on a new connection with `connection: close` and without `accept-encoding` (so the answer
//! comes back uncompressed and ends when the server closes); the answer's bytes are written to
//! the client as they arrive, so streaming is untouched, and kept to be read once it ends. The
//! answer keeps its own framing (`content-length` or chunked), so the client's connection stays
//! usable for its next request. A client that goes away mid-answer ends the server's connection
//! too (llama-server then stops generating); that request is recorded as cut, without usage.
//!
//! Every exchange can be written to a directory (request body, answer body) as the transcript
//! of a run, the same for every agent.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Tokens the server reports for one completion.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    /// The whole prompt, cached or not.
    pub prompt_tokens: u64,
    /// The part of the prompt the server took from its cache.
    pub cached_tokens: u64,
    /// Tokens generated.
    pub completion_tokens: u64,
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, other: Self) {
        self.prompt_tokens += other.prompt_tokens;
        self.cached_tokens += other.cached_tokens;
        self.completion_tokens += other.completion_tokens;
    }
}

/// One request the proxy passed on, and what came back.
#[derive(Clone, Debug)]
pub struct Exchange {
    pub method: String,
    /// The request's path, `/v1/chat/completions` for a Chat Completions turn.
    pub path: String,
    /// The answer's status, 0 when none came.
    pub status: u16,
    /// The server's report, `None` when the answer held none (not a completion, or cut).
    pub usage: Option<Usage>,
    /// The client went away before the answer ended.
    pub cut: bool,
    /// From the request's arrival to the answer's end.
    pub elapsed: Duration,
}

impl Exchange {
    /// Whether this asked the model for a completion (a turn), not for a listing or health.
    pub fn is_model_request(&self) -> bool {
        self.method == "POST"
            && [
                "/chat/completions",
                "/responses",
                "/messages",
                "/completions",
            ]
            .iter()
            .any(|end| self.path.ends_with(end))
    }
}

/// A running proxy; it serves until the process ends.
pub struct UsageProxy {
    /// `http://127.0.0.1:<port>`, to put where the server's URL would go.
    pub url: String,
    shared: Arc<Shared>,
}

struct Shared {
    upstream: SocketAddr,
    state: Mutex<RunState>,
    /// Signalled each time an exchange is recorded.
    recorded: Condvar,
}

#[derive(Default)]
struct RunState {
    exchanges: Vec<Exchange>,
    /// Where this run's exchanges are written, numbered in arrival order.
    transcript: Option<PathBuf>,
    numbered: usize,
    /// Requests read and not yet recorded.
    in_flight: usize,
}

impl UsageProxy {
    /// Listens on an OS-chosen loopback port and passes every request to `upstream`.
    pub fn start(upstream: SocketAddr) -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let url = format!("http://{}", listener.local_addr()?);
        let shared = Arc::new(Shared {
            upstream,
            state: Mutex::new(RunState::default()),
            recorded: Condvar::new(),
        });
        let serving = shared.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                let shared = serving.clone();
                std::thread::spawn(move || serve_client(conn, &shared));
            }
        });
        Ok(Self { url, shared })
    }

    /// Starts a new run: forgets the exchanges so far and writes the next ones to
    /// `transcript` (created if missing) as `NNN-request.json` and `NNN-answer.txt`.
    pub fn begin_run(&self, transcript: &Path) -> std::io::Result<()> {
        std::fs::create_dir_all(transcript)?;
        let mut state = self.shared.lock();
        state.exchanges.clear();
        state.transcript = Some(transcript.to_path_buf());
        state.numbered = 0;
        Ok(())
    }

    /// The exchanges since [`Self::begin_run`], in the order they ended, once none is in
    /// flight. A client can have read an answer's last byte before the proxy records it, and a
    /// killed client's request runs on in the server until the proxy notices: both are waited
    /// for (at most `DRAIN`), so the count is whole and the server idle for the next run.
    pub fn take_exchanges(&self) -> Vec<Exchange> {
        const DRAIN: Duration = Duration::from_secs(300);
        let state = self.shared.lock();
        let (mut state, _) = self
            .shared
            .recorded
            .wait_timeout_while(state, DRAIN, |s| s.in_flight > 0)
            .unwrap_or_else(|p| p.into_inner());
        std::mem::take(&mut state.exchanges)
    }
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, RunState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Counts a request in flight: its number and the directory to write it to.
    fn arrived(&self) -> (usize, Option<PathBuf>) {
        let mut state = self.lock();
        state.numbered += 1;
        state.in_flight += 1;
        (state.numbered, state.transcript.clone())
    }

    fn record(&self, exchange: Exchange) {
        let mut state = self.lock();
        state.exchanges.push(exchange);
        state.in_flight -= 1;
        self.recorded.notify_all();
    }
}

/// A request as the client sent it, its body de-chunked.
struct Request {
    method: String,
    path: String,
    version: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

fn serve_client(conn: TcpStream, shared: &Shared) {
    conn.set_nodelay(true).ok();
    let Ok(mut to_client) = conn.try_clone() else {
        return;
    };
    let mut from_client = BufReader::new(conn);
    while let Some(request) = read_request(&mut from_client, &mut to_client) {
        let arrived = Instant::now();
        let (number, transcript) = shared.arrived();
        if let Some(dir) = &transcript {
            std::fs::write(dir.join(format!("{number:03}-request.json")), &request.body).ok();
        }
        let passed = pass(&request, shared.upstream, &mut to_client);
        let head = split_head(&passed.answer);
        let body = head.as_ref().map(|h| h.body.as_slice()).unwrap_or(&[]);
        let usage = if passed.cut { None } else { usage_of(body) };
        if let Some(dir) = &transcript {
            std::fs::write(dir.join(format!("{number:03}-answer.txt")), body).ok();
        }
        let exchange = Exchange {
            method: request.method,
            path: request.path,
            status: head.as_ref().map_or(0, |h| h.status),
            usage,
            cut: passed.cut,
            elapsed: arrived.elapsed(),
        };
        shared.record(exchange);
        // An answer framed by the server closing its connection ends the client's too.
        if passed.cut || head.is_none_or(|h| h.ends_at_close) {
            return;
        }
    }
}

/// What came back for one request.
struct Passed {
    /// The answer's bytes as the server sent them (head and framed body).
    answer: Vec<u8>,
    /// The client could not be written to, or the server could not be reached.
    cut: bool,
}

/// Sends `request` to the server and copies the answer to the client as it arrives.
fn pass(request: &Request, upstream: SocketAddr, to_client: &mut TcpStream) -> Passed {
    let mut answer = Vec::new();
    let Ok(mut server) = TcpStream::connect(upstream) else {
        let refusal = b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\nconnection: close\r\n\r\n";
        to_client.write_all(refusal).ok();
        return Passed {
            answer: refusal.to_vec(),
            cut: true,
        };
    };
    server.set_nodelay(true).ok();
    watch_for_hang_up(to_client, &server);
    let mut head = format!(
        "{} {} {}\r\n",
        request.method, request.path, request.version
    );
    for (name, value) in &request.headers {
        if !matches!(
            name.to_ascii_lowercase().as_str(),
            "connection"
                | "keep-alive"
                | "proxy-connection"
                | "transfer-encoding"
                | "content-length"
                | "accept-encoding"
                | "expect"
        ) {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
    }
    head.push_str(&format!(
        "content-length: {}\r\nconnection: close\r\n\r\n",
        request.body.len()
    ));
    if server.write_all(head.as_bytes()).is_err() || server.write_all(&request.body).is_err() {
        return Passed { answer, cut: true };
    }
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match server.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        answer.extend_from_slice(&buf[..n]);
        if to_client.write_all(&buf[..n]).is_err() {
            // Dropping the server's connection tells it to stop generating.
            return Passed { answer, cut: true };
        }
    }
    Passed { answer, cut: false }
}

/// Ends the server's connection when the client hangs up before the answer has started (a
/// killed agent while the server still reads the prompt): llama-server stops work on a
/// request whose connection is gone, so the next run does not queue behind it. The watcher
/// waits for the client's next bytes; when they are a request, not an end, it just returns.
fn watch_for_hang_up(client: &TcpStream, server: &TcpStream) {
    let (Ok(client), Ok(server)) = (client.try_clone(), server.try_clone()) else {
        return;
    };
    std::thread::spawn(move || {
        let mut byte = [0u8; 1];
        if matches!(client.peek(&mut byte), Ok(0) | Err(_)) {
            server.shutdown(Shutdown::Both).ok();
        }
    });
}

/// One request from the client: its head, then its body by `content-length` or chunked;
/// `None` at the end of the connection. Answers `expect: 100-continue` before reading the body.
fn read_request(reader: &mut BufReader<TcpStream>, to_client: &mut TcpStream) -> Option<Request> {
    let mut line = String::new();
    if reader.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_owned();
    let path = parts.next()?.to_owned();
    let version = parts.next().unwrap_or("HTTP/1.1").to_owned();
    let mut headers = Vec::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        let (name, value) = header.split_once(':')?;
        headers.push((name.trim().to_owned(), value.trim().to_owned()));
    }
    let has = |name: &str, needle: &str| {
        headers
            .iter()
            .any(|(n, v)| n.eq_ignore_ascii_case(name) && v.to_ascii_lowercase().contains(needle))
    };
    if has("expect", "100-continue") {
        to_client.write_all(b"HTTP/1.1 100 Continue\r\n\r\n").ok()?;
    }
    let body = if has("transfer-encoding", "chunked") {
        read_chunked(reader)?
    } else {
        let length = headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
            .map_or(Some(0), |(_, v)| v.parse().ok())?;
        let mut body = vec![0; length];
        reader.read_exact(&mut body).ok()?;
        body
    };
    Some(Request {
        method,
        path,
        version,
        headers,
        body,
    })
}

/// A chunked body, de-chunked (trailers skipped).
fn read_chunked(reader: &mut impl BufRead) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    let mut line = String::new();
    loop {
        line.clear();
        reader.read_line(&mut line).ok()?;
        let size = usize::from_str_radix(line.trim().split(';').next()?.trim(), 16).ok()?;
        if size == 0 {
            // Trailers, up to the blank line.
            loop {
                line.clear();
                if reader.read_line(&mut line).ok()? == 0 || line.trim().is_empty() {
                    return Some(body);
                }
            }
        }
        let start = body.len();
        body.resize(start + size, 0);
        reader.read_exact(&mut body[start..]).ok()?;
        let mut crlf = [0u8; 2];
        reader.read_exact(&mut crlf).ok()?;
    }
}

/// An answer's status and body, de-chunked.
struct Head {
    status: u16,
    body: Vec<u8>,
    /// Neither `content-length` nor chunked: the body ends when the connection does.
    ends_at_close: bool,
}

/// Splits a whole answer into its status and body, or `None` when it has no complete head.
fn split_head(answer: &[u8]) -> Option<Head> {
    let end = answer.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&answer[..end]).ok()?;
    let rest = &answer[end + 4..];
    let mut lines = head.split("\r\n");
    let status = lines.next()?.split_whitespace().nth(1)?.parse().ok()?;
    let (mut chunked, mut length) = (false, None);
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let (name, value) = (name.trim().to_ascii_lowercase(), value.trim());
        if name == "transfer-encoding" && value.to_ascii_lowercase().contains("chunked") {
            chunked = true;
        } else if name == "content-length" {
            length = value.parse::<usize>().ok();
        }
    }
    let body = if chunked {
        read_chunked(&mut &rest[..]).unwrap_or_default()
    } else {
        rest[..length.unwrap_or(rest.len()).min(rest.len())].to_vec()
    };
    Some(Head {
        status,
        body,
        ends_at_close: !chunked && length.is_none(),
    })
}

/// The server's report in an answer body: a JSON document or a server-sent event stream. The
/// last report in the body wins (a stream reports once, at its end).
pub fn usage_of(body: &[u8]) -> Option<Usage> {
    let text = String::from_utf8_lossy(body);
    let documents: Vec<Value> = if text.trim_start().starts_with('{') {
        serde_json::from_str(&text).ok().into_iter().collect()
    } else {
        text.lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter_map(|data| serde_json::from_str(data.trim()).ok())
            .collect()
    };
    let from_timings = documents.iter().rev().find_map(|doc| {
        let timings = reported(doc, "timings")?;
        let count = |key: &str| timings[key].as_u64();
        let (evaluated, cached) = (count("prompt_n")?, count("cache_n").unwrap_or(0));
        Some(Usage {
            prompt_tokens: evaluated + cached,
            cached_tokens: cached,
            completion_tokens: count("predicted_n").unwrap_or(0),
        })
    });
    from_timings.or_else(|| {
        documents.iter().rev().find_map(|doc| {
            let usage = reported(doc, "usage")?;
            let first = |keys: &[&str]| keys.iter().find_map(|k| usage[*k].as_u64());
            Some(Usage {
                prompt_tokens: first(&["prompt_tokens", "input_tokens"])?,
                cached_tokens: ["prompt_tokens_details", "input_tokens_details"]
                    .iter()
                    .find_map(|d| usage[*d]["cached_tokens"].as_u64())
                    .unwrap_or(0),
                completion_tokens: first(&["completion_tokens", "output_tokens"]).unwrap_or(0),
            })
        })
    })
}

/// `key` of a document, at its top or inside its `response` (a Responses event), when it is a
/// non-empty object.
fn reported<'a>(doc: &'a Value, key: &str) -> Option<&'a Value> {
    [&doc[key], &doc["response"][key]]
        .into_iter()
        .find(|v| v.as_object().is_some_and(|o| !o.is_empty()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_streamed_chat_answer_is_counted_from_its_timings() {
        let body = concat!(
            "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\n",
            "data: {\"choices\":[{\"finish_reason\":\"stop\",\"delta\":{}}],",
            "\"timings\":{\"cache_n\":213,\"prompt_n\":1,\"predicted_n\":22}}\n\n",
            "data: [DONE]\n\n"
        );
        assert_eq!(
            usage_of(body.as_bytes()),
            Some(Usage {
                prompt_tokens: 214,
                cached_tokens: 213,
                completion_tokens: 22
            })
        );
    }

    #[test]
    fn a_responses_stream_is_counted_from_its_completed_event() {
        let body = concat!(
            "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{}}\n\n",
            "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":",
            "{\"usage\":{\"input_tokens\":214,\"output_tokens\":22}},",
            "\"timings\":{\"cache_n\":200,\"prompt_n\":14,\"predicted_n\":22}}\n\n"
        );
        assert_eq!(
            usage_of(body.as_bytes()),
            Some(Usage {
                prompt_tokens: 214,
                cached_tokens: 200,
                completion_tokens: 22
            })
        );
    }

    #[test]
    fn usage_is_read_where_timings_are_missing() {
        let chat = br#"{"choices":[],"usage":{"prompt_tokens":50,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":40}}}"#;
        assert_eq!(
            usage_of(chat),
            Some(Usage {
                prompt_tokens: 50,
                cached_tokens: 40,
                completion_tokens: 5
            })
        );
        let responses = "data: {\"type\":\"response.completed\",\"response\":{\"usage\":{\"input_tokens\":9,\"output_tokens\":2}}}\n";
        assert_eq!(
            usage_of(responses.as_bytes()),
            Some(Usage {
                prompt_tokens: 9,
                cached_tokens: 0,
                completion_tokens: 2
            })
        );
        assert_eq!(usage_of(b"{\"object\":\"list\",\"data\":[]}"), None);
        assert_eq!(usage_of(b"data: {\"choices\":[]}\n\n"), None);
    }

    #[test]
    fn a_chunked_answer_is_split_into_status_and_body() {
        let answer = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n";
        let head = split_head(answer).unwrap();
        assert_eq!(head.status, 200);
        assert_eq!(head.body, b"hello world");
        assert!(!head.ends_at_close);
        let closed = split_head(b"HTTP/1.1 500 Internal\r\nserver: x\r\n\r\noops").unwrap();
        assert_eq!((closed.status, closed.body.as_slice()), (500, &b"oops"[..]));
        assert!(closed.ends_at_close);
    }

    /// A server that answers each request on its connection with a chunked stream carrying
    /// `timings`, and closes: the proxy passes the stream through byte for byte, keeps the
    /// client's connection for a second request, and counts both.
    #[test]
    fn requests_pass_through_and_are_counted() {
        let upstream = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = upstream.local_addr().unwrap();
        const STREAM: &str =
            "data: {\"timings\":{\"prompt_n\":7,\"cache_n\":3,\"predicted_n\":2}}\n\n";
        std::thread::spawn(move || {
            for conn in upstream.incoming().flatten() {
                let mut writer = conn.try_clone().unwrap();
                let mut reader = BufReader::new(conn);
                let request = read_request(&mut reader, &mut writer).unwrap();
                let echoed = String::from_utf8(request.body).unwrap();
                let chunk = format!("{STREAM}{echoed}");
                write!(
                    writer,
                    "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n{:x}\r\n{chunk}\r\n0\r\n\r\n",
                    chunk.len()
                )
                .unwrap();
            }
        });
        let proxy = UsageProxy::start(addr).unwrap();
        let dir = tempfile::tempdir().unwrap();
        proxy.begin_run(dir.path()).unwrap();
        let mut client = TcpStream::connect(proxy.url.trim_start_matches("http://")).unwrap();
        let mut reader = BufReader::new(client.try_clone().unwrap());
        for body in ["one", "two"] {
            write!(
                client,
                "POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-length: {}\r\n\r\n{body}",
                body.len()
            )
            .unwrap();
            let mut head = String::new();
            while !head.ends_with("\r\n\r\n") {
                reader.read_line(&mut head).unwrap();
            }
            assert!(head.starts_with("HTTP/1.1 200"), "{head}");
            let answer = read_chunked(&mut reader).unwrap();
            assert_eq!(
                String::from_utf8(answer).unwrap(),
                format!("{STREAM}{body}")
            );
        }
        drop(client);
        let exchanges = proxy.take_exchanges();
        assert_eq!(exchanges.len(), 2);
        for exchange in &exchanges {
            assert!(exchange.is_model_request());
            assert_eq!(exchange.status, 200);
            assert_eq!(
                exchange.usage,
                Some(Usage {
                    prompt_tokens: 10,
                    cached_tokens: 3,
                    completion_tokens: 2
                })
            );
        }
        assert_eq!(
            std::fs::read_to_string(dir.path().join("002-request.json")).unwrap(),
            "two"
        );
    }
}
