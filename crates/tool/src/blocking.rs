//! Running blocking work (file reads, an `fdatasync`, publishing an artifact) from async code.
//!
//! On the multi-threaded runtime the work runs right here under `block_in_place`: the caller
//! keeps its thread and its cache, and the runtime moves other tasks off this worker, so no
//! wake-up of another thread sits on the call's critical path. Elsewhere (a current-thread
//! runtime, as in tests) it goes to the blocking pool.

use tokio::runtime::{Handle, RuntimeFlavor};
use tokio::task::JoinError;

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
