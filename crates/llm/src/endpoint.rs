//! What every HTTP adapter shares about its endpoint: the configured name and base URL, the key
//! read once from its variable, the headers of a streaming JSON POST, and the path from a built
//! body to a redacted [`TurnStream`].
//!
//! An adapter keeps only what is its own: the body it builds, the way its key travels
//! ([`KeyHeader`]), the extra headers its family requires, how it classifies error bodies and
//! how it lifts events. Everything that must be the same for every family (the key loaded
//! before the first turn, marked sensitive, scrubbed from every error) lives here once, so a new
//! adapter cannot forget a step.

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;

use crate::credentials::{ApiKey, KeySource};
use crate::error::{ErrorContext, LlmError};
use crate::framing::{SseFraming, UnframedSseFraming};
use crate::redact::Redactor;
use crate::transport::{
    Classify, ClassifyError, Lift, StreamingPost, Transport, TurnStream, drive,
};

/// How an endpoint's key travels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum KeyHeader {
    /// `Authorization: Bearer <key>` (OpenAI and the compatible servers).
    Bearer,
    /// The key alone in a named header (`x-api-key` for Anthropic, `api-key` for Azure).
    Named(&'static str),
}

/// One configured endpoint with its credential loaded.
#[derive(Debug)]
pub(crate) struct Endpoint {
    name: String,
    base_url: String,
    key: Option<ApiKey>,
    key_header: KeyHeader,
    transport: Transport,
}

/// One streaming request to an endpoint.
pub(crate) struct TurnPost<'a, L> {
    /// Appended to the base URL (`/v1/messages`, `/chat/completions`, `/responses`).
    pub path: String,
    pub model: &'a str,
    /// Headers the family adds to the common ones (`anthropic-version`).
    pub extra_headers: Vec<(HeaderName, HeaderValue)>,
    pub body: Value,
    pub classify: ClassifyError,
    pub lift: L,
}

impl Endpoint {
    /// Reads the key from its variable now, so a missing one is reported before any turn.
    pub fn new(
        name: &str,
        base_url: &str,
        key: Option<&KeySource>,
        key_header: KeyHeader,
        transport: Transport,
    ) -> Result<Self, LlmError> {
        let ctx = ErrorContext {
            provider: name.to_owned(),
            model: "-".into(),
        };
        let key = key.map(|k| k.load(&ctx)).transpose()?;
        Ok(Self {
            name: name.to_owned(),
            base_url: base_url.trim_end_matches('/').to_owned(),
            key,
            key_header,
            transport,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Who errors of a turn for `model` are about.
    pub fn context(&self, model: &str) -> ErrorContext {
        ErrorContext {
            provider: self.name.clone(),
            model: model.to_owned(),
        }
    }

    /// The headers of a streaming JSON POST: content type, accept, the key (sensitive), then
    /// the family's own.
    fn headers(
        &self,
        key: Option<&ApiKey>,
        ctx: &ErrorContext,
        extra: Vec<(HeaderName, HeaderValue)>,
    ) -> Result<HeaderMap, LlmError> {
        let mut headers = HeaderMap::new();
        headers.insert(
            http::header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        headers.insert(
            http::header::ACCEPT,
            HeaderValue::from_static("text/event-stream"),
        );
        if let Some(key) = key {
            match self.key_header {
                KeyHeader::Bearer => {
                    headers.insert(http::header::AUTHORIZATION, key.header("Bearer ", ctx)?);
                }
                KeyHeader::Named(name) => {
                    headers.insert(HeaderName::from_static(name), key.header("", ctx)?);
                }
            }
        }
        for (name, value) in extra {
            headers.insert(name, value);
        }
        Ok(headers)
    }

    /// Sends the body and returns the lifted events; every error on the way out, before or
    /// during the stream, has the key scrubbed from its message.
    pub async fn stream<L: Lift>(&self, post: TurnPost<'_, L>) -> Result<TurnStream, LlmError> {
        self.stream_with_key(post, self.key.as_ref()).await
    }

    /// [`Endpoint::stream`] with a credential obtained per turn (a Vertex access token, which
    /// expires and is fetched again) in place of the one loaded at construction.
    pub async fn stream_with_key<L: Lift>(
        &self,
        post: TurnPost<'_, L>,
        key: Option<&ApiKey>,
    ) -> Result<TurnStream, LlmError> {
        let ctx = self.context(post.model);
        let redactor = Redactor::new(key);
        let request = StreamingPost {
            url: format!("{}{}", self.base_url, post.path),
            headers: self.headers(key, &ctx, post.extra_headers)?,
            body: Bytes::from(post.body.to_string()),
            classify: Classify::Body(post.classify),
            ctx,
        };
        let stream = if L::READS_UNFRAMED {
            let reader = self
                .transport
                .open::<UnframedSseFraming>(request)
                .await
                .map_err(|e| redactor.error(e))?;
            drive(reader, post.lift)
        } else {
            let reader = self
                .transport
                .open::<SseFraming>(request)
                .await
                .map_err(|e| redactor.error(e))?;
            drive(reader, post.lift)
        };
        Ok(redactor.stream(stream))
    }
}

/// A header value from configuration text; `None` when it cannot be one (the header is then
/// left out rather than the turn failing on a cosmetic field).
pub(crate) fn header_value(text: &str) -> Option<HeaderValue> {
    HeaderValue::try_from(text).ok()
}
