//! The time `bash` adds before a line runs: `Bash::prepare` (parse, search gate, analysis,
//! denylist, command keys, and the resolution of every redirection target through the root's
//! symlinks), per line of the differential shell corpus
//! (`crates/tools/tests/data/shell_differential.txt`), in a root with the corpus's links.
//!
//! Prints the median and the 90th percentile over the lines of each line's median time.
//!
//! Run: `cargo bench -p tackle-bench --bench bash_prepare`

use std::path::Path;
use std::time::{Duration, Instant};

use tackle_process::{EnvPolicy, StdinRegistry};
use tackle_protocol::{CallId, SessionId};
use tackle_tool::{ArtifactSource, OpenedArtifact, PrepareContext, Tool, ToolError};
use tackle_tools::bash::{Bash, BashArgs, SearchGate, SearchGateMode};

type BenchResult<T> = Result<T, Box<dyn std::error::Error>>;

/// Timed prepares of each line (after one untimed).
const RUNS: usize = 50;

struct NoArtifacts;

impl ArtifactSource for NoArtifacts {
    fn derived_from(&self, _: tackle_protocol::Label, _: &[String]) {}

    fn open(&self, _: &tackle_protocol::ArtifactUri) -> Result<OpenedArtifact, ToolError> {
        Err(ToolError::new(
            tackle_protocol::ErrorCode::NOT_FOUND,
            "no artifacts in this bench",
        ))
    }
}

fn main() -> BenchResult<()> {
    if std::env::args()
        .skip(1)
        .any(|arg| !arg.starts_with('-') && !"bash_prepare".contains(arg.as_str()))
    {
        return Ok(());
    }
    let corpus = include_str!("../../tools/tests/data/shell_differential.txt");
    let lines: Vec<String> = corpus
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| l.replace('⏎', "\n"))
        .collect();
    let dir = tempfile::tempdir()?;
    let base = dir.path().canonicalize()?;
    let root = base.join("root");
    for d in ["sub", "elsewhere", ".git/hooks"] {
        std::fs::create_dir_all(root.join(d))?;
    }
    std::fs::create_dir_all(base.join("outside"))?;
    std::fs::write(root.join(".git/config"), "")?;
    for (target, name) in [
        ("../outside/target", "link"),
        (".git/config", "gitlink"),
        ("sub", "dirlink"),
        (".git", "gitdir"),
    ] {
        std::os::unix::fs::symlink(target, root.join(name))?;
    }
    std::os::unix::fs::symlink(base.join("outside"), root.join("outlink"))?;
    let names: Vec<String> = ["bash", "grep", "glob"].map(String::from).to_vec();
    let bash = Bash::new(
        SearchGate::new(SearchGateMode::Allow, &names),
        EnvPolicy::default(),
        StdinRegistry::new(),
        false,
    );
    let session = SessionId("bench".into());
    let call = CallId("c".into());
    let cx = PrepareContext {
        root: Path::new(&root),
        session: &session,
        turn: &tackle_tool::protocol::TurnId("t".into()),
        agent: None,
        call_id: &call,
        artifacts: &NoArtifacts,
        read_scope: &tackle_tool::AdmitAll,
    };
    let prepare = |line: &str| {
        let args = BashArgs {
            command: line.to_owned(),
            timeout: None,
            interactive: None,
        };
        std::hint::black_box(bash.prepare(args, &cx).is_ok())
    };
    let mut medians: Vec<Duration> = Vec::with_capacity(lines.len());
    for line in &lines {
        prepare(line);
        let mut samples: Vec<Duration> = (0..RUNS)
            .map(|_| {
                let t = Instant::now();
                prepare(line);
                t.elapsed()
            })
            .collect();
        samples.sort();
        medians.push(samples[samples.len() / 2]);
    }
    medians.sort();
    let at = |q: usize| medians[(medians.len() * q / 100).min(medians.len() - 1)];
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!(
        "bash prepare over {} corpus lines ({RUNS} runs each): median {:.1} µs, p90 {:.1} µs, max {:.1} µs per line",
        lines.len(),
        us(at(50)),
        us(at(90)),
        us(medians[medians.len() - 1]),
    );
    Ok(())
}
