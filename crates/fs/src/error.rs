//! The one error type of this crate: each variant names the path and, in its message, the fix.

use std::io;

use crate::RelPath;

/// Why a file operation beneath the root was refused or failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FsError {
    /// The path, or a symlink on the way to it, leads outside the root.
    #[error("`{input}` is outside the project root; pass a path inside it")]
    OutsideRoot { input: String },
    /// Refused before any system call: empty, NUL bytes, or over the length limits.
    #[error("invalid path {input:?}: {reason}")]
    InvalidPath { input: String, reason: String },
    #[error("{path} does not exist; list its parent directory to see what is there")]
    NotFound { path: String },
    /// A FIFO, socket, device or symlink where a regular file (or directory) was needed.
    #[error("{path} is {kind}, not a regular file; pass a regular file or a directory")]
    NotRegularFile { path: String, kind: &'static str },
    #[error("{path} is a directory; pass a file inside it")]
    IsADirectory { path: String },
    #[error("{path} is not a directory; pass a directory, or read the file directly")]
    NotADirectory { path: String },
    /// The file has other names, any of which may lie outside the root.
    #[error(
        "{path} has {links} hard links, so the same file may also be reachable from outside \
         the project root; copy it to a file of its own first"
    )]
    HardLinked { path: String, links: u64 },
    /// A file read whole ([`crate::Root::read_capped`]) is larger than its limit.
    #[error("{path} is larger than {limit} bytes, the most read here; make it smaller")]
    TooLarge { path: String, limit: u64 },
    /// A staged change's base no longer matches what is on disk.
    #[error("{path} changed since the change was staged; read it again and redo the change")]
    Conflict { path: String },
    #[error("{op} {path}: {source}")]
    Io {
        op: &'static str,
        path: String,
        #[source]
        source: io::Error,
    },
}

impl FsError {
    /// A stable snake_case code for tool results and tests.
    pub fn code(&self) -> &'static str {
        match self {
            FsError::OutsideRoot { .. } => "path_outside_root",
            FsError::InvalidPath { .. } => "invalid_path",
            FsError::NotFound { .. } => "not_found",
            FsError::NotRegularFile { .. } => "not_a_regular_file",
            FsError::IsADirectory { .. } => "is_a_directory",
            FsError::NotADirectory { .. } => "not_a_directory",
            FsError::HardLinked { .. } => "hard_linked",
            FsError::TooLarge { .. } => "too_large",
            FsError::Conflict { .. } => "conflict",
            FsError::Io { .. } => "io_error",
        }
    }

    pub(crate) fn invalid(input: &str, reason: impl Into<String>) -> Self {
        // Inputs can be kilobytes long; the start is enough to recognize one.
        let input = match input.char_indices().nth(120) {
            Some((cut, _)) => format!("{}…", &input[..cut]),
            None => input.to_owned(),
        };
        FsError::InvalidPath {
            input,
            reason: reason.into(),
        }
    }

    /// Maps an error from a beneath-the-root operation on `rel`.
    ///
    /// cap-std reports an escape either as `EXDEV` from `openat2(RESOLVE_BENEATH)` or, from its
    /// own resolver, as a `PermissionDenied` error that carries no OS error number; both are
    /// `OutsideRoot`. A real `EACCES` always carries its number, so it stays an I/O error.
    pub(crate) fn from_io(op: &'static str, rel: &RelPath, source: io::Error) -> Self {
        let path = rel.as_str().to_owned();
        if is_escape(&source) {
            return FsError::OutsideRoot { input: path };
        }
        match source.raw_os_error() {
            Some(libc::ENOENT) => FsError::NotFound { path },
            Some(libc::ENOTDIR) => FsError::NotADirectory { path },
            Some(libc::EISDIR) => FsError::IsADirectory { path },
            _ if source.kind() == io::ErrorKind::NotFound => FsError::NotFound { path },
            _ => FsError::Io { op, path, source },
        }
    }
}

pub(crate) fn is_escape(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::EXDEV)
        || (e.kind() == io::ErrorKind::PermissionDenied && e.raw_os_error().is_none())
}
