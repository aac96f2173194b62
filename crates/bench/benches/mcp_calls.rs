//! MCP: `tackle serve` beside peers, each a child process over stdio driven by the Rust SDK
//! client.
//!
//! Both sides of each comparison run in alternating rounds, so load changes fall on both.
//!
//! 1. Sequential calls/s of a trivial tool (tackle's `stat`) against a minimal rmcp echo server
//!    written here (this benchmark re-executes itself as that server). Every tackle call also
//!    passes the gate and appends two events (written before the result; `stat` is read-only,
//!    so they are synced in the background), which the echo server does not. Each server's CPU
//!    time and context switches per call are read from `/proc` around the run: the profile
//!    that says whether a gap in calls/s is work on tackle's path or waiting.
//! 2. `read_file` of a 100 KiB file against the reference Node filesystem server's
//!    `read_text_file`, and `glob` of `**/*.rs` over the vendored dependency corpus against its
//!    `search_files` (glob only when tackle's catalog has it; it says so otherwise). The Node
//!    server is installed with npm into `target/node-fs` on first run; without npm that part is
//!    skipped with a message.
//!
//! Run: `cargo bench -p tackle-bench --bench mcp_calls`

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ContentBlock, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ErrorData, RoleClient, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};
use tackle_bench::release::workspace;
use tackle_bench::{Stats, ratio};

type BenchResult<T> = Result<T, Box<dyn std::error::Error>>;

const ECHO_ENV: &str = "TACKLE_BENCH_MCP_ECHO";
const CALLS: usize = 2000;

/// The peer for calls/s: one `echo` tool returning its text argument.
#[derive(Clone)]
struct Echo;

impl ServerHandler for Echo {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
    async fn list_tools(
        &self,
        _: Option<rmcp::model::PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListToolsResult, ErrorData> {
        let schema = json!({"type": "object", "properties": {"text": {"type": "string"}}});
        let Value::Object(schema) = schema else {
            unreachable!()
        };
        Ok(rmcp::model::ListToolsResult::with_all_items(vec![
            Tool::new("echo", "echo", Arc::new(schema)),
        ]))
    }
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        // `lines`: answer with the 100 KiB file's text instead (the transport's floor for it).
        let text = match args.get("lines").and_then(Value::as_u64) {
            Some(n) => big_line().repeat(n as usize),
            None => args
                .get("text")
                .and_then(|t| t.as_str())
                .map(str::to_owned)
                .unwrap_or_default(),
        };
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }
}

type Client = RunningService<RoleClient, ()>;

/// One 64-byte line of the 100 KiB file.
fn big_line() -> String {
    format!(
        "{}\n",
        "abcdefghij".repeat(7).chars().take(63).collect::<String>()
    )
}

async fn spawn(mut cmd: tokio::process::Command) -> BenchResult<(Client, Duration, u32)> {
    cmd.stderr(std::process::Stdio::null());
    let t = Instant::now();
    let transport = TokioChildProcess::new(cmd)?;
    let pid = transport.id().ok_or("the server has no pid")?;
    let client = ().serve(transport).await?;
    client.list_all_tools().await?;
    Ok((client, t.elapsed(), pid))
}

/// What a server process has used so far: CPU time on every live thread (`schedstat`, in
/// nanoseconds) and context switches (voluntary and not), from `/proc`.
fn used(pid: u32) -> (Duration, u64) {
    let (mut cpu, mut switches) = (0u64, 0u64);
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return (Duration::ZERO, 0);
    };
    for task in tasks.flatten() {
        let dir = task.path();
        if let Ok(stat) = std::fs::read_to_string(dir.join("schedstat")) {
            cpu += stat
                .split_whitespace()
                .next()
                .and_then(|ns| ns.parse::<u64>().ok())
                .unwrap_or(0);
        }
        if let Ok(status) = std::fs::read_to_string(dir.join("status")) {
            switches += status
                .lines()
                .filter(|l| l.contains("ctxt_switches:"))
                .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
                .sum::<u64>();
        }
    }
    (Duration::from_nanos(cpu), switches)
}

async fn call(client: &Client, tool: &str, args: Value) -> BenchResult<CallToolResult> {
    let Value::Object(args) = args else {
        return Err("arguments must be an object".into());
    };
    let r = client
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(args))
        .await?;
    if r.is_error == Some(true) {
        return Err(format!("{tool} failed: {:?}", r.content).into());
    }
    Ok(r)
}

async fn time_calls(
    client: &Client,
    tool: &str,
    args: Value,
    n: usize,
) -> BenchResult<(Stats, f64)> {
    for _ in 0..n / 10 {
        call(client, tool, args.clone()).await?;
    }
    let mut samples = Vec::with_capacity(n);
    let all = Instant::now();
    for _ in 0..n {
        let t = Instant::now();
        call(client, tool, args.clone()).await?;
        samples.push(t.elapsed());
    }
    let per_s = n as f64 / all.elapsed().as_secs_f64();
    Ok((Stats::of(&mut samples), per_s))
}

/// Both sides' calls in alternating rounds of `n / ROUNDS`, so a change in the machine's load
/// falls on both: per side, the per-call stats and its calls/s over the time spent on its own
/// calls.
async fn time_interleaved(
    a: (&Client, &str, Value),
    b: (&Client, &str, Value),
    n: usize,
) -> BenchResult<((Stats, f64), (Stats, f64))> {
    const ROUNDS: usize = 20;
    let per_round = (n / ROUNDS).max(1);
    for _ in 0..per_round {
        call(a.0, a.1, a.2.clone()).await?;
        call(b.0, b.1, b.2.clone()).await?;
    }
    let (mut sa, mut sb) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let (mut ta, mut tb) = (Duration::ZERO, Duration::ZERO);
    for _ in 0..ROUNDS {
        for (side, samples, total) in [(&a, &mut sa, &mut ta), (&b, &mut sb, &mut tb)] {
            let round = Instant::now();
            for _ in 0..per_round {
                let t = Instant::now();
                call(side.0, side.1, side.2.clone()).await?;
                samples.push(t.elapsed());
            }
            *total += round.elapsed();
        }
    }
    let rate =
        |samples: &Vec<Duration>, total: Duration| samples.len() as f64 / total.as_secs_f64();
    let (ra, rb) = (rate(&sa, ta), rate(&sb, tb));
    Ok(((Stats::of(&mut sa), ra), (Stats::of(&mut sb), rb)))
}

/// A minimal JSON-RPC client over a child's stdio: one line out, one line in, parsed into a
/// `serde_json::Value`. It costs far less per message than the SDK client, so what it measures
/// is mostly the server.
struct RawClient {
    /// Killed when the client is dropped (`kill_on_drop`).
    _child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    stdout: tokio::io::BufReader<tokio::process::ChildStdout>,
    next_id: u64,
    line: String,
}

impl RawClient {
    async fn spawn(mut cmd: tokio::process::Command) -> BenchResult<Self> {
        cmd.stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true);
        let mut child = cmd.spawn()?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = tokio::io::BufReader::new(child.stdout.take().ok_or("no stdout")?);
        let mut client = Self {
            _child: child,
            stdin,
            stdout,
            next_id: 0,
            line: String::new(),
        };
        client
            .request(
                "initialize",
                json!({"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "bench", "version": "0"}}),
            )
            .await?;
        client
            .send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await?;
        Ok(client)
    }

    async fn send(&mut self, message: &Value) -> BenchResult<()> {
        use tokio::io::AsyncWriteExt;
        let mut bytes = serde_json::to_vec(message)?;
        bytes.push(b'\n');
        self.stdin.write_all(&bytes).await?;
        Ok(())
    }

    /// Sends a request and reads lines until its response (skipping notifications).
    async fn request(&mut self, method: &str, params: Value) -> BenchResult<Value> {
        use tokio::io::AsyncBufReadExt;
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await?;
        loop {
            self.line.clear();
            if self.stdout.read_line(&mut self.line).await? == 0 {
                return Err(format!("{method}: the server closed its stdout").into());
            }
            let msg: Value = serde_json::from_str(&self.line)?;
            if msg.get("id").and_then(Value::as_u64) == Some(id) {
                if msg.get("error").is_some() || msg["result"]["isError"] == json!(true) {
                    return Err(format!("{method} failed: {msg}").into());
                }
                return Ok(msg);
            }
        }
    }

    async fn call(&mut self, tool: &str, args: &Value) -> BenchResult<Value> {
        self.request("tools/call", json!({"name": tool, "arguments": args}))
            .await
    }
}

/// [`time_interleaved`] for two raw clients.
async fn time_raw_interleaved(
    a: (&mut RawClient, &str, Value),
    b: (&mut RawClient, &str, Value),
    n: usize,
) -> BenchResult<(Stats, Stats)> {
    const ROUNDS: usize = 20;
    let per_round = (n / ROUNDS).max(1);
    let (ca, ta, aa) = a;
    let (cb, tb, ab) = b;
    for _ in 0..per_round {
        ca.call(ta, &aa).await?;
        cb.call(tb, &ab).await?;
    }
    let (mut sa, mut sb) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for _ in 0..ROUNDS {
        for _ in 0..per_round {
            let t = Instant::now();
            ca.call(ta, &aa).await?;
            sa.push(t.elapsed());
        }
        for _ in 0..per_round {
            let t = Instant::now();
            cb.call(tb, &ab).await?;
            sb.push(t.elapsed());
        }
    }
    Ok((Stats::of(&mut sa), Stats::of(&mut sb)))
}

fn tackle_binary() -> BenchResult<PathBuf> {
    Ok(tackle_bench::release::release_tackle()?)
}

fn tackle_cmd(bin: &Path, root: &Path) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(bin);
    cmd.arg("--root").arg(root).arg("--headless").arg("serve");
    cmd.env("XDG_CONFIG_HOME", "/nonexistent/tackle-bench-user-config");
    cmd
}

fn node_server() -> Option<PathBuf> {
    let dir = workspace().join("target/node-fs");
    let entry = dir.join("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    if !entry.exists() {
        let ok = Command::new("npm")
            .args(["install", "-q", "--prefix"])
            .arg(&dir)
            .arg("@modelcontextprotocol/server-filesystem")
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            return None;
        }
    }
    entry.exists().then_some(entry)
}

fn corpus() -> BenchResult<PathBuf> {
    let dir = workspace().join("target/bench-vendor");
    if !dir.exists() {
        let status = Command::new(env!("CARGO"))
            .args(["vendor", "-q", "--versioned-dirs"])
            .arg(&dir)
            .current_dir(workspace())
            .stdout(std::process::Stdio::null())
            .status()?;
        if !status.success() {
            return Err("cargo vendor failed".into());
        }
    }
    Ok(dir)
}

fn text_of(r: &CallToolResult) -> usize {
    r.content
        .iter()
        .filter_map(|c| c.as_text())
        .map(|t| t.text.len())
        .sum()
}

async fn bench() -> BenchResult<()> {
    let bin = tackle_binary()?;
    let project = tempfile::tempdir()?;
    std::fs::create_dir(project.path().join(".agents"))?;
    std::fs::write(project.path().join("f.txt"), "x\n")?;
    std::fs::write(project.path().join("big.txt"), big_line().repeat(1600))?; // 100 KiB

    // 1. Calls/s.
    let mut echo_cmd = tokio::process::Command::new(std::env::current_exe()?);
    echo_cmd.env(ECHO_ENV, "1");
    let (echo, echo_start, echo_pid) = spawn(echo_cmd).await?;
    let (tackle, tackle_start, tackle_pid) = spawn(tackle_cmd(&bin, project.path())).await?;
    // Several trials of the same interleaved rounds: on a shared machine one trial's ratio
    // moves with the machine's wake-up latency, so the median of the trials is the figure and
    // the range says how far it moves.
    const TRIALS: usize = 5;
    let (echo_before, tackle_before) = (used(echo_pid), used(tackle_pid));
    let mut trials = Vec::with_capacity(TRIALS);
    for _ in 0..TRIALS {
        trials.push(
            time_interleaved(
                (&echo, "echo", json!({"text": "x"})),
                (&tackle, "stat", json!({"path": "f.txt"})),
                CALLS,
            )
            .await?,
        );
    }
    // Every call the interleaving made, its warm-up rounds included.
    let made = (TRIALS * (CALLS + CALLS / 20)) as u32;
    let per_call = |before: (Duration, u64), after: (Duration, u64)| {
        (
            after.0.saturating_sub(before.0) / made,
            after.1.saturating_sub(before.1) as f64 / f64::from(made),
        )
    };
    let (echo_cpu, echo_switches) = per_call(echo_before, used(echo_pid));
    let (tackle_cpu, tackle_switches) = per_call(tackle_before, used(tackle_pid));
    let mut ratios: Vec<f64> = trials.iter().map(|(e, t)| t.1 / e.1).collect();
    ratios.sort_by(f64::total_cmp);
    // The trial whose ratio is the median is the one shown in full.
    let middle = ratios[TRIALS / 2];
    let ((e, e_rate), (t, t_rate)) = trials
        .into_iter()
        .find(|(e, t)| t.1 / e.1 == middle)
        .ok_or("no trial")?;
    println!(
        "mcp sequential calls over stdio ({CALLS} calls each, in alternating rounds; the median of {TRIALS} trials)"
    );
    println!(
        "  start-up to first tools/list: tackle {tackle_start:.1?}, rmcp echo {echo_start:.1?}"
    );
    println!("  rmcp echo server        {e}   {e_rate:>8.0} calls/s");
    println!("  tackle serve (stat)     {t}   {t_rate:>8.0} calls/s");
    let range: Vec<String> = ratios.iter().map(|r| format!("{r:.2}")).collect();
    println!(
        "  tackle / echo calls/s: {middle:.2}x (target >= 0.9x); the {TRIALS} trials: {}",
        range.join(", ")
    );
    println!(
        "  server CPU per call: tackle {tackle_cpu:.1?} ({tackle_switches:.1} context switches), \
         echo {echo_cpu:.1?} ({echo_switches:.1}); tackle's call passes the gate, appends its \
         start and end to the session's log and retains its output (SHA-256, publication guard) \
         on the path to the answer, where the echo server's work is its transport's"
    );

    // 2. The reference filesystem server.
    let Some(node) = node_server() else {
        println!(
            "read/glob vs @modelcontextprotocol/server-filesystem: skipped (npm install failed)"
        );
        tackle.cancel().await?;
        echo.cancel().await?;
        return Ok(());
    };
    let mut node_cmd = tokio::process::Command::new("node");
    node_cmd.arg(&node).arg(project.path());
    let (fs, _, _) = spawn(node_cmd).await?;
    let big = project.path().join("big.txt");
    let n = 300;
    let ((nr, _), (tr, _)) = time_interleaved(
        (&fs, "read_text_file", json!({"path": big})),
        (
            &tackle,
            "read_file",
            json!({"path": "big.txt", "limit": 2000}),
        ),
        n,
    )
    .await?;
    let tr_bytes = text_of(
        &call(
            &tackle,
            "read_file",
            json!({"path": "big.txt", "limit": 2000}),
        )
        .await?,
    );
    println!(
        "read of a 100 KiB file ({n} calls each, in alternating rounds; tackle returned {tr_bytes} bytes)"
    );
    println!("  node read_text_file     {nr}");
    println!("  tackle read_file        {tr}");
    println!(
        "  tackle / node: {:.3}x (target <= 0.3x)",
        ratio(tr.median, nr.median)
    );
    // The same text from the echo server: what the transport and this client cost for it,
    // which both servers above pay too.
    let ((ef, _), _) = time_interleaved(
        (&echo, "echo", json!({"lines": 1600})),
        (
            &tackle,
            "read_file",
            json!({"path": "big.txt", "limit": 2000}),
        ),
        n,
    )
    .await?;
    println!("  rmcp echo of the same text (transport + client floor): {ef}");
    println!(
        "  beyond that floor: tackle {:.0?}, node {:.0?}",
        tr.median.saturating_sub(ef.median),
        nr.median.saturating_sub(ef.median)
    );
    // The same reads through a minimal line client, which leaves mostly the servers' own cost.
    let mut raw_node_cmd = tokio::process::Command::new("node");
    raw_node_cmd.arg(&node).arg(project.path());
    let mut raw_node = RawClient::spawn(raw_node_cmd).await?;
    let mut raw_tackle = RawClient::spawn(tackle_cmd(&bin, project.path())).await?;
    let (rn, rt) = time_raw_interleaved(
        (&mut raw_node, "read_text_file", json!({"path": big})),
        (
            &mut raw_tackle,
            "read_file",
            json!({"path": "big.txt", "limit": 2000}),
        ),
        n,
    )
    .await?;
    println!("  through a minimal JSON-RPC line client instead of the SDK client:");
    println!("  node read_text_file     {rn}");
    println!("  tackle read_file        {rt}");
    println!(
        "  tackle / node: {:.3}x (target <= 0.3x)",
        ratio(rt.median, rn.median)
    );
    drop((raw_node, raw_tackle));
    echo.cancel().await?;
    fs.cancel().await?;
    tackle.cancel().await?;

    let corpus = corpus()?;
    let (tackle, _, _) = spawn(tackle_cmd(&bin, &corpus)).await?;
    let has_glob = tackle
        .list_all_tools()
        .await?
        .iter()
        .any(|t| t.name == "glob");
    let mut node_cmd = tokio::process::Command::new("node");
    node_cmd.arg(&node).arg(&corpus);
    let (fs, _, _) = spawn(node_cmd).await?;
    let n = 5;
    let (ng, _) = time_calls(
        &fs,
        "search_files",
        json!({"path": corpus, "pattern": "**/*.rs"}),
        n,
    )
    .await?;
    println!("glob **/*.rs over the vendored corpus ({n} calls each)");
    println!("  node search_files       {ng}");
    if has_glob {
        let (tg, _) = time_calls(&tackle, "glob", json!({"pattern": "**/*.rs"}), n).await?;
        println!("  tackle glob             {tg}");
        println!(
            "  tackle / node: {:.3}x (target <= 0.05x)",
            ratio(tg.median, ng.median)
        );
    } else {
        println!("  tackle glob: not in this build's catalog; no ratio");
    }
    fs.cancel().await?;
    tackle.cancel().await?;
    Ok(())
}

fn main() -> BenchResult<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    if std::env::var_os(ECHO_ENV).is_some() {
        return rt.block_on(async {
            let server = Echo.serve(rmcp::transport::stdio()).await?;
            server.waiting().await?;
            Ok(())
        });
    }
    rt.block_on(bench())
}
