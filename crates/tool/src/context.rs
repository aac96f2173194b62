//! What a tool sees while preparing and executing.

use std::path::Path;
use std::sync::Arc;

use tackle_protocol::{CallId, SessionId, TurnId};
use tokio_util::sync::CancellationToken;

use crate::artifacts::ArtifactSource;
use crate::output::OutputSink;
use crate::tool_calls::ToolCalls;

/// Context for [`crate::Tool::prepare`]: read-only access to where the call would land.
pub struct PrepareContext<'a> {
    /// The session's project root (canonical). Every path resolves against it; there is no
    /// process-global working directory.
    pub root: &'a Path,
    pub session: &'a SessionId,
    /// The model turn this call belongs to (see [`TurnId`]).
    pub turn: &'a TurnId,
    /// The agent the session runs for, when one is named (a subagent's declared name); `None`
    /// for `tackle call` and MCP clients.
    pub agent: Option<&'a str>,
    pub call_id: &'a CallId,
    pub artifacts: &'a dyn ArtifactSource,
    /// Which paths this call may read, as the gate answers for paths a tool finds itself
    /// ([`ExecuteContext::read_scope`]): what a not-found error's nearest paths pass through.
    pub read_scope: &'a dyn ReadScope,
}

/// Context for [`crate::Tool::execute`]. Owned, so an execution future can be `'static`.
pub struct ExecuteContext {
    pub root: Arc<Path>,
    pub session: SessionId,
    pub call_id: CallId,
    pub artifacts: Arc<dyn ArtifactSource>,
    /// Streamed output and progress.
    pub output: OutputSink,
    /// Cancelled when the batch is cancelled or the call times out. Long-running tools should
    /// select on it; the runtime also drops the future.
    pub cancel: CancellationToken,
    /// Which paths a walk may read. The gate saw only the walked directory (`read:<dir>`); a
    /// tool that finds files itself (grep, glob, read_many_files with a pattern) passes each
    /// one through this before reading or listing it.
    pub read_scope: Arc<dyn ReadScope>,
    /// Calls to other tools through the runtime, as calls of this session. Live only for a
    /// tool that says [`crate::Tool::calls_tools`]; [`crate::NoToolCalls`] for the others.
    pub calls: Arc<dyn ToolCalls>,
}

/// The runtime's answer to "may this call read `path`?" for paths a tool discovers while
/// executing, decided by the gate from the `read:<path>` key (deny rules and the path scope).
/// The tool applies it; it never decides it.
pub trait ReadScope: Send + Sync {
    /// `path` is root-relative and normalized, as in a `read:<path>` key.
    fn admits(&self, path: &str) -> bool;
}

/// Admits every path: for runtimes without a policy, and for tests.
pub struct AdmitAll;

impl ReadScope for AdmitAll {
    fn admits(&self, _: &str) -> bool {
        true
    }
}
