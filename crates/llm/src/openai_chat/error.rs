//! Chat Completions error bodies: `{"error":{"message":…,"type":…,"code":…}}` (llama.cpp sends
//! a numeric `code`, its own `type`s and, for a prompt that does not fit, `n_prompt_tokens` and
//! `n_ctx`). Azure sends the same shape with codes of its own: `DeploymentNotFound` (the model
//! part of the id names no deployment), `content_filter` with
//! `innererror.content_filter_result` naming the categories that tripped, and, from its
//! gateway, a bare `{"statusCode":…,"message":…}`. The compatible servers add three shapes:
//! `{"error":"…"}` (LM Studio, vLLM's 401, Ollama's native API), vLLM 0.10.0's unwrapped
//! `{"object":"error","message":…}`, and Ollama's answer whose message is llama.cpp's whole
//! error body as text, which is read as the body it is.
//!
//! A context overflow is told by its code or type where the server gives one
//! (`context_length_exceeded`, `exceed_context_size_error`), else by its wording
//! ([`crate::overflow`]), since vLLM, LM Studio and Ollama send it as a plain 400.

use serde::Deserialize;
use serde_json::Value;

use crate::error::ErrorKind;
use crate::overflow;
use crate::transport::ErrorBody;

#[derive(Default, Deserialize)]
pub(crate) struct WireError {
    #[serde(default)]
    pub message: String,
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub code: Option<Value>,
    /// Azure's details of a content-filter refusal.
    #[serde(default)]
    pub innererror: Option<InnerError>,
}

#[derive(Deserialize)]
pub(crate) struct InnerError {
    /// Category → `{"filtered": bool, "severity": …}`.
    #[serde(default)]
    pub content_filter_result: Option<serde_json::Map<String, Value>>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Body {
    Wrapped {
        error: WireError,
    },
    /// LM Studio, Ollama's native API, vLLM's 401: `{"error":"Unauthorized"}`.
    Bare {
        error: String,
    },
    /// Azure's API gateway: `{"statusCode":401,"message":"Access denied …"}`.
    Gateway {
        #[serde(rename = "statusCode")]
        _status: Value,
        message: String,
    },
    /// vLLM 0.10.0: `{"object":"error","message":…,"type":…,"code":…}`.
    Unwrapped {
        object: String,
        message: String,
        #[serde(rename = "type", default)]
        kind: Option<String>,
        #[serde(default)]
        code: Option<Value>,
    },
}

impl WireError {
    /// The categories Azure's content filter flagged, alphabetically.
    fn filtered_categories(&self) -> Vec<&str> {
        self.innererror
            .as_ref()
            .and_then(|i| i.content_filter_result.as_ref())
            .map(|result| {
                result
                    .iter()
                    .filter(|(_, v)| v.get("filtered").and_then(Value::as_bool) == Some(true))
                    .map(|(k, _)| k.as_str())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The error a message stands for when the message is itself an error body (Ollama passes
    /// llama.cpp's answer on as its message); `self` otherwise.
    fn unwrapped(self) -> WireError {
        let inner = serde_json::from_str::<Body>(self.message.trim())
            .ok()
            .and_then(|body| match body {
                Body::Wrapped { error } if !error.message.is_empty() => Some(error),
                Body::Bare { error } => Some(WireError {
                    message: error,
                    ..WireError::default()
                }),
                _ => None,
            });
        match inner {
            // The outer code (OpenAI's) is kept when the inner error has none of its own.
            Some(inner) if inner.code.is_none() && inner.kind.is_none() => WireError {
                message: inner.message,
                ..self
            },
            Some(inner) => inner,
            None => self,
        }
    }
}

/// The kind an error names, falling back to the status and, for a request the server refused
/// as invalid, to what its message says.
pub(crate) fn kind_of(status: Option<u16>, error: &WireError) -> ErrorKind {
    let code = error.code.as_ref().and_then(Value::as_str).unwrap_or("");
    let kind = error.kind.as_deref().unwrap_or("");
    let named = match (code, kind) {
        ("insufficient_quota", _) | (_, "insufficient_quota") => ErrorKind::QuotaExhausted,
        ("context_length_exceeded", _) | (_, "exceed_context_size_error") => {
            ErrorKind::ContextTooLong
        }
        ("rate_limit_exceeded", _) => ErrorKind::RateLimit,
        ("invalid_api_key", _) | (_, "authentication_error") => ErrorKind::Auth,
        ("model_not_found", _) | ("DeploymentNotFound", _) => ErrorKind::NotFound,
        ("content_filter", _) => return ErrorKind::InvalidRequest,
        _ => match status {
            Some(status) => ErrorKind::from_status(status),
            None if kind == "server_error" => ErrorKind::Server,
            None if kind == "invalid_request_error" => ErrorKind::InvalidRequest,
            None => ErrorKind::Server,
        },
    };
    by_wording(named, &error.message)
}

/// `kind`, or a context overflow when a refusal of the request (or a failure that names no
/// kind) says it is one in a known wording.
fn by_wording(kind: ErrorKind, message: &str) -> ErrorKind {
    match kind {
        ErrorKind::InvalidRequest | ErrorKind::Server if overflow::is_overflow(message) => {
            ErrorKind::ContextTooLong
        }
        other => other,
    }
}

/// Classifies a non-success response of a Chat Completions endpoint.
pub(crate) fn classify(status: u16, body: &[u8]) -> ErrorBody {
    let stated_sizes = overflow::stated_in(body);
    let error = match serde_json::from_slice::<Body>(body) {
        Ok(Body::Wrapped { error }) => error.unwrapped(),
        Ok(Body::Bare { error }) => WireError {
            message: error,
            ..WireError::default()
        }
        .unwrapped(),
        Ok(Body::Unwrapped {
            object,
            message,
            kind,
            code,
        }) if object == "error" => WireError {
            message,
            kind,
            code,
            innererror: None,
        },
        Ok(Body::Gateway { message, .. }) => {
            let kind = by_wording(ErrorKind::from_status(status), &message);
            return ErrorBody {
                kind,
                message,
                quota_exhausted: false,
                stated_sizes,
            };
        }
        Ok(Body::Unwrapped { .. }) | Err(_) => {
            return ErrorBody {
                kind: ErrorKind::from_status(status),
                message: format!("the provider answered http {status} without an error body"),
                quota_exhausted: false,
                stated_sizes: None,
            };
        }
    };
    let kind = kind_of(Some(status), &error);
    let categories = error.filtered_categories();
    let message = if error.code.as_ref().and_then(Value::as_str) == Some("content_filter") {
        format!(
            "azure's content filter refused the prompt (flagged: {}); rephrase it or change the deployment's filter policy: {}",
            if categories.is_empty() {
                "no category named".to_owned()
            } else {
                categories.join(", ")
            },
            error.message
        )
    } else if error.message.is_empty() {
        format!("the provider answered http {status} without an error message")
    } else {
        error.message
    };
    ErrorBody {
        kind,
        message,
        quota_exhausted: kind == ErrorKind::QuotaExhausted,
        stated_sizes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_classify_as_a_table() {
        let cases: &[(u16, &str, ErrorKind, bool)] = &[
            (
                429,
                r#"{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}"#,
                ErrorKind::RateLimit,
                false,
            ),
            (
                429,
                r#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}"#,
                ErrorKind::QuotaExhausted,
                true,
            ),
            (
                400,
                r#"{"error":{"message":"maximum context length","type":"invalid_request_error","code":"context_length_exceeded"}}"#,
                ErrorKind::ContextTooLong,
                false,
            ),
            (
                400,
                r#"{"error":{"code":400,"message":"request exceeds the available context size","type":"exceed_context_size_error"}}"#,
                ErrorKind::ContextTooLong,
                false,
            ),
            (
                401,
                r#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}"#,
                ErrorKind::Auth,
                false,
            ),
            (
                404,
                r#"{"error":{"message":"The model does not exist","type":"invalid_request_error","code":"model_not_found"}}"#,
                ErrorKind::NotFound,
                false,
            ),
            (
                400,
                r#"{"error":{"message":"bad","type":"invalid_request_error","param":"tools[0]","code":"invalid_function_parameters"}}"#,
                ErrorKind::InvalidRequest,
                false,
            ),
            (503, "upstream connect error", ErrorKind::Server, false),
            (
                404,
                r#"{"error":{"code":"DeploymentNotFound","message":"The API deployment for this resource does not exist."}}"#,
                ErrorKind::NotFound,
                false,
            ),
            (
                400,
                r#"{"error":{"message":"The response was filtered","type":null,"param":"prompt","code":"content_filter","status":400,"innererror":{"code":"ResponsibleAIPolicyViolation","content_filter_result":{"hate":{"filtered":true,"severity":"high"},"violence":{"filtered":false,"severity":"safe"}}}}}"#,
                ErrorKind::InvalidRequest,
                false,
            ),
            (
                429,
                r#"{"error":{"code":"429","message":"Requests to the ChatCompletions_Create Operation have exceeded token rate limit. Please retry after 6 seconds."}}"#,
                ErrorKind::RateLimit,
                false,
            ),
            (
                401,
                r#"{"statusCode":401,"message":"Access denied due to invalid subscription key or wrong API endpoint."}"#,
                ErrorKind::Auth,
                false,
            ),
            (
                403,
                r#"{"error":{"message":"region"}}"#,
                ErrorKind::Permission,
                false,
            ),
        ];
        for (status, body, kind, quota) in cases {
            let got = classify(*status, body.as_bytes());
            assert_eq!(
                (got.kind, got.quota_exhausted),
                (*kind, *quota),
                "{status} {body}"
            );
        }
    }

    #[test]
    fn a_content_filter_refusal_names_the_flagged_categories() {
        let body = r#"{"error":{"message":"filtered","code":"content_filter","innererror":{"content_filter_result":{"hate":{"filtered":true},"sexual":{"filtered":false},"violence":{"filtered":true}}}}}"#;
        let got = classify(400, body.as_bytes());
        assert!(
            got.message.contains("flagged: hate, violence"),
            "{}",
            got.message
        );
        let gateway = classify(401, br#"{"statusCode":401,"message":"Access denied"}"#);
        assert_eq!(gateway.message, "Access denied");
    }
}
