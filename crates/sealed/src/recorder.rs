//! Where the posture's changes are recorded: the session's own log.

use std::sync::Arc;

use futures::future::BoxFuture;
use tackle_protocol::{Event, SealedRecord};
use tackle_runtime::Session;

/// Records a change durably before it takes effect for the planner.
pub trait Recorder: Send + Sync {
    fn record(&self, record: SealedRecord) -> BoxFuture<'_, Result<(), String>>;
}

/// Records into a session's log, as a `sealed` event.
pub struct SessionRecorder(pub Arc<Session>);

impl Recorder for SessionRecorder {
    fn record(&self, record: SealedRecord) -> BoxFuture<'_, Result<(), String>> {
        Box::pin(async move {
            self.0
                .append_event(&Event::Sealed(record))
                .await
                .map(|_| ())
                .map_err(|e| e.to_string())
        })
    }
}

/// Keeps records in memory, for tests and for tools used without a session.
#[derive(Default)]
pub struct MemoryRecorder(pub std::sync::Mutex<Vec<SealedRecord>>);

impl Recorder for MemoryRecorder {
    fn record(&self, record: SealedRecord) -> BoxFuture<'_, Result<(), String>> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(record);
        Box::pin(std::future::ready(Ok(())))
    }
}
