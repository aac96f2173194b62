//! Bedrock errors: HTTP error responses (`{"message": …}` with the type in `x-amzn-errortype`)
//! and exception frames after the 200 (`:exception-type` with the same JSON payload), read
//! through one table so a throttling error means the same wherever it arrives.

use http::HeaderMap;
use serde::Deserialize;

use crate::error::ErrorKind;
use crate::transport::ErrorBody;

#[derive(Deserialize, Default)]
pub(super) struct WireError {
    #[serde(default, alias = "Message")]
    pub message: String,
    #[serde(default, rename = "__type")]
    pub kind: Option<String>,
}

/// The kind an AWS error type names (`ThrottlingException`, `throttlingException`,
/// `com.amazon.coral.service#ExpiredTokenException`); a too-long input is told apart by its
/// message.
pub(super) fn kind_of_exception(kind: &str, message: &str) -> ErrorKind {
    let bare = kind.rsplit('#').next().unwrap_or(kind);
    let bare = bare.split(':').next().unwrap_or(bare);
    let bare = bare.trim_end_matches("Exception").to_ascii_lowercase();
    match bare.as_str() {
        "validation" if says_too_long(message) => ErrorKind::ContextTooLong,
        "validation" | "serialization" => ErrorKind::InvalidRequest,
        "throttling" | "toomanyrequests" => ErrorKind::RateLimit,
        // A quota of the account (not a rate): waiting does not fix it.
        "servicequotaexceeded" => ErrorKind::QuotaExhausted,
        "accessdenied" => ErrorKind::Permission,
        "unrecognizedclient"
        | "invalidsignature"
        | "incompletesignature"
        | "expiredtoken"
        | "missingauthenticationtoken"
        | "invalidclienttokenid" => ErrorKind::Auth,
        "resourcenotfound" => ErrorKind::NotFound,
        "serviceunavailable" | "modelnotready" => ErrorKind::Overloaded,
        _ => ErrorKind::Server,
    }
}

/// "Input is too long for requested model.", "The model returned the following errors: prompt
/// is too long: 200049 tokens > 200000 maximum", or another model's wording of an overflow.
fn says_too_long(message: &str) -> bool {
    let lower = message.to_ascii_lowercase();
    crate::overflow::is_overflow(&lower)
        || lower.contains("too long")
        || lower.contains("context window")
        || lower.contains("context length")
}

/// Classifies a non-success response of the Bedrock runtime.
pub(super) fn classify(status: u16, headers: &HeaderMap, body: &[u8]) -> ErrorBody {
    let parsed: WireError = serde_json::from_slice(body).unwrap_or_default();
    let kind_name = headers
        .get("x-amzn-errortype")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .or(parsed.kind);
    let kind = match &kind_name {
        Some(name) => kind_of_exception(name, &parsed.message),
        None if status == 400 && says_too_long(&parsed.message) => ErrorKind::ContextTooLong,
        None => ErrorKind::from_status(status),
    };
    let message = match (parsed.message.is_empty(), &kind_name) {
        (false, Some(name)) => format!("{} ({})", parsed.message, short(name)),
        (false, None) => parsed.message,
        (true, Some(name)) => short(name).to_owned(),
        (true, None) => format!("the provider answered http {status} without an error body"),
    };
    ErrorBody {
        kind,
        message,
        quota_exhausted: kind == ErrorKind::QuotaExhausted,
        stated_sizes: None,
    }
}

/// `ValidationException:http://internal.amazon.com/…` → `ValidationException`.
fn short(name: &str) -> &str {
    let name = name.rsplit('#').next().unwrap_or(name);
    name.split(':').next().unwrap_or(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn responses_classify_as_a_table() {
        let coral = ":http://internal.amazon.com/coral/com.amazon.bedrock/";
        let cases: &[(u16, Option<&str>, &str, ErrorKind)] = &[
            (
                400,
                Some("ValidationException"),
                r#"{"message":"bad"}"#,
                ErrorKind::InvalidRequest,
            ),
            (
                400,
                Some("ValidationException"),
                r#"{"message":"Input is too long for requested model."}"#,
                ErrorKind::ContextTooLong,
            ),
            (
                429,
                Some("ThrottlingException"),
                r#"{"message":"Too many requests"}"#,
                ErrorKind::RateLimit,
            ),
            (
                429,
                Some("ServiceQuotaExceededException"),
                r#"{"message":"quota"}"#,
                ErrorKind::QuotaExhausted,
            ),
            (
                403,
                Some("AccessDeniedException"),
                r#"{"message":"no access"}"#,
                ErrorKind::Permission,
            ),
            (
                403,
                Some("UnrecognizedClientException"),
                r#"{"message":"invalid token"}"#,
                ErrorKind::Auth,
            ),
            (
                403,
                None,
                r#"{"__type":"com.amazon.coral.service#ExpiredTokenException","message":"expired"}"#,
                ErrorKind::Auth,
            ),
            (
                404,
                Some("ResourceNotFoundException"),
                r#"{"message":"model"}"#,
                ErrorKind::NotFound,
            ),
            (
                503,
                Some("ServiceUnavailableException"),
                r#"{"message":"later"}"#,
                ErrorKind::Overloaded,
            ),
            (
                500,
                Some("InternalServerException"),
                r#"{"message":"oops"}"#,
                ErrorKind::Server,
            ),
            (
                424,
                Some("ModelErrorException"),
                r#"{"message":"model failed"}"#,
                ErrorKind::Server,
            ),
            (
                400,
                None,
                r#"{"message":"prompt is too long"}"#,
                ErrorKind::ContextTooLong,
            ),
            (502, None, "<html>bad gateway</html>", ErrorKind::Server),
            (429, None, "", ErrorKind::RateLimit),
        ];
        for (status, kind_header, body, want) in cases {
            let mut headers = HeaderMap::new();
            if let Some(kind) = kind_header {
                headers.insert(
                    "x-amzn-errortype",
                    format!("{kind}{coral}").parse().unwrap(),
                );
            }
            let got = classify(*status, &headers, body.as_bytes());
            assert_eq!(got.kind, *want, "{status} {kind_header:?} {body}");
            assert_eq!(got.quota_exhausted, *want == ErrorKind::QuotaExhausted);
            assert!(!got.message.contains("coral"), "{}", got.message);
        }
    }

    #[test]
    fn exception_frame_types_use_the_same_table() {
        let cases = [
            ("throttlingException", "slow", ErrorKind::RateLimit),
            (
                "validationException",
                "Input is too long",
                ErrorKind::ContextTooLong,
            ),
            (
                "validationException",
                "bad field",
                ErrorKind::InvalidRequest,
            ),
            ("serviceUnavailableException", "", ErrorKind::Overloaded),
            ("modelStreamErrorException", "", ErrorKind::Server),
            ("internalServerException", "", ErrorKind::Server),
            ("accessDeniedException", "", ErrorKind::Permission),
        ];
        for (kind, message, want) in cases {
            assert_eq!(kind_of_exception(kind, message), want, "{kind}");
        }
    }
}
