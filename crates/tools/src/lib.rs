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

/// The standard catalog's built-in tools, in catalog order.
pub fn builtin_tools() -> Vec<Arc<dyn DynTool>> {
    vec![Arc::new(ReadFile::new()), Arc::new(Stat), Arc::new(ListDir)]
}
