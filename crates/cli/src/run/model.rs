//! Which model `tackle run` talks to: `--model provider:model`, else the model the resumed
//! session last ran with, else `[model] default`, else the first provider whose key is in the
//! environment, else an error that says how to configure one.
//!
//! A model the catalog does not know (no built-in entry, no `[models."provider:model"]` table)
//! gets the window its server names (`crate::models::window`: a local or self-hosted server
//! asked at the provider's base_url, or what it said less than a day ago), else the assumption
//! of [`UNKNOWN_WINDOW`] tokens; [`ModelChoice::notes`] says which, for the front end to show.
//!
//! `--model replay:<file>` (not in the help) answers from a replay file of scripted turns, so
//! end-to-end tests drive the real binary offline; `TACKLE_REPLAY_RECORD=<file>` then also
//! records every request it is asked.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{anyhow, bail};
use tackle_agent::ModelSetup;
use tackle_llm::catalog::{Modality, ModelEntry, ModelId, ProviderSpec};
use tackle_llm::media::DeliveryFamily;
use tackle_llm::replay::{RecordingProvider, ReplayProvider};
use tackle_llm::{Provider, Transport, TransportLimits};

use crate::models::ModelCatalog;
use crate::models::window::{self, Learned};

/// The output limit of one turn when the catalog's is larger: enough for a long edit.
const MAX_TURN_OUTPUT: u64 = 16_384;

/// Where a model's turns come from.
pub enum ModelSource {
    Provider(ProviderSpec),
    Replay(PathBuf),
}

/// The chosen model, not yet connected.
pub struct ModelChoice {
    pub setup: ModelSetup,
    pub source: ModelSource,
    /// What the front end tells the user about the choice (where an unknown model's window
    /// came from), one line each, not yet made safe to show.
    pub notes: Vec<String>,
}

/// The provider keys whose presence picks a default model, in order of preference.
const BY_KEY: [(&str, &str); 4] = [
    ("ANTHROPIC_API_KEY", "anthropic:claude-sonnet-4-5"),
    ("OPENAI_API_KEY", "openai:gpt-5"),
    ("GEMINI_API_KEY", "gemini:gemini-2.5-pro"),
    ("COHERE_API_KEY", "cohere:command-a-03-2025"),
];

/// Resolves `flag` (else `recorded`, else the configured default, else a key's model).
pub fn choose(
    catalog: &ModelCatalog,
    flag: Option<&str>,
    recorded: Option<&str>,
) -> anyhow::Result<ModelChoice> {
    if let Some(path) = flag.and_then(|f| f.strip_prefix("replay:")) {
        return Ok(replay(PathBuf::from(path)));
    }
    let id: ModelId = match (flag, recorded) {
        (Some(text), _) => text.parse().map_err(|e| {
            anyhow!("--model: {e}; write provider:model, e.g. anthropic:claude-sonnet-4-5")
        })?,
        // A session log is data the repository may have shipped: only a catalog id is taken
        // from it, never a scripted model that would read turns from a file it names.
        (None, Some(text)) => text.parse().map_err(|e| {
            anyhow!(
                "the resumed session ran with `{text}`, which is not a provider:model id ({e}); \
                 pass --model provider:model to continue it"
            )
        })?,
        (None, None) => match &catalog.default {
            Some(d) => d.value.clone(),
            None => by_key()?,
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
            "model `{id}`: no provider `{}`; configured providers: {} (tackle models lists them)",
            id.provider,
            names.join(", ")
        );
    };
    let mut notes = Vec::new();
    let entry = match catalog.entry(&id) {
        Some(known) => known.entry.clone(),
        None => unknown_entry(&id, &provider.spec, &mut notes),
    };
    Ok(ModelChoice {
        setup: ModelSetup {
            model: id.model.clone(),
            max_tokens: turn_output(&entry),
            family: DeliveryFamily::of(&provider.spec),
            entry,
        },
        source: ModelSource::Provider(provider.spec.clone()),
        notes,
    })
}

fn by_key() -> anyhow::Result<ModelId> {
    for (var, model) in BY_KEY {
        if std::env::var_os(var).is_some_and(|v| !v.is_empty()) {
            return model
                .parse()
                .map_err(|e| anyhow!("the built-in default for {var}: {e}"));
        }
    }
    let vars: Vec<&str> = BY_KEY.iter().map(|(v, _)| *v).collect();
    bail!(
        "no model to run: pass --model provider:model, set `default = \"provider:model\"` under \
         [model] in $XDG_CONFIG_HOME/tackle/config.toml, or export one of {}. A local server \
         (llama-server, vLLM, Ollama, LM Studio) works as an OpenAI-compatible provider: a \
         [providers.local] table with kind = \"openai-chat\" and base_url = \
         \"http://127.0.0.1:8080/v1\"; its models' windows are asked of the server (tackle models \
         --probe shows them), or set by a [models.\"local:<model>\"] table",
        vars.join(", ")
    )
}

/// What is assumed of a model the catalog does not know when its server does not say: small
/// enough for most servers' defaults.
pub const UNKNOWN_WINDOW: u64 = 32_768;
const UNKNOWN_OUTPUT: u64 = 4_096;

/// The entry of a model the catalog does not know: the window its server names, else
/// [`UNKNOWN_WINDOW`]; a note in `notes` says which.
fn unknown_entry(id: &ModelId, spec: &ProviderSpec, notes: &mut Vec<String>) -> ModelEntry {
    let outcome = window::learn(spec, &id.model, true);
    notes.extend(outcome.cache_note);
    let table = format!("a [models.\"{id}\"] table in your config.toml says otherwise");
    let window = match outcome.learned {
        Learned::Window {
            learned,
            server_url,
            cached,
        } => {
            let source = learned
                .deciding()
                .map_or_else(String::new, |s| format!(" ({})", s.source));
            let when = match cached {
                Some(at) => format!(
                    "; learned {}, kept a day (tackle models --probe asks again)",
                    window::ago(at)
                ),
                None => String::new(),
            };
            notes.push(format!(
                "model `{id}` is not in the model catalog; {} at {server_url} runs `{}` with a {}-token window{source}{when}; text only, no prices ({table})",
                learned.server, learned.model, learned.window
            ));
            notes.extend(learned.caveat.clone());
            learned.window
        }
        Learned::NotAsked => {
            notes.push(format!(
                "model `{id}` is not in the model catalog; assuming a {UNKNOWN_WINDOW}-token window and {UNKNOWN_OUTPUT} output tokens, text only, no prices ({table})"
            ));
            UNKNOWN_WINDOW
        }
        Learned::Failed(e) => {
            notes.push(format!(
                "model `{id}` is not in the model catalog, and asking its server for the window failed: {e}; assuming a {UNKNOWN_WINDOW}-token window and {UNKNOWN_OUTPUT} output tokens, text only, no prices ({table})"
            ));
            UNKNOWN_WINDOW
        }
    };
    ModelEntry {
        id: id.clone(),
        context_window: window,
        max_output: unknown_output(window),
        input: vec![Modality::Text],
        media: Vec::new(),
        prices: None,
    }
}

/// The output of one turn of a model the catalog does not know: [`UNKNOWN_OUTPUT`], but never
/// more than a quarter of its window, so the prompt keeps the rest (vLLM refuses a request
/// whose prompt and `max_tokens` together pass the window).
fn unknown_output(window: u64) -> u64 {
    UNKNOWN_OUTPUT.min(window / 4).max(1)
}

fn turn_output(entry: &ModelEntry) -> u32 {
    entry.max_output.clamp(1, MAX_TURN_OUTPUT) as u32
}

fn replay(path: PathBuf) -> ModelChoice {
    let entry = ModelEntry {
        // Named by its file, so the record of a run says where to resume it from.
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
        source: ModelSource::Replay(path),
        notes: Vec::new(),
    }
}

impl ModelChoice {
    /// Connects; a replay continues after the `answered` turns the session already has.
    pub fn connect(&self, answered: usize) -> anyhow::Result<Arc<dyn Provider>> {
        match &self.source {
            ModelSource::Provider(spec) => {
                let transport = Transport::new(TransportLimits::default())
                    .map_err(|e| anyhow!("starting the HTTP client: {e}"))?;
                tackle_llm::connect(spec, transport).map_err(|e| anyhow!("{e}"))
            }
            ModelSource::Replay(path) => {
                let replay: Arc<dyn Provider> = Arc::new(
                    ReplayProvider::from_file("replay", path)
                        .map_err(|e| anyhow!("--model replay: {e}"))?
                        .starting_at(answered),
                );
                match std::env::var_os("TACKLE_REPLAY_RECORD") {
                    Some(record) => Ok(Arc::new(
                        RecordingProvider::create(replay, std::path::Path::new(&record))
                            .map_err(|e| anyhow!("TACKLE_REPLAY_RECORD: {e}"))?,
                    )),
                    None => Ok(replay),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_models_output_leaves_the_prompt_three_quarters_of_its_window() {
        for (window, output) in [
            (UNKNOWN_WINDOW, UNKNOWN_OUTPUT),
            (1_000_000, UNKNOWN_OUTPUT),
            (8192, 2048),
            (512, 128),
            (3, 1),
            (1, 1),
        ] {
            assert_eq!(unknown_output(window), output, "{window}");
            assert!(unknown_output(window) <= window);
        }
    }
}
