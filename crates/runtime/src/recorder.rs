//! Appending events without blocking the async executor.

use std::sync::Arc;

use tackle_protocol::Event;
use tackle_store::EventLog;

use crate::error::RuntimeError;

#[derive(Clone)]
pub(crate) struct Recorder {
    log: Arc<EventLog>,
}

impl Recorder {
    pub fn new(log: Arc<EventLog>) -> Self {
        Self { log }
    }

    pub fn append_blocking(&self, event: &Event) -> Result<u64, RuntimeError> {
        let value = serde_json::to_value(event).map_err(|e| RuntimeError::Join(e.to_string()))?;
        Ok(self.log.append(&value)?)
    }

    /// Append and wait until the event is durable. Concurrent appends group-commit.
    pub async fn append(&self, event: Event) -> Result<u64, RuntimeError> {
        let this = self.clone();
        tokio::task::spawn_blocking(move || this.append_blocking(&event))
            .await
            .map_err(|e| RuntimeError::Join(e.to_string()))?
    }
}
