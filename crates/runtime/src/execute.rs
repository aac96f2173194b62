//! The execute stage: one admitted call run under the call timeout and the batch's
//! cancellation, a panic captured as a result, ending as an [`Ending`] with the output it
//! captured ([`Ran`]).

use std::any::Any;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Instant;

use futures::FutureExt as _;
use tackle_protocol::{CallStatus, ErrorCode, ToolCall};
use tackle_store::{Durability, PublicationGuard};
use tackle_tool::{
    DynTool, ErasedPlan, ExecuteContext, NoToolCalls, OutputSink, ToolCompletion, ToolError,
};
use tokio_util::sync::CancellationToken;
use tokio_util::task::AbortOnDropHandle;

use crate::admit::Refusal;
use crate::artifact_source::StoreArtifacts;
use crate::dispatch::Runtime;
use crate::retention::CallOutput;
use crate::session::Session;
use crate::session_calls::SessionCalls;

/// A call that survived prepare and the gate, waiting for its turn.
pub(crate) struct Ready {
    pub(crate) tool: Arc<dyn DynTool>,
    pub(crate) plan: ErasedPlan,
    pub(crate) dispatched: Instant,
    /// The call's own view of the store, which keeps the label of what it reads back.
    pub(crate) artifacts: Arc<StoreArtifacts>,
}

/// What a call holds from the moment it is its turn until its end is recorded.
pub(crate) struct Launch {
    /// Garbage collection stays away from this call's artifacts until `call_finished` is
    /// durable.
    pub(crate) guard: PublicationGuard,
    pub(crate) output: Arc<CallOutput>,
}

/// How an execution ended, before shaping.
pub(crate) enum Ending {
    Completed(ToolCompletion),
    Failed(ToolError),
    TimedOut,
    Cancelled,
}

/// An execution's ending, the output it captured and how long it ran.
pub(crate) struct Ran {
    pub(crate) ending: Ending,
    pub(crate) output: Arc<CallOutput>,
    pub(crate) ran_us: u64,
}

/// A panic payload as a `tool_panicked` error naming the tool and the phase.
pub(crate) fn panic_error(tool: &str, phase: &str, payload: &(dyn Any + Send)) -> ToolError {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned());
    ToolError::new(
        ErrorCode::PANICKED,
        format!(
            "{tool} panicked during {phase}: {what}; this is a bug in the tool, not in the call"
        ),
    )
}

impl Runtime {
    /// Everything a call needs before it runs: the batch still wants it, the store's guard, its
    /// output capture. A refusal ends the call without running it.
    pub(crate) fn launch(
        &self,
        session: &Session,
        call: &ToolCall,
        tool: &dyn DynTool,
        durability: Durability,
        batch_cancel: &CancellationToken,
    ) -> Result<Launch, Refusal> {
        if batch_cancel.is_cancelled() {
            return Err(Refusal {
                status: CallStatus::Cancelled,
                error: ToolError::new(
                    ErrorCode::CANCELLED,
                    "the batch was cancelled before this call ran",
                ),
            });
        }
        let guard = session.store.publication_guard().map_err(|e| Refusal {
            status: CallStatus::Error,
            error: crate::retention::capture::store_error(e),
        })?;
        let output = CallOutput::new(
            call.id.clone(),
            &tool.output(),
            tool.truncation(),
            &session.store,
            self.config().preview,
            self.observer(),
            durability,
        )
        .map_err(|error| Refusal {
            status: CallStatus::Error,
            error,
        })?;
        Ok(Launch {
            guard,
            output: Arc::new(output),
        })
    }

    /// Run one launched call until it ends, times out or its batch is cancelled.
    pub(crate) async fn execute(
        &self,
        session: &Session,
        call: &ToolCall,
        ready: Ready,
        output: Arc<CallOutput>,
        batch_cancel: &CancellationToken,
        alone: bool,
    ) -> Ran {
        let Ready {
            tool,
            plan,
            artifacts,
            ..
        } = ready;
        let cancel = batch_cancel.child_token();
        let cx = ExecuteContext {
            root: session.root.clone(),
            session: session.id().clone(),
            call_id: call.id.clone(),
            artifacts: artifacts.clone(),
            output: OutputSink::new(output.clone()),
            cancel: cancel.clone(),
            read_scope: self.gate().read_scope(session.context()),
            calls: if tool.calls_tools() {
                SessionCalls::new(
                    self.clone(),
                    session.clone(),
                    call.id.clone(),
                    artifacts.clone(),
                )
            } else {
                Arc::new(NoToolCalls)
            },
        };
        let started = Instant::now();
        // The only call of its batch has no sibling to overlap with: it is polled right here
        // instead of handed to another task (and, often, another thread). Otherwise it runs as a
        // task of its own, aborted when dropped. Either way, dropping `execution` on timeout or
        // cancellation ends the call. `None` is a task that was cancelled from outside.
        type Executed = Result<Result<ToolCompletion, ToolError>, Option<Box<dyn Any + Send>>>;
        let execution: futures::future::BoxFuture<'_, Executed> = if alone {
            AssertUnwindSafe(tool.execute_erased(plan, cx))
                .catch_unwind()
                .map(|ended| ended.map_err(Some))
                .boxed()
        } else {
            let tool_for_task = tool.clone();
            let task = AbortOnDropHandle::new(tokio::spawn(async move {
                tool_for_task.execute_erased(plan, cx).await
            }));
            task.map(|joined| joined.map_err(|j| j.try_into_panic().ok()))
                .boxed()
        };
        // Biased: a tool that returns because its token fired is cancelled, not done.
        let ending = tokio::select! {
            biased;
            () = batch_cancel.cancelled() => Ending::Cancelled,
            () = tokio::time::sleep(self.config().call_timeout) => Ending::TimedOut,
            ended = execution => match ended {
                Ok(Ok(c)) => Ending::Completed(c),
                Ok(Err(e)) => Ending::Failed(e),
                Err(Some(p)) => Ending::Failed(panic_error(&call.name, "execute", &*p)),
                Err(None) => Ending::Cancelled,
            },
        };
        if !matches!(ending, Ending::Completed(_) | Ending::Failed(_)) {
            cancel.cancel();
            output.close();
        }
        Ran {
            ending,
            output,
            ran_us: started.elapsed().as_micros() as u64,
        }
    }
}
