//! What a chat runs on: the model and its provider, the runtime (the configuration's catalog
//! and gate, the chat's approver, the agent's call events) and each session's [`Agent`].
//!
//! The model is chosen and connected as `tackle run` does it (`crate::run::model`).

use std::sync::Arc;

use anyhow::Context;
use tackle_agent::agentic::SmallModel;
use tackle_agent::delegate::Tree;
use tackle_agent::prompt::{Environment, system_prompts};
use tackle_agent::{Agent, AgentSetup, Bounds, CallEvents, Observer, Prompter, TaskBoundaries};
use tackle_config::Config;
use tackle_config::models::ModelCatalog;
use tackle_runtime::{Approver, Runtime, Session};

pub use crate::run::model::ModelChoice;
pub use crate::run::sealed::Sealed;

/// `flag` (`provider:model` or `replay:<file>`), else what `tackle run` would choose: the
/// configured default, else a model of a provider key that is set.
pub fn choose(catalog: &ModelCatalog, flag: Option<&str>) -> anyhow::Result<ModelChoice> {
    crate::run::model::choose(catalog, flag, None)
}

/// The runtime every session of this chat runs its calls on (ask_user answered on the input
/// line; the agentic tools when `small` is connected), where its mark_task_done leaves task
/// boundaries (one store for all of the chat's sessions, keyed by session), and the tree of the
/// subagents its sessions start.
pub fn runtime(
    config: &Config,
    approver: Arc<dyn Approver>,
    prompter: Arc<dyn Prompter>,
    observer: Arc<dyn Observer>,
    small: Option<&SmallModel>,
) -> anyhow::Result<(Arc<Runtime>, Arc<TaskBoundaries>, Arc<Tree>)> {
    let tree = Tree::new(
        config.delegation,
        config.agent_types.iter().cloned().collect(),
        observer.clone(),
    );
    let (catalog, boundaries) = crate::run::loop_tools::catalog(
        config,
        Some(prompter),
        None,
        Some(&tree),
        small,
        Vec::new(),
    )?;
    let runtime = Runtime::new(
        catalog,
        tackle_config::host::gate(config),
        config.runtime.clone(),
    )
    .with_approver(approver)
    .with_event_observer(Arc::new(CallEvents(observer)));
    Ok((Arc::new(runtime), boundaries, tree))
}

/// A sealed session's runtime, task boundaries, (empty) tree and sealed parts.
pub type SealedRuntime = (Arc<Runtime>, Arc<TaskBoundaries>, Arc<Tree>, Sealed);

/// The runtime of a sealed chat session: seed 004's eleven tools over `session` (its
/// references are its own, so each session has its runtime), the sealed gate, no subagents.
#[allow(clippy::too_many_arguments)]
pub fn sealed_runtime(
    config: &Config,
    approver: Arc<dyn Approver>,
    prompter: Arc<dyn Prompter>,
    observer: Arc<dyn Observer>,
    small: Option<&SmallModel>,
    session: &Session,
    choice: &ModelChoice,
    resumed: bool,
) -> anyhow::Result<SealedRuntime> {
    let tree = Tree::new(
        config.delegation,
        config.agent_types.iter().cloned().collect(),
        observer.clone(),
    );
    let (catalog, sealed) = crate::run::sealed::build(
        config,
        session,
        resumed,
        approver.clone(),
        Some(prompter),
        crate::run::sealed::ProcessorModel {
            small,
            provider: choice.connect(0)?,
            model: choice.setup.model.clone(),
        },
    )
    .map_err(|(crate::commands::Failure::Usage(e) | crate::commands::Failure::Engine(e))| e)?;
    let runtime = Runtime::new(catalog, sealed.gate.clone(), config.runtime.clone())
        .with_approver(approver)
        .with_event_observer(Arc::new(CallEvents(observer)));
    Ok((Arc::new(runtime), TaskBoundaries::new(), tree, sealed))
}

/// The agent of `session`: a new conversation, or the one its log holds when `resume`.
#[allow(clippy::too_many_arguments)]
pub fn agent(
    config: &Config,
    runtime: Arc<Runtime>,
    boundaries: Arc<TaskBoundaries>,
    tree: Arc<Tree>,
    session: Session,
    choice: &ModelChoice,
    observer: Arc<dyn Observer>,
    resume: bool,
    sealed: Option<&Sealed>,
) -> anyhow::Result<Agent> {
    let answered = if resume {
        tackle_agent::rebuild(&session.event_log_path())
            .context("reading the session's conversation")?
            .conversation
            .answered
    } else {
        0
    };
    let environment = Environment {
        root: config.root.clone(),
        os: std::env::consts::OS.to_owned(),
        date: today(),
        posture: crate::run::sealed::posture_line(config, sealed.is_some()),
    };
    let provider = choice.connect(answered)?;
    tree.add_root(session.clone());
    if resume {
        tackle_agent::delegate::rebuild::restore(&tree, &session)
            .map_err(|e| anyhow::anyhow!("rebuilding the session's subagents: {e}"))?;
    }
    tree.set_spawn(
        Arc::new(crate::run::spawn::RunSpawn {
            runtime: runtime.clone(),
            provider: provider.clone(),
            model: choice.setup.clone(),
            models: config.models.clone(),
            env: environment.clone(),
            bounds: Bounds::default(),
            watchdog: config.agent_loop.watchdog,
            descriptions: config.agent_loop.descriptions,
            tree: tree.clone(),
            root: config.root.clone(),
            skills: config.skills.set().clone(),
        }),
        runtime.catalog().names().map(str::to_owned).collect(),
    );
    let specs = runtime.catalog().specs();
    let system = match sealed {
        Some(sealed) => crate::run::sealed::system(sealed, &runtime, &environment),
        None => {
            let mut system = system_prompts(&specs, &environment);
            tackle_agent::skills::listing::add_to(&mut system, &specs, config.skills.set());
            system
        }
    };
    let setup = AgentSetup {
        system,
        runtime,
        session,
        provider,
        model: choice.setup.clone(),
        bounds: Bounds::default(),
        observer,
        boundaries,
        watchdog: config.agent_loop.watchdog,
        descriptions: config.agent_loop.descriptions,
        delegation: Some(tree),
    };
    if resume {
        Agent::resume(setup).context("resuming the session")
    } else {
        Ok(Agent::new(setup))
    }
}

/// Today's date (UTC), `YYYY-MM-DD`.
fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    tackle_tool::time::rfc3339_utc(secs)
        .chars()
        .take(10)
        .collect()
}
