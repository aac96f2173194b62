//! Refusals the planner can act on, worded so that they never name what it may not see.

use tackle_fs::FsError;
use tackle_protocol::ErrorCode;
use tackle_tool::ToolError;

pub const QUARANTINED: ErrorCode = ErrorCode::new("quarantined");
pub const NOT_A_DESTINATION: ErrorCode = ErrorCode::new("not_a_destination");
pub const UNKNOWN_REFERENCE: ErrorCode = ErrorCode::new("unknown_reference");
pub const UNTRUSTED_FILE: ErrorCode = ErrorCode::new("untrusted_file");
pub const NO_MATCH: ErrorCode = ErrorCode::new("no_match");
pub const MULTIPLE_MATCHES: ErrorCode = ErrorCode::new("multiple_matches");
pub const BINARY: ErrorCode = ErrorCode::new("binary_file");
pub const DECLINED: ErrorCode = ErrorCode::new("declined");
pub const PROCESSOR_FAILED: ErrorCode = ErrorCode::new("processor_failed");
pub const COMMAND_FAILED: ErrorCode = ErrorCode::new("command_failed");

pub fn invalid(message: impl Into<String>) -> ToolError {
    ToolError::new(ErrorCode::INVALID_ARGUMENTS, message.into())
}

pub fn unknown_reference(reference: &str) -> ToolError {
    ToolError::new(
        UNKNOWN_REFERENCE,
        format!("{reference} is not a reference of this session; use one a tool handed you"),
    )
}

/// A file-system failure about the file the planner knows as `shown` (its path, or the
/// reference it holds): the message names only `shown`, never the path behind a reference.
pub fn fs(err: &FsError, shown: &str) -> ToolError {
    let code = ErrorCode::new(err.code());
    let what = match err {
        FsError::OutsideRoot { .. } => "is outside the project root".to_owned(),
        FsError::InvalidPath { reason, .. } => format!("is not a usable path: {reason}"),
        FsError::NotFound { .. } => "does not exist".to_owned(),
        FsError::NotRegularFile { kind, .. } => format!("is {kind}, not a regular file"),
        FsError::IsADirectory { .. } => "is a directory".to_owned(),
        FsError::NotADirectory { .. } => "is not a directory".to_owned(),
        FsError::HardLinked { links, .. } => {
            format!("has {links} hard links, so it may also be reachable from outside the project")
        }
        FsError::TooLarge { limit, .. } => {
            format!("is larger than {limit} bytes, the most read here")
        }
        FsError::Conflict { .. } => "changed since the call was prepared; try again".to_owned(),
        FsError::Io { op, source, .. } => format!("could not be used ({op}: {})", source.kind()),
        _ => "could not be used".to_owned(),
    };
    ToolError::new(code, format!("{shown} {what}"))
}
