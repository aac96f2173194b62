//! Calls, their results, and the content a model sees.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::label::Label;
use crate::stream_name::StreamName;

/// The id a model (or client) gave a call; results stay keyed by it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CallId(pub String);

impl fmt::Display for CallId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The session a batch runs on behalf of; names its event log directory.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SessionId(pub String);

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The model turn a call belongs to. A front end that knows its turns (the agent loop) sets it
/// on the session; otherwise every batch is a turn of its own. Tools that treat repeats within
/// a turn differently (`record_plan`) compare it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct TurnId(pub String);

impl fmt::Display for TurnId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// One call from a model turn.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: CallId,
    pub name: String,
    pub arguments: serde_json::Value,
}

/// A stable machine-readable error code on a failed result (`unknown_tool`,
/// `invalid_arguments`, `permission_denied`, `conflict`, …). Tools may add their own codes; the
/// runtime's are the associated constants.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ErrorCode(pub Cow<'static, str>);

impl ErrorCode {
    pub const UNKNOWN_TOOL: ErrorCode = ErrorCode::new("unknown_tool");
    pub const INVALID_ARGUMENTS: ErrorCode = ErrorCode::new("invalid_arguments");
    pub const PERMISSION_DENIED: ErrorCode = ErrorCode::new("permission_denied");
    pub const APPROVAL_UNAVAILABLE: ErrorCode = ErrorCode::new("approval_unavailable");
    pub const RESOURCE_LIMIT: ErrorCode = ErrorCode::new("resource_limit");
    pub const CONFLICT: ErrorCode = ErrorCode::new("conflict");
    pub const TIMEOUT: ErrorCode = ErrorCode::new("timeout");
    pub const CANCELLED: ErrorCode = ErrorCode::new("cancelled");
    pub const NOT_FOUND: ErrorCode = ErrorCode::new("not_found");
    pub const ARTIFACT_MISSING: ErrorCode = ErrorCode::new("artifact_missing");
    pub const ARTIFACT_CORRUPT: ErrorCode = ErrorCode::new("artifact_corrupt");
    pub const INVALID_ARTIFACT_URI: ErrorCode = ErrorCode::new("invalid_artifact_uri");
    pub const IO: ErrorCode = ErrorCode::new("io_error");
    pub const PROTOCOL: ErrorCode = ErrorCode::new("tool_protocol_violation");
    pub const PANICKED: ErrorCode = ErrorCode::new("tool_panicked");
    pub const INTERNAL: ErrorCode = ErrorCode::new("internal_error");

    pub const fn new(code: &'static str) -> Self {
        Self(Cow::Borrowed(code))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// How a call ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallStatus {
    Ok,
    Error,
    Denied,
    TimedOut,
    Cancelled,
}

/// What a model sees. An attachment (an image, PDF, audio or video read from a file) is
/// retained as an artifact and referenced here; the provider adapter decides how it travels.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    Text {
        text: String,
    },
    Attachment {
        /// The sniffed MIME type (`image/png`, `application/pdf`, …).
        mime_type: String,
        /// Size of the attachment in bytes.
        bytes: u64,
        /// The stored reference, `artifact://sha256/<digest>`.
        artifact: String,
    },
}

/// A reference to retained output, recorded in `call_finished` and shown in structured results.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RetainedOutput {
    /// `None` for single output; the stream name for named output.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub stream: Option<StreamName>,
    /// The stored (internal) reference, `artifact://sha256/<digest>`.
    pub artifact: String,
    pub bytes: u64,
    pub lines: u64,
    /// Whether the model saw only a preview of this stream.
    pub truncated: bool,
}

/// The result of one call: structured data plus the rendering for the model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    pub call_id: CallId,
    pub tool: String,
    pub status: CallStatus,
    pub is_error: bool,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub code: Option<ErrorCode>,
    /// The model-facing rendering.
    pub content: Vec<ContentBlock>,
    /// Tool-specific structured fields (next_offset, exists, …).
    #[serde(skip_serializing_if = "serde_json::Value::is_null", default)]
    pub metadata: serde_json::Value,
    /// Retained streams; for named output the manifest comes first with `stream: None`.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub retained_output: Vec<RetainedOutput>,
    /// True when the call failed or was cancelled after accepting some output.
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub incomplete: bool,
    pub label: Label,
    /// Final UI display text; never part of model history.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub display: Option<String>,
    /// The model saw a structural digest instead of the output; `retrieve_raw` returns it.
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub digested: bool,
    /// The `metadata` key holding a survey tool's listing (`matches`, `files`, `entries`): the
    /// result itself in structured form, which the text already carries (or digests). A front
    /// end that sends metadata beside the text may leave it out (`tackle serve` does unless the
    /// call asks for it). Not serialized: `metadata` is complete wherever a result is written.
    #[serde(skip)]
    pub listing_key: Option<&'static str>,
}

impl ToolResult {
    /// The concatenated text content, as a model would read it.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for block in &self.content {
            match block {
                ContentBlock::Text { text } => out.push_str(text),
                ContentBlock::Attachment {
                    mime_type,
                    bytes,
                    artifact,
                } => out.push_str(&format!(
                    "[attachment {mime_type}, {bytes} bytes, {artifact}]\n"
                )),
            }
        }
        out
    }
}
