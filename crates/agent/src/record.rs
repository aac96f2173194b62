//! The conversation as events in the session's own log ([`tackle_runtime::Session`]), every
//! record synced before the loop goes on: a turn the model gave is never asked for twice, a
//! batch is never handed to the runtime without a record saying so.

use std::time::{SystemTime, UNIX_EPOCH};

use tackle_protocol::Event;
use tackle_runtime::Session;

use crate::error::AgentError;

/// Appends agent records to a session's log.
#[derive(Clone)]
pub struct Record {
    session: Session,
}

impl Record {
    pub fn new(session: Session) -> Self {
        Self { session }
    }

    pub async fn append(&self, event: Event) -> Result<u64, AgentError> {
        Ok(self.session.append_event(&event).await?)
    }
}

/// Unix time in milliseconds, for the records' `at_ms`.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}
