//! The error a tool returns: always something the model can act on.

use std::fmt;

use tackle_protocol::ErrorCode;

/// A failure that becomes a tool result with `is_error` and a stable `code`; never a Rust error
/// that ends the turn. Messages are lowercase, name the thing and say what to do next.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolError {
    pub code: ErrorCode,
    pub message: String,
    /// Structured details (e.g. the match count of a failed edit).
    pub metadata: serde_json::Value,
}

impl ToolError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            metadata: serde_json::Value::Null,
        }
    }

    pub fn with_metadata(mut self, metadata: serde_json::Value) -> Self {
        self.metadata = metadata;
        self
    }

    pub fn io(what: &str, err: &std::io::Error) -> Self {
        let code = match err.kind() {
            std::io::ErrorKind::NotFound => ErrorCode::NOT_FOUND,
            _ => ErrorCode::IO,
        };
        Self::new(code, format!("{what}: {err}"))
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for ToolError {}
