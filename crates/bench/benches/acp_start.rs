//! How long an editor waits: `tackle acp` from its start to the first `session/update` of a
//! prompt (initialize, session/new, session/prompt written as an editor writes them), against
//! the same prompt through `tackle run --json` from its start to the first event of the
//! model's answer. The model is a replayed script (one answer of text), so what is measured is
//! tackle's own work: start, configuration, session, catalog, the request and the first
//! streamed piece. Runs alternate so a drift in the machine's load falls on both.
//!
//! Run: `cargo bench -p tackle-bench --bench acp_start` (builds release tackle first);
//! `TACKLE_BENCH_BIN=path` measures that binary instead, `TACKLE_BENCH_RUNS` (default 15).

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use tackle_bench::{Stats, ratio};

type BenchResult<T> = Result<T, Box<dyn std::error::Error>>;

fn main() -> BenchResult<()> {
    let tackle = match std::env::var_os("TACKLE_BENCH_BIN") {
        Some(bin) => PathBuf::from(bin),
        None => tackle_bench::release::release_tackle()?,
    };
    let runs: usize = std::env::var("TACKLE_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(15);
    let dir = tempfile::tempdir()?;
    let script = dir.path().join("script.jsonl");
    std::fs::write(
        &script,
        "{\"tackle_replay\":1}\n{\"turn\":{\"text\":\"hello from the model\"}}\n",
    )?;
    let model = format!("replay:{}", script.display());
    let (mut acp, mut run) = (Vec::new(), Vec::new());
    for i in 0..runs {
        let project = dir.path().join(format!("p{i}"));
        std::fs::create_dir_all(project.join(".agents"))?;
        let home = dir.path().join(format!("home{i}"));
        std::fs::create_dir_all(&home)?;
        acp.push(acp_first_update(&tackle, &project, &home, &model)?);
        run.push(run_first_event(&tackle, &project, &home, &model)?);
    }
    let (acp, run) = (Stats::of(&mut acp), Stats::of(&mut run));
    println!("binary: {}", tackle.display());
    println!("tackle acp → first session/update   {acp}");
    println!("tackle run → first answer event     {run}");
    println!(
        "acp / run (median): {:.2}×   (target: an editor waits no longer than a terminal, ≤ 1.1×)",
        ratio(acp.median, run.median)
    );
    Ok(())
}

fn command(tackle: &Path, project: &Path, home: &Path, model: &str) -> Command {
    let mut cmd = Command::new(tackle);
    cmd.current_dir(project)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("xdg"))
        .env("XDG_CACHE_HOME", home.join("cache"))
        .args(["--root"])
        .arg(project)
        .args(["--model", model]);
    cmd
}

/// From spawning `tackle acp` to the first `session/update` line of a prompt.
fn acp_first_update(
    tackle: &Path,
    project: &Path,
    home: &Path,
    model: &str,
) -> BenchResult<Duration> {
    let start = Instant::now();
    let mut child = command(tackle, project, home, model)
        .arg("acp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let mut lines = BufReader::new(child.stdout.take().ok_or("no stdout")?).lines();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":1}}}}"#
    )?;
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":2,"method":"session/new","params":{{"cwd":{},"mcpServers":[]}}}}"#,
        serde_json::Value::String(project.display().to_string())
    )?;
    let mut session = None;
    let mut elapsed = None;
    while let Some(line) = lines.next().transpose()? {
        let message: serde_json::Value = serde_json::from_str(&line)?;
        if message["id"] == 2 {
            let id = message["result"]["sessionId"]
                .as_str()
                .ok_or_else(|| format!("session/new failed: {line}"))?
                .to_owned();
            writeln!(
                stdin,
                r#"{{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{{"sessionId":"{id}","prompt":[{{"type":"text","text":"hi"}}]}}}}"#
            )?;
            session = Some(id);
        } else if message["method"] == "session/update" && session.is_some() {
            elapsed = Some(start.elapsed());
            break;
        }
    }
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    elapsed.ok_or_else(|| "tackle acp ended before any session/update".into())
}

/// From spawning `tackle run --json` to its first `text_delta` event.
fn run_first_event(
    tackle: &Path,
    project: &Path,
    home: &Path,
    model: &str,
) -> BenchResult<Duration> {
    let start = Instant::now();
    let mut child = command(tackle, project, home, model)
        .args(["run", "--json", "hi"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let lines = BufReader::new(child.stdout.take().ok_or("no stdout")?).lines();
    let mut elapsed = None;
    for line in lines {
        let line = line?;
        if line.contains("\"text_delta\"") {
            elapsed = Some(start.elapsed());
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    elapsed.ok_or_else(|| "tackle run ended before any text_delta".into())
}
