//! Calls a tool makes to other tools: through the runtime, never around it.
//!
//! A tool that drives other tools (wait_and_verify polls one until a condition holds) must not
//! hold them itself: each call it makes has to be resolved, parsed, prepared, gated, scheduled
//! and recorded exactly like a call the model made. The runtime therefore hands such a tool a
//! [`ToolCalls`] handle bound to the calling session; the tool names a tool and its arguments,
//! the runtime does the rest. Rejected: a tool that looks tools up in the catalog and runs
//! them directly, which would skip the gate and leave no record.

use std::future::Future;
use std::pin::Pin;

use serde_json::Value;
use tackle_protocol::{ErrorCode, ToolResult};
use tokio_util::sync::CancellationToken;

use crate::ToolError;

/// How a registered tool is classified, for a tool that decides what it may call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CallTarget {
    /// The tool never mutates anything ([`crate::DynTool::read_only`]).
    pub read_only: bool,
    /// The tool may be polled ([`crate::DynTool::pollable`]).
    pub pollable: bool,
}

/// The result of one call made through [`ToolCalls::call`]: the whole [`ToolResult`] the model
/// would have received for the same call.
pub type CallFuture = Pin<Box<dyn Future<Output = Result<ToolResult, ToolError>> + Send>>;

/// Calls to other tools on behalf of the calling session, each one a call of its own in the
/// session's record.
pub trait ToolCalls: Send + Sync {
    /// The classification of `tool`, or `None` when no tool of that name is registered.
    fn target(&self, tool: &str) -> Option<CallTarget>;

    /// Run `tool` with `arguments` as a batch of one. Every stage a direct call passes applies
    /// (the gate and its approver included), and the call gets its own `call_started` and
    /// `call_finished`. Cancelling `cancel` cancels it; dropping the future does not stop the
    /// call from being recorded. `Err` only when the runtime cannot run or record calls.
    fn call(&self, tool: &str, arguments: Value, cancel: CancellationToken) -> CallFuture;
}

/// For contexts with no runtime behind them (tests of a single tool, benchmarks): knows no
/// tool and runs nothing.
pub struct NoToolCalls;

/// The error of a call made where no runtime can run it.
pub const CALLS_UNAVAILABLE: ErrorCode = ErrorCode::new("calls_unavailable");

impl ToolCalls for NoToolCalls {
    fn target(&self, _: &str) -> Option<CallTarget> {
        None
    }

    fn call(&self, tool: &str, _: Value, _: CancellationToken) -> CallFuture {
        let err = ToolError::new(
            CALLS_UNAVAILABLE,
            format!("{tool}: this context runs no other tools; call it through a runtime"),
        );
        Box::pin(std::future::ready(Err(err)))
    }
}
