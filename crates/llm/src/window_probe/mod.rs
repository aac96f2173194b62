//! How large a local server's window really is, asked of the server itself: llama.cpp's
//! `GET /props`, vLLM's `GET /v1/models` (`max_model_len`), LM Studio's `GET /api/v0/models`
//! (`loaded_context_length`, `max_context_length`) and Ollama's `POST /api/show` (the model's
//! `<arch>.context_length` and the `num_ctx` it runs with), for a model the catalog does not
//! know. Which server it is, is read from the answers themselves.
//!
//! Owns [`ProbeTarget`] (which providers are asked, and where: only the configured base URL,
//! with `/v1` taken off for the servers' own paths), [`probe`] (the questions in order, each
//! bounded in time and size), the readers of each server's answer (`answers.rs`, pure
//! functions tested on recorded answers) and [`WindowCache`] (what was learned, per base URL
//! and model, for a day). **Refuses** to ask a hosted vendor's default endpoint (OpenAI,
//! Anthropic: they publish no window and the catalog knows their models), any kind local
//! servers do not speak, or any URL but the configured one: no redirect is followed, and the
//! provider's key goes only where its turns go.
//!
//! Key decision: ask, then fall back. A wrong window is worse than a guessed one only when it
//! is larger than the real one (Ollama cuts the front of a prompt that does not fit, without a
//! word), so where a server names several sizes the smallest wins, and an Ollama model whose
//! `num_ctx` nothing sets gets Ollama's default, not the model's maximum. Rejected: finding
//! the window by sending ever longer prompts until one is refused: slow, it spends the
//! server's time on nothing, and Ollama never refuses.

mod answers;
mod cache;
mod fetch;
mod target;

pub use cache::{CacheError, CachedWindow, WindowCache};
pub use target::ProbeTarget;

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use answers::{Recognised, ServerAnswer};
use fetch::{Fetched, Fetcher};

/// A local server tackle knows how to ask.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ServerKind {
    #[serde(rename = "llama.cpp")]
    LlamaCpp,
    #[serde(rename = "ollama")]
    Ollama,
    #[serde(rename = "vllm")]
    Vllm,
    #[serde(rename = "lm-studio")]
    LmStudio,
}

impl ServerKind {
    /// The stable name used in JSON and the cache.
    pub fn as_str(self) -> &'static str {
        match self {
            ServerKind::LlamaCpp => "llama.cpp",
            ServerKind::Ollama => "ollama",
            ServerKind::Vllm => "vllm",
            ServerKind::LmStudio => "lm-studio",
        }
    }

    /// The server's own name, for people.
    pub fn name(self) -> &'static str {
        match self {
            ServerKind::LlamaCpp => "llama.cpp",
            ServerKind::Ollama => "Ollama",
            ServerKind::Vllm => "vLLM",
            ServerKind::LmStudio => "LM Studio",
        }
    }
}

impl fmt::Display for ServerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a size a server named stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SizeMeaning {
    /// The context the server runs the model with: a longer request is refused or cut.
    Serving,
    /// The context the server runs the model with when nothing sets another, which the server
    /// does not state (Ollama's default `num_ctx`): tackle's knowledge of the server.
    ServingDefault,
    /// The most the model itself takes (what it was trained for, or the most it may be loaded
    /// with).
    ModelMaximum,
}

impl SizeMeaning {
    pub fn as_str(self) -> &'static str {
        match self {
            SizeMeaning::Serving => "serving",
            SizeMeaning::ServingDefault => "serving_default",
            SizeMeaning::ModelMaximum => "model_maximum",
        }
    }
}

/// One size a server named, and where.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NamedSize {
    pub tokens: u64,
    pub meaning: SizeMeaning,
    /// Where it was read: `GET /props: default_generation_settings.n_ctx`.
    pub source: String,
}

/// What a server said about a model's window.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LearnedWindow {
    pub server: ServerKind,
    /// The model as the server names it (llama.cpp's alias, vLLM's served name, Ollama's
    /// `name:tag`).
    pub model: String,
    /// The tokens a request may take: the smallest of `sizes`.
    pub window: u64,
    /// Every size the server named (never empty).
    pub sizes: Vec<NamedSize>,
    /// What the sizes do not settle, when something (an LM Studio model that is not loaded
    /// gets the context length LM Studio loads it with, which may be smaller).
    pub caveat: Option<String>,
}

impl LearnedWindow {
    fn new(
        server: ServerKind,
        model: String,
        sizes: Vec<NamedSize>,
        caveat: Option<String>,
    ) -> Option<Self> {
        let window = sizes.iter().map(|s| s.tokens).min()?;
        Some(Self {
            server,
            model,
            window,
            sizes,
            caveat,
        })
    }

    /// The size the window is, with where it came from (`None` only for a window built by
    /// hand that none of its sizes is).
    pub fn deciding(&self) -> Option<&NamedSize> {
        self.sizes.iter().find(|s| s.tokens == self.window)
    }
}

/// How long each question may take and how much of an answer is read.
#[derive(Clone, Debug)]
pub struct ProbeLimits {
    /// One request, connection and whole body included.
    pub timeout: Duration,
    /// The most of one answer read (llama.cpp's `/props` carries the chat template, Ollama's
    /// `/api/show` the license).
    pub max_body: usize,
}

impl Default for ProbeLimits {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(2),
            max_body: 4 << 20,
        }
    }
}

/// Why no window was learned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProbeError {
    pub kind: ProbeErrorKind,
    /// What happened and what to do, lowercase.
    pub message: String,
}

/// The class of a [`ProbeError`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProbeErrorKind {
    /// The provider is not one tackle asks (a hosted vendor, a kind no local server speaks,
    /// no base URL).
    NotProbed,
    /// Nothing answered at the base URL in time.
    Unreachable,
    /// Answers came, none from a server tackle knows, or none that names a window.
    NoKnownServer,
    /// A known server answered, and it does not serve the model.
    ModelNotServed,
    /// The server refused the questions for want of a key.
    NeedsKey,
}

impl ProbeErrorKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ProbeErrorKind::NotProbed => "not_probed",
            ProbeErrorKind::Unreachable => "unreachable",
            ProbeErrorKind::NoKnownServer => "no_known_server",
            ProbeErrorKind::ModelNotServed => "model_not_served",
            ProbeErrorKind::NeedsKey => "needs_key",
        }
    }
}

impl ProbeError {
    fn new(kind: ProbeErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }
}

impl fmt::Display for ProbeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ProbeError {}

/// One question, as the messages name it.
struct Question {
    method: &'static str,
    /// The path as shown (`/props`); the URL asked is the target's.
    shown: String,
    url: reqwest::Url,
    body: Option<serde_json::Value>,
}

/// Asks the server at `target` for `model`'s window: llama.cpp's `/props`, then the models list
/// under the base URL (vLLM, or llama.cpp where `/props` is closed), LM Studio's, then
/// Ollama's `/api/show`. The first server that recognisably answers decides: its window, or
/// that it does not serve the model. Nothing answering in time ends the probe at once.
pub async fn probe(
    target: &ProbeTarget,
    model: &str,
    limits: &ProbeLimits,
) -> Result<LearnedWindow, ProbeError> {
    let fetcher = Fetcher::new(target, limits)?;
    let mut outcomes: Vec<String> = Vec::new();
    let mut refused_for_key = false;
    let questions = [
        (
            target.question("GET", "/props"),
            answers::llama_props as Reader,
        ),
        (target.models_question(), answers::models_list as Reader),
        (
            target.question("GET", "/api/v0/models"),
            answers::lm_studio_models as Reader,
        ),
        (
            target.question_with("POST", "/api/show", serde_json::json!({ "model": model })),
            answers::ollama_show as Reader,
        ),
    ];
    for (question, read) in questions {
        let fetched = fetcher.fetch(&question).await?;
        if let Fetched::Answer {
            status: 401 | 403, ..
        } = fetched
        {
            refused_for_key = true;
        }
        match read(&fetched, model) {
            Recognised::Window(answer) => {
                return finish(&fetcher, target, model, answer).await;
            }
            Recognised::NotServed { server, served } => {
                return Err(not_served(target, server, model, &served));
            }
            Recognised::No(why) => {
                outcomes.push(format!("{} {} {why}", question.method, question.shown))
            }
        }
    }
    if refused_for_key {
        return Err(ProbeError::new(
            ProbeErrorKind::NeedsKey,
            format!(
                "{} refused the questions for want of a key ({}); {}",
                target.shown(),
                outcomes.join(", "),
                target.key_advice()
            ),
        ));
    }
    Err(ProbeError::new(
        ProbeErrorKind::NoKnownServer,
        format!(
            "no llama.cpp, Ollama, vLLM or LM Studio answer naming a window at {} ({}); a [models.\"{}:{model}\"] table with its context_window says it instead",
            target.shown(),
            outcomes.join(", "),
            target.provider()
        ),
    ))
}

type Reader = fn(&Fetched, &str) -> Recognised;

/// The window of a recognised answer; Ollama's needs the context it runs the model with, which
/// `/api/show` does not say unless the model's parameters set it.
async fn finish(
    fetcher: &Fetcher,
    target: &ProbeTarget,
    model: &str,
    answer: ServerAnswer,
) -> Result<LearnedWindow, ProbeError> {
    let mut sizes = answer.sizes;
    if answer.server == ServerKind::Ollama
        && !sizes.iter().any(|s| s.meaning == SizeMeaning::Serving)
    {
        let loaded = match fetcher.fetch(&target.question("GET", "/api/ps")).await {
            Ok(fetched) => answers::ollama_loaded(&fetched, &answer.model),
            Err(_) => None,
        };
        let size = match loaded {
            Some(size) => size,
            None => {
                let version = match fetcher.fetch(&target.question("GET", "/api/version")).await {
                    Ok(fetched) => answers::ollama_version(&fetched),
                    Err(_) => None,
                };
                answers::ollama_default_context(version.as_deref())
            }
        };
        sizes.insert(0, size);
    }
    LearnedWindow::new(answer.server, answer.model, sizes, answer.caveat).ok_or_else(|| {
        ProbeError::new(
            ProbeErrorKind::NoKnownServer,
            format!(
                "{} at {} named no window for `{model}`",
                answer.server,
                target.shown()
            ),
        )
    })
}

fn not_served(
    target: &ProbeTarget,
    server: ServerKind,
    model: &str,
    served: &[String],
) -> ProbeError {
    let message = if served.is_empty() {
        format!(
            "{server} at {} has no model `{model}`; {}",
            target.shown(),
            match server {
                ServerKind::Ollama =>
                    format!("pull it (ollama pull {model}) or use a name ollama list shows"),
                _ => "use the name the server serves it under".to_owned(),
            }
        )
    } else {
        let names: Vec<String> = served.iter().take(8).map(|n| format!("`{n}`")).collect();
        let more = if served.len() > 8 { ", …" } else { "" };
        format!(
            "{server} at {} serves {}{more}, not `{model}`; use one of those names (--model {}:<name>)",
            target.shown(),
            names.join(", "),
            target.provider()
        )
    };
    ProbeError::new(ProbeErrorKind::ModelNotServed, message)
}
