//! MCP logging: `logging/setLevel` per client, and the server's own messages sent as
//! `notifications/message` at the level the client asked for.
//!
//! What tackle logs is what it would otherwise print on stderr, which clients show as errors:
//! the posture line (info) when a client initializes or sets a level that includes it. A client
//! that never sets a level gets warnings and worse only, the default a quiet server owes the
//! client's log. (The 2026-07-28 revision retires logging; clients of older revisions still use
//! it, so it is served while rmcp carries it.)
#![allow(deprecated)] // rmcp marks logging deprecated with the protocol revision that retires it

use std::sync::Mutex;

use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::{Peer, RoleServer};

/// The level a client gets before it asks for one.
const DEFAULT_LEVEL: LoggingLevel = LoggingLevel::Warning;

/// The logger name tackle's messages carry.
const LOGGER: &str = "tackle";

/// A message the server sends to every client that wants its level.
#[derive(Clone, Debug)]
pub(crate) struct LogMessage {
    pub level: LoggingLevel,
    pub text: String,
}

/// One client's logging state.
#[derive(Default)]
pub(crate) struct ClientLog {
    level: Mutex<Option<LoggingLevel>>,
}

impl ClientLog {
    /// Records the level the client asked for.
    pub(crate) fn set_level(&self, level: LoggingLevel) {
        *self.level.lock().unwrap_or_else(|p| p.into_inner()) = Some(level);
    }

    /// Whether a message at `level` goes to this client.
    pub(crate) fn wants(&self, level: LoggingLevel) -> bool {
        let threshold = self
            .level
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .unwrap_or(DEFAULT_LEVEL);
        rank(level) >= rank(threshold)
    }

    /// Sends each of `messages` the client wants; a client that went away is not an error.
    pub(crate) async fn send(&self, peer: &Peer<RoleServer>, messages: &[LogMessage]) {
        for message in messages.iter().filter(|m| self.wants(m.level)) {
            let mut param = LoggingMessageNotificationParam::new(
                message.level,
                serde_json::Value::String(message.text.clone()),
            );
            param.logger = Some(LOGGER.to_owned());
            let _ = peer.notify_logging_message(param).await;
        }
    }
}

/// Severity order (RFC 5424, as MCP uses it): debug is lowest.
fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_gets_its_level_and_worse() {
        let log = ClientLog::default();
        assert!(!log.wants(LoggingLevel::Info));
        assert!(log.wants(LoggingLevel::Warning));
        log.set_level(LoggingLevel::Info);
        assert!(log.wants(LoggingLevel::Info));
        assert!(!log.wants(LoggingLevel::Debug));
        log.set_level(LoggingLevel::Emergency);
        assert!(!log.wants(LoggingLevel::Error));
        assert!(log.wants(LoggingLevel::Emergency));
    }
}
