//! The Anthropic Messages API (`POST {base}/v1/messages`, streaming), and the endpoints that
//! speak it (llama.cpp's server, MiniMax and other Anthropic-compatible APIs) by base URL.

mod error;
pub(crate) mod request;
mod stream;

pub use request::request_body;
pub(crate) use request::tool_use_id;

use async_trait::async_trait;
use http::{HeaderName, HeaderValue};

use crate::credentials::KeySource;
use crate::endpoint::{Endpoint, KeyHeader, TurnPost, header_value};
use crate::error::LlmError;
use crate::provider::Provider;
use crate::request::TurnRequest;
use crate::transport::{Transport, TurnStream};

/// Where and how to reach a Messages API endpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnthropicConfig {
    /// The provider's name in errors (`anthropic`, `local`).
    pub name: String,
    /// The API root, without `/v1/messages` (`https://api.anthropic.com`).
    pub base_url: String,
    /// `None` for a local endpoint that takes no key.
    pub key: Option<KeySource>,
    /// The `anthropic-version` header.
    pub version: String,
    /// `anthropic-beta` features, joined with commas.
    pub betas: Vec<String>,
}

impl AnthropicConfig {
    /// Anthropic's own API with `ANTHROPIC_API_KEY`.
    pub fn official() -> Self {
        Self {
            name: "anthropic".into(),
            base_url: crate::catalog::ANTHROPIC_API.into(),
            key: Some(KeySource::env("ANTHROPIC_API_KEY")),
            version: "2023-06-01".into(),
            betas: Vec::new(),
        }
    }
}

/// A Messages API provider.
#[derive(Debug)]
pub struct Anthropic {
    config: AnthropicConfig,
    endpoint: Endpoint,
}

impl Anthropic {
    /// Reads the key from its variable now, so a missing one is reported before any turn.
    pub fn new(config: AnthropicConfig, transport: Transport) -> Result<Self, LlmError> {
        let endpoint = Endpoint::new(
            &config.name,
            &config.base_url,
            config.key.as_ref(),
            KeyHeader::Named("x-api-key"),
            transport,
        )?;
        Ok(Self { config, endpoint })
    }

    /// The JSON body a turn for `request` sends (what [`Provider::stream`] posts), for
    /// inspection and the request-build benchmark.
    pub fn body(&self, request: &TurnRequest) -> serde_json::Value {
        let names = request.tool_names();
        request_body(request, &names)
    }

    fn extra_headers(&self) -> Vec<(HeaderName, HeaderValue)> {
        let mut headers = Vec::new();
        if let Some(v) = header_value(&self.config.version) {
            headers.push((HeaderName::from_static("anthropic-version"), v));
        }
        if !self.config.betas.is_empty()
            && let Some(v) = header_value(&self.config.betas.join(","))
        {
            headers.push((HeaderName::from_static("anthropic-beta"), v));
        }
        headers
    }
}

#[async_trait]
impl Provider for Anthropic {
    fn name(&self) -> &str {
        self.endpoint.name()
    }

    async fn stream(&self, request: &TurnRequest) -> Result<TurnStream, LlmError> {
        let names = request.tool_names();
        let body = request_body(request, &names);
        self.endpoint
            .stream(TurnPost {
                path: "/v1/messages",
                query: &[],
                model: &request.model,
                extra_headers: self.extra_headers(),
                body,
                classify: error::classify,
                lift: stream::AnthropicLift::new(names),
            })
            .await
    }
}
