//! The real model for the agent task benchmark: Qwen2.5-Coder-1.5B-Instruct (Q4_K_M) behind
//! llama.cpp's `llama-server`, as `scripts/install-test-llm` installs them (in
//! `$HOME/.cache/tackle-test-llm`, or `TACKLE_TEST_LLM_DIR`), with the chat template the
//! provider tests use (`crates/llm/tests/local-llm/chat-template.jinja`).
//!
//! The tests' launcher (`crates/llm/tests/local_server`) is not reused: it panics where a
//! benchmark reports, and a benchmark states and prints every setting it runs with
//! ([`ServerSettings`]), since the figures mean nothing without them.
//!
//! The server runs under a shell that ends it when its stdin, a pipe from this process, closes:
//! when the benchmark exits by any path, the server goes with it. Ready means its log said
//! `listening on` (written once the model is loaded) and `GET /health` then answered 200.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};

/// The model's file under the install directory.
pub const MODEL_FILE: &str = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf";

/// How the server is run.
#[derive(Clone, Debug)]
pub struct ServerSettings {
    /// Tokens of context in all, shared by the slots (`-c`).
    pub context: u32,
    /// Requests served at once (`-np`); each has `context / slots` tokens.
    pub slots: u32,
    /// The most tokens generated for a request that does not set its own bound (`-n`).
    pub max_generated: u32,
    /// CPU threads (`-t`).
    pub threads: usize,
    /// The name requests use for the model (`--alias`).
    pub alias: String,
}

impl ServerSettings {
    /// The arguments these settings put on `llama-server`'s command line, after the model and
    /// the address.
    pub fn args(&self) -> Vec<String> {
        vec![
            "-c".into(),
            self.context.to_string(),
            "-np".into(),
            self.slots.to_string(),
            "-n".into(),
            self.max_generated.to_string(),
            "-t".into(),
            self.threads.to_string(),
            "--alias".into(),
            self.alias.clone(),
            // Greedy sampling unless a request asks otherwise, as the tests run it.
            "--temp".into(),
            "0".into(),
            "--seed".into(),
            "1".into(),
            "--no-webui".into(),
        ]
    }
}

/// A running server; dropping it stops the server.
pub struct LlamaServer {
    pub addr: SocketAddr,
    /// The command line it was started with, for the report.
    pub command: String,
    /// Closing it ends the shell that holds the server, which ends the server.
    stdin: Option<ChildStdin>,
    child: Child,
}

/// Where `scripts/install-test-llm` puts the server and the model.
pub fn install_dir() -> PathBuf {
    match std::env::var_os("TACKLE_TEST_LLM_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
            .join(".cache/tackle-test-llm"),
    }
}

impl LlamaServer {
    /// Installs the server and model if needed (the script is idempotent), starts the server
    /// on a free loopback port and waits until it is ready. `log` receives the server's log.
    pub fn start(settings: &ServerSettings, log: &Path) -> std::io::Result<Self> {
        let workspace = crate::release::workspace();
        let install = Command::new(workspace.join("scripts/install-test-llm")).status()?;
        if !install.success() {
            return Err(std::io::Error::other(format!(
                "scripts/install-test-llm failed ({install})"
            )));
        }
        let dir = install_dir();
        if let Ok(why) = std::fs::read_to_string(dir.join("registry-unreachable")) {
            return Err(std::io::Error::other(why.trim().to_owned()));
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        let mut args: Vec<String> = vec![
            dir.join("bin/llama-server").display().to_string(),
            "-m".into(),
            dir.join("models").join(MODEL_FILE).display().to_string(),
            "--host".into(),
            "127.0.0.1".into(),
            "--port".into(),
            port.to_string(),
        ];
        args.extend(settings.args());
        args.push("--chat-template-file".into());
        args.push(
            workspace
                .join("crates/llm/tests/local-llm/chat-template.jinja")
                .display()
                .to_string(),
        );
        let mut child = Command::new("sh")
            .arg("-c")
            // The server's log goes through the shell's stdout to us; the shell then lets go
            // of it, so a server that dies before it is ready ends the read below.
            .arg(r#""$0" "$@" 2>&1 & pid=$!; exec >/dev/null 2>&1; cat >/dev/null; kill "$pid""#)
            .args(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        let stdin = child.stdin.take();
        let out = child
            .stdout
            .take()
            .ok_or_else(|| std::io::Error::other("llama-server's log pipe is missing"))?;
        let mut reader = BufReader::new(out);
        let mut file = std::fs::File::create(log)?;
        let mut line = String::new();
        loop {
            line.clear();
            if reader.read_line(&mut line)? == 0 {
                return Err(std::io::Error::other(format!(
                    "llama-server exited before it was ready; its log is {}",
                    log.display()
                )));
            }
            file.write_all(line.as_bytes())?;
            if line.contains("listening on ") {
                break;
            }
        }
        // Keep draining the log so the server never blocks on a full pipe.
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 || file.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
        });
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let health = get_status(addr, "/health")?;
        if health != 200 {
            return Err(std::io::Error::other(format!(
                "llama-server said it was listening but /health answered {health}"
            )));
        }
        Ok(Self {
            addr,
            command: args.join(" "),
            stdin,
            child,
        })
    }
}

impl Drop for LlamaServer {
    fn drop(&mut self) {
        drop(self.stdin.take());
        self.child.wait().ok();
    }
}

/// The status of a `GET path` on a connection of its own.
fn get_status(addr: SocketAddr, path: &str) -> std::io::Result<u16> {
    let mut conn = TcpStream::connect(addr)?;
    write!(
        conn,
        "GET {path} HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\n\r\n"
    )?;
    let mut status = String::new();
    BufReader::new(conn).read_line(&mut status)?;
    status
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("/health answered {status:?}")))
}
