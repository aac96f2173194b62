//! The built-in tools. Each tool is a file named after it; the shared pieces (directory
//! listing, line paging) are modules of their own, and path confinement is the `tackle-fs`
//! crate.
//!
//! Refuses to own: permission checks, truncation, retention and event recording — a tool here
//! declares what it touches in `prepare` and produces output in `execute`; the runtime decides
//! the rest.
//!
//! Key decision: every path a model passes is resolved lexically against the session root in
//! `prepare` (so the gate sees the normalized root-relative path), and `execute` opens it only
//! through a `tackle_fs::Root` handle, which refuses symlinks and races that lead outside.

pub mod bash;
pub mod list;
pub mod list_dir;
pub mod page;
pub mod read_file;
pub mod shell;
pub mod stat;

use std::path::Path;
use std::sync::Arc;

use tackle_fs::{FsError, RelPath, Root};
use tackle_tool::protocol::ErrorCode;
use tackle_tool::{DynTool, ToolError};

pub use bash::{Bash, SearchGate, SearchGateMode};
pub use list_dir::ListDir;
pub use read_file::ReadFile;
pub use stat::Stat;

/// Every built-in tool name of the standard catalog (DESIGN.md §5), implemented or not. Used to
/// validate `--disable-tools`/`tools.disable` (a typo fails loudly) and to drop description
/// sentences that name a built-in this build does not register.
pub const BUILTIN_TOOL_NAMES: &[&str] = &[
    "read_file",
    "read_many_files",
    "view_file_outline",
    "write_file",
    "edit_file",
    "delete_file",
    "stat",
    "list_dir",
    "glob",
    "grep",
    "json_query",
    "fetch_url",
    "alert",
    "bash",
    "todo",
    "record_plan",
    "wait_and_verify",
    "retrieve_raw",
    "ask_user",
    "mark_task_done",
    "goal_get",
    "goal_update",
    "delegate_subagent",
    "get_subagent_result",
    "cancel_subagent",
    "send_message",
    "load_skill",
    "call_peer",
    "schedule_next_turn",
];

/// The standard catalog's built-in tools, in catalog order.
pub fn builtin_tools(config: &BuiltinConfig) -> Vec<Arc<dyn DynTool>> {
    vec![
        Arc::new(ReadFile::new()),
        Arc::new(Stat),
        Arc::new(ListDir),
        Arc::new(Bash::new(
            config.search_gate(),
            config.process_env.clone(),
            config.stdin.clone(),
        )),
    ]
}

/// What the built-in tools are configured with. Each tool that needs settings reads its own
/// fields; the binary fills them from the validated configuration.
#[derive(Clone, Debug, Default)]
pub struct BuiltinConfig {
    /// Names of the built-in tools that will be in the catalog (after `tools.disable` and
    /// advertising). Tools that point the model at other tools consult it, so they never
    /// name one that is absent. Empty means "not known yet" (the first of the binary's two
    /// passes, which only collects names).
    pub registered: Vec<String>,
    /// `[safety] bash_search_gate` (default enforce).
    pub bash_search_gate: SearchGateMode,
    /// What commands inherit of tackle's environment (default: all but
    /// [`tackle_process::DEFAULT_ENV_DENY`]).
    pub process_env: tackle_process::EnvPolicy,
    /// Live stdin of interactive bash calls; a front end keeps a clone to send input.
    pub stdin: tackle_process::StdinRegistry,
}

impl BuiltinConfig {
    /// The bash search gate as armed by the registered tools.
    pub fn search_gate(&self) -> SearchGate {
        SearchGate::new(self.bash_search_gate, &self.registered)
    }
}

pub const PATH_OUTSIDE_ROOT: ErrorCode = ErrorCode::new("path_outside_root");
pub const INVALID_PATH: ErrorCode = ErrorCode::new("invalid_path");

/// Opens the session root; a tool opens it per call, so no handle outlives a session.
pub(crate) fn open_root(tool: &str, root: &Path) -> Result<Root, ToolError> {
    Root::open(root).map_err(|e| fs_error(tool, e))
}

/// Resolves a model-supplied path against the root, before any file is opened.
pub(crate) fn resolve(tool: &str, root: &Path, input: &str) -> Result<RelPath, ToolError> {
    open_root(tool, root)?
        .resolve(input)
        .map_err(|e| fs_error(tool, e))
}

/// A `tackle-fs` refusal as a tool result, keeping its code (`path_outside_root`, ...).
pub(crate) fn fs_error(tool: &str, e: FsError) -> ToolError {
    ToolError::new(ErrorCode::new(e.code()), format!("{tool}: {e}"))
}
