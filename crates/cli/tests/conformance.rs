//! The official MCP conformance suite (npm `@modelcontextprotocol/conformance`, pinned in
//! `tests/conformance/package.json`, installed by `scripts/install-conformance`) against tackle's
//! MCP server and tackle's MCP client.
//!
//! - **Server:** the suite's active scenarios against `tackle serve --http 127.0.0.1:0`, run as a
//!   loopback-only user runs it: without a bearer token (the suite sends none; off loopback
//!   tackle refuses to serve without one). The suite's pending scenarios are not run: in 0.1.16
//!   `json-schema-2020-12` lists a fixture tool, and `server-sse-polling` wants a server that
//!   closes a call's stream before answering, which the specification leaves to the server.
//! - **Client:** every client scenario the suite lists, one at a time, with tackle's real CLI as
//!   the client (`tests/conformance/client.sh`: `tackle mcp add --transport http`, then
//!   `tackle mcp get` and `tackle call mcp__conformance__<tool>` as the scenario needs; the
//!   `auth/*` scenarios through `tackle mcp login` with a redirect-following `$BROWSER`).
//!   One at a time because `sse-retry` measures how long the client waits before reconnecting.
//!
//! Scenarios that cannot apply, or that tackle does not pass yet, are listed in
//! `tests/conformance/baseline.yml`, each with its reason. The suite's own exit code under
//! `--expected-failures` is the verdict: an unexpected failure fails, and so does a stale entry
//! (a listed scenario that passes). The tests print the pass counts. Results go to a temp dir;
//! everything is on loopback.

#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns: a failure should panic loudly

mod harness;
#[path = "agents/installed.rs"]
mod installed;

use std::path::{Path, PathBuf};
use std::time::Duration;

use harness::{Output, Project, TestCommand};
use installed::{CONFORMANCE, Installed};

/// How long one client scenario may take before the suite gives up on the client (its
/// `--timeout`). A scenario takes about a second; this only turns a hang into a failure.
const CLIENT_SCENARIO_TIMEOUT_MS: u32 = 20_000;

/// How long one run of the suite may take before the test kills it.
const SERVER_RUN_LIMIT: Duration = Duration::from_secs(300);
const CLIENT_RUN_LIMIT: Duration = Duration::from_secs(60);

fn pins_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/conformance")
}

fn baseline_file() -> PathBuf {
    pins_dir().join("baseline.yml")
}

/// Which side of the protocol a run tests: the suite's `server` and `client` commands, and the
/// keys of the baseline file.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Side {
    Server,
    Client,
}

impl Side {
    fn key(self) -> &'static str {
        match self {
            Side::Server => "server",
            Side::Client => "client",
        }
    }
}

/// The scenario names the baseline lists under `side` (`server:` / `client:`, one `- name` a
/// line; comments give the reasons).
fn baselined(side: Side) -> Vec<String> {
    let text = std::fs::read_to_string(baseline_file()).unwrap();
    let mut current = None;
    let mut names = Vec::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if let Some(key) = trimmed.strip_suffix(':')
            && !line.starts_with(' ')
        {
            current = Some(key.to_owned());
        } else if let Some(name) = trimmed.strip_prefix("- ") {
            if current.as_deref() == Some(side.key()) {
                names.push(name.trim().to_owned());
            }
        } else {
            panic!("baseline.yml: unexpected line {line:?}");
        }
    }
    names
}

/// The suite, installed at its pin, with the Node it needs first on `PATH`.
struct Suite {
    installed: Installed,
}

impl Suite {
    fn find() -> Option<Self> {
        Installed::find_pins(&CONFORMANCE).map(|installed| Self { installed })
    }

    fn command(&self, cwd: &Path) -> TestCommand {
        let bin = self.installed.bin("conformance");
        let node_dir = bin.parent().unwrap().to_owned();
        let path = std::env::join_paths(std::iter::once(node_dir).chain(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        )))
        .unwrap();
        let mut cmd = TestCommand::external(&bin, cwd);
        cmd.env("PATH", path).env("NO_COLOR", "1");
        cmd
    }

    /// The client scenarios this version of the suite lists (`conformance list --client`).
    fn client_scenarios(&self, cwd: &Path) -> Vec<String> {
        let out = self.command(cwd).args(["list", "--client"]).run();
        out.success();
        let names: Vec<String> = out
            .stdout
            .lines()
            .filter_map(|l| l.trim().strip_prefix("- "))
            .filter_map(|l| l.split_whitespace().next())
            .map(str::to_owned)
            .collect();
        if names.is_empty() {
            out.fail("the suite listed no client scenarios");
        }
        names
    }
}

/// What one scenario's `checks.json` says.
#[derive(Default, Debug)]
struct CheckCounts {
    passed: usize,
    failed: usize,
    warnings: usize,
}

impl CheckCounts {
    /// The suite counts a scenario as passed only with no failure and no warning.
    fn scenario_passed(&self) -> bool {
        self.failed == 0 && self.warnings == 0
    }

    fn add(&mut self, other: &CheckCounts) {
        self.passed += other.passed;
        self.failed += other.failed;
        self.warnings += other.warnings;
    }
}

fn read_checks(file: &Path) -> CheckCounts {
    let checks: serde_json::Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
    let mut counts = CheckCounts::default();
    for check in checks.as_array().unwrap() {
        match check["status"].as_str().unwrap() {
            "SUCCESS" => counts.passed += 1,
            "FAILURE" => counts.failed += 1,
            "WARNING" => counts.warnings += 1,
            _ => {} // INFO and SKIPPED lines record what happened; they are no verdict
        }
    }
    counts
}

/// Every `checks.json` under `dir`, with the name of the directory holding it.
fn checks_files(dir: &Path) -> Vec<(String, PathBuf)> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_owned()];
    while let Some(d) = pending.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else if path.file_name().is_some_and(|n| n == "checks.json") {
                let rel = d.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
                found.push((rel, path));
            }
        }
    }
    found.sort();
    found
}

/// A result directory's name is `<scenario>-<timestamp>`, the timestamp as
/// `2026-01-31T12-00-00-000Z` (24 characters).
fn scenario_of_result_dir(dir: &str) -> String {
    const STAMP: usize = "-2026-01-31T12-00-00-000Z".len();
    assert!(
        dir.ends_with('Z') && dir.len() > STAMP,
        "unexpected result directory {dir:?}"
    );
    dir[..dir.len() - STAMP].to_owned()
}

/// The tally of one side's run, printed so it can be quoted.
#[derive(Default, Debug)]
struct Tally {
    passed: Vec<String>,
    expected_failures: Vec<String>,
    checks: CheckCounts,
}

impl Tally {
    fn record(&mut self, scenario: String, counts: &CheckCounts, baseline: &[String]) {
        self.checks.add(counts);
        if counts.scenario_passed() {
            self.passed.push(scenario);
        } else if baseline.contains(&scenario) {
            self.expected_failures.push(scenario);
        }
        // An unexpected failure is the suite's verdict to give (its exit code), with its output.
    }

    fn print(&self, side: Side) {
        eprintln!(
            "conformance {}: {} scenarios passed, {} expected failures (baseline); checks: {} passed, {} failed, {} warnings",
            side.key(),
            self.passed.len(),
            self.expected_failures.len(),
            self.checks.passed,
            self.checks.failed,
            self.checks.warnings,
        );
        eprintln!("  passed: {}", self.passed.join(", "));
        eprintln!("  baselined: {}", self.expected_failures.join(", "));
    }
}

#[track_caller]
fn suite_verdict(out: &Output, what: &str) {
    if out.code != Some(0) {
        out.fail(&format!(
            "{what}: the conformance suite reports an unexpected failure or a stale baseline entry (see its summary)"
        ));
    }
}

#[test]
fn conformance_server_scenarios_pass_against_tackle_serve() {
    let Some(suite) = Suite::find() else { return };
    let p = Project::new();
    let mut server = p
        .tackle(["serve", "--http", "127.0.0.1:0", "--no-token"])
        .spawn();
    let addr = server.http_address();
    let results = tempfile::tempdir().unwrap();
    let out = suite
        .command(results.path())
        .args(["server", "--url", &format!("http://{addr}/mcp")])
        .arg("--expected-failures")
        .arg(baseline_file())
        .arg("-o")
        .arg(results.path())
        .timeout(SERVER_RUN_LIMIT)
        .run();
    suite_verdict(&out, "server scenarios");

    let baseline = baselined(Side::Server);
    let mut tally = Tally::default();
    for (dir, file) in checks_files(results.path()) {
        let scenario = scenario_of_result_dir(&dir);
        let scenario = scenario.strip_prefix("server-").unwrap_or(&scenario);
        tally.record(scenario.to_owned(), &read_checks(&file), &baseline);
    }
    tally.print(Side::Server);
    // The scenarios the issue names must be among the passes, not in the baseline.
    for must in [
        "server-initialize",
        "ping",
        "logging-set-level",
        "tools-list",
        "dns-rebinding-protection",
    ] {
        assert!(
            tally.passed.iter().any(|s| s == must),
            "{must} did not pass: {tally:?}"
        );
    }
    assert_eq!(
        tally.passed.len() + tally.expected_failures.len(),
        checks_files(results.path()).len(),
        "every scenario either passed or is baselined: {tally:?}"
    );
}

#[test]
fn conformance_client_scenarios_pass_with_the_tackle_cli_as_client() {
    let Some(suite) = Suite::find() else { return };
    let work = tempfile::tempdir().unwrap();
    let scenarios = suite.client_scenarios(work.path());
    let baseline = baselined(Side::Client);
    for name in &baseline {
        assert!(
            scenarios.contains(name),
            "baseline.yml lists client scenario {name}, which the suite does not have"
        );
    }
    let script = pins_dir().join("client.sh");
    let mut tally = Tally::default();
    let mut unexpected = Vec::new();
    for (i, scenario) in scenarios.iter().enumerate() {
        let results = work.path().join(format!("scenario-{i}"));
        let out = suite
            .command(work.path())
            .env("TACKLE", harness::tackle_binary())
            .args(["client", "--command"])
            .arg(&script)
            .args(["--scenario", scenario])
            .arg("--timeout")
            .arg(CLIENT_SCENARIO_TIMEOUT_MS.to_string())
            .arg("--expected-failures")
            .arg(baseline_file())
            .arg("-o")
            .arg(&results)
            .timeout(CLIENT_RUN_LIMIT)
            .run();
        let mut counts = CheckCounts::default();
        for (_, file) in checks_files(&results) {
            counts.add(&read_checks(&file));
        }
        tally.record(scenario.clone(), &counts, &baseline);
        if out.code != Some(0) {
            unexpected.push((scenario.clone(), out));
        }
    }
    tally.print(Side::Client);
    if let Some((_, first)) = unexpected.first() {
        let names: Vec<&str> = unexpected.iter().map(|(s, _)| s.as_str()).collect();
        suite_verdict(
            first,
            &format!(
                "client scenarios {} failed unexpectedly; the first",
                names.join(", ")
            ),
        );
    }
    for must in ["initialize", "tools_call", "sse-retry"] {
        assert!(
            tally.passed.iter().any(|s| s == must),
            "{must} did not pass: {tally:?}"
        );
    }
    assert_eq!(
        tally.passed.len() + tally.expected_failures.len(),
        scenarios.len(),
        "every scenario either passed or is baselined: {tally:?}"
    );
}
