//! Classified provider errors. Every error names the provider, the model and, when the server
//! sent one, its request id, so a report can be traced on the vendor's side; none carries a
//! credential (the key is never formatted anywhere, see `credentials.rs`).

use std::fmt;

use crate::overflow::OverflowSizes;

/// What went wrong, in terms a caller acts on (retry, fix configuration, shorten context).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The credential is missing, malformed or rejected (401).
    Auth,
    /// The credential may not use this model or feature (403).
    Permission,
    /// The model or endpoint does not exist (404).
    NotFound,
    /// Too many requests (429); retried by the policy unless the quota is used up.
    RateLimit,
    /// The account's spend limit or quota is used up (a 429 that waiting does not fix).
    QuotaExhausted,
    /// The provider is overloaded (Anthropic 529, `overloaded_error`).
    Overloaded,
    /// The conversation does not fit the model's context window.
    ContextTooLong,
    /// The provider rejected the request's shape (400, 413, 422).
    InvalidRequest,
    /// The provider failed (5xx other than overload).
    Server,
    /// No response, or the connection failed while reading one.
    Transport,
    /// The stream ended before its terminal event.
    StreamCut,
    /// No bytes arrived within the idle timeout, or the turn passed its overall deadline.
    Timeout,
    /// The provider answered with something that is not a model stream (malformed JSON, an
    /// oversized event, an unexpected content type).
    InvalidResponse,
    /// The caller cancelled the turn.
    Cancelled,
    /// tackle's own configuration prevents the request (a credential variable is unset).
    Configuration,
}

impl ErrorKind {
    /// The stable snake_case name used in logs and events.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Auth => "auth",
            Self::Permission => "permission",
            Self::NotFound => "not_found",
            Self::RateLimit => "rate_limit",
            Self::QuotaExhausted => "quota_exhausted",
            Self::Overloaded => "overloaded",
            Self::ContextTooLong => "context_too_long",
            Self::InvalidRequest => "invalid_request",
            Self::Server => "server",
            Self::Transport => "transport",
            Self::StreamCut => "stream_cut",
            Self::Timeout => "timeout",
            Self::InvalidResponse => "invalid_response",
            Self::Cancelled => "cancelled",
            Self::Configuration => "configuration",
        }
    }

    /// The kind an HTTP status gives when the body says nothing more specific.
    pub fn from_status(status: u16) -> Self {
        match status {
            401 => Self::Auth,
            402 => Self::QuotaExhausted,
            403 => Self::Permission,
            404 => Self::NotFound,
            413 => Self::InvalidRequest,
            429 => Self::RateLimit,
            529 => Self::Overloaded,
            500..=599 => Self::Server,
            _ => Self::InvalidRequest,
        }
    }
}

/// A failed turn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LlmError {
    pub kind: ErrorKind,
    /// The provider's configured name (`anthropic`, `openai`, `local`).
    pub provider: String,
    pub model: String,
    /// The HTTP status, when a response arrived.
    pub status: Option<u16>,
    /// The `request-id`/`x-request-id` header, when the server sent one.
    pub request_id: Option<String>,
    /// What happened, lowercase, with what to do about it where tackle knows.
    pub message: String,
    /// Attempts made before giving up (1 when none was retried).
    pub attempts: u32,
    /// The prompt and window sizes a context-overflow answer stated as fields of their own
    /// (llama.cpp's `n_prompt_tokens` and `n_ctx`), beside its message; read both through
    /// [`LlmError::overflow_sizes`]. Boxed: most errors have none, and every `Result` of the
    /// crate carries an `LlmError`.
    pub stated_sizes: Option<Box<OverflowSizes>>,
}

impl fmt::Display for LlmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} model {}: {}",
            self.provider,
            self.model,
            self.kind.as_str()
        )?;
        if let Some(status) = self.status {
            write!(f, " (http {status})")?;
        }
        write!(f, ": {}", self.message)?;
        if let Some(id) = &self.request_id {
            write!(f, " [request id {id}]")?;
        }
        if self.attempts > 1 {
            write!(f, " after {} attempts", self.attempts)?;
        }
        Ok(())
    }
}

impl std::error::Error for LlmError {}

/// Who an error is about: set once per turn and stamped on every error it raises.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ErrorContext {
    pub provider: String,
    pub model: String,
}

impl ErrorContext {
    pub fn error(&self, kind: ErrorKind, message: impl Into<String>) -> LlmError {
        LlmError {
            kind,
            provider: self.provider.clone(),
            model: self.model.clone(),
            status: None,
            request_id: None,
            message: message.into(),
            attempts: 1,
            stated_sizes: None,
        }
    }
}

/// The message of the error body `message` is, when a server passed another server's whole
/// answer on as its message (Ollama with llama-server's refusals): `{"error":{"message":…}}`
/// or `{"error":"…"}`. `None` for a message that is a sentence.
pub(crate) fn passed_on_message(message: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(message.trim()).ok()?;
    let error = value.get("error")?;
    error
        .get("message")
        .and_then(serde_json::Value::as_str)
        .or(error.as_str())
        .filter(|m| !m.trim().is_empty())
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_provider_model_status_and_request_id() {
        let ctx = ErrorContext {
            provider: "anthropic".into(),
            model: "claude-x".into(),
        };
        let mut e = ctx.error(
            ErrorKind::Overloaded,
            "the provider is overloaded; try later",
        );
        e.status = Some(529);
        e.request_id = Some("req_1".into());
        e.attempts = 3;
        assert_eq!(
            e.to_string(),
            "anthropic model claude-x: overloaded (http 529): the provider is overloaded; try later [request id req_1] after 3 attempts"
        );
    }

    #[test]
    fn statuses_map_to_kinds() {
        let cases = [
            (400, ErrorKind::InvalidRequest),
            (401, ErrorKind::Auth),
            (402, ErrorKind::QuotaExhausted),
            (403, ErrorKind::Permission),
            (404, ErrorKind::NotFound),
            (413, ErrorKind::InvalidRequest),
            (429, ErrorKind::RateLimit),
            (500, ErrorKind::Server),
            (503, ErrorKind::Server),
            (529, ErrorKind::Overloaded),
        ];
        for (status, kind) in cases {
            assert_eq!(ErrorKind::from_status(status), kind, "{status}");
        }
    }
}
