//! A `tackle daemon` child and a raw HTTP client for it: JSON-RPC calls answered as JSON, event
//! streams read message by message (each with its event id), and requests no client library
//! would send.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use super::{KillOnDrop, Project};

/// How long a test waits for any one message before it fails.
pub const PATIENCE: Duration = Duration::from_secs(60);

/// A running daemon.
pub struct Daemon {
    pub child: KillOnDrop,
    pub addr: SocketAddr,
    pub state_dir: PathBuf,
    /// Sent as the bearer token, when set.
    pub token: Option<String>,
}

/// Starts `tackle daemon --listen 127.0.0.1:0 --state-dir <state_dir> <args>` in `project`,
/// with `env` set, and waits for the line that names its address; its requests carry the
/// token it drew (unless `args` name one with `--token-env`).
pub fn start(project: &Project, state_dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Daemon {
    let mut cmd = project.tackle(["daemon", "--listen", "127.0.0.1:0", "--state-dir"]);
    cmd.arg(state_dir).args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn();
    let stdout = child.0.stdout.take().expect("stdout is piped");
    let mut lines = BufReader::new(stdout).lines();
    let first = lines
        .next()
        .unwrap_or_else(|| {
            let mut err = String::new();
            if let Some(mut e) = child.0.stderr.take() {
                let _ = e.read_to_string(&mut err);
            }
            panic!("the daemon exited before listening: {err}")
        })
        .expect("stdout is readable");
    let addr = first
        .strip_prefix("tackle daemon listening on http://")
        .unwrap_or_else(|| panic!("unexpected first line: {first}"))
        .parse()
        .expect("an address");
    std::thread::spawn(move || for _ in lines {});
    if let Some(stderr) = child.0.stderr.take() {
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                eprintln!("[daemon {addr}] {line}");
            }
        });
    }
    Daemon {
        child,
        addr,
        state_dir: state_dir.to_path_buf(),
        // The token the daemon drew, when no --token-env named one.
        token: (!args.contains(&"--token-env"))
            .then(|| std::fs::read_to_string(state_dir.join("token")).ok())
            .flatten(),
    }
}

/// What came back for one request.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub head: String,
    pub body: String,
}

impl Answer {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {} {}", self.status, self.body))
    }
}

impl Daemon {
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    fn head(&self, method: &str, path: &str, extra: &[(&str, &str)], len: usize) -> String {
        let mut head = format!(
            "{method} {path} HTTP/1.0\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {len}\r\n",
            self.addr
        );
        if let Some(token) = &self.token {
            head.push_str(&format!("Authorization: Bearer {token}\r\n"));
        }
        for (k, v) in extra {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str("\r\n");
        head
    }

    /// One request, its whole answer (HTTP/1.0: the body ends at close).
    pub fn request(&self, method: &str, path: &str, extra: &[(&str, &str)], body: &[u8]) -> Answer {
        let mut s = TcpStream::connect(self.addr).unwrap();
        s.set_read_timeout(Some(PATIENCE)).unwrap();
        s.write_all(self.head(method, path, extra, body.len()).as_bytes())
            .unwrap();
        s.write_all(body).unwrap();
        let mut raw = Vec::new();
        s.read_to_end(&mut raw).unwrap();
        let raw = String::from_utf8_lossy(&raw).into_owned();
        let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
        Answer {
            status: head
                .split_whitespace()
                .nth(1)
                .and_then(|c| c.parse().ok())
                .unwrap_or(0),
            head: head.to_owned(),
            body: body.to_owned(),
        }
    }

    /// Calls `method`; its JSON-RPC answer (result or error).
    pub fn call(&self, method: &str, params: Value) -> Value {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let answer = self.request("POST", "/acp", &[], body.to_string().as_bytes());
        assert_eq!(answer.status, 200, "{answer:?}");
        answer.json()
    }

    /// Calls `method` and returns its result, failing on an error.
    pub fn result(&self, method: &str, params: Value) -> Value {
        let answer = self.call(method, params);
        assert!(answer.get("error").is_none(), "{method}: {answer}");
        answer["result"].clone()
    }

    /// Sends a message that is answered 202 (a notification, an answer to a request).
    pub fn tell(&self, message: Value) -> u16 {
        self.request("POST", "/acp", &[], message.to_string().as_bytes())
            .status
    }

    /// Opens a session on `cwd`.
    pub fn new_session(&self, cwd: &Path) -> String {
        self.result("session/new", json!({"cwd": cwd, "mcpServers": []}))["sessionId"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    /// Calls `method`, answered as an event stream; its messages (with their ids) arrive on the
    /// returned channel as they come, and the channel closes when the stream does.
    pub fn stream(&self, method: &str, params: Value) -> mpsc::Receiver<(Option<String>, Value)> {
        let body =
            json!({"jsonrpc": "2.0", "id": "s", "method": method, "params": params}).to_string();
        let mut s = TcpStream::connect(self.addr).unwrap();
        s.write_all(self.head("POST", "/acp", &[], body.len()).as_bytes())
            .unwrap();
        s.write_all(body.as_bytes()).unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(s).lines().map_while(Result::ok);
            // The head, to its blank line.
            for line in lines.by_ref() {
                if line.is_empty() {
                    break;
                }
            }
            let mut id = None;
            for line in lines {
                if let Some(rest) = line.strip_prefix("id: ") {
                    id = Some(rest.to_owned());
                } else if let Some(data) = line.strip_prefix("data: ") {
                    let Ok(message) = serde_json::from_str::<Value>(data) else {
                        continue;
                    };
                    if tx.send((id.clone(), message)).is_err() {
                        return;
                    }
                }
            }
        });
        rx
    }

    /// The daemon's sessions as `_tackle/sessions/list` gives them.
    pub fn sessions(&self) -> Vec<Value> {
        self.result("_tackle/sessions/list", Value::Null)["sessions"]
            .as_array()
            .unwrap()
            .clone()
    }

    /// The state of session `id`.
    pub fn state(&self, id: &str) -> String {
        self.sessions()
            .iter()
            .find(|s| s["sessionId"] == id)
            .map(|s| s["state"].as_str().unwrap().to_owned())
            .unwrap_or_else(|| panic!("no session {id}"))
    }

    /// Kills the daemon with SIGKILL and waits for it.
    pub fn kill(mut self) {
        let _ = self.child.0.kill();
        let _ = self.child.0.wait();
    }
}

/// Reads `rx` until a message matches `want`; every message read on the way is returned with
/// it. Fails after [`PATIENCE`].
pub fn until(
    rx: &mpsc::Receiver<(Option<String>, Value)>,
    what: &str,
    want: impl Fn(&Value) -> bool,
) -> Vec<(Option<String>, Value)> {
    let mut seen = Vec::new();
    loop {
        match rx.recv_timeout(PATIENCE) {
            Ok((id, message)) => {
                let done = want(&message);
                seen.push((id, message));
                if done {
                    return seen;
                }
            }
            Err(e) => panic!("waiting for {what}: {e}; seen: {seen:#?}"),
        }
    }
}

/// Whether `message` is a `session/update` of kind `kind`.
pub fn is_update(message: &Value, kind: &str) -> bool {
    message["method"] == "session/update" && message["params"]["update"]["sessionUpdate"] == kind
}
