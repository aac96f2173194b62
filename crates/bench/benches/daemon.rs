//! `tackle daemon` as its operators measure it, on the release binary with a replayed model:
//!
//! - sessions held per GiB of resident memory: the daemon's RSS with N idle sessions (each
//!   opened and answered one prompt) less its RSS with none, per session;
//! - attach to first update with 100 idle sessions: from connecting to the first
//!   `session/update` of the retold conversation, against a bare `GET /health` on the same
//!   daemon;
//! - call_peer's round trip (the `duration_ms` the tool reports: hub lookup, session on the
//!   peer, its turn, the answer) against a bare HTTP request to the same peer daemon.
//!
//! Run: `cargo bench -p tackle-bench --bench daemon` (builds release tackle first);
//! `TACKLE_BENCH_BIN=path` measures that binary instead; `TACKLE_BENCH_RUNS` (default 21),
//! `TACKLE_BENCH_SESSIONS` (default 100).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tackle_bench::{Stats, ratio};

type BenchResult<T> = Result<T, Box<dyn std::error::Error>>;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() -> BenchResult<()> {
    let tackle = match std::env::var_os("TACKLE_BENCH_BIN") {
        Some(bin) => PathBuf::from(bin),
        None => tackle_bench::release::release_tackle()?,
    };
    let runs = env_usize("TACKLE_BENCH_RUNS", 21);
    let sessions = env_usize("TACKLE_BENCH_SESSIONS", 100);
    let dir = tempfile::tempdir()?;
    println!("binary: {}", tackle.display());

    // Sessions per GiB, and attach latency among them.
    let host = Daemon::start(
        &tackle,
        dir.path(),
        "host",
        &[say("hello from the model")],
        &[],
        &[],
        &[],
    )?;
    let empty = rss_kib(host.child.id())?;
    let mut ids = Vec::new();
    for _ in 0..sessions {
        let id = host.new_session(&host.project)?;
        host.prompt(&id, "hi")?;
        ids.push(id);
    }
    let held = rss_kib(host.child.id())?;
    let per_session = (held.saturating_sub(empty)) as f64 / sessions as f64;
    println!(
        "RSS: {} KiB with no session, {} KiB with {sessions} idle sessions: {:.0} KiB a session, {:.0} sessions per GiB",
        empty,
        held,
        per_session,
        (1024.0 * 1024.0) / per_session.max(1.0)
    );
    let (mut attach, mut health) = (Vec::new(), Vec::new());
    for i in 0..runs {
        attach.push(host.attach_first_update(&ids[i % ids.len()])?);
        health.push(host.timed_health()?);
    }
    let (attach, health) = (Stats::of(&mut attach), Stats::of(&mut health));
    println!("attach → first update ({sessions} idle sessions)   {attach}");
    println!("GET /health, same daemon                 {health}");
    println!(
        "attach / bare request (median): {:.2}×",
        ratio(attach.median, health.median)
    );
    drop(host);

    // call_peer: a hub whose model calls the peer once a prompt.
    let mut turns = Vec::new();
    for i in 0..runs {
        // A different prompt each time: the watchdog remarks on calls repeated verbatim.
        turns.push(json!({"turn": {"tool_calls": [{"name": "call_peer", "arguments": {"peer": "b", "prompt": format!("ping {i}")}}]}}));
        turns.push(say("done"));
    }
    // The peer's token is one its callers hold: the peer is started with it, and the hub
    // finds it in the variable the peer registers.
    let peer_token = "p".repeat(40);
    let hub = Daemon::start(
        &tackle,
        dir.path(),
        "hub",
        &turns,
        &["--peer-hub", "--allow", "call_peer:*"],
        &["[tools.call_peer]", "enabled = true"],
        &[("PEER_TOKEN", &peer_token)],
    )?;
    let hub_url = format!("http://{}", hub.addr);
    let peer = Daemon::start(
        &tackle,
        dir.path(),
        "peer",
        &[say("pong")],
        &[
            "--hub",
            &hub_url,
            "--name",
            "b",
            "--hub-token-env",
            "HUB_TOKEN",
            "--token-env",
            "PEER_TOKEN",
            "--peer-token-env",
            "PEER_TOKEN",
        ],
        &[],
        &[("HUB_TOKEN", &hub.token), ("PEER_TOKEN", &peer_token)],
    )?;
    let session = hub.new_session(&hub.project)?;
    let (mut round_trips, mut bare) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        let messages = hub.prompt(&session, "ask b")?;
        let ended = messages
            .iter()
            .map(|m| &m["params"]["update"])
            .find(|u| u["sessionUpdate"] == "tool_call_update")
            .ok_or("no call_peer result")?;
        let text = ended["content"][0]["content"]["text"]
            .as_str()
            .unwrap_or("");
        // The result is a JSON object; anything after it is a note of the loop's.
        let result: Value = serde_json::Deserializer::from_str(text)
            .into_iter::<Value>()
            .next()
            .ok_or_else(|| format!("call_peer answered nothing: {text}"))?
            .map_err(|e| format!("call_peer did not answer JSON ({e}): {text}"))?;
        let ms = result["duration_ms"].as_u64().ok_or("no duration_ms")?;
        round_trips.push(Duration::from_millis(ms));
        bare.push(peer.timed_health()?);
    }
    let (round_trips, bare) = (Stats::of(&mut round_trips), Stats::of(&mut bare));
    println!("call_peer round trip (duration_ms)       {round_trips}");
    println!("bare HTTP request to the peer            {bare}");
    println!(
        "call_peer / bare request (median): {:.1}× (a session opened on the peer and a turn run there, against one request)",
        ratio(round_trips.median, bare.median)
    );
    Ok(())
}

fn say(text: &str) -> Value {
    json!({"turn": {"text": text}})
}

struct Daemon {
    child: Child,
    addr: SocketAddr,
    project: PathBuf,
    /// The token the daemon drew (its state directory's `token`).
    token: String,
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Daemon {
    fn start(
        tackle: &Path,
        dir: &Path,
        name: &str,
        turns: &[Value],
        args: &[&str],
        config: &[&str],
        env: &[(&str, &str)],
    ) -> BenchResult<Daemon> {
        let project = dir.join(name);
        let home = dir.join(format!("{name}-home"));
        std::fs::create_dir_all(project.join(".agents"))?;
        std::fs::create_dir_all(home.join("xdg/tackle"))?;
        if !config.is_empty() {
            std::fs::write(home.join("xdg/tackle/config.toml"), config.join("\n"))?;
        }
        let script = dir.join(format!("{name}.jsonl"));
        let mut text = String::from("{\"tackle_replay\":1}\n");
        for t in turns {
            text.push_str(&t.to_string());
            text.push('\n');
        }
        std::fs::write(&script, text)?;
        let state = dir.join(format!("{name}-state"));
        let mut child = Command::new(tackle)
            .current_dir(&project)
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", home.join("xdg"))
            .env("XDG_CACHE_HOME", home.join("cache"))
            .envs(env.iter().copied())
            .arg("--root")
            .arg(&project)
            .args(["--model", &format!("replay:{}", script.display())])
            .args(["daemon", "--listen", "127.0.0.1:0", "--state-dir"])
            .arg(&state)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let mut lines = BufReader::new(child.stdout.take().ok_or("no stdout")?).lines();
        let first = lines.next().ok_or("the daemon exited before listening")??;
        let addr = first
            .strip_prefix("tackle daemon listening on http://")
            .ok_or_else(|| format!("unexpected first line: {first}"))?
            .parse()?;
        std::thread::spawn(move || for _ in lines {});
        // The token named by --token-env, else the one the daemon drew.
        let named = args
            .iter()
            .position(|a| *a == "--token-env")
            .and_then(|i| args.get(i + 1))
            .and_then(|name| env.iter().find(|(k, _)| k == name));
        let token = match named {
            Some((_, value)) => (*value).to_owned(),
            None => std::fs::read_to_string(state.join("token"))?
                .trim()
                .to_owned(),
        };
        Ok(Daemon {
            child,
            addr,
            project,
            token,
        })
    }

    fn send(&self, head: &str, body: &[u8]) -> BenchResult<TcpStream> {
        let mut s = TcpStream::connect(self.addr)?;
        s.set_nodelay(true)?;
        s.set_read_timeout(Some(Duration::from_secs(60)))?;
        s.write_all(
            format!(
                "{head} HTTP/1.0\r\nHost: {}\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
                self.addr,
                self.token,
                body.len()
            )
            .as_bytes(),
        )?;
        s.write_all(body)?;
        Ok(s)
    }

    fn call(&self, method: &str, params: Value) -> BenchResult<Value> {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let mut s = self.send("POST /acp", body.to_string().as_bytes())?;
        let mut raw = String::new();
        s.read_to_string(&mut raw)?;
        let body = raw.split_once("\r\n\r\n").map_or("", |(_, b)| b);
        let answer: Value = serde_json::from_str(body)?;
        if let Some(e) = answer.get("error") {
            return Err(format!("{method}: {e}").into());
        }
        Ok(answer["result"].clone())
    }

    fn new_session(&self, cwd: &Path) -> BenchResult<String> {
        Ok(
            self.call("session/new", json!({"cwd": cwd, "mcpServers": []}))?["sessionId"]
                .as_str()
                .ok_or("no session id")?
                .to_owned(),
        )
    }

    /// Runs a prompt to its answer; the messages its stream carried.
    fn prompt(&self, session: &str, text: &str) -> BenchResult<Vec<Value>> {
        let body = json!({"jsonrpc": "2.0", "id": "p", "method": "session/prompt",
            "params": {"sessionId": session, "prompt": [{"type": "text", "text": text}]}});
        let s = self.send("POST /acp", body.to_string().as_bytes())?;
        let mut messages = Vec::new();
        for line in BufReader::new(s).lines() {
            let line = line?;
            if let Some(data) = line.strip_prefix("data: ") {
                let message: Value = serde_json::from_str(data)?;
                let done = message.get("result").is_some() || message.get("error").is_some();
                messages.push(message);
                if done {
                    return Ok(messages);
                }
            }
        }
        Err("the prompt's stream ended without an answer".into())
    }

    /// From connecting to the first `session/update` an attach without a cursor sends.
    fn attach_first_update(&self, session: &str) -> BenchResult<Duration> {
        let start = Instant::now();
        let body = json!({"jsonrpc": "2.0", "id": "a", "method": "_tackle/session/attach",
            "params": {"sessionId": session}});
        let s = self.send("POST /acp", body.to_string().as_bytes())?;
        for line in BufReader::new(s).lines() {
            if line?.contains("\"session/update\"") {
                return Ok(start.elapsed());
            }
        }
        Err("the attach ended before any update".into())
    }

    fn timed_health(&self) -> BenchResult<Duration> {
        let start = Instant::now();
        let mut s = self.send("GET /health", b"")?;
        let mut raw = Vec::new();
        s.read_to_end(&mut raw)?;
        let elapsed = start.elapsed();
        if !raw.starts_with(b"HTTP/1.0 200") && !raw.starts_with(b"HTTP/1.1 200") {
            return Err(format!("/health: {}", String::from_utf8_lossy(&raw)).into());
        }
        Ok(elapsed)
    }
}

/// The resident set of process `pid`, in KiB.
fn rss_kib(pid: u32) -> BenchResult<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .ok_or_else(|| "no VmRSS".into())
}
