//! The Anthropic Messages API (`POST {base}/v1/messages`, streaming), and the endpoints that
//! speak it (llama.cpp's server, MiniMax and other Anthropic-compatible APIs) by base URL.

mod error;
mod request;
mod stream;

pub use request::request_body;

use async_trait::async_trait;
use bytes::Bytes;
use http::{HeaderMap, HeaderValue};

use crate::credentials::{ApiKey, KeySource};
use crate::error::{ErrorContext, LlmError};
use crate::provider::Provider;
use crate::redact::Redactor;
use crate::request::TurnRequest;
use crate::tool_names::ToolNameMap;
use crate::transport::{StreamingPost, Transport, TurnStream, drive};

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
            base_url: "https://api.anthropic.com".into(),
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
    key: Option<ApiKey>,
    transport: Transport,
}

impl Anthropic {
    /// Reads the key from its variable now, so a missing one is reported before any turn.
    pub fn new(config: AnthropicConfig, transport: Transport) -> Result<Self, LlmError> {
        let ctx = ErrorContext {
            provider: config.name.clone(),
            model: "-".into(),
        };
        let key = config.key.as_ref().map(|k| k.load(&ctx)).transpose()?;
        Ok(Self {
            config,
            key,
            transport,
        })
    }

    fn headers(&self, ctx: &ErrorContext) -> Result<HeaderMap, LlmError> {
        let mut headers = HeaderMap::new();
        headers.insert(
            http::header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        headers.insert(
            http::header::ACCEPT,
            HeaderValue::from_static("text/event-stream"),
        );
        if let Ok(v) = HeaderValue::try_from(self.config.version.as_str()) {
            headers.insert("anthropic-version", v);
        }
        if !self.config.betas.is_empty()
            && let Ok(v) = HeaderValue::try_from(self.config.betas.join(","))
        {
            headers.insert("anthropic-beta", v);
        }
        if let Some(key) = &self.key {
            headers.insert("x-api-key", key.header("", ctx)?);
        }
        Ok(headers)
    }
}

#[async_trait]
impl Provider for Anthropic {
    fn name(&self) -> &str {
        &self.config.name
    }

    async fn stream(&self, request: &TurnRequest) -> Result<TurnStream, LlmError> {
        let ctx = ErrorContext {
            provider: self.config.name.clone(),
            model: request.model.clone(),
        };
        let redactor = Redactor::new(self.key.as_ref());
        let names = ToolNameMap::new(request.tools.iter().map(|t| t.name.as_str()));
        let body = request_body(request, &names);
        let post = StreamingPost {
            url: format!("{}/v1/messages", self.config.base_url.trim_end_matches('/')),
            headers: self.headers(&ctx)?,
            body: Bytes::from(body.to_string()),
            classify: error::classify,
            ctx,
        };
        let reader = self
            .transport
            .open(post)
            .await
            .map_err(|e| redactor.error(e))?;
        Ok(redactor.stream(drive(reader, stream::AnthropicLift::new(names))))
    }
}
