//! Continuing a long session vs starting a new one: `tackle call --session <id> stat` on a
//! session that made 200 `write_file` calls of 256 KiB each (a 52 MB log when arguments were
//! kept inline), beside `tackle call stat` in a fresh session, measured in the same run: wall
//! time per call and peak RSS of each child (`wait4`'s `ru_maxrss`, what `/usr/bin/time -v`
//! reports). Opening should cost the log's tail, so the two should be close.
//!
//! Run: `cargo bench -p tackle-bench --bench session_open`. `SESSION_OPEN_WRITES` and
//! `SESSION_OPEN_BYTES` change the history; `TACKLE_BENCH_BIN` measures another build of
//! tackle, and `SESSION_OPEN_WRITER_BIN` builds the history with another (an older release,
//! to measure a log with inline arguments).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use tackle_bench::{Stats, ratio};

const SAMPLES: usize = 20;

/// One finished child: how long it ran and the most memory it held.
struct Run {
    wall: Duration,
    max_rss_kib: u64,
}

fn main() {
    let writes: usize = env_number("SESSION_OPEN_WRITES", 200);
    let bytes: usize = env_number("SESSION_OPEN_BYTES", 256 * 1024);
    let bin = binary("TACKLE_BENCH_BIN");
    let writer = binary("SESSION_OPEN_WRITER_BIN");
    let project = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let root = project.path();
    std::fs::create_dir(root.join(".agents")).unwrap();
    std::fs::write(root.join("a.txt"), "a\n").unwrap();

    let started = Instant::now();
    let mut session: Option<String> = None;
    for i in 0..writes {
        let content: String = (0..)
            .map(|line| format!("write {i:04} line {line:08}\n"))
            .take(bytes / 25)
            .collect();
        let args = serde_json::json!({"path": "big.txt", "content": content}).to_string();
        let mut cmd = tackle(&writer, root);
        cmd.args(["call", "write_file", "-", "--id", &format!("w{i}")]);
        if let Some(id) = &session {
            cmd.args(["--session", id]);
        }
        let run = spawn(&mut cmd, args.as_bytes());
        assert!(run.is_some(), "write {i} failed");
        if session.is_none() {
            session = Some(only_session(root));
        }
    }
    let session = session.expect("at least one write");
    let log = root
        .join(".agents/store/sessions")
        .join(&session)
        .join("events.jsonl");
    let log_bytes = std::fs::metadata(&log).unwrap().len();
    println!(
        "session open: {writes} write_file calls of {} KiB in {:.1?}; event log {:.1} MB; tackle {}",
        bytes / 1024,
        started.elapsed(),
        log_bytes as f64 / 1e6,
        bin.display()
    );

    let stat = r#"{"path":"a.txt"}"#;
    let mut resumed = Vec::new();
    let mut fresh = Vec::new();
    for _ in 0..SAMPLES {
        let mut cmd = tackle(&bin, root);
        cmd.args(["call", "stat", stat, "--session", &session]);
        resumed.push(spawn(&mut cmd, b"").expect("stat in the long session"));
        let mut cmd = tackle(&bin, root);
        cmd.args(["call", "stat", stat]);
        fresh.push(spawn(&mut cmd, b"").expect("stat in a new session"));
    }
    let report = |name: &str, runs: &[Run]| {
        let mut walls: Vec<Duration> = runs.iter().map(|r| r.wall).collect();
        let rss = runs.iter().map(|r| r.max_rss_kib).max().unwrap_or(0);
        let stats = Stats::of(&mut walls);
        println!(
            "  {name:<28} {stats}  peak RSS {:>6.1} MiB",
            rss as f64 / 1024.0
        );
        stats
    };
    let long = report("stat --session <long>", &resumed);
    let new = report("stat in a new session", &fresh);
    println!(
        "  long session / new session: {:.2}x (median)",
        ratio(long.median, new.median)
    );
}

fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn tackle(bin: &Path, root: &Path) -> Command {
    let mut cmd = Command::new(bin);
    cmd.arg("--root")
        .arg(root)
        .args(["--headless", "--mode", "accept-edits"])
        .env("XDG_CONFIG_HOME", "/nonexistent/tackle-bench-user-config");
    cmd
}

/// Runs `cmd` with `stdin`, discarding its output; `None` when it failed.
fn spawn(cmd: &mut Command, stdin: &[u8]) -> Option<Run> {
    let started = Instant::now();
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin).unwrap();
    drop(input);
    let reaped = tackle_bench::reaped::reap(child).unwrap();
    let wall = started.elapsed();
    reaped.status.success().then_some(Run {
        wall,
        max_rss_kib: reaped.max_rss_kib,
    })
}

fn only_session(root: &Path) -> String {
    let mut ids: Vec<String> = std::fs::read_dir(root.join(".agents/store/sessions"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(ids.len(), 1, "{ids:?}");
    ids.pop().unwrap()
}

/// The binary named by `env`, or this workspace's release build of tackle.
fn binary(env: &str) -> PathBuf {
    if let Some(path) = std::env::var_os(env) {
        return PathBuf::from(path);
    }
    tackle_bench::release::release_tackle().unwrap()
}
