//! What agentic subtasks spent, held by the session whose call ran them until that session's
//! loop takes it into its run's spend at the end of the batch ([`settle`]); and which of them
//! still run, so a run ends only after its subtasks have ([`Ledger::settled`]).
//!
//! A subtask's tokens are the parent run's tokens: `--max-tokens` and `--max-cost` count
//! them, the front end's totals (`/stats`) add them, and each is told as a `usage` event
//! naming the subtask. They are priced at the small model's prices, not the run's, which is
//! why they are kept beside the run's own usage ([`Spent::subtask_usage`]).
//!
//! Key decision: the wrapper records its spend here, in the delegation tree every session of
//! a front end shares, and the loop settles it between batches. Rejected: the spend in the
//! wrapper's result metadata for the loop to read back, which would have the loop parse JSON
//! keys the tool spells; and the wrapper telling the front end directly, which the run's
//! bounds would never see.

use std::collections::HashMap;
use std::sync::Mutex;

use tackle_protocol::{SessionId, Usage};
use tokio::sync::Notify;

use crate::bounds::Spent;
use crate::conversation::add_usage;
use crate::events::{AgentEvent, Observer, SubtaskUsage};

/// One subtask's spend.
#[derive(Clone, Debug, PartialEq)]
pub struct SubtaskSpend {
    /// The wrapper that ran it (`agentic_read_file`).
    pub tool: String,
    /// The subtask's own session.
    pub session: SessionId,
    /// The small model, `provider:model`.
    pub model: String,
    pub usage: Usage,
    /// At the small model's prices, when it has them.
    pub cost_usd: Option<f64>,
}

/// Spend owed to each session's run, and the subtasks each has running.
#[derive(Default)]
pub struct Ledger {
    owed: Mutex<HashMap<SessionId, Vec<SubtaskSpend>>>,
    running: Mutex<HashMap<SessionId, usize>>,
    ended: Notify,
}

/// A subtask of a session, running until dropped.
pub struct Running<'a> {
    ledger: &'a Ledger,
    parent: SessionId,
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        let mut running = self.ledger.running();
        if let Some(n) = running.get_mut(&self.parent) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                running.remove(&self.parent);
            }
        }
        drop(running);
        self.ledger.ended.notify_waiters();
    }
}

impl Ledger {
    /// Counts a subtask of `parent` as running until the guard is dropped.
    pub fn start(&self, parent: &SessionId) -> Running<'_> {
        *self.running().entry(parent.clone()).or_default() += 1;
        Running {
            ledger: self,
            parent: parent.clone(),
        }
    }

    /// Waits until no subtask of `parent` runs. A wrapper whose batch was cancelled is
    /// dropped at once while its subtask, on a task of its own, records its end; the run
    /// waits for that, so nothing is left writing when the run is over.
    pub async fn settled(&self, parent: &SessionId) {
        loop {
            // Made before the count is read: an end between the two still wakes it.
            let ended = self.ended.notified();
            if !self.running().contains_key(parent) {
                return;
            }
            ended.await;
        }
    }

    fn running(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, usize>> {
        self.running.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Owes `spend` to `parent`'s run.
    pub fn record(&self, parent: &SessionId, spend: SubtaskSpend) {
        self.lock().entry(parent.clone()).or_default().push(spend);
    }

    /// What `parent`'s run is owed, oldest first; nothing is owed after.
    pub fn take(&self, parent: &SessionId) -> Vec<SubtaskSpend> {
        self.lock().remove(parent).unwrap_or_default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, Vec<SubtaskSpend>>> {
        self.owed.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Adds what `session`'s subtasks spent to `spent`, telling `observer` one `usage` event per
/// subtask (as turn `turn`, the turn whose batch ran it).
pub(crate) fn settle(
    ledger: &Ledger,
    session: &SessionId,
    spent: &mut Spent,
    turn: u32,
    observer: &dyn Observer,
) {
    for owed in ledger.take(session) {
        add_usage(&mut spent.subtask_usage, &owed.usage);
        spent.subtask_cost_usd += owed.cost_usd.unwrap_or(0.0);
        observer.on_event(&AgentEvent::Usage {
            turn,
            usage: owed.usage,
            total: spent.total_usage(),
            cost_usd: spent.total_cost(),
            subtask: Some(SubtaskUsage {
                tool: owed.tool,
                session: owed.session.0,
                model: owed.model,
                cost_usd: owed.cost_usd,
            }),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::Unobserved;

    fn owed(input: u64, cost: Option<f64>) -> SubtaskSpend {
        SubtaskSpend {
            tool: "agentic_grep".into(),
            session: SessionId("child".into()),
            model: "small:model".into(),
            usage: Usage {
                input_tokens: input,
                output_tokens: 10,
                ..Usage::default()
            },
            cost_usd: cost,
        }
    }

    #[test]
    fn a_session_is_owed_only_its_own_subtasks_and_only_once() {
        let ledger = Ledger::default();
        let (a, b) = (SessionId("a".into()), SessionId("b".into()));
        ledger.record(&a, owed(100, Some(0.01)));
        ledger.record(&b, owed(7, None));
        ledger.record(&a, owed(50, None));
        let mut spent = Spent {
            cost_usd: Some(1.0),
            ..Spent::default()
        };
        settle(&ledger, &a, &mut spent, 3, &Unobserved);
        assert_eq!(spent.subtask_usage.input_tokens, 150);
        assert_eq!(spent.total_usage().output_tokens, 20);
        assert_eq!(spent.total_cost(), Some(1.01));
        assert!(ledger.take(&a).is_empty());
        assert_eq!(ledger.take(&b).len(), 1);
    }

    #[tokio::test]
    async fn settled_waits_for_the_sessions_own_running_subtasks_only() {
        let ledger = std::sync::Arc::new(Ledger::default());
        let (a, b) = (SessionId("a".into()), SessionId("b".into()));
        ledger.settled(&a).await;
        let other = ledger.start(&b);
        ledger.settled(&a).await;
        let first = ledger.start(&a);
        let second = ledger.start(&a);
        let waiting = {
            let (ledger, a) = (ledger.clone(), a.clone());
            tokio::spawn(async move { ledger.settled(&a).await })
        };
        drop(first);
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished());
        drop(second);
        waiting.await.unwrap();
        drop(other);
    }
}
