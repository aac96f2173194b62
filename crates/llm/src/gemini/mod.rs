//! Google's `streamGenerateContent?alt=sse`, in its two deployments: the Gemini API
//! ([`Gemini`]: `x-goog-api-key`, never a `?key=` that an error naming the URL could show) and
//! Vertex AI ([`vertex::Vertex`]: a project and location in the URL, a bearer access token).
//! Both share the request body, the stream lifter and the error classes.

mod error;
pub(crate) mod request;
mod stream;
pub mod vertex;

pub use crate::token::TokenSource;
pub use request::{ToolSchemaError, request_body};
pub use vertex::{Vertex, VertexConfig};

use async_trait::async_trait;

use crate::credentials::{ApiKey, KeySource};
use crate::endpoint::{Endpoint, KeyHeader, TurnPost};
use crate::error::{ErrorContext, ErrorKind, LlmError};
use crate::provider::Provider;
use crate::request::TurnRequest;
use crate::transport::{Transport, TurnStream};

/// Where and how to reach the Gemini API.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GeminiConfig {
    /// The provider's name in errors (`gemini`).
    pub name: String,
    /// The API root, without `/v1beta` (`https://generativelanguage.googleapis.com`).
    pub base_url: String,
    pub key: Option<KeySource>,
}

impl GeminiConfig {
    /// Google's own endpoint with `GEMINI_API_KEY`.
    pub fn official() -> Self {
        Self {
            name: "gemini".into(),
            base_url: "https://generativelanguage.googleapis.com".into(),
            key: Some(KeySource::env("GEMINI_API_KEY")),
        }
    }
}

/// A Gemini API provider.
#[derive(Debug)]
pub struct Gemini {
    endpoint: Endpoint,
}

impl Gemini {
    /// Reads the key from its variable now, so a missing one is reported before any turn.
    pub fn new(config: GeminiConfig, transport: Transport) -> Result<Self, LlmError> {
        let endpoint = Endpoint::new(
            &config.name,
            &config.base_url,
            config.key.as_ref(),
            KeyHeader::Named("x-goog-api-key"),
            transport,
        )?;
        Ok(Self { endpoint })
    }
}

#[async_trait]
impl Provider for Gemini {
    fn name(&self) -> &str {
        self.endpoint.name()
    }

    async fn stream(&self, request: &TurnRequest) -> Result<TurnStream, LlmError> {
        let ctx = self.endpoint.context(&request.model);
        let path = format!(
            "/v1beta/models/{}:streamGenerateContent",
            model_segment(&ctx, &request.model)?
        );
        send(&self.endpoint, path, request, None).await
    }
}

/// Builds the body and streams it to `path` (`?alt=sse` added), with `key` in place of the endpoint's own when set.
pub(crate) async fn send(
    endpoint: &Endpoint,
    path: String,
    request: &TurnRequest,
    key: Option<&ApiKey>,
) -> Result<TurnStream, LlmError> {
    let ctx = endpoint.context(&request.model);
    let names = request.tool_names();
    let body = request_body(request, &names).map_err(|e| {
        ctx.error(
            ErrorKind::InvalidRequest,
            format!(
                "tool `{}` has a schema gemini cannot take: {}",
                e.tool, e.error
            ),
        )
    })?;
    let query = [("alt".to_owned(), "sse".to_owned())];
    let post = TurnPost {
        path: &path,
        query: &query,
        model: &request.model,
        extra_headers: Vec::new(),
        body,
        classify: error::classify,
        lift: stream::GeminiLift::new(names, &request.model),
    };
    match key {
        Some(key) => endpoint.stream_with_key(post, Some(key)).await,
        None => endpoint.stream(post).await,
    }
}

/// The model as one URL path segment (`gemini-2.5-flash`; a `models/` prefix is dropped).
/// Anything but letters, digits, `.`, `-` and `_` is refused rather than escaped: no model
/// name has it, and it could change which URL the request goes to.
pub(crate) fn model_segment<'a>(ctx: &ErrorContext, model: &'a str) -> Result<&'a str, LlmError> {
    let name = model.strip_prefix("models/").unwrap_or(model);
    if is_url_segment(name) {
        Ok(name)
    } else {
        Err(ctx.error(
            ErrorKind::Configuration,
            format!(
                "model `{model}` is not a gemini model name (letters, digits, `.`, `-`, `_`); fix the model id"
            ),
        ))
    }
}

/// Letters, digits, `.`, `-` and `_`, not empty, not a dot segment.
pub(crate) fn is_url_segment(text: &str) -> bool {
    !text.is_empty()
        && text != "."
        && text != ".."
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_names_are_one_path_segment() {
        let ctx = ErrorContext {
            provider: "gemini".into(),
            model: "m".into(),
        };
        for (model, want) in [
            ("gemini-2.5-flash", Some("gemini-2.5-flash")),
            ("models/gemini-3-pro-preview", Some("gemini-3-pro-preview")),
            ("a/b", None),
            ("x?key=1", None),
            ("..", None),
            ("", None),
        ] {
            assert_eq!(model_segment(&ctx, model).ok(), want, "{model}");
        }
    }
}
