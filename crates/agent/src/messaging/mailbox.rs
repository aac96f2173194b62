//! The tree's mailbox: messages accepted and not yet consumed, by recipient; the message each
//! idempotency key produced; the hop of the message each session is handling. Pure data under
//! the tree's lock; admission ([`Mailbox::admit`]) is the seed's three guards.

use std::collections::HashMap;

use tackle_protocol::{ErrorCode, SessionId};

use crate::messaging::codes;
use crate::messaging::settings::MessagingSettings;

/// How a message joins the recipient's conversation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// At the recipient's next safe boundary, while it works.
    Steer,
    /// When the recipient's model next ends its turn (or its next run starts).
    Queue,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Steer => "steer",
            Mode::Queue => "queue",
        }
    }

    pub fn parse(word: &str) -> Option<Self> {
        match word {
            "steer" => Some(Mode::Steer),
            "queue" => Some(Mode::Queue),
            _ => None,
        }
    }
}

/// A message accepted and not yet consumed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pending {
    pub id: String,
    pub from: SessionId,
    /// How the recipient is told who sent it.
    pub sender: String,
    pub mode: Mode,
    pub body: String,
    pub hop: u32,
}

/// What a key produced: the message and its recipient.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prior {
    pub message_id: String,
    pub recipient: SessionId,
    pub mode: Mode,
}

/// Why a send was not admitted: one of the seed's codes and the text the sender reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejected {
    pub code: ErrorCode,
    pub message: String,
}

#[derive(Default)]
pub struct Mailbox {
    pending: HashMap<SessionId, Vec<Pending>>,
    /// Messages admitted whose `message_accepted` record is being written: they count against
    /// every guard, are delivered to nobody, and their keys make a repeat of the call wait.
    reserved: HashMap<String, (SessionId, SessionId)>,
    keys: HashMap<String, Prior>,
    /// The hop of the last message each session consumed in its running run.
    handling: HashMap<SessionId, u32>,
}

impl Mailbox {
    /// The hop a message `sender` sends now carries: one past the message it is handling.
    pub fn next_hop(&self, sender: &SessionId) -> u32 {
        self.handling.get(sender).copied().unwrap_or(0) + 1
    }

    /// Whether a message of `hop` from `from` to `to` may be accepted: the recipient's pending
    /// count, the hop ceiling and the pair's window, in the seed's order.
    pub fn admit(
        &self,
        settings: &MessagingSettings,
        from: &SessionId,
        to: &SessionId,
        hop: u32,
    ) -> Result<(), Rejected> {
        let pending = self.pending.get(to).map_or(&[][..], Vec::as_slice);
        let reserved_for = |pair: Option<&SessionId>| {
            self.reserved
                .values()
                .filter(|(f, t)| t == to && pair.is_none_or(|p| p == f))
                .count()
        };
        let waiting = pending.len() + reserved_for(None);
        if waiting >= settings.max_pending_per_session {
            return Err(Rejected {
                code: codes::INBOX_FULL,
                message: format!(
                    "send_message: the recipient already has {} pending messages, the most \
                     [messaging] max_pending_per_session allows; nothing was admitted: wait \
                     until it has read them",
                    waiting
                ),
            });
        }
        if settings.max_hops > 0 && i64::from(hop) > settings.max_hops {
            return Err(Rejected {
                code: codes::MAX_HOPS_EXCEEDED,
                message: format!(
                    "send_message: this message would be hop {hop} of a chain of messages each \
                     sent while handling the one before, past [messaging] max_hops = {}; answer \
                     without another message, or finish your turn",
                    settings.max_hops
                ),
            });
        }
        let inflight =
            pending.iter().filter(|m| &m.from == from).count() + reserved_for(Some(from));
        if settings.max_inflight_per_pair > 0 && inflight >= settings.max_inflight_per_pair {
            return Err(Rejected {
                code: codes::INFLIGHT_FULL,
                message: format!(
                    "send_message: {inflight} of your messages to this recipient are not yet \
                     read, the most [messaging] max_inflight_per_pair allows; wait for it to \
                     read them before sending more"
                ),
            });
        }
        Ok(())
    }

    /// Holds a place for a message from `from` to `to` under `key` while its record is written.
    pub fn reserve(&mut self, key: &str, from: &SessionId, to: &SessionId) {
        self.reserved
            .insert(key.to_owned(), (from.clone(), to.clone()));
    }

    /// Gives back the place `key` held (its record was written, or failed).
    pub fn release(&mut self, key: &str) {
        self.reserved.remove(key);
    }

    /// Whether a message under `key` is being recorded now.
    pub fn in_flight(&self, key: &str) -> bool {
        self.reserved.contains_key(key)
    }

    /// The message a key already produced, if any.
    pub fn prior(&self, key: &str) -> Option<&Prior> {
        self.keys.get(key)
    }

    /// Records an accepted message for `to` under `key`.
    pub fn accept(&mut self, to: &SessionId, key: String, message: Pending) {
        self.keys.insert(
            key,
            Prior {
                message_id: message.id.clone(),
                recipient: to.clone(),
                mode: message.mode,
            },
        );
        self.pending.entry(to.clone()).or_default().push(message);
    }

    /// Remembers a key whose message was already consumed (a tree rebuilt from the logs).
    pub fn remember(&mut self, key: String, prior: Prior) {
        self.keys.insert(key, prior);
    }

    /// Whether `to` has a message it would take now: any steer one, and a queued one when
    /// `with_queued`.
    pub fn has(&self, to: &SessionId, with_queued: bool) -> bool {
        self.pending
            .get(to)
            .is_some_and(|p| p.iter().any(|m| with_queued || m.mode == Mode::Steer))
    }

    /// How many messages wait for `to`.
    pub fn count(&self, to: &SessionId) -> usize {
        self.pending.get(to).map_or(0, Vec::len)
    }

    /// Takes `to`'s steer messages (and its queued ones when `with_queued`), oldest first.
    pub fn take(&mut self, to: &SessionId, with_queued: bool) -> Vec<Pending> {
        let Some(pending) = self.pending.get_mut(to) else {
            return Vec::new();
        };
        let (taken, kept): (Vec<Pending>, Vec<Pending>) = pending
            .drain(..)
            .partition(|m| with_queued || m.mode == Mode::Steer);
        *pending = kept;
        taken
    }

    /// `session` is handling a message of `hop`.
    pub fn handling(&mut self, session: &SessionId, hop: u32) {
        self.handling.insert(session.clone(), hop);
    }

    /// `session`'s run ended: what it sends next starts a new chain.
    pub fn idle(&mut self, session: &SessionId) {
        self.handling.remove(session);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sid(s: &str) -> SessionId {
        SessionId(s.to_owned())
    }

    fn message(id: &str, from: &str, mode: Mode) -> Pending {
        Pending {
            id: id.into(),
            from: sid(from),
            sender: "parent".into(),
            mode,
            body: "b".into(),
            hop: 1,
        }
    }

    #[test]
    fn steer_messages_are_taken_at_every_boundary_queued_ones_at_a_turns_end() {
        let mut m = Mailbox::default();
        let to = sid("child");
        m.accept(&to, "k1".into(), message("1", "p", Mode::Queue));
        m.accept(&to, "k2".into(), message("2", "p", Mode::Steer));
        assert!(m.has(&to, false));
        assert_eq!(m.take(&to, false)[0].id, "2");
        assert!(!m.has(&to, false));
        assert!(m.has(&to, true));
        assert_eq!(m.take(&to, true)[0].id, "1");
        assert_eq!(m.prior("k1").unwrap().message_id, "1");
    }

    #[test]
    fn the_guards_each_turn_off() {
        let mut m = Mailbox::default();
        let to = sid("child");
        for n in 0..4 {
            m.accept(
                &to,
                format!("k{n}"),
                message(&n.to_string(), "p", Mode::Steer),
            );
        }
        let on = MessagingSettings::default();
        let code = |s: &MessagingSettings, hop| m.admit(s, &sid("p"), &to, hop).map_err(|r| r.code);
        assert_eq!(code(&on, 1), Err(codes::INFLIGHT_FULL));
        assert_eq!(code(&on, 9), Err(codes::MAX_HOPS_EXCEEDED));
        let off = MessagingSettings {
            max_hops: 0,
            max_inflight_per_pair: 0,
            ..on
        };
        assert_eq!(code(&off, 1000), Ok(()));
        assert_eq!(
            m.admit(&on, &sid("other"), &to, 1).map_err(|r| r.code),
            Ok(())
        );
    }

    #[test]
    fn a_reserved_place_counts_against_every_guard_until_released() {
        let settings = MessagingSettings {
            max_pending_per_session: 2,
            max_inflight_per_pair: 1,
            ..MessagingSettings::DEFAULT
        };
        let mut m = Mailbox::default();
        m.reserve("k1", &sid("a"), &sid("root"));
        assert!(m.in_flight("k1"));
        // The pair's window is taken by the reserved message.
        let pair = m.admit(&settings, &sid("a"), &sid("root"), 1).unwrap_err();
        assert_eq!(pair.code, codes::INFLIGHT_FULL);
        // Another sender still fits, and then the inbox is full.
        m.admit(&settings, &sid("b"), &sid("root"), 1).unwrap();
        m.reserve("k2", &sid("b"), &sid("root"));
        let full = m.admit(&settings, &sid("c"), &sid("root"), 1).unwrap_err();
        assert_eq!(full.code, codes::INBOX_FULL);
        // Released (its record failed): the places are free again.
        m.release("k1");
        m.release("k2");
        assert!(!m.in_flight("k1"));
        m.admit(&settings, &sid("a"), &sid("root"), 1).unwrap();
    }
}
