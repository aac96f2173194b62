//! MCP over Streamable HTTP under load: `tackle serve --http` beside two rmcp servers served
//! the same way (this benchmark re-executes itself as each), in one run: a minimal echo server,
//! and a same-work server whose tools do tackle's file work and nothing more
//! (`mcp_http_load/same_work.rs`).
//!
//! 1. Load: 50 concurrent clients, each its own MCP session on one kept-alive connection,
//!    calling a mix of `stat`, a 100 KiB `read_file` and `grep` over 20 files (the echo server
//!    answers the same mix with text of the same sizes it makes up: 144 bytes, the same 100 KiB,
//!    530 bytes; the same-work server does the work) for `TACKLE_BENCH_LOAD_SECS` (default 30) per
//!    side, split into alternating rounds so a change in the machine's load falls on every
//!    side. Printed: calls/s and tackle's ratio to each peer, the same-work server's own ratio
//!    to echo, p50 and p99 per side, each server's CPU time per call (from `/proc/<pid>/stat`;
//!    the figure other load on a shared machine moves least), the load generator's CPU per call
//!    on each side (the clients share the cores, so a larger answer costs calls/s there too), and
//!    tackle's RSS (`VmRSS`) before and after.
//!
//!    The target is against the same-work server (>= 0.9x): what tackle adds to a call (gate,
//!    confinement, event log, retention) may cost at most a tenth of a plain server's calls/s.
//!    Against echo no server that does the mix's work can reach 0.9x: the same-work server, rmcp
//!    itself doing only the file work, gets about half of echo's calls/s.
//! 2. The transport alone: `ping` from 50 sessions to tackle and to the echo server for
//!    `TACKLE_BENCH_PING_SECS` (default 10) per side, in alternating rounds: calls/s, p50, p99
//!    and server CPU per request, and tackle's ratio (target >= 0.9x). Here both do the same
//!    work, so this is the ratio that says whether tackle's HTTP serving is as fast as rmcp's.
//! 3. Sessions: `TACKLE_BENCH_SESSIONS` (default 5,000) MCP sessions opened, used (one `stat`)
//!    and closed (HTTP DELETE) in waves of 50 (the server keeps at most 64 open). Printed:
//!    tackle's RSS before, at the peak, and after.
//!
//! Run: `cargo bench -p tackle-bench --bench mcp_http_load`
//! (smoke run: `TACKLE_BENCH_LOAD_SECS=2 TACKLE_BENCH_SESSIONS=200 cargo bench ...`; one tool's
//! share: `TACKLE_BENCH_LOAD_TOOL=stat|read_file|grep`, each peer then answering that tool's
//! counterpart only)

#[path = "mcp_http_load/same_work.rs"]
mod same_work;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ContentBlock, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};
use tackle_bench::Stats;

type BenchResult<T> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

/// Set in a re-executed child: `echo` serves [`Echo`]; a path serves [`same_work::SameWork`]
/// over the project there.
const PEER_ENV: &str = "TACKLE_BENCH_HTTP_PEER";
const CLIENTS: usize = 50;
const ROUNDS: u32 = 3;
const WAVE: usize = 50;

/// The peer: one `echo` tool returning its text, or `lines` lines of the 100 KiB file's text.
#[derive(Clone)]
struct Echo;

/// What both peers announce: tools, and nothing else.
fn tools_only() -> ServerConfig {
    ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
}

/// A peer's tool list: each name with itself as description and an open object schema.
fn listed_tools(names: &[&'static str]) -> rmcp::model::ListToolsResult {
    let schema = Arc::new(rmcp::model::JsonObject::from_iter([(
        "type".to_owned(),
        json!("object"),
    )]));
    rmcp::model::ListToolsResult::with_all_items(
        names
            .iter()
            .map(|&name| Tool::new(name, name, Arc::clone(&schema)))
            .collect(),
    )
}

impl ServerHandler for Echo {
    fn get_info(&self) -> ServerConfig {
        tools_only()
    }
    async fn list_tools(
        &self,
        _: Option<rmcp::model::PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListToolsResult, ErrorData> {
        Ok(listed_tools(&["echo"]))
    }
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        let text = match args.get("lines").and_then(Value::as_u64) {
            Some(n) => args
                .get("line")
                .and_then(Value::as_str)
                .map_or_else(big_line, |l| format!("{l}\n"))
                .repeat(n as usize),
            None => args
                .get("text")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
        };
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }
}

fn big_line() -> String {
    format!(
        "{}\n",
        "abcdefghij".repeat(7).chars().take(63).collect::<String>()
    )
}

/// Serves `handler` over Streamable HTTP on loopback, printing `port <n>` on stdout.
async fn serve_peer<H: ServerHandler + Clone + Send + Sync + 'static>(
    handler: H,
) -> BenchResult<()> {
    use hyper_util::rt::{TokioExecutor, TokioIo};
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let port = listener.local_addr()?.port();
    let service = StreamableHttpService::new(
        move || Ok(handler.clone()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default()
            .with_allowed_hosts(["127.0.0.1".to_owned(), format!("127.0.0.1:{port}")]),
    );
    println!("port {port}");
    loop {
        let (stream, _) = listener.accept().await?;
        // As tackle does: without it a kept-alive client waits on delayed ACKs.
        let _ = stream.set_nodelay(true);
        let service = service.clone();
        let handler = hyper::service::service_fn(move |req| {
            let mut service = service.clone();
            async move { tower_service::Service::call(&mut service, req).await }
        });
        tokio::spawn(async move {
            let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                .serve_connection(TokioIo::new(stream), handler)
                .await;
        });
    }
}

/// One MCP session over HTTP on one kept-alive connection of its own, the answer read from
/// the response's SSE `data:` line (or its JSON body).
///
/// The connection is hyper's HTTP/1 client connection, held for the session's life: a pooled
/// client (reqwest) can find its connection not yet back in the pool when the next call goes
/// out, and then opens another, which measured one new TCP connection per 4 to 8 calls here
/// and loaded every side with connection set-up it does not do for a real client.
struct Session {
    sender: hyper::client::conn::http1::SendRequest<Full<Bytes>>,
    authority: String,
    id: String,
    next: u64,
}

impl Session {
    async fn open(url: &str) -> BenchResult<Self> {
        let authority = url
            .strip_prefix("http://")
            .and_then(|rest| rest.split('/').next())
            .ok_or_else(|| format!("not an http:// URL: {url}"))?
            .to_owned();
        let stream = tokio::net::TcpStream::connect(&authority).await?;
        stream.set_nodelay(true)?;
        let (sender, connection) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream)).await?;
        // Drives the connection; it ends when the session drops its sender.
        tokio::spawn(connection);
        let mut session = Self {
            sender,
            authority,
            id: String::new(),
            next: 1,
        };
        let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
            "protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}});
        let (parts, _) = session.send(http::Method::POST, Some(&init)).await?;
        session.id = parts
            .headers
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .ok_or("initialize gave no Mcp-Session-Id")?
            .to_owned();
        let notified = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
        session.send(http::Method::POST, Some(&notified)).await?;
        Ok(session)
    }

    /// One request on the session's connection; the response's head and whole body.
    async fn send(
        &mut self,
        method: http::Method,
        body: Option<&Value>,
    ) -> BenchResult<(http::response::Parts, Bytes)> {
        let mut request = http::Request::builder()
            .method(method)
            .uri("/mcp")
            .header("host", &self.authority)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        if !self.id.is_empty() {
            request = request
                .header("mcp-session-id", &self.id)
                .header("mcp-protocol-version", "2025-06-18");
        }
        let body = match body {
            Some(v) => Bytes::from(serde_json::to_vec(v)?),
            None => Bytes::new(),
        };
        self.sender.ready().await?;
        let response = self
            .sender
            .send_request(request.body(Full::new(body))?)
            .await?;
        let (parts, body) = response.into_parts();
        let bytes = body.collect().await?.to_bytes();
        if !parts.status.is_success() {
            return Err(
                format!("HTTP {}: {}", parts.status, String::from_utf8_lossy(&bytes)).into(),
            );
        }
        Ok((parts, bytes))
    }

    async fn call(&mut self, tool: &'static str, args: &Value) -> BenchResult<usize> {
        self.request(&Request::Call(tool, args.clone())).await
    }

    /// One request of a mix, answered; the answer's size.
    async fn request(&mut self, request: &Request) -> BenchResult<usize> {
        self.next += 1;
        let id = self.next;
        let (tool, body) = match request {
            Request::Call(tool, args) => (
                *tool,
                json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
                    "params":{"name":tool,"arguments":args}}),
            ),
            Request::Ping => ("ping", json!({"jsonrpc":"2.0","id":id,"method":"ping"})),
        };
        let (_, bytes) = self.send(http::Method::POST, Some(&body)).await?;
        let text = std::str::from_utf8(&bytes)?;
        let answer = text
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .chain(std::iter::once(text))
            .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
            .find(|m| m["id"] == id)
            .ok_or_else(|| format!("no answer to {tool} in {:.200}", text))?;
        if answer.get("error").is_some() || answer["result"]["isError"] == json!(true) {
            return Err(format!("{tool} failed: {answer:.300}").into());
        }
        Ok(text.len())
    }

    async fn close(mut self) -> BenchResult<()> {
        self.send(http::Method::DELETE, None).await?;
        Ok(())
    }
}

/// One request a client sends: a tool call, or a `ping` (the transport alone: no tool, no work).
#[derive(Clone)]
enum Request {
    Call(&'static str, Value),
    Ping,
}

/// The requests of one side, sent in turn.
type Mix = Arc<Vec<Request>>;

/// The mix, or only its entry at the position of `TACKLE_BENCH_LOAD_TOOL`'s tool in the
/// tackle mix (`stat`, `read_file`, `grep`), to see what one tool costs.
fn only_chosen(mix: Vec<(&'static str, Value)>) -> Mix {
    let chosen = std::env::var("TACKLE_BENCH_LOAD_TOOL").ok();
    let mix: Vec<Request> = mix
        .into_iter()
        .map(|(tool, args)| Request::Call(tool, args))
        .collect();
    match chosen.and_then(|t| ["stat", "read_file", "grep"].iter().position(|n| *n == t)) {
        Some(i) => Arc::new(vec![mix[i].clone()]),
        None => Arc::new(mix),
    }
}

fn tackle_mix() -> Mix {
    only_chosen(vec![
        ("stat", json!({"path": "f.txt"})),
        ("read_file", json!({"path": "big.txt", "limit": 2000})),
        ("grep", json!({"pattern": "fn main", "path": "src"})),
    ])
}

fn echo_mix() -> Mix {
    only_chosen(vec![
        // The sizes of tackle's answers: stat's 143 bytes (8 lines of 18 here), the 100 KiB
        // page, and grep's 20 matching lines (530 bytes).
        ("echo", json!({"line": "  \"key\": \"value\",", "lines": 8})),
        ("echo", json!({"lines": 1600})),
        (
            "echo",
            json!({"line": "src/m0.rs:33:fn main() {}", "lines": 20}),
        ),
    ])
}

/// `CLIENTS` sessions calling `mix` in turn for `secs`; every call's latency.
async fn load(url: &str, mix: Mix, secs: Duration) -> BenchResult<Vec<Duration>> {
    let mut tasks = Vec::new();
    for c in 0..CLIENTS {
        let url = url.to_owned();
        let mix = Arc::clone(&mix);
        tasks.push(tokio::spawn(async move {
            let mut session = Session::open(&url).await?;
            let mut samples = Vec::new();
            let end = Instant::now() + secs;
            let mut i = c;
            while Instant::now() < end {
                let request = &mix[i % mix.len()];
                i += 1;
                let t = Instant::now();
                session.request(request).await?;
                samples.push(t.elapsed());
            }
            session.close().await?;
            BenchResult::Ok(samples)
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await??);
    }
    Ok(all)
}

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// CPU time (user + system) `pid` has used so far. Read around each side's rounds, it gives the
/// server's CPU per call, which other load on a shared machine moves far less than calls/s.
fn cpu_time(pid: u32) -> Duration {
    // SAFETY: sysconf has no preconditions; it reads a constant of the system.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            // Fields after the command name, which is in parentheses and may hold spaces.
            let rest = s.rsplit_once(')')?.1;
            let fields: Vec<&str> = rest.split_whitespace().collect();
            let user: f64 = fields.get(11)?.parse().ok()?;
            let system: f64 = fields.get(12)?.parse().ok()?;
            Some(Duration::from_secs_f64((user + system) / ticks))
        })
        .unwrap_or_default()
}

fn per_call(cpu: Duration, calls: usize) -> Duration {
    cpu.checked_div(calls.max(1) as u32).unwrap_or_default()
}

fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn tackle_binary() -> BenchResult<PathBuf> {
    Ok(tackle_bench::release::release_tackle()?)
}

/// A child that prints where it listens on one of its streams; killed on drop.
struct Server {
    child: std::process::Child,
    url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_tackle(bin: &Path, root: &Path) -> BenchResult<Server> {
    use std::io::BufRead;
    let mut child = Command::new(bin)
        .arg("--root")
        .arg(root)
        .args(["--headless", "serve", "--http", "127.0.0.1:0", "--no-token"])
        .env("XDG_CONFIG_HOME", "/nonexistent/tackle-bench-user-config")
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()?;
    let stderr = child.stderr.take().ok_or("no stderr")?;
    let mut lines = std::io::BufReader::new(stderr).lines();
    let url = loop {
        let line = lines
            .next()
            .ok_or("tackle serve exited before listening")??;
        if let Some(rest) = line.strip_prefix("tackle serve: listening on ") {
            break rest.trim().to_owned();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    Ok(Server { child, url })
}

/// This benchmark re-executed as a peer server: `peer` is `echo`, or the project directory the
/// same-work server works in.
fn start_peer(peer: &std::ffi::OsStr) -> BenchResult<Server> {
    use std::io::BufRead;
    let mut child = Command::new(std::env::current_exe()?)
        .env(PEER_ENV, peer)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let mut line = String::new();
    std::io::BufReader::new(stdout).read_line(&mut line)?;
    let port = line
        .trim()
        .strip_prefix("port ")
        .ok_or("the peer server did not say its port")?;
    Ok(Server {
        child,
        url: format!("http://127.0.0.1:{port}/mcp"),
    })
}

fn per_s(samples: usize, time: Duration) -> f64 {
    samples as f64 / time.as_secs_f64()
}

async fn bench() -> BenchResult<()> {
    let bin = tackle_binary()?;
    let project = tempfile::tempdir()?;
    std::fs::create_dir(project.path().join(".agents"))?;
    std::fs::create_dir(project.path().join("src"))?;
    std::fs::write(project.path().join("f.txt"), "x\n")?;
    std::fs::write(project.path().join("big.txt"), big_line().repeat(1600))?; // 100 KiB
    for i in 0..20 {
        std::fs::write(
            project.path().join(format!("src/m{i}.rs")),
            format!(
                "// module {i}\nfn helper() {{}}\n{}fn main() {{}}\n",
                big_line().repeat(30)
            ),
        )?;
    }
    let tackle = start_tackle(&bin, project.path())?;
    let echo = start_peer("echo".as_ref())?;
    let same = start_peer(project.path().as_os_str())?;
    let pid = tackle.child.id();
    let secs = Duration::from_secs(env_u64("TACKLE_BENCH_LOAD_SECS", 30).max(1));

    // 1. Load.
    let rss_start = rss_kib(pid);
    let round = secs / ROUNDS;
    let mut sides = [
        Side::new("tackle serve", &tackle, tackle_mix()),
        Side::new("rmcp echo server", &echo, echo_mix()),
        Side::new("rmcp same-work server", &same, tackle_mix()),
    ];
    for _ in 0..ROUNDS {
        for side in &mut sides {
            side.round(round).await?;
        }
    }
    let rss_end = rss_kib(pid);
    println!(
        "mcp over streamable HTTP, {CLIENTS} concurrent sessions, {:.0?} per side in {ROUNDS} alternating rounds",
        secs
    );
    println!(
        "  mix: stat, read_file of 100 KiB, grep over 20 files (echo: the same sizes of text)"
    );
    let [t, e, w] = sides.map(Side::finish);
    for side in [&e, &w, &t] {
        println!(
            "  {:<22} {}   {:>8.0} calls/s   p50 {:.1?} p99 {:.1?}",
            side.name, side.stats, side.rate, side.stats.median, side.stats.p99
        );
    }
    println!(
        "  tackle / same-work calls/s: {1:.2}x (target >= 0.9x); tackle / echo: {0:.2}x (bounded by the work: see same-work / echo)",
        t.rate / e.rate,
        t.rate / w.rate
    );
    // What a plain server doing the mix's work over rmcp gets against echo. It adds nothing to
    // the work, so it shows how much of echo's rate the work itself takes away; not a hard
    // ceiling (a server can do a tool's work more cheaply than it does).
    println!(
        "  same-work / echo calls/s: {:.2}x (a plain server doing this work over rmcp)",
        w.rate / e.rate
    );
    println!(
        "  server CPU per call: tackle {:.0?}, echo {:.0?}, same-work {:.0?} (the load generator shares the machine)",
        t.cpu_per_call, e.cpu_per_call, w.cpu_per_call
    );
    println!(
        "  load generator CPU per call: tackle {:.0?}, echo {:.0?}, same-work {:.0?} (sending each call and reading its answer)",
        t.client_cpu_per_call, e.client_cpu_per_call, w.client_cpu_per_call
    );
    println!(
        "  tackle RSS: {} at start, {} at end",
        mib(rss_start),
        mib(rss_end)
    );

    // 2. The transport alone: `ping`, which reaches the session and no tool, from as many
    // clients. What tackle adds to every request before a tool runs (the token check, the body
    // limit, the session cap) against rmcp served plainly.
    let ping_secs = Duration::from_secs(env_u64("TACKLE_BENCH_PING_SECS", 10).max(1));
    let mut pings = [
        Side::new("tackle serve", &tackle, Arc::new(vec![Request::Ping])),
        Side::new("rmcp echo server", &echo, Arc::new(vec![Request::Ping])),
    ];
    for _ in 0..ROUNDS {
        for side in &mut pings {
            side.round(ping_secs / ROUNDS).await?;
        }
    }
    let [tp, ep] = pings.map(Side::finish);
    println!(
        "transport alone: ping, {CLIENTS} concurrent sessions, {ping_secs:.0?} per side in {ROUNDS} alternating rounds"
    );
    for side in [&ep, &tp] {
        println!(
            "  {:<22} {}   {:>8.0} calls/s   p50 {:.1?} p99 {:.1?}   server CPU {:.0?} per call",
            side.name, side.stats, side.rate, side.stats.median, side.stats.p99, side.cpu_per_call
        );
    }
    println!(
        "  tackle / echo ping calls/s: {:.2}x (target >= 0.9x: the transport adds nothing that costs)",
        tp.rate / ep.rate
    );

    // 3. Sessions opened, used and closed in waves.
    let total = env_u64("TACKLE_BENCH_SESSIONS", 5000) as usize;
    let rss_before = rss_kib(pid);
    let mut peak = rss_before;
    let started = Instant::now();
    let mut opened = 0;
    while opened < total {
        let wave = WAVE.min(total - opened);
        let mut tasks = Vec::new();
        for _ in 0..wave {
            let url = tackle.url.clone();
            tasks.push(tokio::spawn(async move {
                let mut session = Session::open(&url).await?;
                session.call("stat", &json!({"path": "f.txt"})).await?;
                BenchResult::Ok(session)
            }));
        }
        let mut sessions = Vec::new();
        for t in tasks {
            sessions.push(t.await??);
        }
        peak = peak.max(rss_kib(pid));
        for s in sessions {
            s.close().await?;
        }
        opened += wave;
    }
    // Closing a session ends its task at once; give the allocator a moment to hand pages back
    // before the last reading (this is a measurement, not synchronisation).
    tokio::time::sleep(Duration::from_millis(500)).await;
    let rss_after = rss_kib(pid);
    println!(
        "{total} MCP sessions opened, used (stat) and closed in waves of {WAVE} in {:.1?}",
        started.elapsed()
    );
    println!(
        "  tackle RSS: {} before, {} at the peak, {} after",
        mib(rss_before),
        mib(peak),
        mib(rss_after)
    );
    drop((echo, same, tackle));
    Ok(())
}

/// One server under load: its samples and time over every round.
struct Side<'a> {
    name: &'static str,
    server: &'a Server,
    mix: Mix,
    samples: Vec<Duration>,
    elapsed: Duration,
    cpu: Duration,
    /// The load generator's own CPU time over the rounds: what the clients spend on this side.
    client_cpu: Duration,
}

/// A side's figures once every round has run.
struct Measured {
    name: &'static str,
    stats: Stats,
    rate: f64,
    cpu_per_call: Duration,
    client_cpu_per_call: Duration,
}

impl<'a> Side<'a> {
    fn new(name: &'static str, server: &'a Server, mix: Mix) -> Self {
        Side {
            name,
            server,
            mix,
            samples: Vec::new(),
            elapsed: Duration::ZERO,
            cpu: Duration::ZERO,
            client_cpu: Duration::ZERO,
        }
    }

    async fn round(&mut self, secs: Duration) -> BenchResult<()> {
        let pid = self.server.child.id();
        let me = std::process::id();
        let (t, cpu, client_cpu) = (Instant::now(), cpu_time(pid), cpu_time(me));
        self.samples
            .extend(load(&self.server.url, Arc::clone(&self.mix), secs).await?);
        self.elapsed += t.elapsed();
        self.cpu += cpu_time(pid).saturating_sub(cpu);
        self.client_cpu += cpu_time(me).saturating_sub(client_cpu);
        Ok(())
    }

    fn finish(mut self) -> Measured {
        let calls = self.samples.len();
        Measured {
            name: self.name,
            rate: per_s(calls, self.elapsed),
            cpu_per_call: per_call(self.cpu, calls),
            client_cpu_per_call: per_call(self.client_cpu, calls),
            stats: Stats::of(&mut self.samples),
        }
    }
}

fn main() -> BenchResult<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    match std::env::var_os(PEER_ENV) {
        Some(peer) if peer == "echo" => return rt.block_on(serve_peer(Echo)),
        Some(root) => {
            let root = Arc::new(PathBuf::from(root));
            return rt.block_on(serve_peer(same_work::SameWork { root }));
        }
        None => {}
    }
    rt.block_on(bench())
}
