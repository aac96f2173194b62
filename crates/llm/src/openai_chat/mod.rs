//! OpenAI Chat Completions (`POST {base}/chat/completions`, streaming), and every endpoint
//! that speaks it by base URL: llama.cpp's server, vLLM, Ollama, OpenRouter, LM Studio.

pub(crate) mod error;
pub(crate) mod request;
mod stream;

pub use request::request_body;

use async_trait::async_trait;

use crate::credentials::KeySource;
use crate::endpoint::{Endpoint, Route, TurnPost};
use crate::error::LlmError;
use crate::provider::Provider;
use crate::request::TurnRequest;
use crate::token::{BearerToken, Tokens};
use crate::transport::{Transport, TurnStream};

/// Where and how to reach a Chat Completions endpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenAiChatConfig {
    /// The provider's name in errors (`openai`, `local`).
    pub name: String,
    /// The API root including its version (`https://api.openai.com/v1`).
    pub base_url: String,
    /// `None` for a local endpoint that takes no key.
    pub key: Option<KeySource>,
    /// A bearer token fetched per turn in place of `key` (Azure's Microsoft Entra ID tokens),
    /// fetched again and the turn sent once more after a 401.
    pub token: Option<BearerToken>,
    /// Where turns are posted under `base_url` and how the key travels: `/chat/completions` with a bearer
    /// token, except on hosts that serve the format elsewhere (see [`crate::azure`]).
    pub route: Route,
    /// Lower tool schemas to strict mode and send `strict: true`.
    pub strict_tools: bool,
    /// Ask for a final usage chunk (`stream_options.include_usage`).
    pub include_usage: bool,
    /// `max_completion_tokens` (OpenAI) or `max_tokens` (what compatible servers read).
    pub max_tokens_field: String,
}

impl OpenAiChatConfig {
    /// OpenAI's own API with `OPENAI_API_KEY`.
    pub fn official() -> Self {
        Self {
            name: "openai".into(),
            base_url: crate::catalog::OPENAI_API.into(),
            key: Some(KeySource::env("OPENAI_API_KEY")),
            token: None,
            route: Route::bearer("/chat/completions"),
            strict_tools: false,
            include_usage: true,
            max_tokens_field: "max_completion_tokens".into(),
        }
    }

    /// An OpenAI-compatible server at `base_url` (ending in its `/v1`), without a key.
    pub fn compatible(name: impl Into<String>, base_url: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            base_url: base_url.into(),
            key: None,
            token: None,
            route: Route::bearer("/chat/completions"),
            strict_tools: false,
            include_usage: true,
            max_tokens_field: "max_tokens".into(),
        }
    }
}

/// A Chat Completions provider.
#[derive(Debug)]
pub struct OpenAiChat {
    config: OpenAiChatConfig,
    endpoint: Endpoint,
    tokens: Option<Tokens>,
}

impl OpenAiChat {
    /// Reads the key from its variable now, so a missing one is reported before any turn.
    pub fn new(config: OpenAiChatConfig, transport: Transport) -> Result<Self, LlmError> {
        let endpoint = Endpoint::new(
            &config.name,
            &config.base_url,
            config.key.as_ref(),
            config.route.key_header,
            transport,
        )?;
        let tokens = config
            .token
            .clone()
            .map(|t| Tokens::new(t.source, t.help, &endpoint.context("-")))
            .transpose()?;
        Ok(Self {
            config,
            endpoint,
            tokens,
        })
    }

    /// The JSON body a turn for `request` sends (what [`Provider::stream`] posts), for
    /// inspection and the request-build benchmark.
    pub fn body(&self, request: &TurnRequest) -> serde_json::Value {
        let names = request.tool_names();
        request_body(&self.config, request, &names)
    }
}

#[async_trait]
impl Provider for OpenAiChat {
    fn name(&self) -> &str {
        self.endpoint.name()
    }

    async fn stream(&self, request: &TurnRequest) -> Result<TurnStream, LlmError> {
        let post = || {
            let names = request.tool_names();
            TurnPost {
                path: &self.config.route.path,
                query: &self.config.route.query,
                model: &request.model,
                extra_headers: Vec::new(),
                body: request_body(&self.config, request, &names),
                classify: error::classify,
                lift: stream::ChatLift::new(names),
            }
        };
        self.endpoint
            .stream_authorized(self.tokens.as_ref(), &request.model, post)
            .await
    }
}
