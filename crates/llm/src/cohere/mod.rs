//! Cohere's v2 Chat API (`POST {base}/v2/chat` with `stream: true`, `Authorization: Bearer`).
//!
//! Cohere's shape is close to Chat Completions (OpenAI-style `tools` and `tool_calls`, `tool`
//! messages) but its stream is its own: events typed `message-start`, `content-*`,
//! `tool-plan-delta`, `tool-call-*` and `message-end`, which carries the finish reason and the
//! usage. Rejected alternative: Cohere's OpenAI-compatible endpoint, which drops the tool plan,
//! the thinking blocks and the billed units.

mod error;
pub(crate) mod request;
mod stream;
mod wire;

pub use request::request_body;

use async_trait::async_trait;

use crate::credentials::KeySource;
use crate::endpoint::{Endpoint, KeyHeader, TurnPost};
use crate::error::LlmError;
use crate::provider::Provider;
use crate::request::TurnRequest;
use crate::transport::{Transport, TurnStream};

/// The variable Cohere's key is read from when the provider names none.
pub const COHERE_KEY_ENV: &str = "COHERE_API_KEY";

/// Where and how to reach a Cohere v2 Chat endpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CohereConfig {
    /// The provider's name in errors (`cohere`).
    pub name: String,
    /// The API root, without `/v2/chat` (`https://api.cohere.com`).
    pub base_url: String,
    pub key: Option<KeySource>,
}

impl CohereConfig {
    /// Cohere's own API with `COHERE_API_KEY`.
    pub fn official() -> Self {
        Self {
            name: "cohere".into(),
            base_url: "https://api.cohere.com".into(),
            key: Some(KeySource::env(COHERE_KEY_ENV)),
        }
    }
}

/// A Cohere v2 Chat provider.
#[derive(Debug)]
pub struct Cohere {
    endpoint: Endpoint,
}

impl Cohere {
    /// Reads the key from its variable now, so a missing one is reported before any turn.
    pub fn new(config: CohereConfig, transport: Transport) -> Result<Self, LlmError> {
        let endpoint = Endpoint::new(
            &config.name,
            &config.base_url,
            config.key.as_ref(),
            KeyHeader::Bearer,
            transport,
        )?;
        Ok(Self { endpoint })
    }
}

#[async_trait]
impl Provider for Cohere {
    fn name(&self) -> &str {
        self.endpoint.name()
    }

    async fn stream(&self, request: &TurnRequest) -> Result<TurnStream, LlmError> {
        let names = request.tool_names();
        let body = request_body(request, &names);
        self.endpoint
            .stream(TurnPost {
                path: "/v2/chat",
                query: &[],
                model: &request.model,
                extra_headers: Vec::new(),
                body,
                classify: error::classify,
                lift: stream::CohereLift::new(names, request.model.clone()),
            })
            .await
    }
}
