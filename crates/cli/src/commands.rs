//! One function per command. Errors here are engine errors (exit 3) or usage errors (exit 2);
//! a tool's failure is a printed result with exit 1.

use std::io::{Read, Write};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, anyhow};
use tackle_protocol::{CallId, ToolCall};
use tackle_runtime::{CancellationToken, Runtime};

use crate::args::{Cli, Command};
use crate::config::{self, Config};
use crate::exit;
use crate::leftovers;
use crate::settings::Flags;
use crate::trust::TrustStore;
use crate::trust::command::TrustAction;
use crate::trust::prompt::{Consent, NeverAsk, TerminalConsent};
use tackle_fs::SweepMode;

/// A failure that maps to an exit code.
pub(crate) enum Failure {
    Usage(anyhow::Error),
    Engine(anyhow::Error),
}

impl From<anyhow::Error> for Failure {
    fn from(e: anyhow::Error) -> Self {
        Failure::Engine(e)
    }
}

impl From<tackle_config::ConfigError> for Failure {
    fn from(e: tackle_config::ConfigError) -> Self {
        Failure::Engine(e.into())
    }
}

pub fn run(cli: Cli) -> ExitCode {
    let flags = cli.policy.to_flags();
    let outcome = match cli.command {
        Command::Tools { json, descriptions } => {
            let consent = consent(cli.policy.headless);
            let form = if descriptions == "compact" {
                tackle_runtime::Descriptions::Compact
            } else {
                tackle_runtime::Descriptions::Full
            };
            setup_or_defaults(cli.root.as_deref(), &flags, consent.as_ref())
                .and_then(|c| tools(&c, json, form))
        }
        Command::Call {
            tool,
            arguments,
            json,
            id,
            session,
            turn,
        } => setup(
            cli.root.as_deref(),
            &flags,
            consent(cli.policy.headless).as_ref(),
        )
        .and_then(|c| {
            call(
                &c,
                tool,
                &arguments,
                json,
                CallTarget { id, session, turn },
                cli.policy.headless,
            )
        }),
        Command::Run(args) if args.daemon.is_some() => {
            crate::daemon::remote::run(cli.root.as_deref(), args)
        }
        Command::Run(args) => {
            let (flags, models) = crate::run::model_flag(flags.clone());
            setup(
                cli.root.as_deref(),
                &flags,
                consent(cli.policy.headless).as_ref(),
            )
            .and_then(with_storage)
            .and_then(|c| crate::run::run(&c, args, models, cli.policy.headless))
        }
        Command::Models { json, probe } => {
            setup_or_defaults(cli.root.as_deref(), &flags, &NeverAsk).and_then(|c| match probe {
                Some(what) => crate::models::probe::run(&c.models, &what, json),
                None => {
                    crate::models::show::print(&c.models, json)?;
                    Ok(exit::OK)
                }
            })
        }
        Command::Agents { json } => setup_or_defaults(cli.root.as_deref(), &flags, &NeverAsk)
            .and_then(|c| crate::agents::run(&c.agent_types, json)),
        Command::Skills { json, check } => {
            setup_or_defaults(cli.root.as_deref(), &flags, &NeverAsk)
                .and_then(|c| crate::skills::run(&c.skills, json, check))
        }
        Command::Config { json } => setup(cli.root.as_deref(), &flags, &NeverAsk).and_then(|c| {
            let posture = crate::posture::line(&c);
            crate::show_config::print(&c, &posture, json)?;
            Ok(exit::OK)
        }),
        Command::Serve {
            http,
            token_env,
            no_token,
            verbose,
            approvals,
        } => setup(cli.root.as_deref(), &flags, &NeverAsk).and_then(|c| {
            crate::serve::run(
                c,
                crate::serve::ServeArgs {
                    http,
                    token_env,
                    no_token,
                    headless: is_headless(cli.policy.headless),
                    verbose,
                    client_confirms: approvals == crate::args::ServeApprovals::Client,
                },
            )
        }),
        Command::Plan {
            command: crate::args::PlanCommand::Revoke { session, json },
        } => setup(cli.root.as_deref(), &flags, &NeverAsk)
            .and_then(|c| crate::plan::revoke(&c, session, json)),
        Command::Sessions { command } => setup(cli.root.as_deref(), &flags, &NeverAsk)
            .and_then(|c| crate::sessions::run(&c, command)),
        Command::Artifacts { command } => setup(cli.root.as_deref(), &flags, &NeverAsk)
            .and_then(|c| crate::artifacts::artifacts(&c, command)),
        Command::Store {
            command: crate::args::StoreCommand::Migrate { from, to, json },
        } => setup(cli.root.as_deref(), &flags, &NeverAsk)
            .and_then(|c| crate::store_migrate::migrate(&c, from, to, json)),
        Command::Mcp { command } => crate::mcp::run(cli.root.as_deref(), &flags, command),
        Command::Goal { command } => std::env::current_dir()
            .context("reading the working directory")
            .and_then(|cwd| Ok(crate::root::find(cli.root.as_deref(), &cwd)?))
            .map_err(Failure::Engine)
            .and_then(|root| crate::goal::run(&root, command)),
        Command::Acp => {
            // `[store]` and `[artifacts]` are the user's alone, so any project's view of them
            // is the same: installed once, before the editor opens a session.
            tackle_config::load::user_storage()
                .map_err(Failure::from)
                .and_then(|storage| {
                    crate::storage::install(&storage, None)
                        .map_err(|e| Failure::Usage(anyhow!("{e:#}")))
                })
                .and_then(|_| {
                    let (flags, models) = crate::run::model_flag(flags.clone());
                    crate::acp::run(flags, models)
                })
        }
        Command::Daemon { command, serve } => {
            let (flags, models) = crate::run::model_flag(flags.clone());
            match command {
                None => crate::daemon::serve(cli.root.as_deref(), flags, models, serve),
                Some(command) => crate::daemon::manage(command),
            }
        }
        Command::Attach {
            session,
            daemon,
            last_event_id,
            json,
            lines,
        } => crate::daemon::attach::run(session, daemon, last_event_id, json || lines, json),
        Command::Chat { resume } => {
            // `--model replay:<file>` is no catalog entry: taken out as `tackle run` does.
            let (flags, models) = crate::run::model_flag(flags.clone());
            setup(
                cli.root.as_deref(),
                &flags,
                consent(cli.policy.headless).as_ref(),
            )
            .and_then(with_storage)
            .and_then(|c| crate::chat::run(c, crate::chat::ChatArgs { models, resume }))
        }
        Command::Trust {
            sealed,
            sealed_command,
            revoke,
            ..
        } if !sealed.is_empty() || !sealed_command.is_empty() => {
            crate::trust::vouch::run(cli.root.as_deref(), &sealed, &sealed_command, revoke)
        }
        Command::Trust {
            revoke, list, json, ..
        } => {
            let action = match (revoke, list) {
                (_, true) => TrustAction::List { json },
                (true, false) => TrustAction::Revoke,
                (false, false) => TrustAction::Grant,
            };
            crate::trust::command::run(cli.root.as_deref(), &flags, action)
        }
    };
    match outcome {
        Ok(code) => exit::code(code),
        Err(Failure::Usage(e)) => {
            eprintln!("tackle: {e:#}");
            exit::code(exit::USAGE)
        }
        // A reader that stopped reading (`tackle tools | head`) is not a failure.
        Err(Failure::Engine(e))
            if e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }) =>
        {
            exit::code(exit::OK)
        }
        Err(Failure::Engine(e)) => {
            eprintln!("tackle: {e:#}");
            exit::code(exit::ENGINE)
        }
    }
}

/// Who may trust the root on the spot: a person at a terminal, unless `--headless`.
fn consent(headless: bool) -> Box<dyn Consent> {
    if is_headless(headless) {
        return Box::new(NeverAsk);
    }
    match TerminalConsent::if_interactive() {
        Some(t) => Box::new(t),
        None => Box::new(NeverAsk),
    }
}

/// `config` after the user's `[store]` and `[artifacts]` are installed, so the sessions the
/// command opens or resumes are kept there too (`crate::storage`).
fn with_storage(config: Config) -> Result<Config, Failure> {
    crate::storage::install(&config.storage, None).map_err(|e| Failure::Usage(anyhow!("{e:#}")))?;
    Ok(config)
}

fn setup(
    root: Option<&std::path::Path>,
    flags: &Flags,
    consent: &dyn Consent,
) -> Result<Config, Failure> {
    let cwd = std::env::current_dir().context("reading the working directory")?;
    let root = crate::root::find(root, &cwd)?;
    loaded(&root, flags, consent)
}

/// Like [`setup`], but outside any project fall back to the user config and flags alone, so
/// `tackle tools` works anywhere.
fn setup_or_defaults(
    root: Option<&std::path::Path>,
    flags: &Flags,
    consent: &dyn Consent,
) -> Result<Config, Failure> {
    let cwd = std::env::current_dir().context("reading the working directory")?;
    match crate::root::find(root, &cwd) {
        Ok(root) => loaded(&root, flags, consent),
        Err(_) if root.is_none() => loaded(&cwd, flags, consent),
        Err(e) => Err(e.into()),
    }
}

/// Load the configuration, and say on stderr what folder trust left out.
fn loaded(root: &std::path::Path, flags: &Flags, consent: &dyn Consent) -> Result<Config, Failure> {
    let config = config::load_with(root, flags, TrustStore::user().as_ref(), consent)?;
    if let Some(notice) = config.trust.notice() {
        eprint!("{notice}");
    }
    Ok(config)
}

pub(crate) use tackle_config::host::{catalog, gate};

fn tools(
    config: &Config,
    json: bool,
    descriptions: tackle_runtime::Descriptions,
) -> Result<u8, Failure> {
    let specs = catalog(config)?.specs_in(descriptions);
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer_pretty(&mut out, &specs).context("writing the catalog")?;
        writeln!(out).context("writing the catalog")?;
    } else {
        for spec in &specs {
            writeln!(
                out,
                "{}\n  {}\n  input: {}\n",
                spec.name, spec.description, spec.input_schema
            )
            .context("writing the catalog")?;
        }
    }
    Ok(exit::OK)
}

/// `--headless` or `TACKLE_HEADLESS` (non-empty, not `0`).
pub(crate) fn is_headless(flag: bool) -> bool {
    flag || std::env::var_os("TACKLE_HEADLESS").is_some_and(|v| !v.is_empty() && v != "0")
}

/// The terminal approver when there is a terminal and no `--headless`, else refusals; a file
/// change's diff is read under `root`.
pub(crate) fn approver(headless: bool, root: &Path) -> Arc<dyn tackle_runtime::Approver> {
    if is_headless(headless) {
        Arc::new(tackle_runtime::HeadlessApprover)
    } else {
        Arc::new(crate::approve::TerminalApprover::from_tty(root.to_owned()))
    }
}

/// Which call id to record, and in which session.
struct CallTarget {
    id: String,
    /// Resume this session instead of opening a new one.
    session: Option<String>,
    /// The turn the call belongs to (`--turn`); unset, a turn of its own.
    turn: Option<String>,
}

fn call(
    config: &Config,
    tool: String,
    arguments: &str,
    json: bool,
    target: CallTarget,
    headless: bool,
) -> Result<u8, Failure> {
    let CallTarget { id, session, turn } = target;
    let text = if arguments == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .context("reading arguments from standard input")?;
        s
    } else {
        arguments.to_owned()
    };
    let arguments: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        Failure::Usage(anyhow!(
            "arguments are not valid JSON ({e}); pass an object such as '{{\"path\":\"README.md\"}}'"
        ))
    })?;
    // One call per process: a shell started ahead would only be started to be killed.
    let mut one_call = config.clone();
    one_call.settings.bash_prestart.value = false;
    let runtime = Runtime::new(catalog(&one_call)?, gate(config), config.runtime.clone())
        .with_approver(approver(headless, &config.root));
    let session = match &session {
        // Naming a session that is not there is a bad command line; a log that cannot be
        // read or is corrupt is tackle unable to work (exit 3, as the README says).
        // A log this user's tackle did not write is refused (exit 2, naming --trust-log).
        Some(existing) => crate::own_sessions::resume(&config.root, existing, "--session", false)?,
        None => crate::own_sessions::open(&config.root)?,
    };
    if let Some(turn) = turn {
        session.set_turn(tackle_protocol::TurnId(turn));
    }
    // The store swept its own temps on open; these are the worktree's.
    leftovers::sweep_writes(&config.root, SweepMode::Remove);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let call = ToolCall {
        id: CallId(id),
        name: tool,
        arguments,
    };
    let cancel = CancellationToken::new();
    let ctrl_c = cancel.clone();
    let results = rt.block_on(async {
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                ctrl_c.cancel();
            }
        });
        runtime.run_batch(&session, vec![call], cancel).await
    });
    let results = results.context("running the call")?;
    let result = results
        .into_iter()
        .next()
        .ok_or_else(|| anyhow!("the runtime returned no result"))?;
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer_pretty(&mut out, &result).context("writing the result")?;
        writeln!(out).context("writing the result")?;
    } else {
        out.write_all(result.text().as_bytes())
            .context("writing the result")?;
    }
    Ok(if result.is_error {
        exit::TOOL_ERROR
    } else {
        exit::OK
    })
}
