//! [`tackle_tool::ToolCalls`] as the runtime provides it: a tool's calls to other tools run as
//! batches of one in the calling session.
//!
//! Each call is a batch of its own, so it gets its own schedule: the outer call's lane or
//! exclusive slot is never waited for, and no poll can deadlock the batch it was made from.
//! The batch runs as a task of its own, so a caller dropped on its timeout cannot cut a call
//! between `call_started` and `call_finished`: the runtime cancels the outer call's token right
//! after dropping it, and the inner call ends cancelled and recorded. Ids are the caller's id
//! with a counter (`<call id>.poll-1`), unguessable as the caller's is.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;
use tackle_protocol::{CallId, ErrorCode, ToolCall};
use tackle_tool::{CallFuture, CallTarget, ToolCalls, ToolError};
use tokio_util::sync::CancellationToken;

use crate::artifact_source::StoreArtifacts;
use crate::dispatch::Runtime;
use crate::session::Session;

pub(crate) struct SessionCalls {
    runtime: Runtime,
    session: Session,
    caller: CallId,
    made: AtomicU64,
    /// The caller's reads: each result handed back folds its label in, so the caller's result
    /// is no more trusted than what it was told, and each call's `read:` keys, so a deny on
    /// what it read covers the caller's output too.
    reads: Arc<StoreArtifacts>,
}

impl SessionCalls {
    pub(crate) fn new(
        runtime: Runtime,
        session: Session,
        caller: CallId,
        reads: Arc<StoreArtifacts>,
    ) -> Arc<Self> {
        Arc::new(Self {
            runtime,
            session,
            caller,
            made: AtomicU64::new(0),
            reads,
        })
    }
}

impl ToolCalls for SessionCalls {
    fn target(&self, tool: &str) -> Option<CallTarget> {
        self.runtime
            .tool_for(&self.session, tool)
            .map(|t| CallTarget {
                read_only: t.read_only(),
                pollable: t.pollable(),
            })
    }

    fn call(&self, tool: &str, arguments: Value, cancel: CancellationToken) -> CallFuture {
        let n = self.made.fetch_add(1, Ordering::Relaxed) + 1;
        let call = ToolCall {
            id: CallId(format!("{}.poll-{n}", self.caller.0)),
            name: tool.to_owned(),
            arguments,
        };
        let (runtime, session) = (self.runtime.clone(), self.session.clone());
        let reads = self.reads.clone();
        let caller = Some(reads.clone());
        let task = tokio::spawn(async move {
            runtime
                .run_batch_for(&session, vec![call], cancel, caller)
                .await
        });
        let tool = tool.to_owned();
        Box::pin(async move {
            let results = task.await.map_err(|e| {
                ToolError::new(
                    ErrorCode::INTERNAL,
                    format!("{tool}: the call's task failed: {e}"),
                )
            })?;
            let mut results = results.map_err(|e| {
                ToolError::new(
                    ErrorCode::INTERNAL,
                    format!("{tool}: the call could not be recorded: {e}"),
                )
            })?;
            let result = results.pop().ok_or_else(|| {
                ToolError::new(
                    ErrorCode::INTERNAL,
                    format!("{tool}: the call returned no result"),
                )
            })?;
            reads.fold(result.label);
            Ok(result)
        })
    }
}
