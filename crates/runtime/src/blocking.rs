//! Running short blocking work (an `fdatasync`, publishing a small artifact) from async code.
//!
//! On the multi-threaded runtime the work runs right here under `block_in_place`: the caller
//! keeps its thread and its cache, and the runtime moves other tasks off this worker, so no
//! wake-up of another thread sits on the call's critical path. Elsewhere (a current-thread
//! runtime, as in tests) it goes to the blocking pool as before.

use tokio::runtime::{Handle, RuntimeFlavor};

use crate::error::RuntimeError;

pub(crate) async fn run_blocking<T, F>(f: F) -> Result<T, RuntimeError>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let multi_thread = Handle::try_current()
        .is_ok_and(|handle| handle.runtime_flavor() == RuntimeFlavor::MultiThread);
    if multi_thread {
        Ok(tokio::task::block_in_place(f))
    } else {
        tokio::task::spawn_blocking(f)
            .await
            .map_err(|e| RuntimeError::Join(e.to_string()))
    }
}
