//! Live notifications for user interfaces and embedders: progress while calls run, and each
//! event once it is durable. Never part of model history.

use tackle_protocol::{CallId, Event};

/// Receives sanitized live messages and display text while calls run.
pub trait ProgressObserver: Send + Sync {
    fn on_progress(&self, call: &CallId, message: Option<&str>, display: Option<&str>);
}

/// Told about every event right after it is durably appended to the session log (so an
/// observer can rely on the record surviving a crash).
pub trait EventObserver: Send + Sync {
    fn on_recorded(&self, seq: u64, event: &Event);
}
