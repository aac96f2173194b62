//! How a run ends: the reasons a turn without tool calls gives, a cancelled turn or batch
//! told apart from a wall clock that ran out, and the deadline wrapped around model and tool
//! work.

use std::future::Future;
use std::time::Instant;

use tackle_protocol::{RunOutcome, StopReason};
use tokio_util::sync::CancellationToken;

use super::Agent;
use crate::bounds;

/// How a run ends, before it is recorded.
pub(super) struct Ended {
    pub(super) outcome: RunOutcome,
    pub(super) reason: String,
}

impl Ended {
    pub(super) fn new(outcome: RunOutcome, reason: impl Into<String>) -> Self {
        Self {
            outcome,
            reason: reason.into(),
        }
    }
}

impl Agent {
    /// A cancelled turn or batch: the wall clock's, or the user's.
    pub(super) fn stopped(&self, late: bool, what: &str) -> Ended {
        match (late, self.setup.bounds.max_duration) {
            (true, Some(max)) => Ended::new(
                RunOutcome::BoundHit,
                format!("{}; {what} stopped", bounds::wall_clock_reason(max)),
            ),
            _ => Ended::new(RunOutcome::Cancelled, format!("cancelled {what}")),
        }
    }
}

/// How a turn without tool calls ends the run; `None` when the loop goes on (a paused turn).
pub(super) fn ended_by(stop: &StopReason) -> Option<Ended> {
    Some(match stop {
        StopReason::PauseTurn => return None,
        // `tool_use` without a call: nothing to answer, so the turn is over.
        StopReason::EndTurn | StopReason::StopSequence | StopReason::ToolUse => {
            Ended::new(RunOutcome::Finished, "the model ended its turn")
        }
        StopReason::MaxTokens => Ended::new(
            RunOutcome::Finished,
            "the model's answer reached its output limit",
        ),
        StopReason::Refusal => Ended::new(RunOutcome::Error, "the model declined to answer"),
        StopReason::ContentFilter => Ended::new(
            RunOutcome::Error,
            "the provider filtered the model's answer",
        ),
        StopReason::ContextWindowExceeded => Ended::new(
            RunOutcome::Error,
            "the conversation no longer fits the model's context window",
        ),
        StopReason::Unknown { raw } => {
            Ended::new(RunOutcome::Finished, format!("the model stopped (`{raw}`)"))
        }
    })
}

/// Runs `work`; at `deadline` cancels `token` and lets `work` wind down. True when the
/// deadline fired.
pub(super) async fn bounded<F: Future>(
    work: F,
    deadline: Option<Instant>,
    token: &CancellationToken,
) -> (F::Output, bool) {
    let Some(deadline) = deadline else {
        return (work.await, false);
    };
    tokio::pin!(work);
    tokio::select! {
        biased;
        out = &mut work => (out, false),
        () = tokio::time::sleep_until(deadline.into()) => {
            token.cancel();
            (work.await, true)
        }
    }
}
