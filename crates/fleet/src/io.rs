//! `FleetIo`: the fleet backend's own async runtime, so the storage seam's synchronous calls
//! (an event log's group commit, an artifact read) can wait on PostgreSQL and the bucket from
//! any thread, an async executor's included.
//!
//! **Key decision:** the pool's connections live on this runtime, created on it, and a caller
//! waits on a plain channel, never `block_on`: a caller on another runtime's worker blocks as
//! it does for `fdatasync`, and cannot starve the connections it waits for. Rejected:
//! `Handle::block_on` from the caller (panics inside a runtime) and `block_in_place` (needs
//! the caller's runtime to be multi-threaded).

use std::future::Future;
use std::sync::mpsc;

use crate::FleetError;

/// A runtime of two worker threads that outlives every call made on it.
#[derive(Debug)]
pub struct FleetIo {
    runtime: tokio::runtime::Runtime,
}

impl FleetIo {
    /// Starts the runtime.
    pub fn start() -> Result<Self, FleetError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("tackle-fleet-io")
            .enable_all()
            .build()
            .map_err(|e| FleetError::Database {
                action: "start the fleet's I/O threads",
                detail: e.to_string(),
            })?;
        Ok(Self { runtime })
    }

    /// Runs `future` on the fleet runtime and waits for it from this thread.
    pub fn run<T: Send + 'static>(
        &self,
        future: impl Future<Output = T> + Send + 'static,
    ) -> Result<T, FleetError> {
        let (tx, rx) = mpsc::sync_channel(1);
        self.runtime.spawn(async move {
            let _ = tx.send(future.await);
        });
        rx.recv().map_err(|_| FleetError::Database {
            action: "wait for the fleet's I/O threads",
            detail: "the task ended without an answer (it panicked)".to_owned(),
        })
    }

    /// Runs `future` on the fleet's threads and awaits its answer from any runtime.
    pub async fn call<T: Send + 'static>(
        &self,
        future: impl Future<Output = T> + Send + 'static,
    ) -> Result<T, FleetError> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.runtime.spawn(async move {
            let _ = tx.send(future.await);
        });
        rx.await.map_err(|_| FleetError::Database {
            action: "wait for the fleet's I/O threads",
            detail: "the task ended without an answer (it panicked)".to_owned(),
        })
    }

    /// Starts `future` on the fleet runtime without waiting for it.
    pub fn spawn(&self, future: impl Future<Output = ()> + Send + 'static) {
        self.runtime.spawn(future);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_from_inside_another_runtime_waits_without_panicking() {
        let io = std::sync::Arc::new(FleetIo::start().unwrap());
        let outer = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let got = outer.block_on({
            let io = io.clone();
            async move {
                io.run(async {
                    tokio::task::yield_now().await;
                    7
                })
            }
        });
        assert_eq!(got.unwrap(), 7);
    }
}
