//! Appending events without blocking the async executor.
//!
//! An event that must be durable before it is acknowledged waits for `fdatasync` on a blocking
//! thread; one that only needs to be in the file (the start of a call, the end of a read-only
//! call) is written inline, which costs one `write` and no thread hand-off. See
//! [`tackle_store::Durability`] for what each promises.

use std::sync::Arc;

use tackle_protocol::Event;
use tackle_store::{Durability, EventLog};

use crate::blocking::run_blocking;
use crate::error::RuntimeError;

#[derive(Clone)]
pub(crate) struct Recorder {
    log: Arc<EventLog>,
}

impl Recorder {
    pub fn new(log: Arc<EventLog>) -> Self {
        Self { log }
    }

    pub fn append_blocking(
        &self,
        event: &Event,
        durability: Durability,
    ) -> Result<u64, RuntimeError> {
        Ok(self.log.append_with(event, durability)?)
    }

    /// Append and wait until the event is as durable as `durability` asks. Concurrent synced
    /// appends group-commit.
    pub async fn append(&self, event: &Event, durability: Durability) -> Result<u64, RuntimeError> {
        match durability {
            Durability::Written => self.append_blocking(event, durability),
            Durability::Synced => {
                let (this, event) = (self.clone(), event.clone());
                run_blocking(move || this.append_blocking(&event, durability)).await?
            }
        }
    }

    pub fn durable_seq(&self) -> u64 {
        self.log.last_durable_seq()
    }

    pub fn written_seq(&self) -> u64 {
        self.log.last_written_seq()
    }

    /// Waits until every event written so far is durable.
    pub fn sync(&self) -> Result<(), RuntimeError> {
        Ok(self.log.sync()?)
    }
}
