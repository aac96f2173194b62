//! Live progress for user interfaces. Never part of model history.

use tackle_protocol::CallId;

/// Receives sanitized live messages and display text while calls run.
pub trait ProgressObserver: Send + Sync {
    fn on_progress(&self, call: &CallId, message: Option<&str>, display: Option<&str>);
}
