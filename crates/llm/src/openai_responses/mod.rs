//! OpenAI Responses (`POST {base}/responses`, streaming), and the servers that speak it by base
//! URL (llama.cpp's server, vLLM, OpenRouter).
//!
//! Requests are stateless (`store: false`): the whole conversation is sent every turn, and the
//! model's reasoning survives between turns only as the encrypted content the request asks for
//! (`include: ["reasoning.encrypted_content"]`). Rejected alternative: chaining turns with
//! `previous_response_id`, which keeps the conversation on the vendor's side, ties a session to
//! one account and cannot be replayed from tackle's own record.

pub(crate) mod request;
mod stream;

pub use request::request_body;

use async_trait::async_trait;

use crate::credentials::KeySource;
use crate::endpoint::{Endpoint, Route, TurnPost};
use crate::error::LlmError;
use crate::openai_chat::error::classify;
use crate::provider::Provider;
use crate::request::TurnRequest;
use crate::token::{BearerToken, Tokens};
use crate::transport::{Transport, TurnStream};

/// Where and how to reach a Responses endpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenAiResponsesConfig {
    /// The provider's name in errors (`openai`, `local`).
    pub name: String,
    /// The API root including its version (`https://api.openai.com/v1`).
    pub base_url: String,
    /// `None` for a local endpoint that takes no key.
    pub key: Option<KeySource>,
    /// A bearer token fetched per turn in place of `key` (Azure's Microsoft Entra ID tokens),
    /// fetched again and the turn sent once more after a 401.
    pub token: Option<BearerToken>,
    /// Where turns are posted under `base_url` and how the key travels: `/responses` with a bearer
    /// token, except on hosts that serve the format elsewhere (see [`crate::azure`]).
    pub route: Route,
    /// Lower tool schemas to strict mode and send `strict: true`.
    pub strict_tools: bool,
    /// Ask for reasoning items' encrypted content, so they can be replayed.
    pub include_reasoning: bool,
}

impl OpenAiResponsesConfig {
    /// OpenAI's own API with `OPENAI_API_KEY`.
    pub fn official() -> Self {
        Self {
            name: "openai".into(),
            base_url: crate::catalog::OPENAI_API.into(),
            key: Some(KeySource::env("OPENAI_API_KEY")),
            token: None,
            route: Route::bearer("/responses"),
            strict_tools: false,
            include_reasoning: true,
        }
    }

    /// A Responses-compatible server at `base_url` (ending in its `/v1`), without a key.
    pub fn compatible(name: impl Into<String>, base_url: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            base_url: base_url.into(),
            key: None,
            token: None,
            route: Route::bearer("/responses"),
            strict_tools: false,
            include_reasoning: false,
        }
    }
}

/// A Responses API provider.
#[derive(Debug)]
pub struct OpenAiResponses {
    config: OpenAiResponsesConfig,
    endpoint: Endpoint,
    tokens: Option<Tokens>,
}

impl OpenAiResponses {
    /// Reads the key from its variable now, so a missing one is reported before any turn.
    pub fn new(config: OpenAiResponsesConfig, transport: Transport) -> Result<Self, LlmError> {
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
impl Provider for OpenAiResponses {
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
                classify,
                lift: stream::ResponsesLift::new(names),
            }
        };
        self.endpoint
            .stream_authorized(self.tokens.as_ref(), &request.model, post)
            .await
    }
}
