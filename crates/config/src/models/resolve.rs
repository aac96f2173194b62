//! Settings → [`ModelCatalog`]: every provider table, model table and model reference checked,
//! each error naming the table, where it is written, and the fix.

use crate::{bail, config_error};
use tackle_llm::catalog::{
    MediaLimit, Modality, ModelEntry, ModelId, Prices, ProviderKind, UnknownKind, builtin_models,
    builtin_providers,
};

use super::{CatalogEntry, CatalogProvider, EntrySource, ModelCatalog};
use crate::settings::{
    MediaSection, ModelEntrySection, Origin, PricesSection, ProviderSection, Settings, Sourced,
    nearest,
};

/// Resolves the catalog of `settings`.
pub fn resolve(settings: &Settings) -> crate::Result<ModelCatalog> {
    let mut providers: Vec<CatalogProvider> = builtin_providers()
        .into_iter()
        .map(|spec| CatalogProvider {
            spec,
            source: EntrySource::BuiltIn,
        })
        .collect();
    for (name, table) in &settings.providers {
        apply_provider(&mut providers, name, table)?;
    }
    let mut entries: Vec<CatalogEntry> = builtin_models()
        .into_iter()
        .map(|entry| CatalogEntry {
            entry,
            source: EntrySource::BuiltIn,
        })
        .collect();
    for (id, table) in &settings.model_entries {
        apply_model(&mut entries, &providers, id, table)?;
    }
    entries.sort_by_key(|e| e.entry.id.to_string());
    let reference = |s: &Option<Sourced<String>>, key: &str| {
        s.as_ref()
            .map(|s| model_ref(s, &entries, &providers, key))
            .transpose()
    };
    let default = reference(&settings.model_default, "[model] default")?;
    let small = reference(&settings.model_small, "[model] small")?;
    Ok(ModelCatalog {
        providers,
        entries,
        default,
        small,
    })
}

fn is_provider_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
}

fn is_env_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

fn is_region_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

fn apply_provider(
    providers: &mut Vec<CatalogProvider>,
    name: &str,
    table: &Sourced<ProviderSection>,
) -> crate::Result<()> {
    let at = &table.origin;
    let t = &table.value;
    if !is_provider_name(name) {
        bail!(
            "[providers.{name}] ({at}): a provider name is lowercase letters, digits, `-` and `_` (it is the part of a model id before the colon)"
        );
    }
    let kind = t
        .kind
        .as_ref()
        .map(|k| {
            k.get_ref()
                .parse::<ProviderKind>()
                .map_err(|e: UnknownKind| {
                    let hint = nearest(&e.0, &UnknownKind::valid())
                        .map(|n| format!("did you mean `{n}`? "))
                        .unwrap_or_default();
                    config_error!("[providers.{name}] ({at}): {e}; {hint}")
                })
        })
        .transpose()?;
    let base_url = t
        .base_url
        .as_ref()
        .map(|u| base_url(name, at, u.get_ref()))
        .transpose()?;
    let env_name = |key: &str, what: &str, v: &Option<toml::Spanned<String>>| {
        v.as_ref()
            .map(|v| {
                let v = v.get_ref();
                if is_env_name(v) {
                    Ok(v.clone())
                } else {
                    Err(config_error!(
                        "[providers.{name}] ({at}): {key} `{v}` is not an environment variable name; name the variable that holds the {what}, never the {what}"
                    ))
                }
            })
            .transpose()
    };
    let api_key_env = env_name("api_key_env", "key", &t.api_key_env)?;
    let project = t.project.as_ref().map(|v| v.get_ref().clone());
    let location = t.location.as_ref().map(|v| v.get_ref().clone());
    let token_command = t.token_command.as_ref().map(|v| v.get_ref().clone());
    if token_command
        .as_ref()
        .is_some_and(|argv| argv.first().is_none_or(String::is_empty))
    {
        bail!(
            "[providers.{name}] ({at}): token_command is empty; name a program and its arguments, e.g. [\"gcloud\", \"auth\", \"print-access-token\"]"
        );
    }
    let token_env = env_name("token_env", "token", &t.token_env)?;
    if token_env.is_some() && token_command.is_some() {
        bail!(
            "[providers.{name}] ({at}): token_env and token_command both say where the token comes from; keep one"
        );
    }
    let region = t
        .region
        .as_ref()
        .map(|r| {
            let r = r.get_ref();
            if is_region_name(r) {
                Ok(r.clone())
            } else {
                Err(config_error!(
                    "[providers.{name}] ({at}): region `{r}` is not a region name (lowercase letters, digits and `-`, like \"us-east-1\")"
                ))
            }
        })
        .transpose()?;
    let api_version = t
        .api_version
        .as_ref()
        .map(|v| {
            let v = v.get_ref();
            if !v.is_empty() && v.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.') {
                Ok(v.clone())
            } else {
                Err(config_error!(
                    "[providers.{name}] ({at}): api_version `{v}` is not an api version; use letters, digits, `-` and `.` (for example \"2024-10-21\")"
                ))
            }
        })
        .transpose()?;
    let source_origin = at.clone();
    match providers.iter_mut().find(|p| p.spec.name == name) {
        Some(existing) => {
            if let Some(kind) = kind {
                existing.spec.kind = kind;
            }
            if let Some(url) = base_url {
                existing.spec.base_url = Some(url);
            }
            let key_named_here = api_key_env.is_some();
            if let Some(var) = api_key_env {
                existing.spec.api_key_env = Some(var);
            }
            if project.is_some() {
                existing.spec.project = project;
            }
            if location.is_some() {
                existing.spec.location = location;
            }
            // A token named here replaces the built-in key and any other token source.
            if token_command.is_some() || token_env.is_some() {
                if !key_named_here && super::kind_keys::is_azure(existing.spec.kind) {
                    existing.spec.api_key_env = None;
                }
                existing.spec.token_command = token_command;
                existing.spec.token_env = token_env;
            }
            if let Some(region) = region {
                existing.spec.region = Some(region);
            }
            if let Some(version) = api_version {
                existing.spec.api_version = Some(version);
            }
            existing.source = match existing.source {
                EntrySource::BuiltIn => EntrySource::Override(source_origin),
                _ => EntrySource::User(source_origin),
            };
        }
        None => {
            let Some(kind) = kind else {
                bail!(
                    "[providers.{name}] ({at}) needs kind = one of {}",
                    UnknownKind::valid().join(", ")
                );
            };
            // Vertex derives its host from the location, Bedrock its URL from the region.
            if base_url.is_none() && kind != ProviderKind::Vertex && kind != ProviderKind::Bedrock {
                bail!(
                    "[providers.{name}] ({at}) needs base_url (for example \"http://127.0.0.1:8080/v1\")"
                );
            }
            providers.push(CatalogProvider {
                spec: tackle_llm::catalog::ProviderSpec {
                    name: name.to_owned(),
                    kind,
                    base_url,
                    api_key_env,
                    project,
                    location,
                    token_command,
                    token_env,
                    region,
                    api_version,
                },
                source: EntrySource::User(source_origin),
            });
        }
    }
    let spec = &providers
        .iter()
        .find(|p| p.spec.name == name)
        .map(|p| p.spec.clone());
    if let Some(spec) = spec {
        check_key_transport(name, at, spec)?;
        super::kind_keys::check(name, at, spec)?;
    }
    Ok(())
}

/// A base URL: http(s), no credentials in it, no trailing slash.
fn base_url(name: &str, at: &Origin, text: &str) -> crate::Result<String> {
    let url = url::Url::parse(text).map_err(|e| {
        config_error!("[providers.{name}] ({at}): base_url `{text}` is not a url: {e}")
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        bail!(
            "[providers.{name}] ({at}): base_url must be http or https, not `{}`",
            url.scheme()
        );
    }
    if !url.username().is_empty() || url.password().is_some() {
        bail!(
            "[providers.{name}] ({at}): base_url carries credentials; remove them and name the key's variable in api_key_env"
        );
    }
    Ok(text.trim_end_matches('/').to_owned())
}

/// A key is never sent in clear text beyond this machine.
fn check_key_transport(
    name: &str,
    at: &Origin,
    spec: &tackle_llm::catalog::ProviderSpec,
) -> crate::Result<()> {
    let credential = spec
        .api_key_env
        .as_ref()
        .map(|v| format!("the key in {v}"))
        .or_else(|| spec.token_env.as_ref().map(|v| format!("the token in {v}")))
        .or_else(|| {
            spec.token_command
                .as_ref()
                .map(|_| "the token_command's token".to_owned())
        });
    let (Some(url), Some(credential)) = (&spec.base_url, credential) else {
        return Ok(());
    };
    let Ok(parsed) = url::Url::parse(url) else {
        return Ok(());
    };
    let loopback = match parsed.host() {
        Some(url::Host::Domain(d)) => d == "localhost",
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    };
    if parsed.scheme() == "http" && !loopback {
        bail!(
            "[providers.{name}] ({at}): {credential} would travel in clear text to {url}; use https, or a loopback address for a local server"
        );
    }
    Ok(())
}

fn apply_model(
    entries: &mut Vec<CatalogEntry>,
    providers: &[CatalogProvider],
    id_text: &str,
    table: &Sourced<ModelEntrySection>,
) -> crate::Result<()> {
    let at = &table.origin;
    let t = &table.value;
    let id: ModelId = id_text
        .parse()
        .map_err(|e| config_error!("[models.\"{id_text}\"] ({at}): {e}"))?;
    known_provider(&id, providers, &format!("[models.\"{id_text}\"] ({at})"))?;
    let position = entries.iter().position(|e| e.entry.id == id);
    let mut entry = match position {
        Some(i) => entries[i].entry.clone(),
        None => {
            let (Some(window), Some(max_output)) = (&t.context_window, &t.max_output) else {
                bail!(
                    "[models.\"{id_text}\"] ({at}) is not a built-in entry, so it needs context_window and max_output"
                );
            };
            ModelEntry {
                id: id.clone(),
                context_window: *window.get_ref(),
                max_output: *max_output.get_ref(),
                input: vec![Modality::Text],
                media: Vec::new(),
                prices: None,
            }
        }
    };
    if let Some(w) = &t.context_window {
        entry.context_window = *w.get_ref();
    }
    if let Some(m) = &t.max_output {
        entry.max_output = *m.get_ref();
    }
    if let Some(input) = &t.input {
        entry.input = modalities(id_text, at, input.get_ref())?;
        // Limits of kinds the override no longer accepts go with them.
        let accepted = entry.input.clone();
        entry.media.retain(|(m, _)| accepted.contains(m));
    }
    if let Some(media) = &t.media {
        let kinds = [
            (Modality::Image, &media.image),
            (Modality::Pdf, &media.pdf),
            (Modality::Audio, &media.audio),
            (Modality::Video, &media.video),
        ];
        for (modality, section) in kinds {
            if let Some(section) = section {
                apply_media(&mut entry, modality, section, id_text, at)?;
            }
        }
    }
    if let Some(p) = &t.prices {
        entry.prices = Some(prices(entry.prices, p));
    }
    entry
        .check()
        .map_err(|e| config_error!("[models.\"{id_text}\"] ({at}): {}", e.problem))?;
    let source = match position {
        Some(i) if entries[i].source == EntrySource::BuiltIn => EntrySource::Override(at.clone()),
        _ => EntrySource::User(at.clone()),
    };
    let resolved = CatalogEntry { entry, source };
    match position {
        Some(i) => entries[i] = resolved,
        None => entries.push(resolved),
    }
    Ok(())
}

fn modalities(id: &str, at: &Origin, names: &[String]) -> crate::Result<Vec<Modality>> {
    let valid: Vec<&str> = Modality::ALL.iter().map(|m| m.as_str()).collect();
    let mut out = Vec::new();
    for name in names {
        let modality = name.parse::<Modality>().map_err(|e| {
            let hint = nearest(name, &valid)
                .map(|n| format!("; did you mean `{n}`?"))
                .unwrap_or_default();
            config_error!("[models.\"{id}\"] ({at}): {e}{hint}")
        })?;
        if !out.contains(&modality) {
            out.push(modality);
        }
    }
    Ok(out)
}

fn apply_media(
    entry: &mut ModelEntry,
    modality: Modality,
    section: &MediaSection,
    id: &str,
    at: &Origin,
) -> crate::Result<()> {
    let existing = entry.media_limit(modality);
    let max_bytes = section
        .max_bytes
        .as_ref()
        .map(|b| *b.get_ref())
        .or(existing.map(|l| l.max_bytes));
    let max_count = section
        .max_count
        .as_ref()
        .map(|c| *c.get_ref())
        .or(existing.map(|l| l.max_count));
    let (Some(max_bytes), Some(max_count)) = (max_bytes, max_count) else {
        bail!("[models.\"{id}\".media.{modality}] ({at}) needs max_bytes and max_count");
    };
    entry.media.retain(|(m, _)| *m != modality);
    entry.media.push((
        modality,
        MediaLimit {
            max_bytes,
            max_count,
        },
    ));
    Ok(())
}

fn prices(base: Option<Prices>, p: &PricesSection) -> Prices {
    let base = base.unwrap_or(Prices {
        input: 0.0,
        output: 0.0,
        cache_read: 0.0,
        cache_write: 0.0,
    });
    let pick = |v: &Option<toml::Spanned<f64>>, d: f64| v.as_ref().map_or(d, |v| *v.get_ref());
    Prices {
        input: pick(&p.input, base.input),
        output: pick(&p.output, base.output),
        cache_read: pick(&p.cache_read, base.cache_read),
        cache_write: pick(&p.cache_write, base.cache_write),
    }
}

fn known_provider(id: &ModelId, providers: &[CatalogProvider], what: &str) -> crate::Result<()> {
    if providers.iter().any(|p| p.spec.name == id.provider) {
        return Ok(());
    }
    let names: Vec<&str> = providers.iter().map(|p| p.spec.name.as_str()).collect();
    let hint = nearest(&id.provider, &names)
        .map(|n| format!("did you mean `{n}`? "))
        .unwrap_or_default();
    bail!(
        "{what}: no provider `{}`; {hint}(providers: {}; add a [providers.{}] table to your config for another endpoint)",
        id.provider,
        names.join(", "),
        id.provider
    )
}

fn model_ref(
    text: &Sourced<String>,
    entries: &[CatalogEntry],
    providers: &[CatalogProvider],
    key: &str,
) -> crate::Result<Sourced<ModelId>> {
    let what = format!("{key} ({})", text.origin);
    let id: ModelId = text
        .value
        .parse()
        .map_err(|e| config_error!("{what}: {e}; {}", configured(entries, providers)))?;
    known_provider(&id, providers, &what)
        .map_err(|e| config_error!("{e}; {}", configured(entries, providers)))?;
    Ok(Sourced::new(id, text.origin.clone()))
}

/// The models a reference may name, for an error about one that names none: the catalog's
/// entries of the configured providers, the first [`LISTED_MODELS`] of them.
fn configured(entries: &[CatalogEntry], providers: &[CatalogProvider]) -> String {
    let names: Vec<String> = entries
        .iter()
        .filter(|e| providers.iter().any(|p| p.spec.name == e.entry.id.provider))
        .map(|e| e.entry.id.to_string())
        .collect();
    let mut listed = names
        .iter()
        .take(LISTED_MODELS)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > LISTED_MODELS {
        listed.push_str(&format!(" and {} more", names.len() - LISTED_MODELS));
    }
    format!("configured models: {listed} (tackle models lists them)")
}

/// How many models an error about a model reference lists.
const LISTED_MODELS: usize = 12;
