//! The built-in tools. Each tool is a file named after it, built through its one entry in
//! [`registry::REGISTRY`] (from which the tool list and the catalog's names are derived); the
//! shared pieces (directory listing, line paging, the survey walk) are modules of their own,
//! and path confinement is the `tackle-fs` crate.
//!
//! Refuses to own: permission checks, truncation, retention and event recording — a tool here
//! declares what it touches in `prepare` and produces output in `execute`; the runtime decides
//! the rest.
//!
//! Key decision: every path a model passes is resolved lexically against the session root in
//! `prepare` (so the gate sees the normalized root-relative path), and `execute` opens it only
//! through a `tackle_fs::Root` handle, which refuses symlinks and races that lead outside.

pub mod alert;
pub mod bash;
pub mod bash_stdin;
mod builtin_config;
pub mod delete_file;
pub mod edit;
pub mod edit_file;
pub mod fetch_url;
pub mod glob;
pub mod grep;
pub mod html_text;
pub mod ignore_files;
pub mod json_query;
pub mod list;
pub mod list_dir;
pub mod media;
pub mod nearest;
#[cfg(feature = "outline")]
pub mod outline;
pub mod page;
pub mod parser_bounds;
pub mod path_keys;
pub mod read_file;
pub mod read_many_files;
pub mod record_plan;
pub mod registry;
pub mod sciontool_status;
pub mod shell;
pub mod stack;
pub mod stat;
pub mod survey_walk;
pub mod todo;
pub mod wait_and_verify;
pub mod walk;
mod walk_share;
pub mod write_file;

/// The tests count what json_query's filters hold, as the binary does.
#[cfg(test)]
#[global_allocator]
static ALLOC: json_query::memory::MeteredAlloc = json_query::memory::MeteredAlloc;

use std::path::Path;
use std::sync::Arc;

use tackle_fs::{FsError, Root};
use tackle_tool::ToolError;
use tackle_tool::protocol::ErrorCode;

pub use alert::{Alert, AlertTarget};
pub use bash::{Bash, SearchGate, SearchGateMode};
pub use bash_stdin::BashStdin;
pub use builtin_config::BuiltinConfig;
pub use delete_file::DeleteFile;
pub use edit_file::EditFile;
pub use fetch_url::{FetchSettings, FetchUrl};
pub use glob::Glob;
pub use grep::Grep;
pub use json_query::JsonQuery;
pub use list_dir::ListDir;
pub use read_file::ReadFile;
pub use read_many_files::ReadManyFiles;
pub use record_plan::{PlanBook, RecordPlan};
pub use registry::{BUILTIN_TOOL_NAMES, Registration, builtin_tools};
pub use sciontool_status::{SciontoolCommand, SciontoolStatus};

pub use stat::Stat;
pub use todo::Todo;
pub use wait_and_verify::{WaitAndVerify, WaitSettings};
pub use write_file::WriteFile;

pub const PATH_OUTSIDE_ROOT: ErrorCode = ErrorCode::new("path_outside_root");
pub const INVALID_PATH: ErrorCode = ErrorCode::new("invalid_path");

/// The session root's handle, shared across calls while the path still names the same
/// directory (see [`Root::open_shared`]).
pub(crate) fn open_root(tool: &str, root: &Path) -> Result<Arc<Root>, ToolError> {
    Root::open_shared(root).map_err(|e| fs_error(tool, e))
}

/// Resolves a model-supplied path against the root, and follows its symlinks (for the keys).
pub(crate) fn resolve_real(
    tool: &str,
    root: &Path,
    input: &str,
) -> Result<path_keys::ResolvedPath, ToolError> {
    path_keys::ResolvedPath::new(tool, &*open_root(tool, root)?, input)
}

/// A model-supplied path resolved for reading, for tools built outside this crate: its
/// root-relative form and the `read:` resources the gate checks (symlinks followed).
pub fn resolve_read(
    tool: &str,
    root: &Path,
    input: &str,
) -> Result<(tackle_fs::RelPath, Vec<tackle_tool::PermissionResource>), ToolError> {
    let resolved = resolve_real(tool, root, input)?;
    let resources = resolved.resources(tackle_tool::Action::Read);
    Ok((resolved.rel, resources))
}

/// A `tackle-fs` refusal as a tool result, keeping its code (`path_outside_root`, ...).
pub(crate) fn fs_error(tool: &str, e: FsError) -> ToolError {
    ToolError::new(ErrorCode::new(e.code()), format!("{tool}: {e}"))
}
