//! Chat Completions error bodies: `{"error":{"message":…,"type":…,"code":…}}` (llama.cpp sends
//! a numeric `code` and its own `type`s). Azure sends the same shape with codes of its own:
//! `DeploymentNotFound` (the model part of the id names no deployment), `content_filter` with
//! `innererror.content_filter_result` naming the categories that tripped, and, from its
//! gateway, a bare `{"statusCode":…,"message":…}`.

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
    /// Azure's API gateway: `{"statusCode":401,"message":"Access denied …"}`.
    Gateway {
        #[serde(rename = "statusCode")]
        _status: Value,
        message: String,
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
        ("model_not_found", _) | ("DeploymentNotFound", _) => ErrorKind::NotFound,
        ("content_filter", _) => ErrorKind::InvalidRequest,
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
        Ok(Body::Wrapped { error }) => {
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
            } else {
                error.message
            };
            ErrorBody {
                kind,
                message,
                quota_exhausted: kind == ErrorKind::QuotaExhausted,
            }
        }
        Ok(Body::Gateway { message, .. }) => ErrorBody {
            kind: ErrorKind::from_status(status),
            message,
            quota_exhausted: false,
        },
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
