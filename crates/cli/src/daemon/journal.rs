//! What each hosted session has told its clients, numbered: the `session/update`
//! notifications and permission requests the daemon sends, kept so a client that attaches
//! later (or comes back after a dropped connection) is told what it missed from its cursor,
//! then what follows as it happens.
//!
//! A cursor is `<epoch>.<seq>`: the epoch is drawn when the daemon starts, so a cursor from
//! before a restart is recognised as such, and the client is told the stored conversation from
//! the session's log instead (what the journal held died with the process; the log did not).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use tokio::sync::broadcast;

use serde_json::json;

use crate::acp::update::{Sink, Turn, Update};

/// The most messages, and bytes of them, one session's journal keeps; an attach from before
/// the oldest is told the stored conversation instead.
const KEPT: usize = 4096;
const KEPT_BYTES: usize = 4 * 1024 * 1024;

/// How many messages a live subscriber may fall behind before it is cut off (it attaches again
/// from its cursor and loses nothing the journal still keeps).
const LIVE_BACKLOG: usize = 1024;

/// One message as sent: its number in the session's journal and its JSON-RPC text.
#[derive(Debug)]
pub struct Entry {
    pub seq: u64,
    pub message: String,
}

struct Kept {
    /// The number the next message gets (the first is 1).
    next: u64,
    entries: VecDeque<Arc<Entry>>,
    /// The bytes of the messages in `entries`.
    bytes: usize,
}

/// One session's journal.
pub struct Journal {
    kept: Mutex<Kept>,
    live: broadcast::Sender<Arc<Entry>>,
}

/// Where an attach starts.
pub enum From {
    /// After the message numbered `seq` of this daemon's epoch.
    After(u64),
    /// From the start of the session: the stored conversation, then live.
    Start,
}

/// What an attaching client is told before the live messages.
pub struct Backlog {
    /// The journal's messages after the cursor, oldest first.
    pub entries: Vec<Arc<Entry>>,
    /// The cursor is older than the journal (or from another epoch, or missing): tell the
    /// stored conversation first; `entries` then holds every message the journal keeps, for
    /// when the conversation cannot be read (a prompt holds it).
    pub retell: bool,
    pub live: broadcast::Receiver<Arc<Entry>>,
}

impl Default for Journal {
    fn default() -> Self {
        Journal {
            kept: Mutex::new(Kept {
                next: 1,
                entries: VecDeque::new(),
                bytes: 0,
            }),
            live: broadcast::channel(LIVE_BACKLOG).0,
        }
    }
}

impl Journal {
    fn kept(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.kept.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Numbers `message`, keeps it and hands it to every live subscriber.
    pub fn append(&self, message: String) -> u64 {
        let mut kept = self.kept();
        let seq = kept.next;
        kept.next += 1;
        let entry = Arc::new(Entry { seq, message });
        kept.bytes += entry.message.len();
        kept.entries.push_back(entry.clone());
        while kept.entries.len() > KEPT || (kept.bytes > KEPT_BYTES && kept.entries.len() > 1) {
            if let Some(old) = kept.entries.pop_front() {
                kept.bytes -= old.message.len();
            }
        }
        // Sent under the lock, so a subscriber taking its backlog never misses or repeats one.
        let _ = self.live.send(entry);
        seq
    }

    /// The number of the last message sent (0 before the first).
    pub fn last(&self) -> u64 {
        self.kept().next - 1
    }

    /// What a client attaching `from` is told, and its subscription to what follows.
    pub fn attach(&self, from: From) -> Backlog {
        let kept = self.kept();
        let live = self.live.subscribe();
        let oldest = kept.entries.front().map_or(kept.next, |e| e.seq);
        match from {
            From::After(seq) if seq + 1 >= oldest && seq < kept.next => Backlog {
                entries: kept
                    .entries
                    .iter()
                    .filter(|e| e.seq > seq)
                    .cloned()
                    .collect(),
                retell: false,
                live,
            },
            _ => Backlog {
                entries: kept.entries.iter().cloned().collect(),
                retell: true,
                live,
            },
        }
    }
}

/// Every hosted session's journal; the [`Sink`] the daemon's host tells its updates to.
#[derive(Default)]
pub struct Journals {
    by_session: Mutex<HashMap<String, Arc<Journal>>>,
}

impl Journals {
    /// Lets the journal of `session` go (the session was closed); its live subscribers see
    /// their streams end.
    pub fn remove(&self, session: &str) {
        self.by_session
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(session);
    }

    /// The journal of `session`, made on first use.
    pub fn of(&self, session: &str) -> Arc<Journal> {
        self.by_session
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(session.to_owned())
            .or_default()
            .clone()
    }
}

impl Sink for Journals {
    fn send(&self, session: &str, update: Update) {
        let message = crate::acp::wire::update_notification(session, update).to_string();
        self.of(session).append(message);
    }

    /// `_tackle/turn_started` (`{sessionId, input}`, `input` null for a turn that goes on from
    /// the log) and `_tackle/turn_ended` (`{sessionId, stopReason}`): an attached client learns
    /// that a prompt it did not send runs, and when it is over.
    fn turn(&self, session: &str, turn: Turn) {
        let message = match turn {
            Turn::Started { input } => json!({
                "jsonrpc": "2.0",
                "method": "_tackle/turn_started",
                "params": {"sessionId": session, "input": input},
            }),
            Turn::Ended { stop } => json!({
                "jsonrpc": "2.0",
                "method": "_tackle/turn_ended",
                "params": {"sessionId": session, "stopReason": crate::acp::wire::stop_reason(stop)},
            }),
        };
        self.of(session).append(message.to_string());
    }
}

/// A cursor as clients hold it.
pub fn cursor(epoch: &str, seq: u64) -> String {
    format!("{epoch}.{seq}")
}

/// Where a client's cursor starts it: after its message when it is of this epoch, else from the
/// start (a cursor from before a restart, or none).
pub fn parse_cursor(epoch: &str, cursor: Option<&str>) -> From {
    cursor
        .and_then(|c| c.split_once('.'))
        .filter(|(e, _)| *e == epoch)
        .and_then(|(_, seq)| seq.parse().ok())
        .map_or(From::Start, From::After)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_attach_gets_what_followed_its_cursor_then_live_messages() {
        let journal = Journal::default();
        for n in 1..=3 {
            journal.append(format!("m{n}"));
        }
        let mut backlog = journal.attach(From::After(1));
        assert!(!backlog.retell);
        let seen: Vec<&str> = backlog.entries.iter().map(|e| e.message.as_str()).collect();
        assert_eq!(seen, ["m2", "m3"]);
        journal.append("m4".to_owned());
        assert_eq!(backlog.live.try_recv().unwrap().message, "m4");
        assert_eq!(journal.last(), 4);
    }

    #[test]
    fn the_journal_keeps_at_most_its_bytes() {
        let journal = Journal::default();
        let big = "x".repeat(1024 * 1024);
        for _ in 0..10 {
            journal.append(big.clone());
        }
        let kept = journal.kept();
        assert!(kept.bytes <= KEPT_BYTES, "{}", kept.bytes);
        assert_eq!(kept.entries.len(), 4);
        assert_eq!(kept.entries.front().unwrap().seq, 7);
    }

    #[test]
    fn a_cursor_past_the_kept_messages_or_from_another_epoch_retells_the_session() {
        let journal = Journal::default();
        for n in 0..KEPT + 10 {
            journal.append(format!("m{n}"));
        }
        assert!(journal.attach(From::After(3)).retell);
        assert!(!journal.attach(From::After(20)).retell);
        assert!(journal.attach(From::Start).retell);
        // A cursor from the future (another daemon's numbers) is not believed either.
        assert!(journal.attach(From::After(1_000_000)).retell);
        assert!(matches!(parse_cursor("ab", Some("ab.7")), From::After(7)));
        assert!(matches!(parse_cursor("ab", Some("cd.7")), From::Start));
        assert!(matches!(parse_cursor("ab", Some("garbage")), From::Start));
        assert!(matches!(parse_cursor("ab", None), From::Start));
    }
}
