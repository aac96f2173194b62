//! Chat Completions error bodies: `{"error":{"message":…,"type":…,"code":…}}` (llama.cpp sends
//! a numeric `code` and its own `type`s).

use serde::Deserialize;
use serde_json::Value;

use crate::error::ErrorKind;
use crate::transport::ErrorBody;

#[derive(Deserialize)]
pub(crate) struct WireError {
    #[serde(default)]
    pub message: String,
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub code: Option<Value>,
}

#[derive(Deserialize)]
struct Body {
    error: WireError,
}

/// The kind an error names, falling back to the status.
pub(crate) fn kind_of(status: Option<u16>, error: &WireError) -> ErrorKind {
    let code = error.code.as_ref().and_then(Value::as_str).unwrap_or("");
    let kind = error.kind.as_deref().unwrap_or("");
    match (code, kind) {
        ("insufficient_quota", _) | (_, "insufficient_quota") => ErrorKind::QuotaExhausted,
        ("context_length_exceeded", _) | (_, "exceed_context_size_error") => {
            ErrorKind::ContextTooLong
        }
        ("rate_limit_exceeded", _) => ErrorKind::RateLimit,
        ("invalid_api_key", _) | (_, "authentication_error") => ErrorKind::Auth,
        ("model_not_found", _) => ErrorKind::NotFound,
        _ => match status {
            Some(status) => ErrorKind::from_status(status),
            None if kind == "server_error" => ErrorKind::Server,
            None if kind == "invalid_request_error" => ErrorKind::InvalidRequest,
            None => ErrorKind::Server,
        },
    }
}

/// Classifies a non-success response of a Chat Completions endpoint.
pub(crate) fn classify(status: u16, body: &[u8]) -> ErrorBody {
    match serde_json::from_slice::<Body>(body) {
        Ok(parsed) => {
            let kind = kind_of(Some(status), &parsed.error);
            ErrorBody {
                kind,
                message: parsed.error.message,
                quota_exhausted: kind == ErrorKind::QuotaExhausted,
            }
        }
        Err(_) => ErrorBody {
            kind: ErrorKind::from_status(status),
            message: format!("the provider answered http {status} without an error body"),
            quota_exhausted: false,
        },
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
}
