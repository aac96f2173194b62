//! `wait_for_previous`: a field a client adds to every tool's arguments, accepted at the MCP
//! boundary and honoured as ordering, so it never reaches a tool's strict parser.
//!
//! Gemini CLI adds a boolean `wait_for_previous` to the schema of every tool it offers its model,
//! MCP tools included, tells the model to set it when a call must start only after the calls
//! requested before it have finished, and forwards it in `arguments`. tackle's tools parse their
//! arguments strictly (an unknown field is `invalid_arguments`), so the server takes the field off
//! before the call is admitted. Only a boolean is taken: any other value stays, and the strict
//! parser names it, as it names every other unknown field.
//!
//! The ordering is per client: every call holds a read share of the client's [`CallOrder`] while
//! it runs; a call with `wait_for_previous: true` first takes it whole, which waits for every
//! call already running, then keeps a share like the others. The lock is fair, so a call that
//! arrives while one is waiting queues behind it: it waits for that call to start, not to end.
//! `bash_stdin` takes no part (the server skips it): input must reach the call it feeds while
//! that call runs, so it can neither wait for it nor queue behind a call that does.

use std::sync::Arc;

use tokio::sync::{OwnedRwLockReadGuard, RwLock};

/// The field's name in `arguments`.
pub(crate) const WAIT_FOR_PREVIOUS: &str = "wait_for_previous";

/// A call's arguments with the boundary's own fields taken off.
pub(crate) struct BoundaryArguments {
    /// What the tool parses.
    pub arguments: serde_json::Map<String, serde_json::Value>,
    /// The client asked that the call start only after the calls before it have finished.
    pub wait_for_previous: bool,
}

/// Takes `wait_for_previous` off `arguments` when it is a boolean.
pub(crate) fn take_boundary_fields(
    mut arguments: serde_json::Map<String, serde_json::Value>,
) -> BoundaryArguments {
    let wait_for_previous = match arguments.get(WAIT_FOR_PREVIOUS) {
        Some(serde_json::Value::Bool(wait)) => {
            let wait = *wait;
            arguments.remove(WAIT_FOR_PREVIOUS);
            wait
        }
        _ => false,
    };
    BoundaryArguments {
        arguments,
        wait_for_previous,
    }
}

/// The order of one client's calls (see the module docs).
#[derive(Clone, Default)]
pub(crate) struct CallOrder(Arc<RwLock<()>>);

/// Held while a call runs.
pub(crate) type Running = OwnedRwLockReadGuard<()>;

impl CallOrder {
    /// Waits until the call may start: at once, or with `wait_for_previous` once every call
    /// that started before has finished.
    pub(crate) async fn start(&self, wait_for_previous: bool) -> Running {
        let lock = Arc::clone(&self.0);
        if wait_for_previous {
            lock.write_owned().await.downgrade()
        } else {
            lock.read_owned().await
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::FutureExt as _;
    use serde_json::json;

    fn object(v: serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn only_a_boolean_is_taken() {
        let taken = take_boundary_fields(object(json!({"path": "a", "wait_for_previous": true})));
        assert!(taken.wait_for_previous);
        assert_eq!(taken.arguments, object(json!({"path": "a"})));

        let taken = take_boundary_fields(object(json!({"wait_for_previous": false})));
        assert!(!taken.wait_for_previous);
        assert!(taken.arguments.is_empty());

        // Anything else is left for the strict parser to name.
        let taken = take_boundary_fields(object(json!({"wait_for_previous": "yes"})));
        assert!(!taken.wait_for_previous);
        assert_eq!(taken.arguments, object(json!({"wait_for_previous": "yes"})));
    }

    #[tokio::test]
    async fn a_waiting_call_starts_after_the_running_ones_and_before_later_ones() {
        let order = CallOrder::default();
        let first = order.start(false).await;
        let second = order.start(false).await;
        let mut waiting = Box::pin(order.start(true));
        assert!(
            (&mut waiting).now_or_never().is_none(),
            "two calls still run"
        );
        drop(first);
        assert!(
            (&mut waiting).now_or_never().is_none(),
            "one call still runs"
        );
        // A call that arrives now queues behind the waiting one.
        let mut later = Box::pin(order.start(false));
        assert!((&mut later).now_or_never().is_none());
        drop(second);
        let waited = waiting.await;
        // Once it runs, it holds a share like any call: the later one starts beside it.
        let later = later.await;
        drop((waited, later));
        // Without the field nothing waits.
        let _a = order.start(false).await;
        assert!(order.start(false).now_or_never().is_some());
    }
}
