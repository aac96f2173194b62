//! `tackle models --probe [provider[:model]]`: what the servers behind the configured providers
//! say of their models' windows, asked anew (the answers are kept for `tackle run`), as text or
//! `--json`. Which providers are asked, and how, is `tackle_llm::window_probe`'s to decide;
//! which models, this file's: the one named, else every model the configuration names on the
//! provider (its `[models.*]` tables, `[model] default` and `small`).
//!
//! Exit 0 when every server asked named a window, 1 when one could not be asked or named none,
//! 2 for a provider or id that is not one.

use std::io::Write as _;

use anyhow::{Context, anyhow};
use serde_json::{Value, json};
use tackle_llm::catalog::{ModelId, ProviderSpec};
use tackle_llm::window_probe::{LearnedWindow, ProbeError, ProbeTarget};

use super::ModelCatalog;
use super::window::{self, Learned};
use crate::commands::Failure;
use crate::exit;
use crate::safe_text::safe_line;

/// One provider's model, asked or not.
struct Row {
    provider: String,
    base_url: Option<String>,
    /// `None` when the configuration names no model of the provider.
    model: Option<String>,
    /// The window a `[models.*]` table gives, which wins over the server's.
    catalog_window: Option<u64>,
    answer: Answer,
}

enum Answer {
    Learned {
        learned: LearnedWindow,
        server_url: String,
    },
    Failed(ProbeError),
    /// The provider was named but is not one to ask, or names no model: why.
    NotAsked(String),
}

impl Row {
    fn failed(&self) -> bool {
        !matches!(self.answer, Answer::Learned { .. })
    }
}

/// Runs `tackle models --probe <what>` (`what` empty for every provider).
pub fn run(catalog: &ModelCatalog, what: &str, json_out: bool) -> Result<u8, Failure> {
    let (providers, named_model) = select(catalog, what).map_err(Failure::Usage)?;
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    let explicit = !what.is_empty();
    for spec in providers {
        if let Err(e) = ProbeTarget::for_provider(spec) {
            if explicit {
                rows.push(Row {
                    provider: spec.name.clone(),
                    base_url: spec.base_url.clone(),
                    model: named_model.clone(),
                    catalog_window: None,
                    answer: Answer::NotAsked(e.message),
                });
            }
            continue;
        }
        let models = match &named_model {
            Some(model) => vec![model.clone()],
            None => configured_models(catalog, &spec.name),
        };
        if models.is_empty() {
            rows.push(Row {
                provider: spec.name.clone(),
                base_url: spec.base_url.clone(),
                model: None,
                catalog_window: None,
                answer: Answer::NotAsked(format!(
                    "no model of provider `{0}` is named in your config; name one: tackle models --probe {0}:<model>",
                    spec.name
                )),
            });
            continue;
        }
        for model in models {
            rows.push(ask(catalog, spec, model, &mut notes));
        }
    }
    for note in notes {
        eprintln!("tackle: {}", safe_line(&note));
    }
    let mut out = std::io::stdout().lock();
    if json_out {
        let probes: Vec<Value> = rows.iter().map(row_json).collect();
        let text =
            serde_json::to_string_pretty(&json!({ "probes": probes })).context("encoding json")?;
        writeln!(out, "{text}").context("writing stdout")?;
    } else if rows.is_empty() {
        writeln!(
            out,
            "no provider with a base_url of a local or self-hosted server is configured; add a [providers.<name>] table (tackle models --help)"
        )
        .context("writing stdout")?;
    } else {
        write!(out, "{}", rows_text(&rows)).context("writing stdout")?;
    }
    Ok(if rows.iter().any(Row::failed) {
        exit::TOOL_ERROR
    } else {
        exit::OK
    })
}

/// The providers `what` names (all, one, or one model's) and the model it names, if any.
fn select<'a>(
    catalog: &'a ModelCatalog,
    what: &str,
) -> anyhow::Result<(Vec<&'a ProviderSpec>, Option<String>)> {
    let specs: Vec<&ProviderSpec> = catalog.providers.iter().map(|p| &p.spec).collect();
    if what.is_empty() {
        return Ok((specs, None));
    }
    let (provider, model) = if what.contains(':') {
        let id: ModelId = what
            .parse()
            .map_err(|e| anyhow!("--probe: {e}; write provider or provider:model"))?;
        (id.provider, Some(id.model))
    } else {
        (what.to_owned(), None)
    };
    let found: Vec<&ProviderSpec> = specs
        .iter()
        .copied()
        .filter(|s| s.name == provider)
        .collect();
    if found.is_empty() {
        let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
        return Err(anyhow!(
            "--probe: no provider `{provider}`; configured providers: {}",
            names.join(", ")
        ));
    }
    Ok((found, model))
}

/// The models the configuration names on `provider`: its catalog entries, the default and the
/// small model; sorted, once each.
fn configured_models(catalog: &ModelCatalog, provider: &str) -> Vec<String> {
    let mut models: Vec<String> = catalog
        .entries
        .iter()
        .map(|e| &e.entry.id)
        .chain(catalog.default.iter().map(|d| &d.value))
        .chain(catalog.small.iter().map(|s| &s.value))
        .filter(|id| id.provider == provider)
        // A built-in entry is no model the user configured on a server of their own.
        .filter(|id| {
            catalog
                .entry(id)
                .is_none_or(|e| e.source != super::EntrySource::BuiltIn)
        })
        .map(|id| id.model.clone())
        .collect();
    models.sort();
    models.dedup();
    models
}

fn ask(catalog: &ModelCatalog, spec: &ProviderSpec, model: String, notes: &mut Vec<String>) -> Row {
    let id = ModelId {
        provider: spec.name.clone(),
        model: model.clone(),
    };
    let outcome = window::learn(spec, &model, false);
    notes.extend(outcome.cache_note);
    let answer = match outcome.learned {
        Learned::Window {
            learned,
            server_url,
            ..
        } => Answer::Learned {
            learned,
            server_url,
        },
        Learned::Failed(e) => Answer::Failed(e),
        Learned::NotAsked => {
            Answer::NotAsked(format!("provider `{}` is not one to ask", spec.name))
        }
    };
    Row {
        provider: spec.name.clone(),
        base_url: spec.base_url.clone(),
        model: Some(model),
        catalog_window: catalog.entry(&id).map(|e| e.entry.context_window),
        answer,
    }
}

fn row_json(row: &Row) -> Value {
    let id = row.model.as_ref().map(|m| format!("{}:{m}", row.provider));
    let mut v = json!({
        "id": id,
        "provider": row.provider,
        "model": row.model,
        "base_url": row.base_url,
        "catalog_window": row.catalog_window,
        "server": null,
        "server_url": null,
        "served_model": null,
        "window": null,
        "sizes": [],
        "caveat": null,
        "error": null,
    });
    match &row.answer {
        Answer::Learned {
            learned,
            server_url,
        } => {
            v["server"] = learned.server.as_str().into();
            v["server_url"] = server_url.as_str().into();
            v["served_model"] = learned.model.as_str().into();
            v["window"] = learned.window.into();
            v["sizes"] = learned
                .sizes
                .iter()
                .map(|s| {
                    json!({"tokens": s.tokens, "meaning": s.meaning.as_str(), "source": s.source})
                })
                .collect();
            v["caveat"] = learned.caveat.clone().into();
        }
        Answer::Failed(e) => {
            v["error"] = json!({"kind": e.kind.as_str(), "message": e.message});
        }
        Answer::NotAsked(why) => {
            v["error"] = json!({"kind": "not_probed", "message": why});
        }
    }
    v
}

fn rows_text(rows: &[Row]) -> String {
    let mut out = String::new();
    for row in rows {
        let id = match &row.model {
            Some(m) => format!("{}:{m}", row.provider),
            None => row.provider.clone(),
        };
        match &row.answer {
            Answer::Learned {
                learned,
                server_url,
            } => {
                out.push_str(&safe_line(&format!(
                    "{id}  {} at {server_url}, serving `{}`: a {}-token window",
                    learned.server, learned.model, learned.window
                )));
                out.push('\n');
                for s in &learned.sizes {
                    let meaning = s.meaning.as_str().replace('_', " ");
                    out.push_str(&safe_line(&format!(
                        "  {:>9}  {meaning:<16} {}",
                        s.tokens, s.source
                    )));
                    out.push('\n');
                }
                if let Some(caveat) = &learned.caveat {
                    out.push_str(&safe_line(&format!("  note: {caveat}")));
                    out.push('\n');
                }
            }
            Answer::Failed(e) => {
                out.push_str(&safe_line(&format!("{id}  failed: {e}")));
                out.push('\n');
            }
            Answer::NotAsked(why) => {
                out.push_str(&safe_line(&format!("{id}  not asked: {why}")));
                out.push('\n');
            }
        }
        if let Some(window) = row.catalog_window {
            out.push_str(&safe_line(&format!(
                "  note: the [models.\"{id}\"] table's context_window, {window}, is used instead"
            )));
            out.push('\n');
        }
    }
    out
}
