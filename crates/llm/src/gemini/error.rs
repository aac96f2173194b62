//! Google's error bodies: `{"error":{"code":429,"message":…,"status":"RESOURCE_EXHAUSTED",
//! "details":[…]}}`, also as a one-element array (`[{"error":…}]`, what the non-SSE stream
//! sends) and as bare JSON inside an event stream after a 200.
//!
//! The `status` decides the kind; the HTTP code only when there is none. A `RESOURCE_EXHAUSTED`
//! is a rate limit (retried) unless its details name a daily quota, which waiting a few
//! seconds does not fix.

use serde::Deserialize;
use serde_json::Value;

use crate::error::ErrorKind;
use crate::transport::ErrorBody;

/// The `error` object.
#[derive(Clone, Debug, Default, Deserialize)]
pub(super) struct GoogleError {
    #[serde(default)]
    pub code: Option<u16>,
    #[serde(default)]
    pub message: String,
    #[serde(default)]
    pub status: String,
    #[serde(default)]
    pub details: Vec<Value>,
}

#[derive(Deserialize)]
struct Body {
    error: GoogleError,
}

/// The error of a body in either form, `None` when it is not one.
pub(super) fn parse(body: &[u8]) -> Option<GoogleError> {
    let value: Value = serde_json::from_slice(body).ok()?;
    let value = match value {
        Value::Array(mut items) if !items.is_empty() => items.swap_remove(0),
        other => other,
    };
    serde_json::from_value::<Body>(value).ok().map(|b| b.error)
}

/// The kind an error names, with whether it is a quota that retrying does not fix.
pub(super) fn kind_of(status: Option<u16>, error: &GoogleError) -> (ErrorKind, bool) {
    let kind = match error.status.as_str() {
        "RESOURCE_EXHAUSTED" if is_daily_quota(error) => return (ErrorKind::QuotaExhausted, true),
        "RESOURCE_EXHAUSTED" => ErrorKind::RateLimit,
        "UNAUTHENTICATED" => ErrorKind::Auth,
        "PERMISSION_DENIED" => ErrorKind::Permission,
        "NOT_FOUND" => ErrorKind::NotFound,
        "INVALID_ARGUMENT" if is_context_too_long(&error.message) => ErrorKind::ContextTooLong,
        "INVALID_ARGUMENT" | "FAILED_PRECONDITION" | "OUT_OF_RANGE" => ErrorKind::InvalidRequest,
        "UNAVAILABLE" => ErrorKind::Overloaded,
        "INTERNAL" | "UNKNOWN" | "DATA_LOSS" | "DEADLINE_EXCEEDED" => ErrorKind::Server,
        _ => match status.or(error.code) {
            Some(503) => ErrorKind::Overloaded,
            Some(code) => ErrorKind::from_status(code),
            None => ErrorKind::Server,
        },
    };
    (kind, false)
}

/// "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)."
fn is_context_too_long(message: &str) -> bool {
    crate::overflow::is_overflow(message)
}

/// A `QuotaFailure` whose violated quota is counted per day (`…PerDay…`).
fn is_daily_quota(error: &GoogleError) -> bool {
    error.details.iter().any(|detail| {
        let is_quota_failure = detail
            .get("@type")
            .and_then(Value::as_str)
            .is_some_and(|t| t.ends_with("google.rpc.QuotaFailure"));
        let violations = detail.get("violations").and_then(Value::as_array);
        is_quota_failure
            && violations.is_some_and(|vs| {
                vs.iter().any(|v| {
                    ["quotaId", "quotaMetric"].iter().any(|field| {
                        v.get(*field)
                            .and_then(Value::as_str)
                            .is_some_and(|id| id.contains("PerDay"))
                    })
                })
            })
    })
}

/// A failure as one line: the message and the status it came with.
pub(super) fn describe(error: &GoogleError) -> String {
    match (error.message.is_empty(), error.status.is_empty()) {
        (false, false) => format!("{} ({})", error.message, error.status),
        (false, true) => error.message.clone(),
        (true, false) => error.status.clone(),
        (true, true) => "the provider reported an error without a message".into(),
    }
}

/// Classifies a non-success response of a Gemini or Vertex endpoint.
pub(super) fn classify(status: u16, body: &[u8]) -> ErrorBody {
    match parse(body) {
        Some(error) => {
            let (kind, quota_exhausted) = kind_of(Some(status), &error);
            ErrorBody {
                kind,
                message: describe(&error),
                quota_exhausted,
                stated_sizes: None,
            }
        }
        None => ErrorBody {
            kind: match status {
                503 => ErrorKind::Overloaded,
                other => ErrorKind::from_status(other),
            },
            message: format!("the provider answered http {status} without an error body"),
            quota_exhausted: false,
            stated_sizes: None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_classify_as_a_table() {
        let daily = r#"{"error":{"code":429,"message":"You exceeded your current quota","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_requests","quotaId":"GenerateRequestsPerDayPerProjectPerModel-FreeTier"}]}]}}"#;
        let cases: &[(u16, &str, ErrorKind, bool)] = &[
            (
                429,
                r#"{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"32s"}]}}"#,
                ErrorKind::RateLimit,
                false,
            ),
            (429, daily, ErrorKind::QuotaExhausted, true),
            (
                401,
                r#"{"error":{"code":401,"message":"Request had invalid authentication credentials.","status":"UNAUTHENTICATED"}}"#,
                ErrorKind::Auth,
                false,
            ),
            (
                403,
                r#"{"error":{"code":403,"message":"denied","status":"PERMISSION_DENIED"}}"#,
                ErrorKind::Permission,
                false,
            ),
            (
                404,
                r#"{"error":{"code":404,"message":"models/x is not found","status":"NOT_FOUND"}}"#,
                ErrorKind::NotFound,
                false,
            ),
            (
                400,
                r#"{"error":{"code":400,"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}"#,
                ErrorKind::ContextTooLong,
                false,
            ),
            (
                400,
                r#"{"error":{"code":400,"message":"Invalid JSON payload received.","status":"INVALID_ARGUMENT"}}"#,
                ErrorKind::InvalidRequest,
                false,
            ),
            (
                503,
                r#"{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}"#,
                ErrorKind::Overloaded,
                false,
            ),
            (
                500,
                r#"[{"error":{"code":500,"message":"An internal error has occurred.","status":"INTERNAL"}}]"#,
                ErrorKind::Server,
                false,
            ),
            (
                400,
                r#"{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT"}}"#,
                ErrorKind::InvalidRequest,
                false,
            ),
            (
                503,
                "<html>unavailable</html>",
                ErrorKind::Overloaded,
                false,
            ),
            (502, "", ErrorKind::Server, false),
            (
                418,
                r#"{"error":{"code":418,"message":"odd","status":"NEW_STATUS"}}"#,
                ErrorKind::InvalidRequest,
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
            assert!(!got.message.is_empty(), "{body}");
        }
    }

    #[test]
    fn parse_reads_both_forms_and_refuses_others() {
        let object = br#"{"error":{"code":429,"message":"m","status":"RESOURCE_EXHAUSTED"}}"#;
        let array = br#"[{"error":{"code":429,"message":"m","status":"RESOURCE_EXHAUSTED"}}]"#;
        for body in [&object[..], &array[..]] {
            let e = parse(body).expect("an error");
            assert_eq!(
                (e.code, e.status.as_str()),
                (Some(429), "RESOURCE_EXHAUSTED")
            );
        }
        for body in [&b"[]"[..], b"{}", b"not json", br#"{"candidates":[]}"#] {
            assert!(parse(body).is_none(), "{}", String::from_utf8_lossy(body));
        }
    }
}
