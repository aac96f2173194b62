//! Cohere error bodies: `{"message": …}` (sometimes with an `id`), told apart by status and, for
//! the ambiguous ones, by message.
//!
//! - 429 is a rate limit, except a trial key's monthly allowance ("… limited to 1000 API calls
//!   / month"), which waiting does not restore: quota exhausted, never retried.
//! - 498 is Cohere's "invalid token" (auth), 499 a request the client cancelled.
//! - 400 "too many tokens" is the prompt not fitting, unless it is `max_tokens` that is too big.

use serde::Deserialize;

use crate::error::ErrorKind;
use crate::transport::ErrorBody;

#[derive(Deserialize)]
struct Body {
    #[serde(default)]
    message: String,
}

fn kind_of(status: u16, message: &str) -> ErrorKind {
    let lower = message.to_ascii_lowercase();
    match status {
        429 if lower.contains("trial key") && lower.contains("month") => ErrorKind::QuotaExhausted,
        498 => ErrorKind::Auth,
        499 => ErrorKind::Cancelled,
        400 if lower.starts_with("too many tokens") && !lower.contains("max tokens") => {
            ErrorKind::ContextTooLong
        }
        _ => ErrorKind::from_status(status),
    }
}

/// Classifies a non-success response of the v2 Chat API.
pub(super) fn classify(status: u16, body: &[u8]) -> ErrorBody {
    let message = serde_json::from_slice::<Body>(body)
        .ok()
        .map(|b| b.message)
        .filter(|m| !m.is_empty());
    let kind = kind_of(status, message.as_deref().unwrap_or(""));
    ErrorBody {
        kind,
        message: message.unwrap_or_else(|| {
            format!("the provider answered http {status} without an error body")
        }),
        quota_exhausted: kind == ErrorKind::QuotaExhausted,
        stated_sizes: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_classify_as_a_table() {
        let cases: &[(u16, &str, ErrorKind)] = &[
            (
                400,
                r#"{"message":"invalid request: messages must not be empty"}"#,
                ErrorKind::InvalidRequest,
            ),
            (
                400,
                r#"{"message":"too many tokens: size limit exceeded by 11326 tokens. Try using shorter or fewer inputs."}"#,
                ErrorKind::ContextTooLong,
            ),
            (
                400,
                r#"{"message":"too many tokens: max tokens must be less than or equal to 4096, the maximum output for this model - received 8192."}"#,
                ErrorKind::InvalidRequest,
            ),
            (401, r#"{"message":"invalid api token"}"#, ErrorKind::Auth),
            (
                402,
                r#"{"message":"Please add a payment method"}"#,
                ErrorKind::QuotaExhausted,
            ),
            (
                404,
                r#"{"id":"a","message":"model 'command-x' not found"}"#,
                ErrorKind::NotFound,
            ),
            (
                429,
                r#"{"message":"You are using a Trial key, which is limited to 10 API calls / minute. Upgrade to a Production key to increase your rate limit."}"#,
                ErrorKind::RateLimit,
            ),
            (
                429,
                r#"{"message":"You are using a Trial key, which is limited to 1000 API calls / month. You can continue to use the Trial key for free or upgrade to a Production key."}"#,
                ErrorKind::QuotaExhausted,
            ),
            (
                429,
                r#"{"message":"too many requests"}"#,
                ErrorKind::RateLimit,
            ),
            (498, r#"{"message":"invalid token"}"#, ErrorKind::Auth),
            (
                499,
                r#"{"message":"request cancelled"}"#,
                ErrorKind::Cancelled,
            ),
            (
                500,
                r#"{"message":"internal server error"}"#,
                ErrorKind::Server,
            ),
            (503, "<html>unavailable</html>", ErrorKind::Server),
        ];
        for (status, body, kind) in cases {
            let got = classify(*status, body.as_bytes());
            assert_eq!(got.kind, *kind, "{status} {body}");
            assert_eq!(got.quota_exhausted, *kind == ErrorKind::QuotaExhausted);
            assert!(!got.message.is_empty());
        }
    }
}
