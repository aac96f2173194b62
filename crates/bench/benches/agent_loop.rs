//! The agent loop's own cost: a 50-turn `tackle run` session against a zero-latency model,
//! 49 turns that each call one cheap tool (`read_file` of a small file, `grep` over three
//! small files, bash `true`, in turn) and a last turn of text. Reported: tackle's overhead per
//! turn with the tools' execution time and the model's time taken out (median, p99), the wall
//! time of the 50 turns, and the peak RSS of the tackle process.
//!
//! Why the real binary and not the `tackle-agent` library in-process: the binary is what is
//! shipped, with the catalog, gate, approver, session store and `--json` output it really
//! runs with; an in-process driver would have to rebuild that setup and could drift from it.
//! The cost of measuring from outside is that `--json` lines carry no clock, so the bench
//! stamps each as it reads it from the pipe; every turn's start and end are stamped alike.
//!
//! How a turn is cut (`tackle_bench::loop_turns`): from its `turn_started` line to the next
//! turn's (to `run_finished` for the last), which holds the model's stream, the synced turn
//! record, the tool batch (call records, prepare, gate, execution, capture), the batch record
//! and the next request's building. Taken out: each call's execution time as the runtime timed
//! it (`ran_us` in the session log's `call_finished`; for bash that includes starting the
//! shell), and the model's time to answer. Two model sides, each measured:
//!
//! - **replay**: `--model replay:<file>`, the scripted provider in tackle's process. Its time
//!   is not taken out (it only hands over parsed events), so it counts as tackle's.
//! - **responses mock**: an OpenAI Responses server on loopback (`tackle_bench::responses_mock`)
//!   answering at once; tackle also builds each request as JSON, sends it over HTTP and decodes
//!   the SSE answer. The mock's own time per request (from the request read whole to the answer
//!   written) is taken out; the transfer both ways stays in.
//!
//! Each side runs `SESSIONS` sessions, each in a fresh project and config home; the turns of
//! all of them are pooled for the median and p99.
//!
//! Run: `cargo bench -p tackle-bench --bench agent_loop` (builds release tackle first).

use std::io::{BufRead as _, BufReader, Read as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tackle_bench::Stats;
use tackle_bench::loop_turns::{Stamped, TurnCost, ran_by_call, turn_costs};
use tackle_bench::reaped::reap;
use tackle_bench::release::release_tackle;
use tackle_bench::responses_mock::{ResponsesMock, Script, Step};

type BenchResult<T> = Result<T, Box<dyn std::error::Error>>;

const TURNS: usize = 50;
const SESSIONS: usize = 5;
const TASK: &str = "Look around the project, then say you are done.";
const SOURCES: [&str; 3] = ["src/alpha.rs", "src/beta.rs", "src/gamma.rs"];

/// The tool call of turn `turn` (1-based): read_file, grep, bash `true`, round and round.
fn call_of(turn: usize) -> (&'static str, Value) {
    match turn % 3 {
        1 => (
            "read_file",
            json!({"path": SOURCES[turn / 3 % SOURCES.len()]}),
        ),
        2 => ("grep", json!({"pattern": "version", "path": "src"})),
        _ => ("bash", json!({"command": "true"})),
    }
}

const LAST_WORDS: &str = "Looked around; done.";

fn replay_file(path: &Path) -> std::io::Result<()> {
    let usage = json!({"input_tokens": 10, "output_tokens": 5});
    let mut text = String::from("{\"tackle_replay\":1}\n");
    for turn in 1..TURNS {
        let (name, arguments) = call_of(turn);
        let line = json!({"turn": {"tool_calls": [{"name": name, "arguments": arguments}],
                                   "usage": usage}});
        text.push_str(&format!("{line}\n"));
    }
    text.push_str(&format!(
        "{}\n",
        json!({"turn": {"text": LAST_WORDS, "usage": usage}})
    ));
    std::fs::write(path, text)
}

fn mock_script() -> Script {
    let mut steps: Vec<Step> = (1..TURNS)
        .map(|turn| {
            let (name, arguments) = call_of(turn);
            Step::Call {
                name: name.to_owned(),
                arguments,
            }
        })
        .collect();
    steps.push(Step::Text(LAST_WORDS.to_owned()));
    Script {
        offers: "read_file".to_owned(),
        steps,
    }
}

/// A fresh project (small sources to read and grep) and config home under `dir`.
fn fresh(dir: &Path) -> BenchResult<(PathBuf, PathBuf)> {
    let (project, config) = (dir.join("project"), dir.join("config"));
    std::fs::create_dir_all(project.join(".agents"))?;
    std::fs::create_dir_all(project.join("src"))?;
    std::fs::create_dir_all(config.join("tackle"))?;
    for (i, source) in SOURCES.iter().enumerate() {
        let body: String = (0..40)
            .map(|l| format!("// {source} line {l}: version {i}.{l}\n"))
            .collect();
        std::fs::write(project.join(source), body)?;
    }
    Ok((project, config))
}

/// Which model side a session runs against.
enum Side<'a> {
    Replay(&'a Path),
    Mock(&'a ResponsesMock),
}

/// One session: its turns' costs, the wall from spawn to exit, and the process's peak RSS.
struct Session {
    turns: Vec<TurnCost>,
    process_wall: Duration,
    max_rss_kib: u64,
}

fn run_session(tackle: &Path, dir: &Path, side: &Side) -> BenchResult<Session> {
    let (project, config) = fresh(dir)?;
    let mut cmd = Command::new(tackle);
    cmd.env("HOME", dir)
        .env("XDG_CONFIG_HOME", &config)
        .arg("--root")
        .arg(&project)
        .args(["--headless", "--mode", "yolo", "--model"]);
    match side {
        Side::Replay(file) => {
            cmd.arg(format!("replay:{}", file.display()));
        }
        Side::Mock(mock) => {
            std::fs::write(
                config.join("tackle/config.toml"),
                format!(
                    // A window no session of the bench fills: the mock picks its answer by the
                    // number of tool outputs a request carries, which a checkpoint would reset.
                    "[providers.mock]\nkind = \"openai-responses\"\nbase_url = \"{}/v1\"\napi_key_env = \"MOCK_KEY\"\n\n[models.\"mock:mock-model\"]\ncontext_window = 1000000\nmax_output = 4096\n",
                    mock.url
                ),
            )?;
            cmd.env("MOCK_KEY", "dummy").arg("mock:mock-model");
            mock.take_served();
        }
    }
    // A bound past the script's length: a session that runs away fails instead of spinning.
    cmd.args(["run", "--json", "--max-turns"])
        .arg((TURNS + 5).to_string())
        .arg(TASK);

    let started = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let stdout = child.stdout.take().ok_or("no stdout pipe")?;
    let mut stderr = child.stderr.take().ok_or("no stderr pipe")?;
    let reader = std::thread::spawn(move || -> Result<Vec<Stamped>, String> {
        let mut lines = Vec::new();
        for line in BufReader::new(stdout).lines() {
            let line = line.map_err(|e| e.to_string())?;
            let at = Instant::now();
            let event = serde_json::from_str(&line).map_err(|e| format!("{line:?}: {e}"))?;
            lines.push(Stamped { at, event });
        }
        Ok(lines)
    });
    let errors = std::thread::spawn(move || {
        let mut text = String::new();
        stderr.read_to_string(&mut text).ok();
        text
    });
    let reaped = reap(child)?;
    let process_wall = started.elapsed();
    let lines = reader.join().map_err(|_| "the reader panicked")??;
    let errors = errors.join().map_err(|_| "the stderr reader panicked")?;
    if !reaped.status.success() {
        return Err(format!("tackle run failed ({}): {errors}", reaped.status).into());
    }

    let session = lines
        .iter()
        .find(|l| l.event["type"] == "session_started")
        .and_then(|l| l.event["session"].as_str())
        .ok_or("no session_started line")?;
    let log = std::fs::read_to_string(
        project.join(format!(".agents/store/sessions/{session}/events.jsonl")),
    )?;
    let ran = ran_by_call(&log)?;
    let model: Vec<Duration> = match side {
        Side::Replay(_) => Vec::new(),
        Side::Mock(mock) => model_times(mock)?,
    };
    let turns = turn_costs(&lines, &ran, &model)?;
    if turns.len() != TURNS {
        return Err(format!("{} turns, not {TURNS}: {errors}", turns.len()).into());
    }
    Ok(Session {
        turns,
        process_wall,
        max_rss_kib: reaped.max_rss_kib,
    })
}

/// The mock's time on each model turn of the session that just ended. An answer is noted
/// just after its last byte is written, so the last one may land a moment after tackle read
/// it: wait (bounded) until every turn's is in.
fn model_times(mock: &ResponsesMock) -> BenchResult<Vec<Duration>> {
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut served = Vec::new();
    loop {
        served.extend(mock.take_served().into_iter().filter(|s| s.is_turn()));
        if served.len() >= TURNS || Instant::now() > deadline {
            break;
        }
        std::thread::yield_now();
    }
    served.sort_by_key(|s| s.arrived);
    Ok(served
        .iter()
        .map(|s| s.answered.saturating_duration_since(s.arrived))
        .collect())
}

fn median(mut values: Vec<Duration>) -> Duration {
    Stats::of(&mut values).median
}

fn report(name: &str, sessions: &[Session]) {
    let turns: Vec<&TurnCost> = sessions.iter().flat_map(|s| &s.turns).collect();
    let mut overhead: Vec<Duration> = turns.iter().map(|t| t.overhead()).collect();
    let overhead = Stats::of(&mut overhead);
    let wall = median(turns.iter().map(|t| t.wall).collect());
    let tools = median(turns.iter().map(|t| t.tools).collect());
    let model = median(turns.iter().map(|t| t.model).collect());
    let loop_wall = median(
        sessions
            .iter()
            .map(|s| s.turns.iter().map(|t| t.wall).sum())
            .collect(),
    );
    let process_wall = median(sessions.iter().map(|s| s.process_wall).collect());
    let mut rss: Vec<u64> = sessions.iter().map(|s| s.max_rss_kib).collect();
    rss.sort_unstable();
    let mib = |kib: u64| kib as f64 / 1024.0;
    println!(
        "{name}: overhead per turn {overhead}  ({} turns)",
        turns.len()
    );
    println!(
        "{name}: per turn (medians) wall {wall:.1?} = tools {tools:.1?} + model {model:.1?} + tackle"
    );
    println!(
        "{name}: {TURNS} turns, first turn_started → run_finished {loop_wall:.1?}; spawn → exit {process_wall:.1?} (medians)"
    );
    println!(
        "{name}: peak RSS median {:.1} MiB, max {:.1} MiB",
        mib(rss[rss.len() / 2]),
        mib(rss[rss.len() - 1])
    );
}

fn main() -> BenchResult<()> {
    let tackle = release_tackle()?;
    let base = tempfile::tempdir()?;
    let replay = base.path().join("session.replay.jsonl");
    replay_file(&replay)?;
    let mock = ResponsesMock::start(vec![mock_script()])?;
    let (mut replayed, mut mocked) = (Vec::new(), Vec::new());
    for i in 0..SESSIONS {
        let dir = base.path().join(format!("replay-{i}"));
        replayed.push(run_session(&tackle, &dir, &Side::Replay(&replay))?);
        let dir = base.path().join(format!("mock-{i}"));
        mocked.push(run_session(&tackle, &dir, &Side::Mock(&mock))?);
    }
    println!(
        "{TURNS}-turn session: {} tool turns (read_file / grep / bash true) and one text turn; {SESSIONS} sessions per model side",
        TURNS - 1
    );
    report("replay (in-process script)", &replayed);
    report("responses mock (loopback HTTP + SSE)", &mocked);
    Ok(())
}
