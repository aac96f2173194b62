//! Running blocking work (file reads, an `fdatasync`, publishing an artifact) from async code.
//!
//! On the multi-threaded runtime the work runs right here under `block_in_place`: the caller
//! keeps its thread and its cache, and the runtime moves other tasks off this worker, so no
//! wake-up of another thread sits on the call's critical path. Elsewhere (a current-thread
//! runtime, as in tests) it goes to the blocking pool.
//!
//! Rejected: a slot per core that tools' blocking work waits for (as a task) before it runs, so
//! fifty clients' searches under `tackle serve` do not take turns on two cores as fifty threads.
//! Measured in `mcp_http_load` (30 s a side, one run each): calls/s 0.83x -> 0.85x of the
//! same-work server, p50 9.8 -> 6.4 ms, but p99 20.6 -> 26.8 ms; a grep-only load: 427 -> 461 µs
//! of server CPU per call. The threads' turns were not where the time went.
//!
//! A tool hands its blocking work over with [`run_tool_blocking`], which owns the one mapping of
//! a failed worker to a result. Under `block_in_place` a panic unwinds into the call and the
//! runtime reports it as `tool_panicked`; on the blocking pool it comes back as a `JoinError`,
//! mapped here to the same code and wording, so a tool's panic reads the same whichever runtime
//! ran it.

use std::sync::atomic::{AtomicUsize, Ordering};

use tackle_protocol::ErrorCode;
use tokio::runtime::{Handle, RuntimeFlavor};
use tokio::task::JoinError;

use crate::ToolError;

/// Runs `f` to completion without stalling the executor; `Err` only when it panicked on the
/// blocking pool.
pub async fn run_blocking<T, F>(f: F) -> Result<T, JoinError>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let multi_thread = Handle::try_current()
        .is_ok_and(|handle| handle.runtime_flavor() == RuntimeFlavor::MultiThread);
    if multi_thread {
        Ok(tokio::task::block_in_place(f))
    } else {
        tokio::task::spawn_blocking(f).await
    }
}

/// Tools' blocking work running now, across every session of the process.
static TOOL_WORK_RUNNING: AtomicUsize = AtomicUsize::new(0);

/// How many tools' blocking work ([`run_tool_blocking`]) is running in this process now, the
/// caller's own included: work that fans out over threads (a directory walk) shares the cores
/// with the rest by it.
pub fn tool_work_running() -> usize {
    TOOL_WORK_RUNNING.load(Ordering::Relaxed)
}

/// Counts one piece of tool work in [`TOOL_WORK_RUNNING`] while it lives (a panic included).
struct Running;

impl Running {
    fn start() -> Running {
        TOOL_WORK_RUNNING.fetch_add(1, Ordering::Relaxed);
        Running
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        TOOL_WORK_RUNNING.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A tool's blocking work, through [`run_blocking`]; a worker that panicked or was cancelled
/// becomes the stable result [`worker_failed`] describes. `tool` names the tool in it.
pub async fn run_tool_blocking<T, F>(tool: &str, f: F) -> Result<T, ToolError>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    run_blocking(move || {
        let _running = Running::start();
        f()
    })
    .await
    .map_err(|e| worker_failed(tool, e))
}

/// A blocking worker that did not return: a panic is `tool_panicked` (as the runtime reports a
/// panic during `execute`), a cancellation (the runtime shutting down) is `cancelled`.
fn worker_failed(tool: &str, e: JoinError) -> ToolError {
    match e.try_into_panic() {
        Ok(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_owned());
            ToolError::new(
                ErrorCode::PANICKED,
                format!(
                    "{tool} panicked during execute: {what}; this is a bug in the tool, not in \
                     the call"
                ),
            )
        }
        Err(_) => ToolError::new(
            ErrorCode::CANCELLED,
            format!(
                "{tool}: its blocking work was cancelled because the runtime is shutting down; \
                 run the call again"
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "current_thread")]
    async fn a_panic_on_the_blocking_pool_is_tool_panicked() {
        let err = run_tool_blocking("probe", || -> u8 { panic!("boom") })
            .await
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::PANICKED);
        assert!(
            err.message
                .starts_with("probe panicked during execute: boom"),
            "{err}"
        );
    }

    /// Two pieces of work, each waiting inside until the other has started: each sees both
    /// counted, and neither ends before both have looked (else the first to end could leave
    /// before the other read). Other tests may run work at the same time, so the counts are
    /// lower bounds.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn running_work_is_counted_while_it_runs() {
        let both = std::sync::Arc::new(std::sync::Barrier::new(2));
        let task = |both: std::sync::Arc<std::sync::Barrier>| {
            run_tool_blocking("probe", move || {
                both.wait();
                let seen = tool_work_running();
                both.wait();
                seen
            })
        };
        let (a, b) = tokio::join!(
            tokio::spawn(task(std::sync::Arc::clone(&both))),
            tokio::spawn(task(both))
        );
        for seen in [a.unwrap().unwrap(), b.unwrap().unwrap()] {
            assert!(seen >= 2, "{seen} running while two were");
        }
    }

    #[tokio::test(flavor = "current_thread")]
    async fn work_that_returns_is_passed_through() {
        let got = run_tool_blocking("probe", || 7).await;
        assert_eq!(got, Ok(7));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn on_the_multi_threaded_runtime_the_work_runs_in_place() {
        let here = std::thread::current().id();
        let ran_on = run_tool_blocking("probe", move || std::thread::current().id())
            .await
            .unwrap();
        assert_eq!(ran_on, here);
    }
}
