//! The mailbox of a tree rebuilt from the logs: every `message_accepted` in a session's log
//! without its `message_consumed` is pending again, and every key is remembered, so a message
//! a crash left unread is delivered once and a retried call finds its first message.

use std::collections::HashSet;
use std::ops::ControlFlow;
use std::path::Path;

use tackle_protocol::{Event, MessageAccepted, SessionId};
use tackle_store::EventLog;

use crate::delegate::Tree;
use crate::messaging::mailbox::{Mode, Pending};

/// Restores the messages of `session`'s log at `path` into `tree`. A log that cannot be read
/// holds no message this process can account for.
pub fn restore(tree: &Tree, session: &SessionId, path: &Path) {
    let mut accepted: Vec<MessageAccepted> = Vec::new();
    let mut consumed: HashSet<String> = HashSet::new();
    let _ = EventLog::visit_records(path, |record| {
        let kind = record.event.get("type").and_then(|t| t.as_str());
        if !matches!(kind, Some("message_accepted" | "message_consumed")) {
            return ControlFlow::Continue(());
        }
        match serde_json::from_value::<Event>(record.event) {
            Ok(Event::MessageAccepted(m)) => accepted.push(m),
            Ok(Event::MessageConsumed(m)) => {
                consumed.insert(m.message_id);
            }
            _ => {}
        }
        ControlFlow::Continue(())
    });
    for m in accepted {
        let done = consumed.contains(&m.message_id);
        let message = Pending {
            mode: Mode::parse(&m.mode).unwrap_or(Mode::Steer),
            id: m.message_id,
            from: m.from,
            sender: m.sender,
            body: m.body,
            hop: m.hop,
        };
        tree.restore_message(session, m.key, message, done);
    }
}
