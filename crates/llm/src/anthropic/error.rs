//! Anthropic error bodies: `{"type":"error","error":{"type":…,"message":…},"request_id":…}`.
//! A prompt that does not fit is an `invalid_request_error` told apart by its wording
//! ([`crate::overflow`]); llama.cpp's Messages endpoint answers with its own
//! `exceed_context_size_error` type (and the sizes as fields).

use serde::Deserialize;

use crate::error::ErrorKind;
use crate::overflow;
use crate::transport::ErrorBody;

use super::stream::WireError;

#[derive(Deserialize)]
struct Body {
    error: WireError,
    #[serde(default)]
    details: Option<Details>,
}

#[derive(Deserialize)]
struct Details {
    #[serde(default)]
    error_code: Option<String>,
}

/// The kind an `error.type` names; a too-long prompt is told apart by its message.
pub(super) fn kind_of_error_type(kind: &str, message: &str) -> ErrorKind {
    match kind {
        "invalid_request_error" | "request_too_large" if overflow::is_overflow(message) => {
            ErrorKind::ContextTooLong
        }
        "exceed_context_size_error" => ErrorKind::ContextTooLong,
        "invalid_request_error" | "request_too_large" => ErrorKind::InvalidRequest,
        "authentication_error" => ErrorKind::Auth,
        "billing_error" => ErrorKind::QuotaExhausted,
        "permission_error" => ErrorKind::Permission,
        "not_found_error" => ErrorKind::NotFound,
        "rate_limit_error" => ErrorKind::RateLimit,
        "overloaded_error" => ErrorKind::Overloaded,
        "api_error" | "timeout_error" => ErrorKind::Server,
        _ => ErrorKind::Server,
    }
}

/// Classifies a non-success response of the Messages API.
pub(super) fn classify(status: u16, body: &[u8]) -> ErrorBody {
    let Ok(mut parsed) = serde_json::from_slice::<Body>(body) else {
        return ErrorBody {
            kind: ErrorKind::from_status(status),
            message: format!("the provider answered http {status} without an error body"),
            quota_exhausted: false,
            stated_sizes: None,
        };
    };
    if let Some(inner) = crate::error::passed_on_message(&parsed.error.message) {
        parsed.error.message = inner;
    }
    // The spend limit is signalled inside the error or beside it, depending on the version.
    let spend_limit = parsed
        .details
        .and_then(|d| d.error_code)
        .is_some_and(|c| c == "enforced_spend_limit_reached")
        || parsed
            .error
            .message
            .contains("enforced_spend_limit_reached");
    let mut kind = kind_of_error_type(&parsed.error.kind, &parsed.error.message);
    if spend_limit {
        kind = ErrorKind::QuotaExhausted;
    }
    if parsed.error.kind.is_empty() {
        kind = match ErrorKind::from_status(status) {
            ErrorKind::InvalidRequest if overflow::is_overflow(&parsed.error.message) => {
                ErrorKind::ContextTooLong
            }
            other => other,
        };
    }
    ErrorBody {
        kind,
        message: if parsed.error.message.is_empty() {
            parsed.error.kind
        } else {
            parsed.error.message
        },
        quota_exhausted: kind == ErrorKind::QuotaExhausted,
        stated_sizes: overflow::stated_in(body),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_classify_as_a_table() {
        let cases: &[(u16, &str, ErrorKind, bool)] = &[
            (
                400,
                r#"{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}"#,
                ErrorKind::InvalidRequest,
                false,
            ),
            (
                400,
                r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#,
                ErrorKind::ContextTooLong,
                false,
            ),
            (
                401,
                r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#,
                ErrorKind::Auth,
                false,
            ),
            (
                402,
                r#"{"type":"error","error":{"type":"billing_error","message":"credit balance too low"}}"#,
                ErrorKind::QuotaExhausted,
                true,
            ),
            (
                403,
                r#"{"type":"error","error":{"type":"permission_error","message":"no"}}"#,
                ErrorKind::Permission,
                false,
            ),
            (
                404,
                r#"{"type":"error","error":{"type":"not_found_error","message":"model"}}"#,
                ErrorKind::NotFound,
                false,
            ),
            (
                429,
                r#"{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}"#,
                ErrorKind::RateLimit,
                false,
            ),
            (
                429,
                r#"{"type":"error","error":{"type":"rate_limit_error","message":"limit"},"details":{"error_code":"enforced_spend_limit_reached"}}"#,
                ErrorKind::QuotaExhausted,
                true,
            ),
            (
                500,
                r#"{"type":"error","error":{"type":"api_error","message":"oops"}}"#,
                ErrorKind::Server,
                false,
            ),
            (
                529,
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
                ErrorKind::Overloaded,
                false,
            ),
            (502, "<html>bad gateway</html>", ErrorKind::Server, false),
            (529, "", ErrorKind::Overloaded, false),
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
