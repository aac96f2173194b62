//! Whether one poll verified: the condition against the poll's output, and which failures are
//! worth polling again (the tool failed, the filter failed on this output) and which end the
//! wait (the runtime refused the call; the filter cannot run).

use serde_json::Value;
use tackle_tool::protocol::{CallStatus, ErrorCode, ToolResult};

use super::Condition;
use crate::json_query;

/// Why a poll did not verify, when it was not a plain "no".
pub(super) enum Judged {
    /// Polling again may succeed (the tool failed, the filter failed on this result).
    Transient(String),
    /// Polling again cannot succeed: the code, and a message that says why and what to change.
    Abort(String, String),
}

impl Judged {
    pub(super) fn code(&self) -> Option<String> {
        match self {
            Self::Transient(code) | Self::Abort(code, _) => Some(code.clone()),
        }
    }
}

/// Codes of polls the runtime refused before they ran: the same call is refused again.
const REFUSALS: &[ErrorCode] = &[
    ErrorCode::PERMISSION_DENIED,
    ErrorCode::UNKNOWN_TOOL,
    ErrorCode::INVALID_ARGUMENTS,
    ErrorCode::APPROVAL_UNAVAILABLE,
];

pub(super) async fn judge(condition: &Condition, result: &ToolResult) -> Result<bool, Judged> {
    if result.is_error {
        let code = result.code.clone().unwrap_or(ErrorCode::INTERNAL);
        if result.status == CallStatus::Denied || REFUSALS.contains(&code) {
            let first = result.text();
            return Err(Judged::Abort(
                code.as_str().to_owned(),
                format!(
                    "the poll of {} was refused, and would be every time: {}",
                    result.tool,
                    first.trim_end()
                ),
            ));
        }
        return Err(Judged::Transient(code.as_str().to_owned()));
    }
    let text = result.text();
    match condition {
        Condition::Contains(s) => Ok(text.contains(s.as_str())),
        Condition::NotContains(s) => Ok(!text.contains(s.as_str())),
        Condition::Jq(filter) => {
            // JSON output is the filter's input as such; anything else is one JSON string.
            let input = match serde_json::from_str::<serde::de::IgnoredAny>(&text) {
                Ok(_) if json_query::nesting::check_json(text.as_bytes()).is_ok() => {
                    text.into_bytes()
                }
                _ => Value::String(text).to_string().into_bytes(),
            };
            match json_query::query_outputs(filter.clone(), input).await {
                Ok(outputs) => Ok(outputs
                    .last()
                    .is_some_and(|last| last != "false" && last != "null")),
                Err(e) if e.code == json_query::FILTER_ERROR => {
                    Err(Judged::Transient(e.code.as_str().to_owned()))
                }
                Err(e) => Err(Judged::Abort(
                    e.code.as_str().to_owned(),
                    format!(
                        "expect_jq cannot be evaluated ({}); fix the filter",
                        e.message
                    ),
                )),
            }
        }
    }
}
