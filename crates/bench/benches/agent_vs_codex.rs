//! `tackle run` beside `codex exec` on the same task against the same scripted Responses server
//! (`tackle_bench::responses_mock`, zero model latency): read a file, edit it, run a command,
//! answer. Each agent gets its own tools' calls (Codex: `exec_command` three times; tackle:
//! `read_file`, `edit_file`, `bash`), so both do the same work their own way. Reported per
//! agent: wall time from spawn to exit and peak RSS (`wait4`'s `ru_maxrss` of the agent's
//! process), and the time from spawn to its first model request; then tackle / codex.
//!
//! Codex is the pinned native binary `scripts/install-agents` puts under `target/agents` (run
//! directly, without its Node launcher, which would only add to Codex's figures). Both run
//! with approvals off and writes allowed in the project (`--mode yolo`; Codex
//! `approval_policy=never`, `-s workspace-write`), each in a fresh copy of the project, with a
//! fresh home.
//!
//! Run: `cargo bench -p tackle-bench --bench agent_vs_codex` (builds release tackle first).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use tackle_bench::reaped::reap;
use tackle_bench::release::workspace;
use tackle_bench::responses_mock::{ResponsesMock, Script, Step};
use tackle_bench::{Stats, ratio};

type BenchResult<T> = Result<T, Box<dyn std::error::Error>>;

const SAMPLES: usize = 7;
const TASK: &str = "Bump the version in notes.txt from 1 to 2, then list the directory.";

fn scripts() -> Vec<Script> {
    let call = |name: &str, arguments: serde_json::Value| Step::Call {
        name: name.to_owned(),
        arguments,
    };
    vec![
        Script {
            offers: "exec_command".to_owned(),
            steps: vec![
                call("exec_command", json!({"cmd": "cat notes.txt"})),
                call(
                    "exec_command",
                    json!({"cmd": "sed -i 's/version = 1/version = 2/' notes.txt"}),
                ),
                call("exec_command", json!({"cmd": "ls"})),
                Step::Text("Bumped the version to 2.".to_owned()),
            ],
        },
        Script {
            offers: "read_file".to_owned(),
            steps: vec![
                call("read_file", json!({"path": "notes.txt"})),
                call(
                    "edit_file",
                    json!({"path": "notes.txt", "old_string": "version = 1", "new_string": "version = 2"}),
                ),
                call("bash", json!({"command": "ls"})),
                Step::Text("Bumped the version to 2.".to_owned()),
            ],
        },
    ]
}

/// One agent's run: what it costs and whether it did the task.
struct Sample {
    wall: Duration,
    first_request: Duration,
    max_rss_kib: u64,
}

/// Spawn `cmd`, reap it with `wait4`, check the edit landed.
fn measure(mut cmd: Command, project: &Path, mock: &ResponsesMock) -> BenchResult<Sample> {
    mock.take_served();
    let start = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()?;
    let stderr = child.stderr.take();
    let reaped = reap(child)?;
    let wall = start.elapsed();
    let mut stderr_text = String::new();
    if let Some(mut e) = stderr {
        use std::io::Read as _;
        e.read_to_string(&mut stderr_text).ok();
    }
    if !reaped.status.success() {
        return Err(format!(
            "{:?} failed ({}): {stderr_text}",
            cmd.get_program(),
            reaped.status
        )
        .into());
    }
    let notes = std::fs::read_to_string(project.join("notes.txt"))?;
    if !notes.contains("version = 2") {
        return Err(format!(
            "{:?} did not edit notes.txt: {stderr_text}",
            cmd.get_program()
        )
        .into());
    }
    let first = mock
        .take_served()
        .iter()
        .map(|s| s.arrived)
        .min()
        .ok_or("the agent never asked the model")?;
    Ok(Sample {
        wall,
        first_request: first.saturating_duration_since(start),
        max_rss_kib: reaped.max_rss_kib,
    })
}

/// A fresh project and home for one run.
fn fresh(base: &Path, name: &str) -> BenchResult<(PathBuf, PathBuf)> {
    let dir = base.join(name);
    let (project, home) = (dir.join("project"), dir.join("home"));
    std::fs::create_dir_all(project.join(".git"))?;
    std::fs::create_dir_all(home.join(".config"))?;
    std::fs::write(project.join("notes.txt"), "title = notes\nversion = 1\n")?;
    Ok((project, home))
}

fn tackle_command(tackle: &Path, project: &Path, home: &Path, mock: &ResponsesMock) -> Command {
    let config = home.join(".config/tackle");
    std::fs::create_dir_all(&config).ok();
    std::fs::write(
        config.join("config.toml"),
        format!(
            "[providers.mock]\nkind = \"openai-responses\"\nbase_url = \"{}/v1\"\napi_key_env = \"MOCK_KEY\"\n",
            mock.url
        ),
    )
    .ok();
    let mut cmd = Command::new(tackle);
    cmd.env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("MOCK_KEY", "dummy")
        .current_dir(project)
        .args([
            "run",
            "--headless",
            "--mode",
            "yolo",
            "--model",
            "mock:mock-model",
            TASK,
        ]);
    cmd
}

fn codex_command(codex: &Path, project: &Path, home: &Path, mock: &ResponsesMock) -> Command {
    let codex_home = home.join(".codex");
    std::fs::create_dir_all(&codex_home).ok();
    let mut cmd = Command::new(codex);
    cmd.env("HOME", home)
        .env("CODEX_HOME", &codex_home)
        .env("MOCK_KEY", "dummy")
        .current_dir(project)
        .args([
            "exec",
            "--skip-git-repo-check",
            "--ephemeral",
            "-m",
            "mock-model",
            "-c",
            "model_provider=mock",
            "-c",
        ])
        .arg(format!(
            "model_providers.mock={{name=\"mock\",base_url=\"{}/v1\",env_key=\"MOCK_KEY\",wire_api=\"responses\"}}",
            mock.url
        ))
        .args([
            "-c",
            "approval_policy=never",
            "-c",
            "check_for_update_on_startup=false",
            "-c",
            "analytics.enabled=false",
            "-s",
            "workspace-write",
            TASK,
        ]);
    cmd
}

fn codex_binary() -> Option<PathBuf> {
    let vendor = workspace().join("target/agents/node_modules/@openai/codex-linux-x64/vendor");
    let arch = std::fs::read_dir(&vendor).ok()?.flatten().next()?.path();
    let bin = arch.join("bin/codex");
    bin.is_file().then_some(bin)
}

fn report(name: &str, samples: &[Sample]) -> (Stats, Stats, u64) {
    let mut wall: Vec<Duration> = samples.iter().map(|s| s.wall).collect();
    let mut first: Vec<Duration> = samples.iter().map(|s| s.first_request).collect();
    let mut rss: Vec<u64> = samples.iter().map(|s| s.max_rss_kib).collect();
    rss.sort_unstable();
    let (wall, first, rss) = (
        Stats::of(&mut wall),
        Stats::of(&mut first),
        rss[rss.len() / 2],
    );
    println!("{name}: wall {wall}");
    println!("{name}: start → first model request {first}");
    println!(
        "{name}: peak RSS (median of runs) {:.1} MiB",
        rss as f64 / 1024.0
    );
    (wall, first, rss)
}

fn main() -> BenchResult<()> {
    let tackle = tackle_bench::release::release_tackle()?;
    let mock = ResponsesMock::start(scripts())?;
    let base = tempfile::tempdir()?;
    let codex = codex_binary();
    if codex.is_none() {
        println!("codex not installed (scripts/install-agents); only tackle's column is printed");
    }
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for i in 0..SAMPLES {
        let (project, home) = fresh(base.path(), &format!("tackle-{i}"))?;
        ours.push(measure(
            tackle_command(&tackle, &project, &home, &mock),
            &project,
            &mock,
        )?);
        if let Some(codex) = &codex {
            let (project, home) = fresh(base.path(), &format!("codex-{i}"))?;
            theirs.push(measure(
                codex_command(codex, &project, &home, &mock),
                &project,
                &mock,
            )?);
        }
    }
    println!("task: read a file, edit it, run a command, answer ({SAMPLES} runs each)");
    let (t_wall, t_first, t_rss) = report("tackle run", &ours);
    if theirs.is_empty() {
        return Ok(());
    }
    let (c_wall, c_first, c_rss) = report("codex exec", &theirs);
    println!(
        "tackle / codex: wall {:.2}x, peak RSS {:.2}x, start → first request {:.2}x",
        ratio(t_wall.median, c_wall.median),
        t_rss as f64 / c_rss as f64,
        ratio(t_first.median, c_first.median)
    );
    Ok(())
}
