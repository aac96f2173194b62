//! What the agentic wrappers save the parent's context, and what they add to its wall time.
//!
//! The work: a real 5,000-line source file (the first 5,000 lines of clap_builder's
//! `builder/command.rs`, from the workspace's own dependencies) asked one question, and a grep
//! for `fn ` over clap_builder's sources, which stops at its 1,000-match cap, asked another.
//! Each is done once with the plain tool and once with its wrapper, in process, through the
//! runtime as a model's call would be (`Runtime::run_batch` on a root session whose catalog
//! holds read_file, grep, retrieve_raw and the wrappers, digests on as by default).
//!
//! - **Tokens** the parent's context receives: the result a model would be shown, measured
//!   as the loop measures it (`tackle_agent::context::estimate_message`, 4 bytes a token) and,
//!   when the local server runs, by the Qwen2.5 tokenizer (`/tokenize`). Read plainly, the file
//!   is one 2,000-line page (what one read_file gives) or all three pages (what reading it
//!   whole costs); grep's result is the digest a model is shown by default, which names no
//!   match, and that digest with the raw matches retrieve_raw then gives. First with a
//!   scripted small model whose answer is a fixed 60-word paragraph (deterministic), then
//!   with the real answers of the local model. Target: the wrapper at most 0.1× the plain tool.
//! - **Wall time**, one run each, on Qwen2.5-Coder-1.5B behind llama-server (`-c 16384 -np 1`,
//!   the small model's window; parts one at a time, as for any server of the user's own): the
//!   plain call against the wrapper, whose difference is the small model's reading. Printed,
//!   never asserted.
//!
//! Run: `cargo bench -p tackle-bench --bench agentic` (`TACKLE_BENCH_LOCAL=0` skips the local
//! model).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tackle_agent::agentic::{AgenticGrep, AgenticReadFile, SmallModel, Subtasks};
use tackle_agent::delegate::{AgentType, Limits, Spawn, Tree};
use tackle_agent::{
    AgentSetup, Bounds, DescriptionsSetting, ModelSetup, TaskBoundaries, Unobserved,
    WatchdogSettings,
};
use tackle_bench::llama_server::{LlamaServer, ServerSettings};
use tackle_llm::catalog::{Modality, ModelEntry, ProviderKind, ProviderSpec};
use tackle_llm::media::DeliveryFamily;
use tackle_llm::replay::{ReplayProvider, parse};
use tackle_llm::{LlmError, Provider, TurnRequest, TurnStream};
use tackle_protocol::{
    CallId, Message, Part, Role, SessionId, ToolCall, ToolResult, ToolResultPart,
};
use tackle_runtime::{AllowAll, CancellationToken, Catalog, Runtime, RuntimeConfig, Session};
use tackle_tool::DynTool;

type BenchResult<T> = Result<T, Box<dyn std::error::Error>>;

const FILE_QUESTION: &str = "Which method of Command sets the version string shown by --version, and on which line is it defined?";
const GREP_QUESTION: &str =
    "Which three files define the most functions, and about how many does each define?";

/// The scripted small model's answer: a paragraph of the length a useful answer has.
const FIXED_ANSWER: &str = "The version string is set by `Command::version`, defined on line \
2119 of the file: it takes `impl IntoResettable<Str>` and stores it in `self.version`, which \
`--version` prints through `render_version`. `long_version` (line 2151) sets the longer text \
that `--version` shows when it is given; `disable_version_flag` (line 1493) turns the flag \
off. The builder methods between them only set fields.";

/// A provider that answers every request with the same text.
struct Fixed;

#[async_trait::async_trait]
impl Provider for Fixed {
    fn name(&self) -> &str {
        "fixed"
    }
    async fn stream(&self, request: &TurnRequest) -> Result<TurnStream, LlmError> {
        let line = json!({"turn": {"text": FIXED_ANSWER}});
        let script =
            parse("fixed.jsonl", &format!("{{\"tackle_replay\":1}}\n{line}\n")).map_err(|e| {
                tackle_llm::ErrorContext {
                    provider: "fixed".into(),
                    model: request.model.clone(),
                }
                .error(tackle_llm::ErrorKind::InvalidResponse, e.to_string())
            })?;
        ReplayProvider::new("fixed", script).stream(request).await
    }
}

/// Every child loop on the one runtime (a digest needs only that).
struct BenchSpawn(Arc<Runtime>);

impl Spawn for BenchSpawn {
    fn setup(&self, session: Session, _: &AgentType) -> Result<AgentSetup, String> {
        Ok(AgentSetup {
            runtime: self.0.clone(),
            session,
            provider: Arc::new(Fixed),
            model: model("bench:parent", 200_000, 500).map_err(|e| e.to_string())?,
            system: "unused".into(),
            bounds: Bounds::default(),
            observer: Arc::new(Unobserved),
            boundaries: TaskBoundaries::new(),
            watchdog: WatchdogSettings::default(),
            descriptions: DescriptionsSetting::Full,
            delegation: None,
        })
    }
    fn reopen(&self, session: &SessionId) -> Result<Session, String> {
        Err(format!("{} is not held here", session.0))
    }
}

fn model(id: &str, window: u64, output: u32) -> BenchResult<ModelSetup> {
    Ok(ModelSetup {
        model: id.split_once(':').map_or(id, |(_, m)| m).to_owned(),
        entry: ModelEntry {
            id: id.parse()?,
            context_window: window,
            max_output: u64::from(output),
            input: vec![Modality::Text],
            media: Vec::new(),
            prices: None,
        },
        family: DeliveryFamily::CompatibleChat,
        max_tokens: output,
    })
}

/// A root session whose catalog holds the tools and the wrappers on `small`.
struct World {
    runtime: Arc<Runtime>,
    root: Session,
    _tree: Arc<Tree>,
}

impl World {
    fn new(project: &Path, small: SmallModel) -> BenchResult<Self> {
        let root = Session::open(project)?;
        let tree = Tree::new(Limits::default(), Vec::new(), Arc::new(Unobserved));
        tree.add_root(root.clone());
        let subtasks = Subtasks::new(tree.clone(), small);
        let tools: Vec<Arc<dyn DynTool>> = vec![
            Arc::new(tackle_tools::ReadFile::new()),
            Arc::new(tackle_tools::Grep),
            Arc::new(tackle_runtime::RetrieveRaw),
            Arc::new(AgenticReadFile::new(subtasks.clone())),
            Arc::new(AgenticGrep::new(subtasks)),
        ];
        // A 1.5B model on a few CPU cores reads a 5,000-line file for longer than the
        // default ten minutes a call may take: the bench measures that time, not cuts it.
        let config = RuntimeConfig {
            call_timeout: Duration::from_secs(3 * 3600),
            ..RuntimeConfig::default()
        };
        let runtime = Arc::new(Runtime::new(
            Catalog::new(tools)?,
            Arc::new(AllowAll),
            config,
        ));
        tree.set_spawn(Arc::new(BenchSpawn(runtime.clone())), Vec::new());
        Ok(Self {
            runtime,
            root,
            _tree: tree,
        })
    }

    /// One call as a model's would be; its result and how long it took.
    fn call(
        &self,
        rt: &tokio::runtime::Runtime,
        tool: &str,
        arguments: Value,
    ) -> BenchResult<(ToolResult, Duration)> {
        let call = ToolCall {
            id: CallId(format!("bench-{}", rand_id())),
            name: tool.to_owned(),
            arguments,
        };
        let started = Instant::now();
        let mut results = rt.block_on(self.runtime.run_batch(
            &self.root,
            vec![call],
            CancellationToken::new(),
        ))?;
        let took = started.elapsed();
        let result = results.pop().ok_or("no result")?;
        if result.is_error {
            return Err(format!("{tool} failed: {}", result.text()).into());
        }
        Ok((result, took))
    }
}

fn rand_id() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// The tokens a result costs the parent's context, as the loop estimates them.
fn estimate(result: &ToolResult) -> u64 {
    tackle_agent::context::estimate_message(&Message {
        role: Role::User,
        content: vec![Part::ToolResult(ToolResultPart {
            call_id: result.call_id.clone(),
            content: result.content.clone(),
            is_error: result.is_error,
            media: Vec::new(),
        })],
    })
}

/// clap_builder's sources among the workspace's dependencies: the vendored corpus when it is
/// there, else cargo's registry checkout.
fn clap_builder() -> BenchResult<PathBuf> {
    let vendored = tackle_bench::target_dir().join("bench-corpus");
    let mut roots = vec![vendored];
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")));
    if let Some(registry) = home.map(|h| h.join("registry/src")) {
        for index in std::fs::read_dir(&registry).into_iter().flatten().flatten() {
            roots.push(index.path());
        }
    }
    for root in roots {
        for entry in std::fs::read_dir(&root).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with("clap_builder-")
                && entry.path().join("src/builder/command.rs").exists()
            {
                return Ok(entry.path().join("src"));
            }
        }
    }
    Err("clap_builder's sources are not on this machine: build the workspace first".into())
}

fn copy_dir(from: &Path, to: &Path) -> BenchResult<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}

/// The Qwen2.5 tokenizer's count of `text`, from the local server's `/tokenize`.
fn qwen_tokens(addr: SocketAddr, text: &str) -> BenchResult<usize> {
    let body = json!({"content": text}).to_string();
    let mut conn = TcpStream::connect(addr)?;
    write!(
        conn,
        "POST /tokenize HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )?;
    let mut answer = String::new();
    conn.read_to_string(&mut answer)?;
    let json = answer.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    let value: Value = serde_json::from_str(json)?;
    Ok(value["tokens"].as_array().map_or(0, Vec::len))
}

/// What one case gave: the plain tool's results (pages) and the wrapper's.
struct Case {
    name: &'static str,
    plain: Vec<(ToolResult, Duration)>,
    wrapper: (ToolResult, Duration),
}

fn run_cases(world: &World, rt: &tokio::runtime::Runtime) -> BenchResult<Vec<Case>> {
    let mut pages = Vec::new();
    let mut offset = 1;
    loop {
        let page = world.call(rt, "read_file", json!({"path": "big.rs", "offset": offset}))?;
        let next = page.0.metadata["next_offset"].as_u64();
        pages.push(page);
        match next {
            Some(n) => offset = n,
            None => break,
        }
    }
    eprintln!("reading big.rs through agentic_read_file…");
    let file_wrapper = world.call(
        rt,
        "agentic_read_file",
        json!({"path": "big.rs", "question": FILE_QUESTION}),
    )?;
    let grep = json!({"pattern": "fn ", "path": "clap"});
    let plain_grep = world.call(rt, "grep", grep.clone())?;
    // The digest names no match: to read them the model asks for the raw output.
    let raw = json!({"call_id": plain_grep.0.call_id.0});
    let raw_grep = world.call(rt, "retrieve_raw", raw)?;
    let mut asked = grep;
    asked["question"] = json!(GREP_QUESTION);
    eprintln!("grepping through agentic_grep…");
    let grep_wrapper = world.call(rt, "agentic_grep", asked)?;
    Ok(vec![
        Case {
            name: "5,000-line file, first page",
            plain: pages[..1].to_vec(),
            wrapper: file_wrapper.clone(),
        },
        Case {
            name: "5,000-line file, all pages",
            plain: pages,
            wrapper: file_wrapper,
        },
        Case {
            name: "1,000-match grep, digest",
            plain: vec![plain_grep.clone()],
            wrapper: grep_wrapper.clone(),
        },
        Case {
            name: "1,000-match grep, + raw",
            plain: vec![plain_grep, raw_grep],
            wrapper: grep_wrapper,
        },
    ])
}

fn report(cases: &[Case], server: Option<SocketAddr>) -> BenchResult<()> {
    println!(
        "{:<30} {:>9} {:>9} {:>7}   {:>9} {:>9} {:>7}   {:>10} {:>10}",
        "case", "plain", "wrapper", "ratio", "plain", "wrapper", "ratio", "plain", "wrapper"
    );
    println!(
        "{:<30} {:>27}   {:>27}   {:>21}",
        "", "tokens (estimate)", "tokens (Qwen2.5)", "wall time"
    );
    for case in cases {
        let plain: u64 = case.plain.iter().map(|(r, _)| estimate(r)).sum();
        let wrapper = estimate(&case.wrapper.0);
        let (qp, qw) = match server {
            Some(addr) => {
                let mut p = 0;
                for (r, _) in &case.plain {
                    p += qwen_tokens(addr, &r.text())?;
                }
                (
                    p.to_string(),
                    qwen_tokens(addr, &case.wrapper.0.text())?.to_string(),
                )
            }
            None => ("-".into(), "-".into()),
        };
        let ratio = |w: f64, p: f64| format!("{:.3}×", w / p);
        let q_ratio = match (qp.parse::<f64>(), qw.parse::<f64>()) {
            (Ok(p), Ok(w)) => ratio(w, p),
            _ => "-".into(),
        };
        let plain_time: Duration = case.plain.iter().map(|(_, t)| *t).sum();
        println!(
            "{:<30} {:>9} {:>9} {:>7}   {:>9} {:>9} {:>7}   {:>10.1?} {:>10.1?}",
            case.name,
            plain,
            wrapper,
            ratio(wrapper as f64, plain as f64),
            qp,
            qw,
            q_ratio,
            plain_time,
            case.wrapper.1,
        );
    }
    Ok(())
}

fn main() -> BenchResult<()> {
    if std::env::args()
        .skip(1)
        .any(|arg| !arg.starts_with('-') && !"agentic".contains(arg.as_str()))
    {
        return Ok(());
    }
    let project = tempfile::tempdir()?;
    let clap = clap_builder()?;
    let command = std::fs::read_to_string(clap.join("builder/command.rs"))?;
    let first: Vec<&str> = command.lines().take(5000).collect();
    std::fs::write(project.path().join("big.rs"), first.join("\n") + "\n")?;
    copy_dir(&clap, &project.path().join("clap"))?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    println!(
        "file: {} (first 5,000 lines)",
        clap.join("builder/command.rs").display()
    );
    println!("grep: `fn ` in {}\n", clap.display());

    println!("scripted small model (a fixed 60-word answer):");
    let scripted = SmallModel {
        provider: Arc::new(Fixed),
        model: model("bench:fixed", 200_000, 1024)?,
        parallel: tackle_agent::agentic::digest::PARALLEL_PARTS,
    };
    let world = World::new(project.path(), scripted)?;
    report(&run_cases(&world, &rt)?, None)?;

    if std::env::var_os("TACKLE_BENCH_LOCAL").is_some_and(|v| v == "0") {
        return Ok(());
    }
    // One slot: the parts are asked one at a time (a server of the user's own), and two
    // slots on the same cores would only halve each one's speed.
    let settings = ServerSettings {
        context: 16_384,
        slots: 1,
        max_generated: 1024,
        threads: std::thread::available_parallelism().map_or(2, |n| n.get()),
        alias: "local-qwen".into(),
    };
    let server = match LlamaServer::start(&settings, &project.path().join("llama-server.log")) {
        Ok(server) => server,
        Err(e) => {
            println!("\nthe local model is not run: {e}");
            return Ok(());
        }
    };
    println!("\nlocal small model: {}", server.command);
    let spec = ProviderSpec {
        name: "local".into(),
        kind: ProviderKind::OpenAiChat,
        base_url: Some(format!("http://{}/v1", server.addr)),
        api_key_env: None,
        project: None,
        location: None,
        token_command: None,
        token_env: None,
        region: None,
        api_version: None,
    };
    // A part of 10,000 tokens read at 40 a second takes minutes before its first token: the
    // bench measures that, where a run's default deadline (ten minutes a turn) would cut it.
    let limits = tackle_llm::TransportLimits {
        idle_timeout: Duration::from_secs(3600),
        deadline: Duration::from_secs(3 * 3600),
        ..tackle_llm::TransportLimits::default()
    };
    let local = SmallModel {
        provider: tackle_llm::connect(&spec, tackle_llm::Transport::new(limits)?)?,
        model: model("local:local-qwen", 16_384, 512)?,
        parallel: 1,
    };
    let world = World::new(project.path(), local)?;
    let cases = run_cases(&world, &rt)?;
    report(&cases, Some(server.addr))?;
    for case in &cases[1..] {
        println!(
            "\n{} — the local model's answer:\n{}",
            case.name,
            case.wrapper.0.text()
        );
    }
    Ok(())
}
