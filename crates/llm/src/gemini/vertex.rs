//! Gemini on Vertex AI: `POST https://{location}-aiplatform.googleapis.com/v1/projects/
//! {project}/locations/{location}/publishers/google/models/{model}:streamGenerateContent?alt=sse`
//! (`aiplatform.googleapis.com` for the `global` location) with `Authorization: Bearer`.
//!
//! The token comes from a variable (`VERTEX_ACCESS_TOKEN` unless the provider names another
//! in `api_key_env`; `GOOGLE_OAUTH_ACCESS_TOKEN` is not read behind the user's back, name it
//! there to use it) or from `token_command`, which is run again, and the turn sent once more,
//! when a turn is refused with 401.

use async_trait::async_trait;

use crate::endpoint::{Endpoint, KeyHeader};
use crate::error::{ErrorContext, ErrorKind, LlmError};
use crate::provider::Provider;
use crate::request::TurnRequest;
use crate::transport::{Transport, TurnStream};

use crate::token::{TokenHelp, TokenSource, Tokens};

use super::{is_url_segment, model_segment, send};

/// The variable a Vertex token is read from when the provider names none.
pub const DEFAULT_TOKEN_ENV: &str = "VERTEX_ACCESS_TOKEN";

const HELP: TokenHelp = TokenHelp {
    example: &["gcloud", "auth", "print-access-token"],
    login: "gcloud auth login",
};

/// Where and how to reach Vertex AI.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VertexConfig {
    /// The provider's name in errors (`vertex`).
    pub name: String,
    pub project: String,
    /// A region (`us-central1`) or `global`.
    pub location: String,
    /// The API root; `None` derives it from the location.
    pub base_url: Option<String>,
    pub token: TokenSource,
}

impl VertexConfig {
    /// The host the location's requests go to.
    pub fn default_base_url(location: &str) -> String {
        if location == "global" {
            "https://aiplatform.googleapis.com".into()
        } else {
            format!("https://{location}-aiplatform.googleapis.com")
        }
    }
}

/// A Vertex AI Gemini provider.
#[derive(Debug)]
pub struct Vertex {
    project: String,
    location: String,
    endpoint: Endpoint,
    tokens: Tokens,
}

impl Vertex {
    /// Checks project and location (they become part of the URL) and reads a token variable
    /// now; a token command first runs at the first turn.
    pub fn new(config: VertexConfig, transport: Transport) -> Result<Self, LlmError> {
        let ctx = ErrorContext {
            provider: config.name.clone(),
            model: "-".into(),
        };
        // Domain-scoped projects are `example.com:project`.
        let project_ok = !config.project.is_empty()
            && config
                .project
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b':'));
        if !project_ok {
            return Err(ctx.error(
                ErrorKind::Configuration,
                format!(
                    "vertex project `{}` is not a google cloud project id; set project in [providers.{}]",
                    config.project, config.name
                ),
            ));
        }
        let location_ok = is_url_segment(&config.location)
            && config
                .location
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        if !location_ok {
            return Err(ctx.error(
                ErrorKind::Configuration,
                format!(
                    "vertex location `{}` is not a region (us-central1) or global; set location in [providers.{}]",
                    config.location, config.name
                ),
            ));
        }
        let base_url = config
            .base_url
            .clone()
            .unwrap_or_else(|| VertexConfig::default_base_url(&config.location));
        let tokens = Tokens::new(config.token, HELP, &ctx)?;
        let endpoint = Endpoint::new(&config.name, &base_url, None, KeyHeader::Bearer, transport)?;
        Ok(Self {
            project: config.project,
            location: config.location,
            endpoint,
            tokens,
        })
    }

    fn path(&self, model: &str) -> String {
        format!(
            "/v1/projects/{}/locations/{}/publishers/google/models/{model}:streamGenerateContent",
            self.project, self.location
        )
    }
}

#[async_trait]
impl Provider for Vertex {
    fn name(&self) -> &str {
        self.endpoint.name()
    }

    async fn stream(&self, request: &TurnRequest) -> Result<TurnStream, LlmError> {
        let ctx = self.endpoint.context(&request.model);
        let path = self.path(model_segment(&ctx, &request.model)?);
        let path = &path;
        self.tokens
            .send(&ctx, |token| {
                Box::pin(
                    async move { send(&self.endpoint, path.clone(), request, Some(&token)).await },
                )
            })
            .await
    }
}
