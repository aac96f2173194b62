//! The OAuth fixture of the `tackle mcp login` tests: `fixtures/oauth_server.py` (a loopback
//! authorization server and the MCP server it protects, which logs every request it receives)
//! run in the MCP Python SDK venv, and readers of the token files tackle writes.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)] // test helper: a failure should panic loudly

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

use crate::harness::{KillOnDrop, Output, Project};
use crate::mcp_venv;

/// How long the fixture may take to print its URL; it only turns a hang into a failure.
const PATIENCE: Duration = Duration::from_secs(30);

pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// The authorization server and MCP server, killed when dropped.
pub struct AuthFixture {
    _child: KillOnDrop,
    pub url: String,
    log: PathBuf,
}

impl AuthFixture {
    pub fn start(p: &Project, flags: &[&str]) -> Self {
        let log = p.outside("fixture.jsonl");
        let mut cmd = Command::new(mcp_venv::venv_python());
        cmd.arg(fixture("oauth_server.py"))
            .args(flags)
            .env("FIXTURE_LOG", &log)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = KillOnDrop(cmd.spawn().unwrap());
        let stdout = child.0.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let _ = tx.send(line);
            }
        });
        let line = rx
            .recv_timeout(PATIENCE)
            .unwrap_or_else(|_| panic!("the OAuth fixture did not print its URL"));
        let url = line
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line from the fixture: {line:?}"))
            .to_owned();
        Self {
            _child: child,
            url,
            log,
        }
    }

    /// The same origin, another path: a URL no token was issued for.
    pub fn other_url(&self) -> String {
        self.url.replace("/mcp", "/other/mcp")
    }

    /// Every request the fixture received so far.
    pub fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    pub fn requests_to(&self, path: &str) -> Vec<Value> {
        self.requests()
            .into_iter()
            .filter(|r| r["path"] == path)
            .collect()
    }

    /// Forget every token the fixture issued (a revocation on the server's side).
    pub fn revoke_all(&self) {
        let addr = self
            .url
            .trim_start_matches("http://")
            .trim_end_matches("/mcp")
            .to_owned();
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        s.write_all(b"POST /admin/revoke HTTP/1.0\r\ncontent-length: 0\r\n\r\n")
            .unwrap();
        let mut answer = String::new();
        s.read_to_string(&mut answer).unwrap();
        assert!(answer.contains("200"), "{answer}");
    }
}

pub fn token_dir(p: &Project) -> PathBuf {
    p.xdg().join("tackle/oauth")
}

/// The one token file, parsed (beside it may be its refresh lock).
pub fn token_file(p: &Project) -> (PathBuf, Value) {
    let files: Vec<PathBuf> = std::fs::read_dir(token_dir(p))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let text = std::fs::read_to_string(&files[0]).unwrap();
    (files[0].clone(), serde_json::from_str(&text).unwrap())
}

pub fn access_token(record: &Value) -> String {
    record["credentials"]["token_response"]["access_token"]
        .as_str()
        .unwrap()
        .to_owned()
}

pub fn refresh_token(record: &Value) -> String {
    record["credentials"]["token_response"]["refresh_token"]
        .as_str()
        .unwrap()
        .to_owned()
}

pub fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// Every file under `dir`, read as text where it is text.
pub fn texts_under(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries {
            let path = e.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if let Ok(text) = std::fs::read_to_string(&path) {
                out.push((path, text));
            }
        }
    }
    out
}

pub fn assert_secret_absent(secret: &str, outputs: &[&Output], p: &Project) {
    for out in outputs {
        assert!(
            !out.stdout.contains(secret) && !out.stderr.contains(secret),
            "a token was printed by {}",
            out.command
        );
    }
    for (path, text) in texts_under(p.path()) {
        assert!(
            !text.contains(secret),
            "a token sits in the project: {}",
            path.display()
        );
    }
}
