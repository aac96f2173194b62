//! `tackle run` beside its peers on ten small coding tasks, every agent driven by the same real
//! model: Qwen2.5-Coder-1.5B-Instruct behind one llama-server (`tackle_bench::llama_server`),
//! started once for the whole run. The tasks are data (`crates/bench/local_tasks`, see
//! `tackle_bench::local_tasks`); none was written with tackle in mind, and each has a check
//! that judges the end state and a reference solution that `tests/local_tasks.rs` proves it
//! with.
//!
//! The peers are opencode (`opencode run`, an `@ai-sdk/openai-compatible` provider, Chat
//! Completions like tackle) and Codex (`codex exec`, a custom provider on the Responses API,
//! the only one it speaks), both pinned by `scripts/install-agents`. Each run gets a fresh
//! copy of the task's project (a git repository of one commit) and a fresh home, with
//! approvals off (`tackle run --mode yolo`, `opencode run --auto`, Codex without approvals or
//! sandbox), the same wall-clock bound, and a turn bound where the agent has one. Codex's goal
//! tools are off: llama-server refuses the input item they add.
//!
//! Counted the same way for every agent: every request passes through a loopback proxy
//! (`tackle_bench::usage_proxy`) that records the tokens the server reports for it, so
//! "prompt tokens" is what the server was sent, cached or not, by the agent's own requests
//! (a title or summary request included). Reported per agent: tasks solved (and which), prompt
//! tokens, of which the server's prompt cache held, generated tokens, model requests and wall
//! time; then tackle's figures beside each peer's as ratios. Nothing is asserted: a task the
//! model fails is a finding, and each run's transcript (every request and answer, the agent's
//! output, the check's verdict) is kept under `target/local-tasks/<start time>/` to see why.
//!
//! Runs go task by task, each agent in turn, so every run starts with the server's prompt
//! cache holding another agent's prompt: each agent's first request is read in full every
//! time, the same for all, and a drift in the machine's load falls on every agent alike.
//!
//! Run: `cargo bench -p tackle-bench --bench local_tasks` (builds release tackle first; takes
//! tens of minutes on two cores). `LOCAL_TASKS=a,b` runs only the named tasks and
//! `LOCAL_TASKS_AGENTS=tackle,opencode` only the named agents.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};
use tackle_bench::bounded::run_bounded;
use tackle_bench::llama_server::{LlamaServer, ServerSettings};
use tackle_bench::local_tasks::{Task, tasks, tool_path};
use tackle_bench::release::workspace;
use tackle_bench::usage_proxy::{Exchange, Usage, UsageProxy};

type BenchResult<T> = Result<T, Box<dyn std::error::Error>>;

/// The model's window, for the server and for every agent's idea of it: the most
/// Qwen2.5-Coder-1.5B was trained for, so no agent is cut short by it. The agents' first
/// requests (system prompt and tool schemas, before the task's first word) take 4,800 tokens
/// (tackle), 6,200 (Codex) and 7,400 (opencode); 16,384 would leave opencode under 9,000 for
/// up to thirty turns of file contents and command output.
const CONTEXT: u32 = 32_768;
/// The most one answer may generate, for the server's default and every agent's request.
const MAX_OUTPUT: u32 = 4_096;
/// Wall-clock bound of one agent on one task: a loaded two-core machine reads a prompt at 20
/// to 50 tokens a second, so a peer's first request alone can take five minutes.
const WALL_BOUND: Duration = Duration::from_secs(900);
/// Model turns of one agent on one task, where the agent can be bounded so (tackle's
/// `--max-turns`, opencode's agent `steps`; Codex has no such setting).
const TURN_BOUND: u32 = 30;
/// The name every agent asks the server for.
const MODEL: &str = "local-qwen";

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Agent {
    Tackle,
    Opencode,
    Codex,
}

impl Agent {
    const ALL: [Agent; 3] = [Agent::Tackle, Agent::Opencode, Agent::Codex];

    fn name(self) -> &'static str {
        match self {
            Agent::Tackle => "tackle",
            Agent::Opencode => "opencode",
            Agent::Codex => "codex",
        }
    }
}

/// Where the agents run from.
struct Binaries {
    tackle: PathBuf,
    opencode: Option<PathBuf>,
    codex: Option<PathBuf>,
}

impl Binaries {
    fn of(&self, agent: Agent) -> Option<&Path> {
        match agent {
            Agent::Tackle => Some(&self.tackle),
            Agent::Opencode => self.opencode.as_deref(),
            Agent::Codex => self.codex.as_deref(),
        }
    }
}

/// The peers `scripts/install-agents` pinned, installed first if they are not.
fn peers() -> BenchResult<(Option<PathBuf>, Option<PathBuf>)> {
    let status = Command::new(workspace().join("scripts/install-agents")).status()?;
    if !status.success() {
        return Err(format!("scripts/install-agents failed ({status})").into());
    }
    let agents = workspace().join("target/agents");
    if let Ok(why) = std::fs::read_to_string(agents.join("registry-unreachable")) {
        println!("peers not installed: {}", why.trim());
        return Ok((None, None));
    }
    let agents = agents.canonicalize()?;
    let opencode = agents.join("node_modules/.bin/opencode");
    // Codex's native binary, run without its Node launcher.
    let vendor = agents.join("node_modules/@openai/codex-linux-x64/vendor");
    let codex = std::fs::read_dir(&vendor)
        .ok()
        .and_then(|mut dirs| dirs.next())
        .and_then(Result::ok)
        .map(|arch| arch.path().join("bin/codex"))
        .filter(|bin| bin.is_file());
    Ok((opencode.is_file().then_some(opencode), codex))
}

/// One agent's run on one task, as it is laid out on disk.
struct RunDir {
    project: PathBuf,
    home: PathBuf,
    last_message: PathBuf,
    /// The agent's stdout and stderr.
    output: PathBuf,
    dir: PathBuf,
}

impl RunDir {
    fn new(base: &Path, task: &Task, agent: Agent) -> BenchResult<Self> {
        let dir = base.join(&task.name).join(agent.name());
        let run = Self {
            project: dir.join("project"),
            home: dir.join("home"),
            last_message: dir.join("last-message.txt"),
            output: dir.join("agent-output.txt"),
            dir,
        };
        task.copy_fixture(&run.project)?;
        for sub in [".config", ".local/share", ".local/state", ".cache", "tmp"] {
            std::fs::create_dir_all(run.home.join(sub))?;
        }
        std::fs::write(&run.last_message, "")?;
        git_commit(&run.project, &run.home)?;
        Ok(run)
    }
}

/// Makes the fresh project a git repository of one commit, as a checkout would be.
fn git_commit(project: &Path, home: &Path) -> BenchResult<()> {
    for args in [
        &["init", "-q", "-b", "main"][..],
        &["add", "-A"],
        &["commit", "-q", "-m", "the task's project"],
    ] {
        let status = Command::new("git")
            .args(args)
            .current_dir(project)
            .env("HOME", home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "bench")
            .env("GIT_AUTHOR_EMAIL", "bench@localhost")
            .env("GIT_COMMITTER_NAME", "bench")
            .env("GIT_COMMITTER_EMAIL", "bench@localhost")
            .status()?;
        if !status.success() {
            return Err(format!("git {} failed in {}", args.join(" "), project.display()).into());
        }
    }
    Ok(())
}

/// The environment every agent runs in: its own home and XDG directories, the real Python
/// first on `PATH`, and proxies at a closed loopback port so a request meant for the network
/// fails instead of leaving the machine (loopback, the model, is exempt).
fn base_command(program: &Path, run: &RunDir, path: &OsString) -> Command {
    let home = &run.home;
    let mut cmd = Command::new(program);
    cmd.env_clear()
        .current_dir(&run.project)
        .env("PATH", path)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("XDG_STATE_HOME", home.join(".local/state"))
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env("TMPDIR", home.join("tmp"))
        .env("LANG", "C.UTF-8")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HTTP_PROXY", "http://127.0.0.1:9")
        .env("HTTPS_PROXY", "http://127.0.0.1:9")
        .env("http_proxy", "http://127.0.0.1:9")
        .env("https_proxy", "http://127.0.0.1:9")
        .env("NO_PROXY", "127.0.0.1,localhost")
        .env("no_proxy", "127.0.0.1,localhost");
    cmd
}

/// tackle: the server as an `openai-chat` provider of the user config, with the model's window.
fn tackle_command(bin: &Path, run: &RunDir, path: &OsString, url: &str, task: &str) -> Command {
    let config = run.home.join(".config/tackle");
    std::fs::create_dir_all(&config).ok();
    std::fs::write(
        config.join("config.toml"),
        format!(
            "[providers.local]\nkind = \"openai-chat\"\nbase_url = \"{url}/v1\"\n\n\
             [models.\"local:{MODEL}\"]\ncontext_window = {CONTEXT}\nmax_output = {MAX_OUTPUT}\n"
        ),
    )
    .ok();
    let mut cmd = base_command(bin, run, path);
    cmd.args(["run", "--headless", "--mode", "yolo", "--json"])
        .args(["--model", &format!("local:{MODEL}")])
        .args(["--max-turns", &TURN_BOUND.to_string()])
        .args(["--max-duration", &WALL_BOUND.as_secs().to_string()])
        .arg("--output-last-message")
        .arg(&run.last_message)
        .arg(task);
    cmd
}

/// opencode: an `@ai-sdk/openai-compatible` provider at the server with the model's window
/// and output bound, the build agent's steps bounded; updates, sharing, the model list, LSP
/// downloads and external plugins off.
fn opencode_command(bin: &Path, run: &RunDir, path: &OsString, url: &str, task: &str) -> Command {
    let config = run.home.join("opencode.json");
    let settings = json!({
        "$schema": "https://opencode.ai/config.json",
        "provider": {"local": {
            "npm": "@ai-sdk/openai-compatible",
            "name": "local",
            "options": {"baseURL": format!("{url}/v1"), "apiKey": "none"},
            "models": {MODEL: {
                "name": MODEL,
                "tool_call": true,
                "limit": {"context": CONTEXT, "output": MAX_OUTPUT},
            }},
        }},
        "model": format!("local/{MODEL}"),
        "small_model": format!("local/{MODEL}"),
        "agent": {"build": {"steps": TURN_BOUND}},
        "share": "disabled",
        "autoupdate": false,
    });
    std::fs::write(
        &config,
        serde_json::to_vec_pretty(&settings).unwrap_or_default(),
    )
    .ok();
    let mut cmd = base_command(bin, run, path);
    cmd.env("OPENCODE_CONFIG", &config)
        .env("OPENCODE_DISABLE_MODELS_FETCH", "true")
        .env("OPENCODE_DISABLE_AUTOUPDATE", "true")
        .env("OPENCODE_DISABLE_SHARE", "true")
        .env("OPENCODE_DISABLE_LSP_DOWNLOAD", "true")
        .env("OPENCODE_DISABLE_DEFAULT_PLUGINS", "true")
        .env("OPENCODE_PURE", "1")
        .env("npm_config_registry", "http://127.0.0.1:9/")
        .env("npm_config_offline", "true")
        .args(["run", "--auto", "--format", "json"])
        .args(["-m", &format!("local/{MODEL}")])
        .arg(task);
    cmd
}

/// Codex: a custom provider on the Responses API at the server, with the model's window; no
/// approvals and no sandbox (as tackle's yolo), no update check or analytics.
fn codex_command(bin: &Path, run: &RunDir, path: &OsString, url: &str, task: &str) -> Command {
    let codex_home = run.home.join(".codex");
    std::fs::create_dir_all(&codex_home).ok();
    let mut cmd = base_command(bin, run, path);
    cmd.env("CODEX_HOME", &codex_home)
        .env("LOCAL_KEY", "none")
        .args(["exec", "--skip-git-repo-check", "--json"])
        .args(["-m", MODEL, "-c", "model_provider=local", "-c"])
        .arg(codex_provider(url))
        .args(["-c", &format!("model_context_window={CONTEXT}")])
        // Codex's goal tools answer with an input item llama-server's Responses endpoint
        // refuses ("Cannot determine type of 'item'", a 400 that ends the run), so they are
        // off: the model's first call to one would otherwise end every task it is tried on.
        .args(["-c", "features.goals=false"])
        .args(["-c", "check_for_update_on_startup=false"])
        .args(["-c", "analytics.enabled=false"])
        .arg("--dangerously-bypass-approvals-and-sandbox")
        .arg("--output-last-message")
        .arg(&run.last_message)
        .arg(task);
    cmd
}

/// Codex's provider: the server's Responses endpoint, with a stream idle timeout as long as
/// the run's bound (its default, 300 s, is shorter than a 12,000-token first prompt takes to
/// read on two cores, and would have Codex send it again).
fn codex_provider(url: &str) -> String {
    format!(
        "model_providers.local={{name=\"local\",base_url=\"{url}/v1\",env_key=\"LOCAL_KEY\",wire_api=\"responses\",stream_idle_timeout_ms={}}}",
        WALL_BOUND.as_millis()
    )
}

/// opencode's final answer: the text parts of its last assistant message in `--format json`.
fn opencode_last_message(output: &str) -> String {
    let mut last_message = String::new();
    let mut message_id = None;
    for event in output
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
    {
        let part = &event["part"];
        if event["type"] != "text" || part["type"] != "text" {
            continue;
        }
        let id = part["messageID"].as_str().map(str::to_owned);
        if id != message_id {
            last_message.clear();
            message_id = id;
        }
        last_message.push_str(part["text"].as_str().unwrap_or(""));
    }
    last_message
}

/// What one agent did on one task.
struct Outcome {
    agent: Agent,
    task: String,
    solved: bool,
    verdict: String,
    requests: usize,
    /// Requests the server's answer held no usage for (cut by the client).
    unreported: usize,
    usage: Usage,
    wall: Duration,
    timed_out: bool,
    exit: Option<i32>,
}

fn run_one(
    agent: Agent,
    bin: &Path,
    task: &Task,
    base: &Path,
    proxy: &UsageProxy,
    path: &OsString,
) -> BenchResult<Outcome> {
    let run = RunDir::new(base, task, agent)?;
    let cmd = match agent {
        Agent::Tackle => tackle_command(bin, &run, path, &proxy.url, &task.prompt),
        Agent::Opencode => opencode_command(bin, &run, path, &proxy.url, &task.prompt),
        Agent::Codex => codex_command(bin, &run, path, &proxy.url, &task.prompt),
    };
    proxy.begin_run(&run.dir.join("exchanges"))?;
    let ended = run_bounded(cmd, WALL_BOUND, &run.output)?;
    let exchanges = proxy.take_exchanges();
    if agent == Agent::Opencode {
        let output = std::fs::read_to_string(&run.output).unwrap_or_default();
        std::fs::write(&run.last_message, opencode_last_message(&output))?;
    }
    let verdict = task.check(
        &run.project,
        &run.last_message,
        path,
        &run.dir.join("check.txt"),
    )?;
    let model: Vec<&Exchange> = exchanges.iter().filter(|e| e.is_model_request()).collect();
    let mut usage = Usage::default();
    for reported in model.iter().filter_map(|e| e.usage) {
        usage += reported;
    }
    Ok(Outcome {
        agent,
        task: task.name.clone(),
        solved: verdict.passed,
        verdict: verdict.summary().to_owned(),
        requests: model.len(),
        unreported: model.iter().filter(|e| e.usage.is_none()).count(),
        usage,
        wall: ended.wall,
        timed_out: ended.timed_out,
        exit: ended.status.code(),
    })
}

/// One agent's figures over every task.
#[derive(Default)]
struct Totals {
    solved: Vec<String>,
    runs: usize,
    usage: Usage,
    requests: usize,
    unreported: usize,
    wall: Duration,
    timed_out: usize,
}

fn totals(outcomes: &[Outcome]) -> BTreeMap<Agent, Totals> {
    let mut by_agent: BTreeMap<Agent, Totals> = BTreeMap::new();
    for o in outcomes {
        let t = by_agent.entry(o.agent).or_default();
        t.runs += 1;
        if o.solved {
            t.solved.push(o.task.clone());
        }
        t.usage += o.usage;
        t.requests += o.requests;
        t.unreported += o.unreported;
        t.wall += o.wall;
        t.timed_out += usize::from(o.timed_out);
    }
    by_agent
}

fn print_commands(server: &LlamaServer, proxy: &UsageProxy, bins: &Binaries, agents: &[Agent]) {
    println!("\nserver: {}", server.command);
    println!(
        "proxy:  {} -> http://{} (counts every request and the usage the server reports)",
        proxy.url, server.addr
    );
    println!(
        "each run: a fresh copy of the task's project (git, one commit) as the working directory; \
         the environment cleared but for PATH (the real python3 first), HOME, XDG_*_HOME and \
         TMPDIR in a fresh home, LANG, and HTTP(S)_PROXY at a closed loopback port"
    );
    let url = &proxy.url;
    for &agent in agents {
        let Some(bin) = bins.of(agent) else { continue };
        let bin = bin.display();
        match agent {
            Agent::Tackle => {
                println!(
                    "tackle:   {bin} run --headless --mode yolo --json --model local:{MODEL} --max-turns {TURN_BOUND} --max-duration {} --output-last-message LAST TASK",
                    WALL_BOUND.as_secs()
                );
                println!(
                    "          $XDG_CONFIG_HOME/tackle/config.toml: [providers.local] kind = \"openai-chat\", base_url = \"{url}/v1\"; [models.\"local:{MODEL}\"] context_window = {CONTEXT}, max_output = {MAX_OUTPUT}"
                );
            }
            Agent::Opencode => {
                println!("opencode: {bin} run --auto --format json -m local/{MODEL} TASK");
                println!(
                    "          OPENCODE_CONFIG: provider local (@ai-sdk/openai-compatible, baseURL {url}/v1, limit context {CONTEXT} output {MAX_OUTPUT}), model and small_model local/{MODEL}, agent.build.steps {TURN_BOUND}; OPENCODE_DISABLE_{{MODELS_FETCH,AUTOUPDATE,SHARE,LSP_DOWNLOAD,DEFAULT_PLUGINS}}=true, OPENCODE_PURE=1"
                );
                println!(
                    "          final answer: the text of its last assistant message in --format json"
                );
            }
            Agent::Codex => {
                println!(
                    "codex:    {bin} exec --skip-git-repo-check --json -m {MODEL} -c model_provider=local -c '{}' -c model_context_window={CONTEXT} -c features.goals=false -c check_for_update_on_startup=false -c analytics.enabled=false --dangerously-bypass-approvals-and-sandbox --output-last-message LAST TASK",
                    codex_provider(url)
                );
            }
        }
    }
    println!(
        "bounds: {}s of wall time per agent per task (its process group killed after), {TURN_BOUND} turns where the agent takes a bound",
        WALL_BOUND.as_secs()
    );
}

fn print_table(outcomes: &[Outcome], tasks: &[Task], agents: &[Agent]) {
    let by_agent = totals(outcomes);
    println!("\nper task (solved: yes/no, requests, prompt tokens, wall):");
    let width = tasks.iter().map(|t| t.name.len()).max().unwrap_or(4);
    print!("{:width$}", "task");
    for a in agents {
        print!("  {:<30}", a.name());
    }
    println!();
    for task in tasks {
        print!("{:width$}", task.name);
        for &a in agents {
            let cell = outcomes
                .iter()
                .find(|o| o.agent == a && o.task == task.name)
                .map(|o| {
                    format!(
                        "{} {:>3}r {:>7}t {:>5.0}s{}",
                        if o.solved { "yes" } else { "no " },
                        o.requests,
                        o.usage.prompt_tokens,
                        o.wall.as_secs_f64(),
                        if o.timed_out { " T" } else { "" }
                    )
                })
                .unwrap_or_default();
            print!("  {cell:<30}");
        }
        println!();
    }
    println!("\nper agent:");
    println!(
        "{:<9} {:>7} {:>14} {:>14} {:>11} {:>9} {:>10}",
        "agent", "solved", "prompt tokens", "(from cache)", "generated", "requests", "wall"
    );
    for (agent, t) in &by_agent {
        println!(
            "{:<9} {:>7} {:>14} {:>14} {:>11} {:>9} {:>9.0}s",
            agent.name(),
            format!("{}/{}", t.solved.len(), t.runs),
            t.usage.prompt_tokens,
            t.usage.cached_tokens,
            t.usage.completion_tokens,
            t.requests,
            t.wall.as_secs_f64()
        );
    }
    for (agent, t) in &by_agent {
        println!(
            "{} solved: {}{}{}",
            agent.name(),
            if t.solved.is_empty() {
                "none".to_owned()
            } else {
                t.solved.join(", ")
            },
            if t.timed_out > 0 {
                format!("; {} run(s) hit the wall-clock bound", t.timed_out)
            } else {
                String::new()
            },
            if t.unreported > 0 {
                format!(
                    "; {} request(s) cut before the server reported usage (not in the tokens)",
                    t.unreported
                )
            } else {
                String::new()
            }
        );
    }
    let Some(ours) = by_agent.get(&Agent::Tackle) else {
        return;
    };
    for (agent, theirs) in by_agent.iter().filter(|(a, _)| **a != Agent::Tackle) {
        let per = |a: u64, b: u64| {
            if b == 0 {
                "n/a".to_owned()
            } else {
                format!("{:.2}x", a as f64 / b as f64)
            }
        };
        println!(
            "tackle / {}: solved {} vs {}, prompt tokens {}, requests {}, wall {}",
            agent.name(),
            ours.solved.len(),
            theirs.solved.len(),
            per(ours.usage.prompt_tokens, theirs.usage.prompt_tokens),
            per(ours.requests as u64, theirs.requests as u64),
            per(ours.wall.as_millis() as u64, theirs.wall.as_millis() as u64)
        );
    }
}

/// The names in an environment variable's comma-separated list, or `None` when it is unset.
fn selection(var: &str) -> Option<Vec<String>> {
    std::env::var(var).ok().map(|v| {
        v.split(',')
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
            .collect()
    })
}

fn main() -> BenchResult<()> {
    let mut tasks = tasks()?;
    if let Some(names) = selection("LOCAL_TASKS") {
        tasks.retain(|t| names.contains(&t.name));
    }
    let tackle = tackle_bench::release::release_tackle()?.canonicalize()?;
    let (opencode, codex) = peers()?;
    let bins = Binaries {
        tackle,
        opencode,
        codex,
    };
    let wanted = selection("LOCAL_TASKS_AGENTS");
    let agents: Vec<Agent> = Agent::ALL
        .into_iter()
        .filter(|a| {
            wanted
                .as_ref()
                .is_none_or(|w| w.iter().any(|n| n == a.name()))
        })
        .filter(|a| {
            let found = bins.of(*a).is_some();
            if !found {
                println!(
                    "{} is not installed (scripts/install-agents); its column is left out",
                    a.name()
                );
            }
            found
        })
        .collect();
    let started = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let base = tackle_bench::target_dir().join(format!("local-tasks/{started}"));
    std::fs::create_dir_all(&base)?;
    // Normalized: Codex refuses a path with `..` in it for its last message.
    let base = base.canonicalize()?;
    let settings = ServerSettings {
        context: CONTEXT,
        slots: 1,
        max_generated: MAX_OUTPUT,
        threads: std::thread::available_parallelism().map_or(2, |n| n.get()),
        alias: MODEL.to_owned(),
    };
    let server = LlamaServer::start(&settings, &base.join("llama-server.log"))?;
    let proxy = UsageProxy::start(server.addr)?;
    let path = tool_path();
    print_commands(&server, &proxy, &bins, &agents);
    println!("transcripts: {}\n", base.display());
    let mut outcomes = Vec::new();
    for task in &tasks {
        for &agent in &agents {
            let Some(bin) = bins.of(agent) else { continue };
            let o = run_one(agent, bin, task, &base, &proxy, &path)?;
            println!(
                "{:<24} {:<9} {:<4} {:>3} requests {:>7} prompt tokens {:>5.0}s exit {}{}  {}",
                o.task,
                o.agent.name(),
                if o.solved { "ok" } else { "FAIL" },
                o.requests,
                o.usage.prompt_tokens,
                o.wall.as_secs_f64(),
                o.exit.map_or("signal".to_owned(), |c| c.to_string()),
                if o.timed_out { " (wall bound)" } else { "" },
                o.verdict
            );
            if o.requests == 0 {
                println!(
                    "  {} made no model request: see {}",
                    o.agent.name(),
                    base.join(&o.task)
                        .join(o.agent.name())
                        .join("agent-output.txt")
                        .display()
                );
            }
            outcomes.push(o);
        }
    }
    print_table(&outcomes, &tasks, &agents);
    Ok(())
}
