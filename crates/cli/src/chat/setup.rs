//! What a chat runs on: the model and its provider, the runtime (the configuration's catalog
//! and gate, the chat's approver, the agent's call events) and each session's [`Agent`].
//!
//! The smallest version the chat needs, kept private here: `--model provider:model` from the
//! configured model catalog (else its `[model] default`), and `--model replay:<file>`, which
//! answers from a replay file of scripted turns so the binary is tested offline.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, anyhow, bail};
use tackle_agent::prompt::{Environment, system_prompt};
use tackle_agent::{Agent, AgentSetup, Bounds, CallEvents, ModelSetup, Observer};
use tackle_config::Config;
use tackle_config::models::ModelCatalog;
use tackle_llm::Provider;
use tackle_llm::catalog::{Modality, ModelEntry, ModelId, ProviderSpec};
use tackle_llm::media::DeliveryFamily;
use tackle_llm::replay::ReplayProvider;
use tackle_runtime::{Approver, Runtime, Session};

/// The output limit of one turn when the catalog's is larger.
const MAX_TURN_OUTPUT: u64 = 16_384;

enum Source {
    Provider(ProviderSpec),
    Replay(PathBuf),
}

/// A model chosen, not yet connected.
pub struct ModelChoice {
    pub setup: ModelSetup,
    source: Source,
}

/// `flag` (`provider:model` or `replay:<file>`), else the configured default.
pub fn choose(catalog: &ModelCatalog, flag: Option<&str>) -> anyhow::Result<ModelChoice> {
    if let Some(path) = flag.and_then(|f| f.strip_prefix("replay:")) {
        return Ok(replay(PathBuf::from(path)));
    }
    let id: ModelId = match flag {
        Some(text) => text.parse().map_err(|e| {
            anyhow!("model `{text}`: {e}; write provider:model, e.g. anthropic:claude-sonnet-4-5")
        })?,
        None => match &catalog.default {
            Some(d) => d.value.clone(),
            None => bail!(
                "no model to chat with: pass --model provider:model, or set `default = \
                 \"provider:model\"` under [model] in your config.toml (tackle models lists them)"
            ),
        },
    };
    let Some(provider) = catalog
        .providers
        .iter()
        .find(|p| p.spec.name == id.provider)
    else {
        let names: Vec<&str> = catalog
            .providers
            .iter()
            .map(|p| p.spec.name.as_str())
            .collect();
        bail!(
            "model `{id}`: no provider `{}`; the configured providers are {} (tackle models lists them)",
            id.provider,
            names.join(", ")
        );
    };
    let Some(entry) = catalog.entry(&id) else {
        bail!(
            "model `{id}` is not in the model catalog; add a [models.\"{id}\"] table with its \
             context_window and max_output (tackle models lists the known ones)"
        );
    };
    let entry = entry.entry.clone();
    Ok(ModelChoice {
        setup: ModelSetup {
            model: id.model.clone(),
            max_tokens: entry.max_output.clamp(1, MAX_TURN_OUTPUT) as u32,
            family: DeliveryFamily::of(&provider.spec),
            entry,
        },
        source: Source::Provider(provider.spec.clone()),
    })
}

fn replay(path: PathBuf) -> ModelChoice {
    let entry = ModelEntry {
        id: ModelId {
            provider: "replay".into(),
            model: path.display().to_string(),
        },
        context_window: 200_000,
        max_output: 8192,
        input: vec![Modality::Text],
        media: Vec::new(),
        prices: None,
    };
    ModelChoice {
        setup: ModelSetup {
            model: "scripted".into(),
            max_tokens: 8192,
            family: DeliveryFamily::Anthropic,
            entry,
        },
        source: Source::Replay(path),
    }
}

impl ModelChoice {
    /// Connects; a replay goes on after the `answered` requests the session already had.
    fn connect(&self, answered: usize) -> anyhow::Result<Arc<dyn Provider>> {
        match &self.source {
            Source::Provider(spec) => {
                let transport = tackle_llm::Transport::new(tackle_llm::TransportLimits::default())
                    .map_err(|e| anyhow!("starting the HTTP client: {e}"))?;
                tackle_llm::connect(spec, transport).map_err(|e| anyhow!("{e}"))
            }
            Source::Replay(path) => Ok(Arc::new(
                ReplayProvider::from_file("replay", path)
                    .map_err(|e| anyhow!("--model replay: {e}"))?
                    .starting_at(answered),
            )),
        }
    }
}

/// The runtime every session of this chat runs its calls on.
pub fn runtime(
    config: &Config,
    approver: Arc<dyn Approver>,
    observer: Arc<dyn Observer>,
) -> anyhow::Result<Arc<Runtime>> {
    let runtime = Runtime::new(
        tackle_config::host::catalog(config)?,
        tackle_config::host::gate(config),
        config.runtime.clone(),
    )
    .with_approver(approver)
    .with_event_observer(Arc::new(CallEvents(observer)));
    Ok(Arc::new(runtime))
}

/// The agent of `session`: a new conversation, or the one its log holds when `resume`.
pub fn agent(
    config: &Config,
    runtime: Arc<Runtime>,
    session: Session,
    choice: &ModelChoice,
    observer: Arc<dyn Observer>,
    resume: bool,
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
        posture: tackle_config::posture::line(config),
    };
    let setup = AgentSetup {
        system: system_prompt(&runtime.catalog().specs(), &environment),
        runtime,
        session,
        provider: choice.connect(answered)?,
        model: choice.setup.clone(),
        bounds: Bounds::default(),
        observer,
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
