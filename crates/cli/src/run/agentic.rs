//! The small model the agentic tools hand bulk output to, for `tackle run` and `tackle chat`:
//! `--agentic-small-model`, else `[model] small` (both the user's own: a project's `[model]`
//! is ignored until trusted, and never names a provider), chosen and connected as `--model`
//! is (`super::model::choose`), once per process.
//!
//! The tools are offered only when that model connects, which means its provider is
//! configured and its key, when it needs one, is set. A flag that cannot be used is an error
//! (the user asked for it by name); `[model] small` from a file that cannot be used leaves the
//! tools out with a line on stderr that says why and what to set. `--agentic-small-model
//! replay:<file>` (not in the help) answers from a replay file, for tests.

use std::sync::Arc;

use anyhow::anyhow;
use tackle_agent::agentic::SmallModel;
use tackle_agent::agentic::digest::PARALLEL_PARTS;
use tackle_config::settings::Origin;
use tackle_llm::Provider;
use tackle_llm::replay::ReplayProvider;
use tackle_llm::window_probe::ProbeTarget;

use super::model::ModelSource;

use crate::commands::Failure;
use crate::config::Config;

/// The small model, or `None` when none is configured or the configured one cannot be used.
pub fn small_model(config: &Config, replay: Option<&str>) -> Result<Option<SmallModel>, Failure> {
    let (text, flag) = match (replay, &config.models.small) {
        (Some(replay), _) => (replay.to_owned(), true),
        (None, Some(small)) => (
            small.value.to_string(),
            matches!(small.origin, Origin::Flag { .. }),
        ),
        (None, None) => return Ok(None),
    };
    let connected = super::model::choose(&config.models, Some(&text), None).and_then(|choice| {
        for note in &choice.notes {
            eprintln!("tackle: small model: {}", crate::safe_text::safe_line(note));
        }
        let (provider, parallel): (Arc<dyn Provider>, usize) = match &choice.source {
            // Played, never recorded: `TACKLE_REPLAY_RECORD` holds the run's own model's
            // requests (a subtask's are in its session's log).
            ModelSource::Replay(path) => (
                Arc::new(
                    ReplayProvider::from_file("replay", path)
                        .map_err(|e| anyhow!("--agentic-small-model replay: {e}"))?,
                ),
                PARALLEL_PARTS,
            ),
            // A server the window probe would ask is one of the user's own.
            ModelSource::Provider(spec) => (
                choice.connect(0)?,
                if ProbeTarget::for_provider(spec).is_ok() {
                    1
                } else {
                    PARALLEL_PARTS
                },
            ),
        };
        Ok(SmallModel {
            provider,
            model: choice.setup,
            parallel,
        })
    });
    match connected {
        Ok(small) => Ok(Some(small)),
        Err(e) if flag => Err(Failure::Usage(anyhow!(
            "--agentic-small-model {text}: {e}; set its key, or name a configured model \
             (tackle models lists them)"
        ))),
        Err(e) => {
            eprintln!(
                "tackle: the agentic tools are not offered: [model] small = {}: {}",
                crate::safe_text::safe_line(&text),
                crate::safe_text::safe_line(&format!("{e:#}"))
            );
            Ok(None)
        }
    }
}

/// `--max-cost` counts the subtasks' cost too, so it needs the small model's prices.
pub fn check_max_cost(small: Option<&SmallModel>, max_cost: Option<f64>) -> Result<(), Failure> {
    match small {
        Some(small) if max_cost.is_some() && small.model.entry.prices.is_none() => {
            Err(Failure::Usage(anyhow!(
                "--max-cost: the catalog has no prices for the small model {} that the agentic \
                 tools run on; add them to its [models.\"{}\"] table (0 for a local server), or \
                 bound the run with --max-tokens",
                small.id(),
                small.id()
            )))
        }
        _ => Ok(()),
    }
}
