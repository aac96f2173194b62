//! The one end-to-end harness: a unique temp project per test ([`Project`]) and a command
//! builder for the `tackle` binary ([`TestCommand`]) whose assertions print everything on failure.
//!
//! Modelled on ripgrep's `Dir`/`TestCommand`: every test runs the real binary against a real
//! directory tree, so what is tested is what a user (or a model frontend) sees. A project whose
//! test panicked is kept on disk and its location printed, so it can be inspected.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::ffi::OsStr;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

pub mod daemon;
pub mod fleet;
pub mod http;
pub mod replay;
#[path = "../../../llm/tests/support/routes.rs"]
pub mod routes;
pub mod tmux;

/// A temp project directory. [`Project::new`] creates `.agents/` so it is a project root.
///
/// The root is `<temp>/proj`, so tests can put things next to it, outside the root
/// ([`Project::outside`]), without touching anything shared. Every command runs with
/// `XDG_CONFIG_HOME=<temp>/xdg`: the project's own user config and trust store, empty until a
/// test writes one ([`Project::user_config`], [`Project::trust`]); and with
/// `XDG_CACHE_HOME=<temp>/cache`, so no test reads or writes the developer's window cache; and
/// `HOME=<temp>/home`, so the developer's own `~/.agents/skills` never joins a test's catalog.
pub struct Project {
    dir: Option<tempfile::TempDir>,
    root: PathBuf,
    xdg: PathBuf,
}

impl Project {
    /// A fresh project with `.agents/`.
    pub fn new() -> Self {
        let p = Self::bare();
        p.mkdir(".agents");
        p
    }

    /// A fresh directory with no project marker at all (for root discovery tests).
    pub fn bare() -> Self {
        let dir = tempfile::Builder::new()
            .prefix("tackle-e2e-")
            .tempdir()
            .expect("creating temp dir");
        std::fs::create_dir(dir.path().join("proj")).expect("creating the project dir");
        // Canonical, so it equals the root tackle reports and absolute-path tests are exact.
        let root = dir
            .path()
            .join("proj")
            .canonicalize()
            .expect("canonicalizing temp dir");
        let xdg = root.parent().expect("the root has a parent").join("xdg");
        Self {
            dir: Some(dir),
            root,
            xdg,
        }
    }

    /// `XDG_CONFIG_HOME` of this project's commands (`<temp>/xdg`, outside the root).
    pub fn xdg(&self) -> &Path {
        &self.xdg
    }

    /// `HOME` of this project's commands (`<temp>/home`, outside the root; `~/.agents/skills`
    /// is the user's skills).
    pub fn home(&self) -> PathBuf {
        self.outside("home")
    }

    /// `XDG_CACHE_HOME` of this project's commands (`<temp>/cache`, outside the root): where
    /// the windows local servers named are kept (`tackle/windows.json`).
    pub fn cache_home(&self) -> PathBuf {
        self.outside("cache")
    }

    /// Write the user config (`<xdg>/tackle/config.toml`).
    pub fn user_config(&self, toml: &str) {
        let dir = self.xdg.join("tackle");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("config.toml"), toml).unwrap();
    }

    /// Trust the project (`tackle trust`) as it is now, so its `.agents/` config applies whole.
    pub fn trust(&self) {
        self.tackle(["trust"]).run().success();
    }

    /// A path next to the project, outside the root: `<temp>/<rel>`.
    pub fn outside(&self, rel: impl AsRef<Path>) -> PathBuf {
        self.root.parent().expect("the root has a parent").join(rel)
    }

    /// Write a file outside the root (see [`Project::outside`]).
    pub fn write_outside(&self, rel: impl AsRef<Path>, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.outside(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(&path, contents).unwrap();
        path
    }

    /// The project root (canonical).
    pub fn path(&self) -> &Path {
        &self.root
    }

    /// `root/rel`.
    pub fn join(&self, rel: impl AsRef<Path>) -> PathBuf {
        self.root.join(rel)
    }

    /// Write a file, creating parent directories.
    pub fn write(&self, rel: impl AsRef<Path>, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .unwrap_or_else(|e| panic!("mkdir {}: {e}", parent.display()));
        }
        std::fs::write(&path, contents).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
        path
    }

    /// Create a directory and its parents.
    pub fn mkdir(&self, rel: impl AsRef<Path>) -> PathBuf {
        let path = self.join(rel);
        std::fs::create_dir_all(&path).unwrap_or_else(|e| panic!("mkdir {}: {e}", path.display()));
        path
    }

    /// Create a symlink at `rel` pointing to `target` (taken verbatim: relative or absolute).
    pub fn symlink(&self, target: impl AsRef<Path>, rel: impl AsRef<Path>) -> PathBuf {
        let link = self.join(rel);
        std::os::unix::fs::symlink(target.as_ref(), &link).unwrap_or_else(|e| {
            panic!(
                "symlink {} -> {}: {e}",
                link.display(),
                target.as_ref().display()
            )
        });
        link
    }

    /// Write `.agents/config.toml` (untrusted until [`Project::trust`]: only what narrows applies).
    pub fn config(&self, toml: &str) {
        self.write(".agents/config.toml", toml);
    }

    /// A command for the binary with `--root <project>` and the project as working directory.
    pub fn tackle<I, S>(&self, args: I) -> TestCommand
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = TestCommand::new(&self.root);
        cmd.env("XDG_CONFIG_HOME", &self.xdg);
        cmd.env("XDG_CACHE_HOME", self.cache_home());
        cmd.env("HOME", self.home());
        cmd.arg("--root").arg(&self.root).args(args);
        cmd
    }

    /// A command with no `--root`, run from `root/rel` (for root discovery).
    pub fn tackle_in<I, S>(&self, rel: impl AsRef<Path>, args: I) -> TestCommand
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = TestCommand::new(&self.join(rel));
        cmd.env("XDG_CONFIG_HOME", &self.xdg);
        cmd.env("XDG_CACHE_HOME", self.cache_home());
        cmd.env("HOME", self.home());
        cmd.args(args);
        cmd
    }

    /// Event log lines of every session in the project, parsed, in file order per session.
    pub fn sessions(&self) -> Vec<Vec<serde_json::Value>> {
        let dir = self.join(".agents/store/sessions");
        let mut logs: Vec<PathBuf> = match std::fs::read_dir(&dir) {
            Ok(rd) => rd.map(|e| e.unwrap().path().join("events.jsonl")).collect(),
            Err(_) => return Vec::new(),
        };
        logs.sort();
        logs.iter()
            .map(|p| {
                let text =
                    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
                text.lines()
                    .map(|l| {
                        serde_json::from_str(l)
                            .unwrap_or_else(|e| panic!("{}: bad line {l:?}: {e}", p.display()))
                    })
                    .collect()
            })
            .collect()
    }

    /// Digests of the artifacts in the store.
    pub fn artifact_digests(&self) -> Vec<String> {
        let mut v: Vec<String> = match std::fs::read_dir(self.join(".agents/store/artifacts")) {
            Ok(rd) => rd
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect(),
            Err(_) => Vec::new(),
        };
        v.sort();
        v
    }
}

impl Drop for Project {
    fn drop(&mut self) {
        if std::thread::panicking()
            && let Some(dir) = self.dir.take()
        {
            let kept = dir.keep();
            eprintln!("test project kept for inspection: {}", kept.display());
        }
    }
}

/// A `tackle` invocation being built.
pub struct TestCommand {
    cmd: Command,
    stdin: Option<Vec<u8>>,
    timeout: Duration,
}

/// No command in these tests should take anywhere near this; a hang fails instead of stalling
/// the suite.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// The `tackle` binary under test, for a program that runs it itself (a client script).
pub fn tackle_binary() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_tackle"))
}

impl TestCommand {
    fn new(cwd: &Path) -> Self {
        let mut cmd = Command::new(tackle_binary());
        cmd.current_dir(cwd);
        // Tests never read the developer's own user config; a test that wants one sets it.
        cmd.env("XDG_CONFIG_HOME", "/nonexistent/tackle-tests-user-config");
        // A call that needs approval must never wait for a person at the developer's terminal.
        cmd.env("TACKLE_HEADLESS", "1");
        Self {
            cmd,
            stdin: None,
            timeout: DEFAULT_TIMEOUT,
        }
    }

    /// Another program (an agent that drives `tackle serve`), with nothing of tackle's test
    /// environment set; the same timeout and the same assertions as the binary's runs.
    pub fn external(program: &Path, cwd: &Path) -> Self {
        let mut cmd = Command::new(program);
        cmd.current_dir(cwd);
        Self {
            cmd,
            stdin: None,
            timeout: DEFAULT_TIMEOUT,
        }
    }

    /// Start from an empty environment: only what the test sets reaches the program.
    pub fn env_clear(&mut self) -> &mut Self {
        self.cmd.env_clear();
        self
    }

    pub fn env(&mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> &mut Self {
        self.cmd.env(key, value);
        self
    }

    /// Unset `key` for the program, whatever the test's own environment holds.
    pub fn env_remove(&mut self, key: impl AsRef<OsStr>) -> &mut Self {
        self.cmd.env_remove(key);
        self
    }

    pub fn arg(&mut self, a: impl AsRef<OsStr>) -> &mut Self {
        self.cmd.arg(a);
        self
    }

    pub fn args<I, S>(&mut self, args: I) -> &mut Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.cmd.args(args);
        self
    }

    /// Bytes to feed on standard input (otherwise stdin is empty).
    pub fn stdin(&mut self, bytes: impl AsRef<[u8]>) -> &mut Self {
        self.stdin = Some(bytes.as_ref().to_vec());
        self
    }

    /// Fail (and kill the process) if it runs longer than this.
    pub fn timeout(&mut self, limit: Duration) -> &mut Self {
        self.timeout = limit;
        self
    }

    /// Start the process with piped stdin, stdout and stderr, for tests that talk to it while it
    /// runs (`tackle serve`). The caller kills it; [`KillOnDrop`] does so on panic too.
    pub fn spawn(&mut self) -> KillOnDrop {
        let described = describe(&self.cmd);
        let child = self
            .cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("spawning {described}: {e}"));
        KillOnDrop(child)
    }

    /// Run to completion with the given standard input and output (a file, a socket…), which
    /// the caller fills and reads itself; stderr is captured, `Output::stdout` is empty. Our
    /// copies of `stdin` and `stdout` are closed once the process has started, so the caller
    /// sees end-of-file when the process exits.
    pub fn run_with_stdio(&mut self, stdin: Stdio, stdout: Stdio) -> Output {
        let described = describe(&self.cmd);
        self.cmd.stdin(stdin).stdout(stdout).stderr(Stdio::piped());
        let child = self
            .cmd
            .spawn()
            .unwrap_or_else(|e| panic!("spawning {described}: {e}"));
        self.cmd.stdin(Stdio::null()).stdout(Stdio::null());
        let out = wait_within(child, &described, self.timeout);
        Output {
            command: described,
            code: out.status.code(),
            stdout: String::new(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// Run to completion and capture everything.
    pub fn run(&mut self) -> Output {
        use std::io::Write;
        let described = describe(&self.cmd);
        self.cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = self
            .cmd
            .spawn()
            .unwrap_or_else(|e| panic!("spawning {described}: {e}"));
        let input = self.stdin.take().unwrap_or_default();
        let mut pipe = child.stdin.take().unwrap();
        let writer = std::thread::spawn(move || {
            // The binary may not read stdin at all; a broken pipe then is fine.
            let _ = pipe.write_all(&input);
        });
        let out = wait_within(child, &described, self.timeout);
        writer.join().unwrap();
        Output {
            command: described,
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

/// What [`TestCommand::run_measured`] saw: the run, and the process's own peak RSS.
#[derive(Debug)]
pub struct Measured {
    pub output: Output,
    /// `ru_maxrss` of the process itself (from `wait4`), in KiB.
    pub max_rss_kib: u64,
}

impl TestCommand {
    /// Like [`TestCommand::run`] with empty stdin, reaping the process with `wait4` so that its
    /// own peak RSS is known (not `RUSAGE_CHILDREN`'s largest of every child so far).
    pub fn run_measured(&mut self) -> Measured {
        use std::io::Read as _;
        use std::os::unix::process::ExitStatusExt as _;
        let described = describe(&self.cmd);
        let mut child = self
            .cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("spawning {described}: {e}"));
        let drain = |mut pipe: Box<dyn std::io::Read + Send>| {
            std::thread::spawn(move || {
                let mut bytes = Vec::new();
                let _ = pipe.read_to_end(&mut bytes);
                bytes
            })
        };
        let stdout = drain(Box::new(child.stdout.take().unwrap()));
        let stderr = drain(Box::new(child.stderr.take().unwrap()));
        let pid = child.id() as libc::pid_t;
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut status = 0;
            // SAFETY: an all-zero rusage is a valid value for the kernel to overwrite.
            let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
            // SAFETY: `pid` is our child, reaped only here; both pointers are to live locals.
            let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
            let _ = tx.send((reaped, status, usage.ru_maxrss as u64));
            // Dropping a `Child` neither waits nor kills.
            drop(child);
        });
        let (reaped, status, max_rss_kib) = match rx.recv_timeout(self.timeout) {
            Ok(done) => done,
            Err(_) => {
                // SAFETY: signalling our own child, not yet reaped (the waiter has not returned).
                unsafe { libc::kill(pid, libc::SIGKILL) };
                panic!(
                    "{described} did not finish within {:?}; it was killed",
                    self.timeout
                );
            }
        };
        assert_eq!(reaped, pid, "wait4 for {described} failed");
        let status = std::process::ExitStatus::from_raw(status);
        Measured {
            output: Output {
                command: described,
                code: status.code(),
                stdout: String::from_utf8_lossy(&stdout.join().unwrap()).into_owned(),
                stderr: String::from_utf8_lossy(&stderr.join().unwrap()).into_owned(),
            },
            max_rss_kib,
        }
    }
}

/// Waits for `child` and collects what it piped; kills it and fails the test past `limit`.
fn wait_within(
    child: std::process::Child,
    described: &str,
    limit: Duration,
) -> std::process::Output {
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(result) => result.unwrap_or_else(|e| panic!("waiting for {described}: {e}")),
        Err(_) => {
            let _ = Command::new("kill")
                .arg("-KILL")
                .arg(pid.to_string())
                .status();
            panic!("{described} did not finish within {limit:?}; it was killed");
        }
    }
}

/// A running process that is killed when dropped.
pub struct KillOnDrop(pub std::process::Child);

impl KillOnDrop {
    /// For a `tackle serve --http` child: reads its stderr until the server says where it
    /// listens, returns that address, and keeps draining stderr so the server never blocks on
    /// a full pipe.
    pub fn http_address(&mut self) -> std::net::SocketAddr {
        use std::io::BufRead as _;
        let stderr = self.0.stderr.take().expect("the child's stderr is piped");
        let mut lines = std::io::BufReader::new(stderr).lines();
        let addr = loop {
            let line = lines
                .next()
                .unwrap_or_else(|| panic!("tackle serve exited before listening"))
                .expect("stderr is readable");
            if let Some(rest) = line.strip_prefix("tackle serve: listening on http://") {
                break rest
                    .trim_end_matches("/mcp")
                    .parse()
                    .expect("the listening line names an address");
            }
        };
        std::thread::spawn(move || for _ in lines {});
        addr
    }
}

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn describe(cmd: &Command) -> String {
    let mut s = String::new();
    if let Some(dir) = cmd.get_current_dir() {
        let _ = write!(s, "(cd {} && ", dir.display());
    }
    s.push_str(&shell_quote(cmd.get_program()));
    for a in cmd.get_args() {
        s.push(' ');
        s.push_str(&shell_quote(a));
    }
    if cmd.get_current_dir().is_some() {
        s.push(')');
    }
    s
}

fn shell_quote(a: &OsStr) -> String {
    let a = a.to_string_lossy();
    if !a.is_empty()
        && a.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:@".contains(&b))
    {
        a.into_owned()
    } else {
        format!("'{}'", a.replace('\'', r"'\''"))
    }
}

/// What a run produced. Every assertion returns `&Self` so they chain, and prints the whole
/// run when it fails.
#[derive(Debug)]
pub struct Output {
    pub command: String,
    /// `None` if killed by a signal.
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Output {
    #[track_caller]
    pub fn fail(&self, why: &str) -> ! {
        panic!(
            "\n{why}\n\ncommand: {}\nexit code: {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}\n",
            self.command, self.code, self.stdout, self.stderr
        )
    }

    #[track_caller]
    pub fn success(&self) -> &Self {
        self.code(0)
    }

    #[track_caller]
    pub fn code(&self, want: i32) -> &Self {
        if self.code != Some(want) {
            self.fail(&format!("expected exit code {want}"));
        }
        self
    }

    #[track_caller]
    pub fn stdout_is(&self, want: &str) -> &Self {
        if self.stdout != want {
            self.fail(&format!("expected stdout to be exactly:\n{want}"));
        }
        self
    }

    #[track_caller]
    pub fn stdout_contains(&self, needle: &str) -> &Self {
        if !self.stdout.contains(needle) {
            self.fail(&format!("expected stdout to contain {needle:?}"));
        }
        self
    }

    #[track_caller]
    pub fn stdout_lacks(&self, needle: &str) -> &Self {
        if self.stdout.contains(needle) {
            self.fail(&format!("expected stdout NOT to contain {needle:?}"));
        }
        self
    }

    #[track_caller]
    pub fn stderr_contains(&self, needle: &str) -> &Self {
        if !self.stderr.contains(needle) {
            self.fail(&format!("expected stderr to contain {needle:?}"));
        }
        self
    }

    #[track_caller]
    pub fn stderr_lacks(&self, needle: &str) -> &Self {
        if self.stderr.contains(needle) {
            self.fail(&format!("expected stderr NOT to contain {needle:?}"));
        }
        self
    }

    /// Stdout parsed as JSON.
    #[track_caller]
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| self.fail(&format!("stdout is not JSON: {e}")))
    }

    /// For `call --json`: the error code of the result (`None` for a success).
    #[track_caller]
    pub fn result_code(&self) -> Option<String> {
        self.json()
            .get("code")
            .and_then(|c| c.as_str())
            .map(str::to_owned)
    }

    /// For `call --json`: assert the call failed (exit 1) with `code`.
    #[track_caller]
    pub fn tool_error(&self, code: &str) -> &Self {
        self.code(1);
        let got = self.result_code();
        if got.as_deref() != Some(code) {
            self.fail(&format!("expected result code {code:?}, got {got:?}"));
        }
        self
    }

    /// For `call --json`: the text the model sees.
    #[track_caller]
    pub fn text(&self) -> String {
        let v = self.json();
        let parts = v["content"]
            .as_array()
            .unwrap_or_else(|| self.fail("no content array"));
        parts.iter().filter_map(|p| p["text"].as_str()).collect()
    }

    /// For `call --json`: the result metadata.
    #[track_caller]
    pub fn metadata(&self) -> serde_json::Value {
        self.json()["metadata"].clone()
    }
}

/// `call <tool> <args> --json` in `project`.
pub fn call_json(project: &Project, tool: &str, args: &serde_json::Value) -> Output {
    project
        .tackle(["call", tool, &args.to_string(), "--json"])
        .run()
}
