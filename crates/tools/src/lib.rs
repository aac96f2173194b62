//! The built-in tools. Each tool is a file named after it; the shared pieces (path confinement,
//! directory listing, line paging) are modules of their own.
//!
//! Refuses to own: permission checks, truncation, retention and event recording — a tool here
//! declares what it touches in `prepare` and produces output in `execute`; the runtime decides
//! the rest.
//!
//! Key decision: every path a model passes is resolved beneath the session root in `prepare`
//! (so the gate sees the normalized root-relative path) and revalidated in `execute`.

pub mod confine;
pub mod list;
pub mod list_dir;
pub mod page;
pub mod read_file;
pub mod stat;

use std::sync::Arc;

use tackle_tool::DynTool;

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
pub fn builtin_tools() -> Vec<Arc<dyn DynTool>> {
    vec![Arc::new(ReadFile::new()), Arc::new(Stat), Arc::new(ListDir)]
}
