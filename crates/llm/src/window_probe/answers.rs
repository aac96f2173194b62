//! Each server's answer read for a window: pure functions from what came back to what it says,
//! so every shape is tested on recorded answers (`tests/fixtures/window_probe/`).
//!
//! An answer is recognised by its shape, not by a header or a name it claims: llama.cpp's
//! `/props` has an `n_ctx`, vLLM's models carry `max_model_len`, LM Studio's
//! `max_context_length`, Ollama's `/api/show` a `model_info`. Anything else (another status,
//! another shape, a number that is no plausible window) is "not this server", never an error:
//! the next question may find the one that is. Bodies are bounded before they get here
//! (`fetch.rs`) and parsed by serde_json, whose recursion limit (128) bounds nesting.

use serde_json::Value;

use super::fetch::Fetched;
use super::{NamedSize, ServerKind, SizeMeaning};

/// The largest window believed (2^30 tokens); a larger number is no window.
pub(super) const MAX_WINDOW: u64 = 1 << 30;
/// The most characters of a name a server gives that are kept.
const MAX_NAME: usize = 200;

/// What one answer says.
#[derive(Debug)]
pub(super) enum Recognised {
    /// The server, and what it says of the model.
    Window(ServerAnswer),
    /// The server, which does not serve the model; the names it serves.
    NotServed {
        server: ServerKind,
        served: Vec<String>,
    },
    /// None of the known answers: why, for the message (`answered 404`).
    No(String),
}

/// A recognised server's sizes for the model.
#[derive(Debug)]
pub(super) struct ServerAnswer {
    pub server: ServerKind,
    pub model: String,
    pub sizes: Vec<NamedSize>,
    pub caveat: Option<String>,
}

/// The JSON of a 200 answer, or why there is none.
fn json(fetched: &Fetched) -> Result<Value, String> {
    match fetched {
        Fetched::Answer { status: 200, body } => {
            serde_json::from_slice(body).map_err(|_| "answered 200 with no json".to_owned())
        }
        Fetched::Answer { status, .. } => Err(format!("answered {status}")),
        Fetched::TooLarge { status, limit } => {
            Err(format!("answered {status} with over {limit} bytes"))
        }
        Fetched::Broken(why) => Err(why.clone()),
    }
}

/// A plausible window: a whole number of tokens from 1 to [`MAX_WINDOW`].
fn tokens(value: Option<&Value>) -> Option<u64> {
    value
        .and_then(Value::as_u64)
        .filter(|n| (1..=MAX_WINDOW).contains(n))
}

/// A name a server gave, cut to [`MAX_NAME`] characters.
fn name(value: Option<&Value>) -> Option<String> {
    value
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(|s| s.chars().take(MAX_NAME).collect())
}

fn size(tokens: u64, meaning: SizeMeaning, source: String) -> NamedSize {
    NamedSize {
        tokens,
        meaning,
        source,
    }
}

/// llama.cpp's `GET /props`: `default_generation_settings.n_ctx` (a slot's context, what a
/// request gets), else a top-level `n_ctx` (older servers). llama.cpp serves its one model
/// under any name, so the model asked for is not matched.
pub(super) fn llama_props(fetched: &Fetched, model: &str) -> Recognised {
    let value = match json(fetched) {
        Ok(v) => v,
        Err(why) => return Recognised::No(why),
    };
    let (n_ctx, field) = match tokens(value.pointer("/default_generation_settings/n_ctx")) {
        Some(n) => (n, "default_generation_settings.n_ctx"),
        None => match tokens(value.get("n_ctx")) {
            Some(n) => (n, "n_ctx"),
            None => return Recognised::No("answered 200 without n_ctx".into()),
        },
    };
    let served = name(value.get("model_alias"))
        .or_else(|| {
            name(value.get("model_path")).map(|p| p.rsplit('/').next().unwrap_or(&p).to_owned())
        })
        .unwrap_or_else(|| model.to_owned());
    Recognised::Window(ServerAnswer {
        server: ServerKind::LlamaCpp,
        model: served,
        sizes: vec![size(
            n_ctx,
            SizeMeaning::Serving,
            format!("GET /props: {field}"),
        )],
        caveat: None,
    })
}

/// The entries of a `{"data": [...]}` list.
fn entries(value: &Value) -> Option<&Vec<Value>> {
    value.get("data").and_then(Value::as_array)
}

fn ids(entries: &[&Value]) -> Vec<String> {
    entries.iter().filter_map(|e| name(e.get("id"))).collect()
}

/// The models list under the base URL (`GET /v1/models`): vLLM's entries carry
/// `max_model_len` (a LoRA adapter's is null: its base model's applies); llama.cpp's carry
/// `meta.n_ctx`, read here when `/props` was closed to the question. Other servers' lists name
/// no window.
pub(super) fn models_list(fetched: &Fetched, model: &str) -> Recognised {
    let value = match json(fetched) {
        Ok(v) => v,
        Err(why) => return Recognised::No(why),
    };
    let Some(list) = entries(&value) else {
        return Recognised::No("answered 200 without a model list".into());
    };
    let vllm: Vec<&Value> = list
        .iter()
        .filter(|e| {
            e.get("max_model_len").is_some()
                || e.get("owned_by").and_then(Value::as_str) == Some("vllm")
        })
        .collect();
    if !vllm.is_empty() {
        let found = vllm
            .iter()
            .find(|e| e.get("id").and_then(Value::as_str) == Some(model));
        let Some(entry) = found else {
            return Recognised::NotServed {
                server: ServerKind::Vllm,
                served: ids(&vllm),
            };
        };
        let (len, via) = match tokens(entry.get("max_model_len")) {
            Some(n) => (Some(n), None),
            // A LoRA adapter: its parent's length.
            None => {
                let parent = entry.get("parent").and_then(Value::as_str);
                let base = vllm
                    .iter()
                    .find(|e| parent.is_some() && e.get("id").and_then(Value::as_str) == parent);
                (
                    base.and_then(|b| tokens(b.get("max_model_len"))),
                    parent.map(|p| p.chars().take(MAX_NAME).collect::<String>()),
                )
            }
        };
        let Some(len) = len else {
            return Recognised::No(format!("answered 200 with no max_model_len for `{model}`"));
        };
        let source = match via {
            Some(parent) => {
                format!("GET /v1/models: max_model_len of `{parent}`, which `{model}` adapts")
            }
            None => "GET /v1/models: max_model_len".to_owned(),
        };
        return Recognised::Window(ServerAnswer {
            server: ServerKind::Vllm,
            model: model.to_owned(),
            sizes: vec![size(len, SizeMeaning::Serving, source)],
            caveat: None,
        });
    }
    let llama: Vec<&Value> = list
        .iter()
        .filter(|e| {
            e.get("owned_by").and_then(Value::as_str) == Some("llamacpp")
                && tokens(e.pointer("/meta/n_ctx")).is_some()
        })
        .collect();
    if !llama.is_empty() {
        let named = |e: &&&Value| {
            e.get("id").and_then(Value::as_str) == Some(model)
                || e.get("aliases")
                    .and_then(Value::as_array)
                    .is_some_and(|a| a.iter().any(|n| n.as_str() == Some(model)))
        };
        // One model is served under any name; of several, the one named.
        let entry = match llama.iter().find(named) {
            Some(e) => *e,
            None if llama.len() == 1 => llama[0],
            None => {
                return Recognised::NotServed {
                    server: ServerKind::LlamaCpp,
                    served: ids(&llama),
                };
            }
        };
        let Some(n_ctx) = tokens(entry.pointer("/meta/n_ctx")) else {
            return Recognised::No("answered 200 without meta.n_ctx".into());
        };
        return Recognised::Window(ServerAnswer {
            server: ServerKind::LlamaCpp,
            model: name(entry.get("id")).unwrap_or_else(|| model.to_owned()),
            sizes: vec![size(
                n_ctx,
                SizeMeaning::Serving,
                "GET /v1/models: meta.n_ctx".into(),
            )],
            caveat: None,
        });
    }
    Recognised::No("answered 200 listing models without a window".into())
}

/// LM Studio's `GET /api/v0/models`: every downloaded model with `max_context_length`, and a
/// loaded one with `loaded_context_length` (what a request gets). A model is asked for by its
/// id, optionally with a `@quantization` suffix, which a listed id may also carry.
pub(super) fn lm_studio_models(fetched: &Fetched, model: &str) -> Recognised {
    let value = match json(fetched) {
        Ok(v) => v,
        Err(why) => return Recognised::No(why),
    };
    let Some(list) = entries(&value) else {
        return Recognised::No("answered 200 without a model list".into());
    };
    let known: Vec<&Value> = list
        .iter()
        .filter(|e| {
            e.get("max_context_length").is_some() || e.get("loaded_context_length").is_some()
        })
        .collect();
    if known.is_empty() {
        return Recognised::No("answered 200 listing models without a window".into());
    }
    let id = |e: &Value| e.get("id").and_then(Value::as_str).unwrap_or("").to_owned();
    let bare = |s: &str| s.split('@').next().unwrap_or(s).to_owned();
    let matching: Vec<&Value> = {
        let exact: Vec<&Value> = known.iter().copied().filter(|e| id(e) == model).collect();
        if exact.is_empty() {
            known
                .iter()
                .copied()
                .filter(|e| bare(&id(e)) == bare(model))
                .collect()
        } else {
            exact
        }
    };
    // LM Studio may list a model twice (loaded and not); the loaded row says what a request gets.
    let loaded = |e: &Value| e.get("state").and_then(Value::as_str) == Some("loaded");
    let Some(entry) = matching
        .iter()
        .copied()
        .find(|e| loaded(e))
        .or_else(|| matching.first().copied())
    else {
        return Recognised::NotServed {
            server: ServerKind::LmStudio,
            served: ids(&known),
        };
    };
    let served = name(entry.get("id")).unwrap_or_else(|| model.to_owned());
    let mut sizes = Vec::new();
    if let Some(n) = tokens(entry.get("loaded_context_length")) {
        sizes.push(size(
            n,
            SizeMeaning::Serving,
            "GET /api/v0/models: loaded_context_length".into(),
        ));
    }
    if let Some(n) = tokens(entry.get("max_context_length")) {
        sizes.push(size(
            n,
            SizeMeaning::ModelMaximum,
            "GET /api/v0/models: max_context_length".into(),
        ));
    }
    if sizes.is_empty() {
        return Recognised::No(format!(
            "answered 200 with no context length for `{served}`"
        ));
    }
    let caveat = (!loaded(entry)).then(|| {
        format!(
            "`{served}` is not loaded, and LM Studio loads it with the context length its settings give, which can be smaller than the maximum; load it first (lms load {served} --context-length <n>) so the window is known"
        )
    });
    Recognised::Window(ServerAnswer {
        server: ServerKind::LmStudio,
        model: served,
        sizes,
        caveat,
    })
}

/// Ollama's `POST /api/show`: the model's own maximum (`model_info["<arch>.context_length"]`)
/// and the `num_ctx` its parameters set, if they do (the context it then runs with; else
/// [`ollama_loaded`] or Ollama's default decides). A 404 whose error is Ollama's "model '…' not
/// found" (older: `model "…" not found, try pulling it first`) is Ollama without the model.
pub(super) fn ollama_show(fetched: &Fetched, model: &str) -> Recognised {
    if let Fetched::Answer { status: 404, body } = fetched {
        let error = serde_json::from_slice::<Value>(body)
            .ok()
            .and_then(|v| v.get("error").and_then(Value::as_str).map(str::to_owned));
        if error.is_some_and(|e| e.starts_with("model ") && e.contains(" not found")) {
            return Recognised::NotServed {
                server: ServerKind::Ollama,
                served: Vec::new(),
            };
        }
    }
    let value = match json(fetched) {
        Ok(v) => v,
        Err(why) => return Recognised::No(why),
    };
    let Some(info) = value.get("model_info").and_then(Value::as_object) else {
        return Recognised::No("answered 200 without model_info".into());
    };
    let mut sizes = Vec::new();
    if let Some(num_ctx) = value
        .get("parameters")
        .and_then(Value::as_str)
        .and_then(num_ctx_parameter)
    {
        sizes.push(size(
            num_ctx,
            SizeMeaning::Serving,
            "POST /api/show: parameters num_ctx".into(),
        ));
    }
    let arch_key = info
        .get("general.architecture")
        .and_then(Value::as_str)
        .map(|arch| format!("{arch}.context_length"));
    let trained = arch_key
        .as_deref()
        .and_then(|key| tokens(info.get(key)).map(|n| (key.to_owned(), n)))
        .or_else(|| {
            info.iter()
                .find(|(k, v)| k.ends_with(".context_length") && tokens(Some(v)).is_some())
                .and_then(|(k, v)| tokens(Some(v)).map(|n| (k.clone(), n)))
        });
    if let Some((key, n)) = trained {
        let key: String = key.chars().take(MAX_NAME).collect();
        sizes.push(size(
            n,
            SizeMeaning::ModelMaximum,
            format!("POST /api/show: model_info[\"{key}\"]"),
        ));
    }
    Recognised::Window(ServerAnswer {
        server: ServerKind::Ollama,
        model: model.chars().take(MAX_NAME).collect(),
        sizes,
        caveat: None,
    })
}

/// The last `num_ctx` of Ollama's parameters text (`num_ctx                        8192`).
fn num_ctx_parameter(parameters: &str) -> Option<u64> {
    parameters
        .lines()
        .rev()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            (words.next() == Some("num_ctx")).then(|| words.next())?
        })
        .filter_map(|n| n.parse::<u64>().ok())
        .find(|n| (1..=MAX_WINDOW).contains(n))
}

/// Ollama's `GET /api/ps`: the context a loaded model runs with (`context_length`), when the
/// model is loaded. Ollama names models `name:tag`, `latest` when none is given.
pub(super) fn ollama_loaded(fetched: &Fetched, model: &str) -> Option<NamedSize> {
    let value = json(fetched).ok()?;
    let tagged = |n: &str| {
        if n.contains(':') {
            n.to_owned()
        } else {
            format!("{n}:latest")
        }
    };
    let want = tagged(model);
    value
        .get("models")?
        .as_array()?
        .iter()
        .filter(|m| {
            ["name", "model"].iter().any(|field| {
                m.get(*field)
                    .and_then(Value::as_str)
                    .is_some_and(|n| tagged(n) == want)
            })
        })
        .find_map(|m| tokens(m.get("context_length")))
        .map(|n| {
            size(
                n,
                SizeMeaning::Serving,
                "GET /api/ps: context_length (the model is loaded)".into(),
            )
        })
}

/// Ollama's `GET /api/version`.
pub(super) fn ollama_version(fetched: &Fetched) -> Option<String> {
    name(json(fetched).ok()?.get("version"))
}

/// The context Ollama gives a model when nothing sets `num_ctx`: 2048 before 0.6.7, 4096 since
/// (since 0.15.5 more on a machine with 24 GiB of VRAM or more, and `OLLAMA_CONTEXT_LENGTH`
/// on the server sets any: neither can be seen from here, and the smaller is the safe guess).
pub(super) fn ollama_default_context(version: Option<&str>) -> NamedSize {
    let old = version
        .and_then(parse_version)
        .is_some_and(|v| v < (0, 6, 7));
    let (tokens, since) = if old {
        (
            2048,
            format!("Ollama {}'s default num_ctx", version.unwrap_or("?")),
        )
    } else {
        (4096, "Ollama's default num_ctx".to_owned())
    };
    size(
        tokens,
        SizeMeaning::ServingDefault,
        format!(
            "{since}, as nothing sets another (a Modelfile's PARAMETER num_ctx or OLLAMA_CONTEXT_LENGTH on the server raises it; tackle then learns it once the model is loaded)"
        ),
    )
}

/// `0.6.7`, `0.12.3-rc1` → `(0, 6, 7)`, `(0, 12, 3)`.
fn parse_version(text: &str) -> Option<(u32, u32, u32)> {
    let mut parts = text
        .trim_start_matches('v')
        .split(|c: char| !c.is_ascii_digit())
        .map(|p| p.parse::<u32>().ok());
    Some((parts.next()??, parts.next()??, parts.next()??))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(body: serde_json::Value) -> Fetched {
        Fetched::Answer {
            status: 200,
            body: body.to_string().into_bytes(),
        }
    }

    fn window(r: Recognised) -> ServerAnswer {
        match r {
            Recognised::Window(a) => a,
            other => panic!("no window: {other:?}"),
        }
    }

    #[test]
    fn implausible_numbers_and_wrong_types_are_no_window() {
        for n_ctx in [
            serde_json::json!(0),
            serde_json::json!(-4096),
            serde_json::json!(4096.5),
            serde_json::json!("4096"),
            serde_json::json!(1u64 << 40),
            serde_json::json!(null),
            serde_json::json!([4096]),
        ] {
            let answer = ok(serde_json::json!({"default_generation_settings": {"n_ctx": n_ctx}}));
            assert!(
                matches!(llama_props(&answer, "m"), Recognised::No(_)),
                "{n_ctx}"
            );
        }
        for body in [
            &b"not json"[..],
            b"",
            b"[]",
            b"null",
            br#"{"data": "x"}"#,
            br#"{"data": [1, "two", null]}"#,
        ] {
            let fetched = Fetched::Answer {
                status: 200,
                body: body.to_vec(),
            };
            for read in [llama_props, models_list, lm_studio_models, ollama_show] {
                assert!(
                    matches!(read(&fetched, "m"), Recognised::No(_)),
                    "{}",
                    String::from_utf8_lossy(body)
                );
            }
        }
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        let fetched = Fetched::Answer {
            status: 200,
            body: deep.into_bytes(),
        };
        assert!(matches!(llama_props(&fetched, "m"), Recognised::No(_)));
    }

    #[test]
    fn ollama_sizes_from_parameters_model_info_and_ps() {
        let show = ok(serde_json::json!({
            "parameters": "num_keep 24\nnum_ctx                        8192\nstop \"<|im_end|>\"",
            "model_info": {"general.architecture": "qwen2", "qwen2.context_length": 32768}
        }));
        let a = window(ollama_show(&show, "qwen2.5-coder:7b"));
        let got: Vec<(u64, SizeMeaning)> = a.sizes.iter().map(|s| (s.tokens, s.meaning)).collect();
        assert_eq!(
            got,
            [
                (8192, SizeMeaning::Serving),
                (32768, SizeMeaning::ModelMaximum)
            ]
        );
        let not_found = Fetched::Answer {
            status: 404,
            body: br#"{"error":"model 'nope' not found"}"#.to_vec(),
        };
        assert!(matches!(
            ollama_show(&not_found, "nope"),
            Recognised::NotServed {
                server: ServerKind::Ollama,
                ..
            }
        ));
        let ps = ok(serde_json::json!({"models": [
            {"name": "other:latest", "context_length": 2048},
            {"name": "qwen3:latest", "model": "qwen3:latest", "context_length": 16384}
        ]}));
        assert_eq!(ollama_loaded(&ps, "qwen3").map(|s| s.tokens), Some(16384));
        assert_eq!(ollama_loaded(&ps, "qwen3:8b"), None);
        assert_eq!(ollama_default_context(Some("0.6.6")).tokens, 2048);
        assert_eq!(ollama_default_context(Some("0.12.3-rc1")).tokens, 4096);
        assert_eq!(ollama_default_context(Some("garbage")).tokens, 4096);
        assert_eq!(ollama_default_context(None).tokens, 4096);
    }

    #[test]
    fn a_lora_adapter_takes_its_base_models_length_and_names_are_cut() {
        let list = ok(serde_json::json!({"object": "list", "data": [
            {"id": "base", "owned_by": "vllm", "max_model_len": 8192, "parent": null},
            {"id": "sql-lora", "owned_by": "vllm", "max_model_len": null, "parent": "base"}
        ]}));
        let a = window(models_list(&list, "sql-lora"));
        assert_eq!((a.server, a.sizes[0].tokens), (ServerKind::Vllm, 8192));
        let long = "x".repeat(10_000);
        let list = ok(serde_json::json!({"data": [{"id": long, "max_model_len": 4096}]}));
        match models_list(&list, "m") {
            Recognised::NotServed { served, .. } => assert_eq!(served[0].len(), MAX_NAME),
            other => panic!("{other:?}"),
        }
    }
}
