//! `tackle models`: the catalog, its providers, and the default and small model, with where each
//! came from. Key variables are named with whether they are set, never their values.

use std::io::Write;

use anyhow::Context;
use serde_json::{Value, json};
use tackle_llm::catalog::ModelId;

use super::{CatalogEntry, CatalogProvider, ModelCatalog};
use crate::settings::Sourced;

fn key_set(var: &str) -> bool {
    std::env::var_os(var).is_some_and(|v| !v.is_empty())
}

fn choice_json(catalog: &ModelCatalog, choice: &Option<Sourced<ModelId>>) -> Value {
    match choice {
        None => Value::Null,
        Some(s) => json!({
            "id": s.value.to_string(),
            "from": s.origin.to_string(),
            "in_catalog": catalog.entry(&s.value).is_some(),
        }),
    }
}

fn provider_json(p: &CatalogProvider) -> Value {
    json!({
        "name": p.spec.name,
        "kind": p.spec.kind.as_str(),
        "base_url": p.spec.base_url,
        "api_key_env": p.spec.api_key_env,
        "api_version": p.spec.api_version,
        "key_set": p.spec.api_key_env.as_deref().map(key_set),
        "from": p.source.to_string(),
    })
}

fn entry_json(e: &CatalogEntry) -> Value {
    let m = &e.entry;
    let media: serde_json::Map<String, Value> = m
        .media
        .iter()
        .map(|(kind, l)| {
            (
                kind.as_str().to_owned(),
                json!({"max_bytes": l.max_bytes, "max_count": l.max_count}),
            )
        })
        .collect();
    json!({
        "id": m.id.to_string(),
        "provider": m.id.provider,
        "model": m.id.model,
        "context_window": m.context_window,
        "max_output": m.max_output,
        "input": m.input.iter().map(|i| i.as_str()).collect::<Vec<_>>(),
        "media": media,
        "prices": m.prices.map(|p| json!({
            "input": p.input, "output": p.output,
            "cache_read": p.cache_read, "cache_write": p.cache_write,
        })),
        "from": e.source.to_string(),
    })
}

/// The whole catalog as JSON.
pub fn to_json(catalog: &ModelCatalog) -> Value {
    json!({
        "default": choice_json(catalog, &catalog.default),
        "small": choice_json(catalog, &catalog.small),
        "providers": catalog.providers.iter().map(provider_json).collect::<Vec<_>>(),
        "models": catalog.entries.iter().map(entry_json).collect::<Vec<_>>(),
    })
}

fn choice_line(catalog: &ModelCatalog, name: &str, choice: &Option<Sourced<ModelId>>) -> String {
    match choice {
        None => format!("{name:<8} (none; set [model] {name} or --model)\n"),
        Some(s) if catalog.entry(&s.value).is_none() => format!(
            "{name:<8} {}  (from {}; not in the catalog, so its limits are unknown: add [models.\"{}\"])\n",
            s.value, s.origin, s.value
        ),
        Some(s) => format!("{name:<8} {}  (from {})\n", s.value, s.origin),
    }
}

fn tokens(n: u64) -> String {
    if n >= 1_000_000 && n.is_multiple_of(1_000_000) {
        format!("{}M", n / 1_000_000)
    } else if n >= 10_000 {
        format!("{}k", n / 1000)
    } else {
        n.to_string()
    }
}

/// The catalog as text: choices, providers, then models.
pub fn to_text(catalog: &ModelCatalog) -> String {
    let mut out = String::new();
    out.push_str(&choice_line(catalog, "default", &catalog.default));
    out.push_str(&choice_line(catalog, "small", &catalog.small));
    out.push_str("\nproviders:\n");
    out.push_str(&format!(
        "  {:<10} {:<17} {:<45} {:<30} {}\n",
        "NAME", "KIND", "BASE URL", "KEY", "FROM"
    ));
    for p in &catalog.providers {
        let key = match &p.spec.api_key_env {
            Some(var) if key_set(var) => format!("{var} (set)"),
            Some(var) => format!("{var} (unset)"),
            None => "-".to_owned(),
        };
        out.push_str(&format!(
            "  {:<10} {:<17} {:<45} {:<30} {}\n",
            p.spec.name,
            p.spec.kind.as_str(),
            p.spec.base_url.as_deref().unwrap_or("(configure base_url)"),
            key,
            p.source
        ));
    }
    out.push_str("\nmodels:\n");
    out.push_str(&format!(
        "  {:<52} {:>7} {:>7}  {:<26} {:>12}  {}\n",
        "ID", "CONTEXT", "MAX OUT", "INPUT", "$/M IN/OUT", "FROM"
    ));
    for e in &catalog.entries {
        let m = &e.entry;
        let input: Vec<&str> = m.input.iter().map(|i| i.as_str()).collect();
        let prices = m
            .prices
            .map_or("-".to_owned(), |p| format!("{}/{}", p.input, p.output));
        out.push_str(&format!(
            "  {:<52} {:>7} {:>7}  {:<26} {:>12}  {}\n",
            m.id.to_string(),
            tokens(m.context_window),
            tokens(m.max_output),
            input.join(","),
            prices,
            e.source
        ));
    }
    out
}

pub fn print(catalog: &ModelCatalog, json_out: bool) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    if json_out {
        let text = serde_json::to_string_pretty(&to_json(catalog)).context("encoding json")?;
        writeln!(out, "{text}").context("writing stdout")?;
    } else {
        write!(out, "{}", to_text(catalog)).context("writing stdout")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tackle_config::models::{ModelCatalog, resolve};
    use tackle_config::settings::{LoadedFile, Settings};

    fn user(text: &str) -> (tempfile::TempDir, ModelCatalog) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, text).unwrap();
        let f = LoadedFile::load(&path).unwrap().unwrap();
        let mut s = Settings::defaults(400, 30_000);
        s.apply_file(&f);
        s.apply_user_catalog(&f);
        (dir, resolve(&s).unwrap())
    }

    #[test]
    fn the_listing_names_key_variables_never_values() {
        let (_d, c) = user(
            "[providers.local]\nkind = \"openai-responses\"\nbase_url = \"http://127.0.0.1:9/v1\"\napi_key_env = \"TACKLE_MODELS_TEST_UNSET_VAR\"\n",
        );
        let v = to_json(&c);
        let local = v["providers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == "local")
            .unwrap();
        assert_eq!(local["api_key_env"], "TACKLE_MODELS_TEST_UNSET_VAR");
        assert_eq!(local["key_set"], false);
        let text = to_text(&c);
        assert!(
            text.contains("TACKLE_MODELS_TEST_UNSET_VAR (unset)"),
            "{text}"
        );
    }
}
