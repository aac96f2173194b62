//! Crash loops: `tackle call` and `tackle serve` SIGKILLed at seeded random points while they
//! write multi-megabyte files (write_file, edit_file) and while bash produces megabytes of
//! output, then one more normal write in every directory and `tackle artifacts gc`. After all
//! of it: no `.tackle-*.tmp` anywhere in the worktree, the store's `tmp/` and write intents
//! empty, every target either its old or its new content (never torn), and a clean gc report.
//!
//! A kill point is chosen by a seeded RNG over *observed progress*, never over time: the test
//! polls the directories (bounded by a deadline) and kills once the write's intent or temp
//! appears, once the temp (or bash's capture) holds at least a chosen number of bytes, or after
//! a chosen number of polls. `TACKLE_CRASH_SEED` picks another seed; `TACKLE_CRASH_ROUNDS`
//! multiplies the iterations.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ChildStdin;
use std::time::{Duration, Instant};

use harness::{KillOnDrop, Project};
use serde_json::json;

/// Write and edit iterations per round, and bash iterations per round.
const WRITE_ITERATIONS: usize = 24;
const BASH_ITERATIONS: usize = 8;
/// Multi-megabyte content, under the 4 MiB line limit of `serve` over stdio.
const CONTENT_BYTES: usize = 3 * 1024 * 1024;
/// What each bash call prints.
const BASH_BYTES: u64 = 16 * 1024 * 1024;
/// No process in this test should get near this before its kill point or its end.
const DEADLINE: Duration = Duration::from_secs(60);

/// The flags every run gets: writes and any command allowed, so nothing waits for a person.
const FLAGS: [&str; 4] = ["--mode", "yolo", "--allow", "tool.bash.cmd:*"];

/// splitmix64: small, seeded, and the same on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn seed() -> u64 {
    std::env::var("TACKLE_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(18)
}

fn rounds() -> usize {
    std::env::var("TACKLE_CRASH_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1)
}

/// When to kill, as progress the test can see.
#[derive(Clone, Copy, Debug)]
enum KillPoint {
    /// After this many polls, whatever has happened (often still parsing the arguments).
    Polls(u64),
    /// Once a write intent is recorded in `.agents/store/writes`.
    IntentRecorded,
    /// Once a temp exists beside the target.
    TempCreated,
    /// Once the temp beside the target (or bash's capture in the store) holds this many bytes.
    TempBytes(u64),
    /// Not at all: the run finishes, and the next one starts from what it wrote.
    Never,
}

impl KillPoint {
    fn for_write(rng: &mut Rng) -> Self {
        match rng.below(8) {
            0 => KillPoint::Polls(rng.below(2000)),
            1 => KillPoint::IntentRecorded,
            2 => KillPoint::TempCreated,
            3 => KillPoint::Never,
            _ => KillPoint::TempBytes(rng.below(CONTENT_BYTES as u64)),
        }
    }

    fn for_bash(rng: &mut Rng) -> Self {
        match rng.below(6) {
            0 => KillPoint::TempCreated,
            _ => KillPoint::TempBytes(rng.below(BASH_BYTES)),
        }
    }
}

/// What the loops counted.
#[derive(Debug, Default)]
struct Tally {
    runs: usize,
    kills: usize,
    /// Runs that ended before their kill point was seen.
    finished_first: usize,
    /// Temps, captures and intents found right after a kill, before anything swept them.
    left_by_kills: usize,
    /// What the last run left (0 unless it was killed).
    last_left: usize,
}

/// Where a run's progress shows.
struct Watch<'a> {
    /// The directory the write's temp appears in (`None` for bash).
    temp_dir: Option<PathBuf>,
    store_tmp: PathBuf,
    writes: PathBuf,
    project: &'a Project,
    /// Session directories that existed before this run: a new one is this run's.
    sessions_before: Vec<std::ffi::OsString>,
}

impl Watch<'_> {
    /// The largest temp (or capture) now present, if any: its length.
    fn temp_bytes(&self) -> Option<u64> {
        let (dir, prefix) = match &self.temp_dir {
            Some(dir) => (dir.as_path(), ".tackle-"),
            None => (self.store_tmp.as_path(), "capture-"),
        };
        let mut best = None;
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            if entry.file_name().to_string_lossy().starts_with(prefix)
                && let Ok(meta) = entry.metadata()
            {
                best = Some(best.unwrap_or(0).max(meta.len()));
            }
        }
        best
    }

    fn intent_recorded(&self) -> bool {
        std::fs::read_dir(&self.writes).is_ok_and(|mut d| d.next().is_some())
    }

    fn reached(&self, point: KillPoint, polls: u64) -> bool {
        match point {
            KillPoint::Polls(n) => polls >= n,
            KillPoint::IntentRecorded => self.intent_recorded(),
            KillPoint::TempCreated => self.temp_bytes().is_some(),
            KillPoint::TempBytes(n) => self.temp_bytes().is_some_and(|len| len >= n),
            KillPoint::Never => false,
        }
    }

    /// Everything a killed run may have left: temps in the worktree, files in the store's
    /// `tmp/`, intents.
    fn leftovers(&self) -> usize {
        let count = |dir: &Path| std::fs::read_dir(dir).map_or(0, |d| d.count());
        temps_in_worktree(self.project.path()).len() + count(&self.store_tmp) + count(&self.writes)
    }
}

/// A started run and what it needs until it ends.
struct Run {
    child: KillOnDrop,
    /// `serve` keeps its input open until it is killed (end of input would end it).
    _stdin: Option<ChildStdin>,
    drains: Vec<std::thread::JoinHandle<Vec<u8>>>,
}

fn drain(mut from: impl Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = from.read_to_end(&mut bytes);
        bytes
    })
}

/// `tackle call <tool> -` with the arguments on stdin, or `tackle serve` with one `tools/call`.
fn start(p: &Project, tool: &str, arguments: &serde_json::Value, serve: bool) -> Run {
    let mut args: Vec<&str> = FLAGS.to_vec();
    if serve {
        args.push("serve");
    } else {
        args.extend(["call", tool, "-", "--json"]);
    }
    let mut child = p.tackle(&args).spawn();
    let mut stdin = child.0.stdin.take().unwrap();
    let drains = vec![
        drain(child.0.stdout.take().unwrap()),
        drain(child.0.stderr.take().unwrap()),
    ];
    if serve {
        let lines = [
            json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"crash","version":"0"}}}),
            json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
            json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":tool,"arguments":arguments}}),
        ];
        for line in lines {
            // A server killed early stops reading: a broken pipe then is expected.
            if writeln!(stdin, "{line}").is_err() {
                break;
            }
        }
        Run {
            child,
            _stdin: Some(stdin),
            drains,
        }
    } else {
        let text = arguments.to_string();
        std::thread::spawn(move || {
            let _ = stdin.write_all(text.as_bytes());
        });
        Run {
            child,
            _stdin: None,
            drains,
        }
    }
}

/// Polls until the kill point is reached (then SIGKILL) or the run ends. For `serve`, which
/// does not end by itself, the end is its answer on stdout: it is killed then too, done.
fn run_until(mut run: Run, watch: &Watch<'_>, point: KillPoint, serve: bool, tally: &mut Tally) {
    tally.runs += 1;
    tally.last_left = 0;
    let started = Instant::now();
    let mut polls = 0u64;
    loop {
        if watch.reached(point, polls) {
            run.child.0.kill().unwrap();
            run.child.0.wait().unwrap();
            tally.kills += 1;
            tally.last_left = watch.leftovers();
            tally.left_by_kills += tally.last_left;
            return;
        }
        if let Some(status) = run.child.0.try_wait().unwrap() {
            let out: Vec<Vec<u8>> = run.drains.drain(..).map(|d| d.join().unwrap()).collect();
            assert!(
                status.success(),
                "a run that was not killed failed: {status}\n{}\n{}",
                String::from_utf8_lossy(&out[0]),
                String::from_utf8_lossy(&out[1])
            );
            if !matches!(point, KillPoint::Never) {
                tally.finished_first += 1;
            }
            return;
        }
        if serve && serve_answered(watch) {
            // The write is published: what is left to kill is an idle server.
            run.child.0.kill().unwrap();
            run.child.0.wait().unwrap();
            if !matches!(point, KillPoint::Never) {
                tally.finished_first += 1;
            }
            return;
        }
        assert!(
            started.elapsed() < DEADLINE,
            "no progress to {point:?} within {DEADLINE:?}"
        );
        polls += 1;
        std::thread::yield_now();
    }
}

/// Whether the server's call has finished: a `call_finished` in the session log it opened.
fn serve_answered(watch: &Watch<'_>) -> bool {
    std::fs::read_dir(watch.project.join(".agents/store/sessions"))
        .into_iter()
        .flatten()
        .flatten()
        .filter(|s| !watch.sessions_before.contains(&s.file_name()))
        .any(|s| {
            std::fs::read_to_string(s.path().join("events.jsonl"))
                .is_ok_and(|log| log.contains("\"call_finished\""))
        })
}

fn sessions(p: &Project) -> Vec<std::ffi::OsString> {
    std::fs::read_dir(p.join(".agents/store/sessions"))
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default()
}

/// Every `.tackle-*.tmp` beneath `dir`, recursively, links not followed.
fn temps_in_worktree(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with(".tackle-") && name.ends_with(".tmp") {
                found.push(path);
            } else if entry.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(path);
            }
        }
    }
    found
}

/// Content `version` of a target: a header naming it, then filler that differs per version.
fn content(version: u64) -> String {
    let mut s = format!("version {version}\n");
    let line = format!("{version:08} filler line that makes the file several megabytes\n");
    while s.len() + line.len() <= CONTENT_BYTES {
        s.push_str(&line);
    }
    s
}

/// The content an edit of `version` produces: only the header changes.
fn edited(from: &str, version: u64) -> String {
    from.replacen(
        &format!("version {version}\n"),
        &format!("version {}\n", version + 1),
        1,
    )
}

/// A target: its path, whether it is edited (else overwritten), and what it may hold now.
struct Target {
    rel: &'static str,
    edit: bool,
    current: String,
    version: u64,
}

#[test]
fn writes_and_edits_killed_anywhere_leave_no_temp_and_no_torn_file() {
    let p = Project::new();
    let mut rng = Rng(seed());
    // Each directory is its own case: the top, one level, deep; overwritten and edited.
    let mut targets: Vec<Target> = [
        ("top.txt", false),
        ("a/w.txt", false),
        ("b/c/d/w.txt", false),
        ("edit.txt", true),
        ("e/f/edit.txt", true),
    ]
    .into_iter()
    .map(|(rel, edit)| {
        let current = content(0);
        p.write(rel, &current);
        Target {
            rel,
            edit,
            current,
            version: 0,
        }
    })
    .collect();
    let mut tally = Tally::default();
    for i in 0..WRITE_ITERATIONS * rounds() {
        let t = &mut targets[rng.below(5) as usize];
        let next = if t.edit {
            edited(&t.current, t.version)
        } else {
            content(t.version + 1)
        };
        let arguments = if t.edit {
            json!({
                "path": t.rel,
                "old_string": format!("version {}\n", t.version),
                "new_string": format!("version {}\n", t.version + 1),
            })
        } else {
            json!({"path": t.rel, "content": next})
        };
        let tool = if t.edit { "edit_file" } else { "write_file" };
        // One run in four through the server, the rest as single calls.
        let serve = rng.below(4) == 0;
        let point = KillPoint::for_write(&mut rng);
        let dir = p.join(t.rel).parent().unwrap().to_path_buf();
        let watch = Watch {
            temp_dir: Some(dir),
            store_tmp: p.join(".agents/store/tmp"),
            writes: p.join(".agents/store/writes"),
            project: &p,
            sessions_before: sessions(&p),
        };
        run_until(
            start(&p, tool, &arguments, serve),
            &watch,
            point,
            serve,
            &mut tally,
        );
        let now = std::fs::read(p.join(t.rel)).unwrap();
        if now == next.as_bytes() {
            t.current = next;
            t.version += 1;
        } else {
            assert!(
                now == t.current.as_bytes(),
                "iteration {i} ({tool} {} killed at {point:?}): torn, {} bytes, neither old nor new",
                t.rel,
                now.len()
            );
        }
    }
    // What the last kills left is swept by gc (directories never written again) ...
    let out = p.tackle(["artifacts", "gc", "--json"]).run();
    out.success();
    // ... and one more normal write in every directory finds nothing left either.
    for t in &targets {
        let last = format!("final content of {}\n", t.rel);
        let arguments = json!({"path": t.rel, "content": last}).to_string();
        let mut args = FLAGS.to_vec();
        args.extend(["call", "write_file", &arguments, "--json"]);
        p.tackle(&args).run().success();
        assert_eq!(std::fs::read_to_string(p.join(t.rel)).unwrap(), last);
    }
    assert_clean(&p);
    eprintln!(
        "write/edit crash loop (seed {}): {tally:?}; left after cleanup: 0",
        seed()
    );
    assert!(
        tally.kills * 2 >= tally.runs,
        "too few runs were killed to mean anything: {tally:?}"
    );
    assert!(
        tally.left_by_kills > 0,
        "no kill landed mid-write: {tally:?}"
    );
}

#[test]
fn bash_output_killed_anywhere_leaves_no_capture_behind() {
    let p = Project::new();
    let mut rng = Rng(seed() ^ 0xba5e);
    let mut tally = Tally::default();
    let command = format!("head -c {BASH_BYTES} /dev/zero");
    for _ in 0..BASH_ITERATIONS * rounds() {
        let serve = rng.below(4) == 0;
        let point = KillPoint::for_bash(&mut rng);
        let watch = Watch {
            temp_dir: None,
            store_tmp: p.join(".agents/store/tmp"),
            writes: p.join(".agents/store/writes"),
            project: &p,
            sessions_before: sessions(&p),
        };
        let arguments = json!({"command": command});
        run_until(
            start(&p, "bash", &arguments, serve),
            &watch,
            point,
            serve,
            &mut tally,
        );
    }
    // Nothing swept the last kill's capture yet: gc finds and removes it, then reports clean.
    let out = p.tackle(["artifacts", "gc", "--json"]).run();
    out.success();
    assert_eq!(
        out.json()["temps_removed"],
        tally.last_left,
        "gc removes exactly what the last kill left: {tally:?}"
    );
    assert_clean(&p);
    eprintln!(
        "bash crash loop (seed {}): {tally:?}; left after cleanup: 0",
        seed()
    );
    assert!(tally.kills > 0 && tally.left_by_kills > 0, "{tally:?}");
}

/// The invariant after cleanup: no temp anywhere, an empty `tmp/` and intents directory, and a
/// gc that finds nothing more.
fn assert_clean(p: &Project) {
    let temps = temps_in_worktree(p.path());
    assert!(temps.is_empty(), "temps left in the worktree: {temps:?}");
    for dir in [".agents/store/tmp", ".agents/store/writes"] {
        let left: Vec<_> = std::fs::read_dir(p.join(dir))
            .map(|d| d.flatten().map(|e| e.file_name()).collect())
            .unwrap_or_default();
        assert!(left.is_empty(), "{dir} is not empty: {left:?}");
    }
    let out = p.tackle(["artifacts", "gc", "--json"]).run();
    out.success();
    let r = out.json();
    for key in ["temps_removed", "write_temps_removed"] {
        assert_eq!(r[key], 0, "gc is not clean: {r}");
    }
}
