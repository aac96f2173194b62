//! The HTTP side every adapter shares: one POST with retries, then the response body cut into
//! frames (server-sent events for most families, a [`Framing`] of the adapter's own otherwise)
//! under an idle timeout per read and an overall deadline.
//!
//! Provider endpoints are operator-configured (a base URL in the user's configuration, never a
//! URL the model chose), so they go through `reqwest` with rustls, HTTP/2 and the environment's
//! proxies; model-directed fetches use the SSRF-guarded dialer of the network tools instead.
//!
//! Retries happen only before a successful status: once a 200 stream has begun, nothing is
//! re-sent, since a generation is not idempotent. Dropping the stream (or the future that opens
//! it) drops the connection at once.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use futures::{Stream, StreamExt};
use http::HeaderMap;
use tackle_net::{Attempt, RetryDecision, RetryHints, RetryPolicy};
use tokio::time::Instant;

use crate::error::{ErrorContext, ErrorKind, LlmError};
use crate::event::StreamEvent;
use crate::framing::Framing;
pub(crate) use crate::lift::{Lift, LiftFailure, Lifted, drive};

/// The events of one turn as they arrive.
pub type TurnStream = Pin<Box<dyn Stream<Item = Result<StreamEvent, LlmError>> + Send>>;

/// How long a turn may take and how often it is retried.
#[derive(Clone, Debug)]
pub struct TransportLimits {
    pub retry: RetryPolicy,
    /// The longest wait for the next bytes of a response (keep-alive comments count).
    pub idle_timeout: Duration,
    /// The whole turn, retries and streaming included.
    pub deadline: Duration,
    /// The largest single server-sent event (or other frame) accepted.
    pub max_event_bytes: usize,
    /// The most of an error response's body that is read to classify it.
    pub max_error_body: usize,
}

impl Default for TransportLimits {
    fn default() -> Self {
        Self {
            retry: RetryPolicy::standard(4, Duration::from_secs(600)),
            idle_timeout: Duration::from_secs(120),
            deadline: Duration::from_secs(600),
            max_event_bytes: 16 << 20,
            max_error_body: 64 << 10,
        }
    }
}

/// An HTTP client for provider endpoints.
#[derive(Clone, Debug)]
pub struct Transport {
    client: reqwest::Client,
    pub limits: TransportLimits,
}

/// What an adapter read from an error response's body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ErrorBody {
    pub kind: ErrorKind,
    pub message: String,
    /// A spend-limit or insufficient-quota error: never retried.
    pub quota_exhausted: bool,
    /// The sizes a context-overflow answer stated as fields (see
    /// [`LlmError::stated_sizes`]).
    pub stated_sizes: Option<crate::overflow::OverflowSizes>,
}

/// Reads a vendor's error body (the only vendor-specific part of the retry loop).
pub(crate) type ClassifyError = fn(status: u16, body: &[u8]) -> ErrorBody;

/// Reads a vendor's error response where the body alone does not say its class (AWS puts the
/// error's type in `x-amzn-errortype`).
pub(crate) type ClassifyErrorResponse =
    fn(status: u16, headers: &HeaderMap, body: &[u8]) -> ErrorBody;

/// How an error response is read.
#[derive(Clone, Copy)]
pub(crate) enum Classify {
    Body(ClassifyError),
    Response(ClassifyErrorResponse),
}

/// One streaming POST.
pub(crate) struct StreamingPost {
    pub ctx: ErrorContext,
    pub url: String,
    pub headers: HeaderMap,
    pub body: Bytes,
    pub classify: Classify,
}

impl Transport {
    /// A client with rustls over the webpki roots and the ring provider.
    pub fn new(limits: TransportLimits) -> Result<Self, LlmError> {
        let tls = tls_config().map_err(setup_error)?;
        let client = reqwest::Client::builder()
            .tls_backend_preconfigured(tls)
            .connect_timeout(Duration::from_secs(30))
            .build()
            .map_err(|e| setup_error(format!("http client setup failed: {e}")))?;
        Ok(Self { client, limits })
    }

    /// The client itself, for the AWS credential providers' calls (STS, the SSO portal).
    pub(crate) fn client(&self) -> reqwest::Client {
        self.client.clone()
    }

    /// Sends the POST, retrying as the policy says, and returns the frame reader of the first
    /// successful response.
    pub(crate) async fn open<F: Framing>(
        &self,
        post: StreamingPost,
    ) -> Result<FrameReader<F>, LlmError> {
        let started = Instant::now();
        let deadline_at = started + self.limits.deadline;
        let mut attempt = 1;
        loop {
            let send = self
                .client
                .post(&post.url)
                .headers(post.headers.clone())
                .body(post.body.clone())
                .send();
            let (mut error, failure) = match tokio::time::timeout_at(deadline_at, send).await {
                Err(_) => {
                    return Err(with_attempts(
                        post.ctx.error(ErrorKind::Timeout, self.deadline_message()),
                        attempt,
                    ));
                }
                Ok(Err(e)) => (
                    post.ctx.error(ErrorKind::Transport, transport_message(&e)),
                    Attempt {
                        status: None,
                        hints: RetryHints::default(),
                        quota_exhausted: false,
                    },
                ),
                Ok(Ok(response)) if response.status().is_success() => {
                    return self.reader(post.ctx, response, deadline_at, attempt);
                }
                Ok(Ok(response)) => self.failed(&post, response, deadline_at).await,
            };
            error.attempts = attempt;
            // The same request is as long the next time: an overflow is never retried, whatever
            // its status (older llama.cpp servers send it as a 500).
            if error.kind == ErrorKind::ContextTooLong {
                return Err(error);
            }
            match self.limits.retry.decide(
                attempt,
                &failure,
                started.elapsed(),
                rand::random::<f64>(),
            ) {
                RetryDecision::RetryAfter(delay) => tokio::time::sleep(delay).await,
                RetryDecision::GiveUp(_) => return Err(error),
            }
            attempt += 1;
        }
    }

    /// Reads and classifies a non-success response.
    async fn failed(
        &self,
        post: &StreamingPost,
        response: reqwest::Response,
        deadline_at: Instant,
    ) -> (LlmError, Attempt) {
        let status = response.status().as_u16();
        let hints = RetryHints::from_headers(response.headers(), SystemTime::now());
        let request_id = request_id(response.headers());
        let headers = response.headers().clone();
        let response_headers = &headers;
        let mut body = Vec::new();
        let mut chunks = response.bytes_stream();
        let read = async {
            while let Some(Ok(chunk)) = chunks.next().await {
                body.extend_from_slice(&chunk);
                if body.len() >= self.limits.max_error_body {
                    body.truncate(self.limits.max_error_body);
                    break;
                }
            }
        };
        // A body that stalls is classified by its status alone.
        let _ = tokio::time::timeout_at(
            deadline_at.min(Instant::now() + self.limits.idle_timeout),
            read,
        )
        .await;
        let classified = match post.classify {
            Classify::Body(classify) => classify(status, &body),
            Classify::Response(classify) => classify(status, response_headers, &body),
        };
        let mut error = post.ctx.error(classified.kind, classified.message);
        error.status = Some(status);
        error.request_id = request_id;
        error.stated_sizes = classified.stated_sizes.map(Box::new);
        let failure = Attempt {
            status: Some(status),
            hints,
            quota_exhausted: classified.quota_exhausted,
        };
        (error, failure)
    }

    fn reader<F: Framing>(
        &self,
        ctx: ErrorContext,
        response: reqwest::Response,
        deadline_at: Instant,
        attempts: u32,
    ) -> Result<FrameReader<F>, LlmError> {
        let status = response.status().as_u16();
        let request_id = request_id(response.headers());
        let content_type = response
            .headers()
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned();
        let reader = FrameReader {
            ctx,
            status,
            request_id,
            attempts,
            body: Box::pin(response.bytes_stream()),
            decoder: Some(F::new(self.limits.max_event_bytes)),
            unframed: String::new(),
            pending: VecDeque::new(),
            idle_timeout: self.limits.idle_timeout,
            deadline_at,
            deadline: self.limits.deadline,
        };
        if !F::accepts(&content_type) {
            return Err(reader.error(
                ErrorKind::InvalidResponse,
                format!(
                    "the response is `{content_type}`, not an event stream; check that the base url points at the provider's api"
                ),
            ));
        }
        Ok(reader)
    }

    fn deadline_message(&self) -> String {
        format!(
            "the turn passed its deadline of {} s; raise the deadline or shorten the request",
            self.limits.deadline.as_secs()
        )
    }
}

/// rustls over the webpki roots with the ring provider: what every client of the crate speaks.
pub(crate) fn tls_config() -> Result<rustls::ClientConfig, String> {
    let roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    Ok(rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| format!("tls setup failed: {e}"))?
    .with_root_certificates(roots)
    .with_no_client_auth())
}

fn setup_error(message: String) -> LlmError {
    ErrorContext {
        provider: "tackle".into(),
        model: "-".into(),
    }
    .error(ErrorKind::Configuration, message)
}

fn with_attempts(mut error: LlmError, attempts: u32) -> LlmError {
    error.attempts = attempts;
    error
}

/// The request id header of any family (AWS's is `x-amzn-requestid`).
fn request_id(headers: &HeaderMap) -> Option<String> {
    ["request-id", "x-request-id", "x-amzn-requestid"]
        .iter()
        .find_map(|name| headers.get(*name)?.to_str().ok().map(str::to_owned))
}

/// A reqwest error's description without its URL (which could carry a key in its query).
fn transport_message(error: &reqwest::Error) -> String {
    let what = if error.is_connect() {
        "could not connect"
    } else if error.is_timeout() {
        "the connection timed out"
    } else {
        "the request failed"
    };
    let mut source = std::error::Error::source(error);
    let mut detail = String::new();
    while let Some(s) = source {
        detail = s.to_string();
        source = s.source();
    }
    if detail.is_empty() {
        format!("{what}; check the base url and the network")
    } else {
        format!("{what} ({detail}); check the base url and the network")
    }
}

/// The frames of a successful response.
pub(crate) struct FrameReader<F: Framing> {
    ctx: ErrorContext,
    status: u16,
    request_id: Option<String>,
    attempts: u32,
    body: Pin<Box<dyn Stream<Item = reqwest::Result<Bytes>> + Send>>,
    /// `None` once the body has ended.
    decoder: Option<F>,
    /// Text outside the framing, once the body has ended (a family that answers failures with
    /// bare JSON: [`Framing::take_unframed`]).
    pub(crate) unframed: String,
    pending: VecDeque<F::Frame>,
    idle_timeout: Duration,
    deadline_at: Instant,
    deadline: Duration,
}

impl<F: Framing> FrameReader<F> {
    /// An error about this response, stamped with its status and request id.
    pub fn error(&self, kind: ErrorKind, message: impl Into<String>) -> LlmError {
        let mut error = self.ctx.error(kind, message);
        error.status = Some(self.status);
        error.request_id = self.request_id.clone();
        error.attempts = self.attempts;
        error
    }

    /// The next frame; `None` at a clean end of the body (the caller decides whether the
    /// stream's terminal event came).
    pub async fn next(&mut self) -> Result<Option<F::Frame>, LlmError> {
        let mut events = Vec::new();
        loop {
            if let Some(event) = self.pending.pop_front() {
                return Ok(Some(event));
            }
            let Some(decoder) = self.decoder.as_mut() else {
                return Ok(None);
            };
            let idle_at = (Instant::now() + self.idle_timeout).min(self.deadline_at);
            let chunk = match tokio::time::timeout_at(idle_at, self.body.next()).await {
                Err(_) if idle_at == self.deadline_at => {
                    return Err(self.error(
                        ErrorKind::Timeout,
                        format!(
                            "the turn passed its deadline of {} s while streaming; raise the deadline",
                            self.deadline.as_secs()
                        ),
                    ));
                }
                Err(_) => {
                    return Err(self.error(
                        ErrorKind::Timeout,
                        format!(
                            "no bytes arrived for {} s; the provider stalled (raise the idle timeout if it is slow)",
                            self.idle_timeout.as_secs()
                        ),
                    ));
                }
                Ok(None) => {
                    if let Some(decoder) = self.decoder.as_mut() {
                        self.unframed = decoder.take_unframed();
                    }
                    if !self.unframed.trim().is_empty() {
                        self.decoder = None;
                        return Ok(None);
                    }
                    let incomplete = self.decoder.take().is_some_and(F::finish);
                    if incomplete {
                        return Err(self.error(
                            ErrorKind::StreamCut,
                            "the stream ended in the middle of an event; the connection was cut, try again",
                        ));
                    }
                    return Ok(None);
                }
                Ok(Some(Err(e))) => {
                    return Err(self.error(
                        ErrorKind::StreamCut,
                        format!("the stream broke: {}", transport_message(&e)),
                    ));
                }
                Ok(Some(Ok(chunk))) => chunk,
            };
            decoder
                .feed(&chunk, &mut events)
                .map_err(|e| self.error(ErrorKind::InvalidResponse, e))?;
            self.pending.extend(events.drain(..));
        }
    }
}
