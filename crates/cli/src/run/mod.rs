//! `tackle run "<task>"`: the agent loop, headless. Builds the runtime the way `tackle call`
//! does (the configured catalog, gate and approver), opens or resumes a session, and runs
//! `tackle_agent::Agent` until the model ends its turn, a bound is reached, the provider fails
//! or Ctrl-C cancels (a second Ctrl-C exits at once).
//!
//! Exit codes: 0 the task finished, 1 the run ended on an error, 2 bad command line, 3 tackle
//! could not work, 4 a bound was reached, 5 the provider failed, 130 cancelled.

pub(crate) mod agentic;
mod ask;
pub(crate) mod loop_tools;
pub(crate) mod model;
mod output;
pub(crate) mod sealed;
mod sessions;
pub(crate) mod spawn;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context, anyhow};
use tackle_agent::{
    Agent, AgentEvent, AgentSetup, Bounds, CallEvents, ObservedApprover, Observer, RunEnd,
};
use tackle_protocol::RunOutcome;
use tackle_runtime::{CancellationToken, Runtime};

use crate::commands::{self, Failure};
use crate::config::Config;
use crate::exit;
use crate::settings::Flags;

const RUN_AFTER_HELP: &str = "\
Examples:
  tackle run \"fix the failing test in crates/store\"
  tackle run --json --model anthropic:claude-sonnet-4-5 \"list the TODOs\"
  tackle run --continue \"now add a test for it\"
  tackle run --resume 20260102T030405Z-0123456789abcdef

The model: --model provider:model, else the one a resumed session ran with, else [model]
default, else the first of ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY, COHERE_API_KEY that is set.

Exit codes:
  0    the model finished the task
  1    the run ended on an error
  2    bad command line
  3    tackle could not work (no project root, bad config, event log failure)
  4    a bound was reached (--max-turns, --max-tokens, --max-cost, --max-duration)
  5    the model provider failed
  130  cancelled (Ctrl-C)";

/// `tackle run` arguments.
#[derive(Debug, clap::Args)]
#[command(after_help = RUN_AFTER_HELP)]
pub struct RunArgs {
    /// What to do, in your words. Optional with --resume/--continue, where it is the next
    /// message. (Not `--task CLASS`, which picks the tools for debug, research or review.)
    // Named `prompt`: a field named `task` would clash with the global `--task` flag.
    #[arg(value_name = "TASK")]
    pub prompt: Option<String>,
    /// Print every event as one JSON object a line (each with a `type`).
    #[arg(long)]
    pub json: bool,
    /// Write the model's last message to FILE when the run ends.
    #[arg(long, value_name = "FILE")]
    pub output_last_message: Option<PathBuf>,
    /// Continue the session ID (a directory name under .agents/store/sessions/).
    #[arg(long, value_name = "ID", conflicts_with = "continue_latest")]
    pub resume: Option<String>,
    /// Continue the latest `tackle run` session of this project that this user's tackle wrote
    /// (logs it did not write, such as one that came with the repository, are skipped).
    #[arg(long = "continue")]
    pub continue_latest: bool,
    /// With --resume: resume the session even though its log was not written by this user's
    /// tackle (`tackle sessions ls` marks such logs foreign). Every line of it reaches the model
    /// as the conversation so far, the user turns as your own words: only for a log you trust.
    #[arg(long, requires = "resume")]
    pub trust_log: bool,
    /// End the run after N model turns.
    #[arg(long, value_name = "N")]
    pub max_turns: Option<u32>,
    /// End the run once it has used N tokens (input and output).
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<u64>,
    /// End the run once it has cost USD at the model's list prices.
    #[arg(long, value_name = "USD")]
    pub max_cost: Option<f64>,
    /// Run on the daemon at URL instead of here (`tackle daemon`): the session is the daemon's
    /// (in this directory's project), its messages are printed as they come (JSON lines with
    /// --json), and it stays there for `tackle attach` when this command ends.
    #[arg(long, value_name = "URL")]
    pub daemon: Option<String>,
    /// The environment variable holding the daemon's bearer token (default: the token the
    /// daemon of --daemon-state-dir drew).
    #[arg(long, value_name = "NAME", requires = "daemon")]
    pub daemon_token_env: Option<String>,
    /// The state directory of the daemon at --daemon, whose token it drew (default:
    /// $XDG_STATE_HOME/tackle/daemon).
    #[arg(long, value_name = "DIR", requires = "daemon")]
    pub daemon_state_dir: Option<PathBuf>,
    /// End the run after SECONDS of wall-clock time.
    #[arg(long, value_name = "SECONDS")]
    pub max_duration: Option<f64>,
    /// Offer the model ask_user, answered here: stdin (each answer a line of standard input,
    /// the question on stderr) or auto (on the terminal; refused at once without one, or
    /// under --headless). Without it the model cannot ask. (Not `--ask PATTERN`, a rule.)
    #[arg(long, value_enum, value_name = "WHERE")]
    pub ask_user: Option<ask::AskMode>,
    /// Keep the session going across turns: the model may call schedule_next_turn to be
    /// woken after a sleep, at a time, when a file changes or when a message arrives
    /// (`tackle sessions message ID TEXT`), and each wake starts the next run. Ends when the
    /// model ends a run without asking to be woken, or at --max-wakes / --max-total (exit 4).
    /// A wait the process died in is in the session's log: --continue (or --resume ID)
    /// --autonomous without a task goes on waiting for the same wake.
    #[arg(long)]
    pub autonomous: bool,
    /// With --autonomous: the most wakes (default 20).
    #[arg(long, value_name = "N", default_value_t = 20, requires = "autonomous")]
    pub max_wakes: u32,
    /// With --autonomous: the longest the whole run may take, waits included, in seconds
    /// (default 3600).
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = 3600.0,
        requires = "autonomous"
    )]
    pub max_total: f64,
}

/// The global `--model` and `--agentic-small-model` as `tackle run` and `tackle chat` take
/// them.
pub struct ModelFlags {
    /// `--model` (already in the settings' `[model] default` unless a replay).
    pub model: Option<String>,
    /// `--agentic-small-model replay:<file>`; any other value is in the settings' `[model]
    /// small`.
    pub small_replay: Option<String>,
}

/// The global `--model` and `--agentic-small-model` as `tackle run` takes them: a replay file
/// (`replay:<file>`, for tests) is taken out of the settings, which know only configured
/// providers.
pub fn model_flag(mut flags: Flags) -> (Flags, ModelFlags) {
    let model = match flags.model.take() {
        Some(m) if m.starts_with("replay:") => Some(m),
        other => {
            flags.model = other.clone();
            other
        }
    };
    let small_replay = flags
        .agentic_small_model
        .take_if(|m| m.starts_with("replay:"));
    (
        flags,
        ModelFlags {
            model,
            small_replay,
        },
    )
}

/// `models`: the `--model` flag (already in `config.models.default` unless a replay) and a
/// replayed `--agentic-small-model`.
pub fn run(
    config: &Config,
    args: RunArgs,
    models: ModelFlags,
    headless: bool,
) -> Result<u8, Failure> {
    let model = models.model;
    let bounds = bounds(&args)?;
    if args.prompt.is_none() && args.resume.is_none() && !args.continue_latest {
        return Err(Failure::Usage(anyhow!(
            "give a task: tackle run \"<task>\" (or --resume ID / --continue to go on with a session)"
        )));
    }
    let resumed = args.resume.is_some() || args.continue_latest;
    let session = match (&args.resume, args.continue_latest) {
        (Some(id), _) => sessions::resume(&config.root, id, args.trust_log)?,
        (None, true) => sessions::latest(&config.root)?,
        (None, false) => crate::own_sessions::open_as(&config.root, config.agent_loop.posture)?,
    };
    let rebuilt = if resumed {
        tackle_agent::rebuild(&session.event_log_path()).map_err(|e| Failure::Engine(e.into()))?
    } else {
        tackle_agent::Rebuilt::default()
    };
    let is_sealed = sealed::posture_of(config, &session, resumed)?;
    let choice = model::choose(&config.models, model.as_deref(), rebuilt.model.as_deref())
        .map_err(Failure::Usage)?;
    for note in &choice.notes {
        eprintln!("tackle: {}", crate::safe_text::safe_line(note));
    }
    if args.max_cost.is_some() && choice.setup.entry.prices.is_none() {
        return Err(Failure::Usage(anyhow!(
            "--max-cost: the catalog has no prices for {}; add them to its [models] table or bound the run with --max-tokens",
            choice.setup.id()
        )));
    }
    let provider = choice
        .connect(rebuilt.conversation.answered)
        .map_err(Failure::Usage)?;
    let small = agentic::small_model(config, models.small_replay.as_deref())?;
    agentic::check_max_cost(small.as_ref(), args.max_cost)?;

    let observer: Arc<dyn Observer> = if args.json {
        Arc::new(output::JsonLines::stdout())
    } else {
        Arc::new(output::Text)
    };
    let prompter = args.ask_user.map(|mode| ask::prompter(mode, headless));
    let wakes = args.autonomous.then(tackle_agent::Wakes::new);
    // A wait the last process died in goes on, unless a new task was given.
    let resumed_wait = match (&wakes, &rebuilt.pending_wake, &args.prompt) {
        (Some(_), Some(pending), None) => Some(tackle_agent::WakeRequest {
            wake: tackle_agent::wake_record::restore(
                &pending.wake,
                &config.root,
                std::time::SystemTime::now(),
            )
            .map_err(|e| {
                Failure::Engine(anyhow!(
                    "the session was waiting, and its wait cannot be resumed: {e}; give a task to go on without it"
                ))
            })?,
            reason: pending.reason.clone(),
        }),
        _ => None,
    };
    let tree = tackle_agent::delegate::Tree::new(
        config.delegation,
        config.agent_types.iter().cloned().collect(),
        observer.clone(),
    );
    tree.add_root(session.clone());
    if resumed {
        tackle_agent::delegate::rebuild::restore(&tree, &session)
            .map_err(|e| Failure::Engine(anyhow!("rebuilding the session's subagents: {e}")))?;
    }
    let approver: Arc<dyn tackle_runtime::Approver> = Arc::new(ObservedApprover {
        inner: commands::approver(headless, &config.root),
        observer: observer.clone(),
    });
    let (catalog, boundaries, gate, sealed) = if is_sealed {
        let (catalog, built) = sealed::build(
            config,
            &session,
            resumed,
            approver.clone(),
            prompter,
            sealed::ProcessorModel {
                small: small.as_ref(),
                provider: provider.clone(),
                model: choice.setup.model.clone(),
            },
        )?;
        (
            catalog,
            tackle_agent::TaskBoundaries::new(),
            built.gate.clone(),
            Some(built),
        )
    } else {
        let (catalog, boundaries) = loop_tools::catalog(
            config,
            prompter,
            wakes.clone(),
            Some(&tree),
            small.as_ref(),
            Vec::new(),
        )?;
        (catalog, boundaries, commands::gate(config), None)
    };
    let runtime = Runtime::new(catalog, gate, config.runtime.clone())
        .with_approver(approver)
        .with_event_observer(Arc::new(CallEvents(observer.clone())));
    let env = tackle_agent::prompt::Environment {
        root: config.root.clone(),
        os: std::env::consts::OS.to_owned(),
        date: today(),
        posture: sealed::posture_line(config, is_sealed),
    };
    let runtime = Arc::new(runtime);
    let specs = runtime.catalog().specs();
    let system = match &sealed {
        Some(sealed) => sealed::system(sealed, &runtime, &env),
        None => {
            let mut system = tackle_agent::prompt::system_prompts(&specs, &env);
            tackle_agent::skills::listing::add_to(&mut system, &specs, config.skills.set());
            system
        }
    };
    if let Some(refused) = tackle_agent::prompt::root_instructions_refusal(&config.root) {
        // The model is told the file was not read; the person running this is told why.
        eprintln!(
            "tackle: {}; it is not sent to the model",
            crate::safe_text::safe_line(&refused.to_string())
        );
    }
    tree.set_spawn(
        Arc::new(spawn::RunSpawn {
            runtime: runtime.clone(),
            provider: provider.clone(),
            model: choice.setup.clone(),
            models: config.models.clone(),
            env: env.clone(),
            bounds: bounds.clone(),
            watchdog: config.agent_loop.watchdog,
            descriptions: config.agent_loop.descriptions,
            tree: tree.clone(),
            root: config.root.clone(),
            skills: config.skills.set().clone(),
        }),
        runtime.catalog().names().map(str::to_owned).collect(),
    );
    let setup = AgentSetup {
        runtime,
        session: session.clone(),
        provider,
        model: choice.setup,
        system,
        bounds,
        observer: observer.clone(),
        boundaries,
        watchdog: config.agent_loop.watchdog,
        descriptions: config.agent_loop.descriptions,
        delegation: Some(tree.clone()),
    };
    crate::leftovers::sweep_writes(&config.root, tackle_fs::SweepMode::Remove);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let end = rt.block_on(async {
        let mut agent = if resumed {
            Agent::resume(setup).map_err(|e| Failure::Engine(e.into()))?
        } else {
            Agent::new(setup)
        };
        observer.on_event(&AgentEvent::SessionStarted {
            session: session.id().0.clone(),
            resumed,
        });
        let cancel = CancellationToken::new();
        tokio::spawn(ctrl_c(cancel.clone()));
        let end = match &wakes {
            None => agent.run(args.prompt.as_deref(), cancel).await,
            Some(wakes) => {
                let dir = session.event_log_path();
                let inbox = tackle_agent::Inbox::of_session(dir.parent().unwrap_or(&config.root));
                let scheduler = tackle_agent::SleepScheduler { inbox };
                let autonomy = tackle_agent::AutonomyBounds {
                    max_wakes: args.max_wakes,
                    max_total: Duration::from_secs_f64(args.max_total),
                };
                tackle_agent::run_autonomous(
                    &mut agent,
                    wakes.clone(),
                    args.prompt.as_deref(),
                    resumed_wait,
                    &scheduler,
                    autonomy,
                    observer.clone(),
                    cancel,
                )
                .await
            }
        };
        // A message sent from now on would find no loop to read it.
        tree.shutdown();
        Ok::<RunEnd, Failure>(end)
    })?;
    if let Some(path) = &args.output_last_message {
        std::fs::write(path, end.last_message.clone().unwrap_or_default())
            .with_context(|| format!("--output-last-message: writing {}", path.display()))?;
    }
    if !args.json && end.outcome != RunOutcome::Finished {
        eprintln!("tackle: {}", output::printable(&end.reason));
    }
    Ok(code(end.outcome))
}

/// The exit code of a run that ended so.
fn code(outcome: RunOutcome) -> u8 {
    match outcome {
        RunOutcome::Finished => exit::OK,
        RunOutcome::Error => exit::RUN_ERROR,
        RunOutcome::BoundHit => exit::BOUND,
        RunOutcome::ProviderFailed => exit::PROVIDER,
        RunOutcome::Cancelled => exit::CANCELLED,
    }
}

fn bounds(args: &RunArgs) -> Result<Bounds, Failure> {
    let positive = |v: f64, flag: &str| {
        if v.is_finite() && v >= 0.0 {
            Ok(v)
        } else {
            Err(Failure::Usage(anyhow!(
                "{flag}: {v} is not a number of at least 0"
            )))
        }
    };
    // Checked here, so the autonomous runner's Duration never sees a bad value.
    positive(args.max_total, "--max-total")?;
    if args.max_total > 365.0 * 86_400.0 {
        return Err(Failure::Usage(anyhow!(
            "--max-total: {} s is more than a year; give at most 31536000",
            args.max_total
        )));
    }
    Ok(Bounds {
        max_turns: args.max_turns,
        max_tokens: args.max_tokens,
        max_cost_usd: args
            .max_cost
            .map(|v| positive(v, "--max-cost"))
            .transpose()?,
        max_duration: args
            .max_duration
            .map(|v| positive(v, "--max-duration").map(Duration::from_secs_f64))
            .transpose()?,
    })
}

/// First Ctrl-C cancels the turn (the model stream, or the batch and every process it
/// started); the second exits at once with 130.
async fn ctrl_c(cancel: CancellationToken) {
    let pressed = AtomicBool::new(false);
    while tokio::signal::ctrl_c().await.is_ok() {
        if pressed.swap(true, Ordering::SeqCst) {
            std::process::exit(i32::from(exit::CANCELLED));
        }
        cancel.cancel();
    }
}

fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    tackle_tool::time::compact_utc(secs)
        .get(..8)
        .map(|d| format!("{}-{}-{}", &d[..4], &d[4..6], &d[6..8]))
        .unwrap_or_default()
}
