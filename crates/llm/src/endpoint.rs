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
use crate::error::{ErrorContext, ErrorKind, LlmError};
use crate::framing::{SseFraming, UnframedSseFraming};
use crate::redact::Redactor;
use crate::transport::{
    Classify, ClassifyError, Lift, StreamingPost, Transport, TurnStream, drive,
};

/// How an endpoint's key travels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyHeader {
    /// `Authorization: Bearer <key>` (OpenAI and the compatible servers).
    Bearer,
    /// The key alone in a named header (`x-api-key` for Anthropic, `api-key` for Azure).
    Named(&'static str),
}

/// Where on an endpoint a family's turns are posted and how its key travels: the family's
/// own default, or a host's variant of it (Azure serves the OpenAI formats at its own paths,
/// with an `api-version` query and the key in `api-key`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    /// Appended to the base URL, one segment at a time; a `{model}` segment is replaced by the
    /// request's model, percent-encoded (Azure's deployment).
    pub path: String,
    /// Query parameters added to every request (`api-version`).
    pub query: Vec<(String, String)>,
    pub key_header: KeyHeader,
}

impl Route {
    /// `path` with no query and the key as a bearer token.
    pub fn bearer(path: &str) -> Self {
        Self {
            path: path.to_owned(),
            query: Vec::new(),
            key_header: KeyHeader::Bearer,
        }
    }
}

/// The segment of a [`Route::path`] that stands for the request's model.
const MODEL_SEGMENT: &str = "{model}";

/// One configured endpoint with its credential loaded.
#[derive(Debug)]
pub(crate) struct Endpoint {
    name: String,
    base_url: reqwest::Url,
    key: Option<ApiKey>,
    key_header: KeyHeader,
    transport: Transport,
}

/// One streaming request to an endpoint.
pub(crate) struct TurnPost<'a, L> {
    /// Appended to the base URL (`/v1/messages`, `/chat/completions`, `/responses`), with
    /// `{model}` segments replaced (see [`Route::path`]).
    pub path: &'a str,
    /// Query parameters (see [`Route::query`]).
    pub query: &'a [(String, String)],
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
        let base_url = reqwest::Url::parse(base_url.trim_end_matches('/'))
            .ok()
            .filter(|u| !u.cannot_be_a_base())
            .ok_or_else(|| {
                ctx.error(
                    ErrorKind::Configuration,
                    format!(
                        "provider `{name}`: base_url `{base_url}` is not an http url; set it to the api root, for example https://api.example.com/v1"
                    ),
                )
            })?;
        Ok(Self {
            name: name.to_owned(),
            base_url,
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

    /// The base URL with `path`'s segments (the model's in place of `{model}`) and `query`.
    fn url(&self, path: &str, model: &str, query: &[(String, String)]) -> String {
        let mut url = self.base_url.clone();
        if let Ok(mut segments) = url.path_segments_mut() {
            segments.pop_if_empty();
            for segment in path.split('/').filter(|s| !s.is_empty()) {
                segments.push(if segment == MODEL_SEGMENT {
                    model
                } else {
                    segment
                });
            }
        }
        if !query.is_empty() {
            url.query_pairs_mut().extend_pairs(query);
        }
        url.into()
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

    /// [`Endpoint::stream`], or with a token from `tokens` when the provider fetches one per
    /// turn (fetched again after a 401, see [`crate::token::Tokens::send`]); `post` builds the
    /// request, again for a retry.
    pub async fn stream_authorized<'a, L: Lift + Send + 'a>(
        &'a self,
        tokens: Option<&'a crate::token::Tokens>,
        model: &str,
        post: impl Fn() -> TurnPost<'a, L> + Sync + 'a,
    ) -> Result<TurnStream, LlmError> {
        let Some(tokens) = tokens else {
            return self.stream(post()).await;
        };
        let ctx = self.context(model);
        let post = &post;
        tokens
            .send(&ctx, |token| {
                Box::pin(async move { self.stream_with_key(post(), Some(&token)).await })
            })
            .await
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
            url: self.url(post.path, post.model, post.query),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::TransportLimits;

    fn endpoint(base: &str) -> Endpoint {
        let transport = Transport::new(TransportLimits::default()).unwrap();
        Endpoint::new("p", base, None, KeyHeader::Bearer, transport).unwrap()
    }

    #[test]
    fn urls_join_segments_encode_the_model_and_add_the_query() {
        let query = [("api-version".to_owned(), "2024-10-21".to_owned())];
        // (base url, path, model, query, the url posted to)
        type Case<'a> = (&'a str, &'a str, &'a str, &'a [(String, String)], &'a str);
        let cases: &[Case] = &[
            (
                "https://api.openai.com/v1",
                "/chat/completions",
                "gpt-4.1",
                &[],
                "https://api.openai.com/v1/chat/completions",
            ),
            (
                "https://api.anthropic.com/",
                "/v1/messages",
                "claude",
                &[],
                "https://api.anthropic.com/v1/messages",
            ),
            (
                "https://r.openai.azure.com",
                "/openai/deployments/{model}/chat/completions",
                "my deploy/x",
                &query,
                "https://r.openai.azure.com/openai/deployments/my%20deploy%2Fx/chat/completions?api-version=2024-10-21",
            ),
        ];
        for (base, path, model, query, want) in cases {
            assert_eq!(
                endpoint(base).url(path, model, query),
                *want,
                "{base} {path}"
            );
        }
    }

    #[test]
    fn a_base_url_that_is_not_one_is_a_configuration_error() {
        let transport = Transport::new(TransportLimits::default()).unwrap();
        let e =
            Endpoint::new("p", "api.example.com", None, KeyHeader::Bearer, transport).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Configuration);
        assert!(e.message.contains("base_url"), "{e}");
    }
}
