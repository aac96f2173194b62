//! Messaging across the daemons of a fleet: a send to a session of the tree that this process
//! does not hold, and that another process holds (or that is no child this tree could wake),
//! is *posted* to the fleet's mailbox ([`tackle_store::backend::MailBackend`]) instead of
//! written into the recipient's log; the process holding the recipient delivers it.
//!
//! Delivery is the same acceptance a local send makes: a `message_accepted` record in the
//! recipient's log (synced), then the tree's mailbox. The record's replication marks the
//! posted message delivered in the same database statement, so a holder killed before its
//! commit leaves the message waiting for the next holder, which has taken the log and so
//! knows every key it accepted (a key seen is never accepted twice). The tree delivers when a
//! root is added, when the mailbox's doorbell rings for a session it holds, and on the
//! mailbox's poll.
//!
//! The message id of a posted message derives from its call's idempotency key, so a send
//! retried after its process was killed posts nothing new.
//!
//! **Refuses** a posted message whose key is not its sender's (the database checked the
//! sender's lease; the key must agree), and a send to a session outside the tree: a root's
//! recorded parent is the only session outside this process the tree can name.

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tackle_protocol::{ErrorCode, SessionId};
use tackle_runtime::Session;
use tackle_store::backend::{MailBackend, Posted, Waiting, mail_backend};
use tackle_tool::ToolError;
use tokio::sync::mpsc;

use crate::delegate::tree::{Status, Tree};
use crate::messaging::codes;
use crate::messaging::mailbox::{Mode, Pending, Prior};
use crate::messaging::settings::MessagingSettings;
use crate::messaging::tree_side::{Outgoing, RecipientState, Sent, accepted_record};
use crate::record::now_ms;

/// A root's recorded parent, held by no process of this tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    pub parent: SessionId,
    /// The handle the parent knows the root by.
    pub handle: String,
}

/// The parent `root`'s log names, when a fleet's mailbox could reach it.
pub(crate) fn origin(root: &Session) -> Option<Origin> {
    mail_backend()?;
    let (parent, handle) = crate::delegate::rebuild::origin_of(&root.event_log_path())?;
    Some(Origin { parent, handle })
}

/// The message id of the message sent under `key`: the same in every process.
fn keyed_id(key: &str) -> String {
    let digest = Sha256::digest(key.as_bytes());
    format!("msg_{}", hex::encode(&digest[..8]))
}

/// Has the tree deliver what waits for `id` (starting the tree's delivery when it is the
/// first): a no-op without a fleet's mailbox or outside a runtime.
pub(crate) fn deliver_to(tree: &Arc<Tree>, id: &SessionId) {
    let Some(mail) = mail_backend() else {
        return;
    };
    let rings = tree.mail.get_or_init(|| start(tree, mail));
    if let Some(rings) = rings {
        let _ = rings.send(Some(id.clone()));
    }
}

/// The tree's delivery task: it takes rings (a session, or `None` for all) until the tree is
/// gone. `None` when there is no runtime to run it on.
fn start(
    tree: &Arc<Tree>,
    mail: Arc<dyn MailBackend>,
) -> Option<mpsc::UnboundedSender<Option<SessionId>>> {
    let handle = tokio::runtime::Handle::try_current().ok()?;
    let (tx, mut rx) = mpsc::unbounded_channel::<Option<SessionId>>();
    let doorbell = tx.clone();
    mail.subscribe(Box::new(move |recipient| {
        doorbell
            .send(recipient.map(|r| SessionId(r.to_owned())))
            .is_ok()
    }));
    let weak = Arc::downgrade(tree);
    handle.spawn(async move {
        while let Some(ring) = rx.recv().await {
            let Some(tree) = weak.upgrade() else {
                return;
            };
            tree.deliver(mail.as_ref(), ring.as_ref()).await;
        }
    });
    Some(tx)
}

impl Tree {
    /// The fleet's mailbox when a message for `to` (a session this process does not hold)
    /// must be posted: `to` is no child of this tree (a root's recorded parent), or another
    /// process holds it. `None`: written here, as in one process.
    pub(crate) fn posts_to(
        &self,
        to: &SessionId,
    ) -> Result<Option<Arc<dyn MailBackend>>, ToolError> {
        let Some(mail) = mail_backend() else {
            return Ok(None);
        };
        let child = self.lock().nodes.iter().any(|n| &n.session == to);
        if !child {
            return Ok(Some(mail));
        }
        match mail.held_elsewhere(&to.0) {
            Ok(true) => Ok(Some(mail)),
            Ok(false) => Ok(None),
            Err(e) => Err(ToolError::new(
                ErrorCode::IO,
                format!(
                    "send_message: looking up who runs the recipient failed ({e}); nothing was accepted: send it again"
                ),
            )),
        }
    }

    /// Posts `message` (admitted, its place reserved under `out.key`) to the fleet's mailbox.
    pub(crate) fn post(
        &self,
        mail: &dyn MailBackend,
        sender: &SessionId,
        out: &Outgoing,
        message: Pending,
        settings: &MessagingSettings,
    ) -> Result<Sent, ToolError> {
        let message_id = keyed_id(&out.key);
        let posted = json!({
            "sender": message.sender,
            "mode": message.mode.as_str(),
            "body": message.body,
            "hop": message.hop,
            "key": out.key,
            "at_ms": now_ms(),
        });
        let result = mail.post(
            &sender.0,
            &out.to.id.0,
            &message_id,
            &posted,
            settings.max_pending_per_session,
        );
        {
            let mut state = self.lock();
            state.mailbox.release(&out.key);
            if matches!(result, Ok(Posted::Posted | Posted::Repeated)) {
                state.mailbox.remember(
                    out.key.clone(),
                    Prior {
                        message_id: message_id.clone(),
                        recipient: out.to.id.clone(),
                        mode: out.mode,
                    },
                );
            }
        }
        self.accepted.notify_waiters();
        let repeated = match result {
            Ok(Posted::Posted) => false,
            Ok(Posted::Repeated) => true,
            Ok(Posted::Full) => {
                return Err(ToolError::new(
                    codes::INBOX_FULL,
                    format!(
                        "send_message: the recipient already has {} pending messages, the most \
                         [messaging] max_pending_per_session allows; nothing was admitted: wait \
                         until it has read them",
                        settings.max_pending_per_session
                    ),
                ));
            }
            Err(e) => {
                return Err(ToolError::new(
                    ErrorCode::IO,
                    format!(
                        "send_message: posting the message to the fleet's mailbox failed ({e}); \
                         nothing was accepted: send it again"
                    ),
                ));
            }
        };
        Ok(Sent {
            message_id,
            mode: out.mode,
            // Another process holds the recipient: its loop takes the message at its next
            // boundary there.
            recipient_state: RecipientState::Queued,
            repeated,
        })
    }

    /// Delivers what waits for `only` (every session this process holds in the tree, when
    /// `None`). A message whose key this tree knows is not accepted again.
    async fn deliver(self: &Arc<Self>, mail: &dyn MailBackend, only: Option<&SessionId>) {
        let held: Vec<(SessionId, Session)> = self
            .lock()
            .sessions
            .iter()
            .filter(|(id, _)| only.is_none_or(|o| o == *id))
            .map(|(id, s)| (id.clone(), s.clone()))
            .collect();
        for (id, session) in held {
            // A read is bounded: read on while it brings messages this pass has not seen, so
            // what waits past the bound is not left for the next ring or poll. A message that
            // stays (its record could not be written) is seen once per pass.
            let mut seen = HashSet::new();
            // Unreachable or no longer held: the next ring or poll tries again.
            while let Ok(waiting) = mail.waiting(&id.0) {
                let fresh: Vec<Waiting> = waiting
                    .into_iter()
                    .filter(|w| seen.insert(w.message_id.clone()))
                    .collect();
                if fresh.is_empty() {
                    break;
                }
                for w in fresh {
                    self.accept_posted(mail, &id, &session, w).await;
                }
            }
        }
    }

    /// Accepts one posted message for `to`: its record in `to`'s log, then the mailbox; a
    /// finished child is woken.
    async fn accept_posted(
        self: &Arc<Self>,
        mail: &dyn MailBackend,
        to: &SessionId,
        session: &Session,
        w: Waiting,
    ) {
        let Some((key, message)) = parse(&w) else {
            // Read again on every scan, it would hold a place in every bounded read until
            // enough of them stalled the mailbox: taken out, once.
            let outcome = match mail.discard(&to.0, &w.message_id) {
                Ok(()) => "discarded".to_owned(),
                Err(e) => format!("left waiting, since discarding it failed ({e})"),
            };
            eprintln!(
                "tackle: message {:?} posted by session {:?} for session {} does not have the form a tackle sender posts; it was not delivered and is {outcome}",
                w.message_id, w.sender, to.0
            );
            return;
        };
        {
            let mut state = self.lock();
            if state.mailbox.prior(&key).is_some() || state.mailbox.in_flight(&key) {
                return;
            }
            state.mailbox.reserve(&key, &message.from, to);
        }
        let written = session.append_event(&accepted_record(&message, &key)).await;
        let wake = {
            let mut state = self.lock();
            state.mailbox.release(&key);
            if written.is_ok() {
                state.mailbox.accept(to, key, message);
            }
            written.is_ok()
                && state
                    .nodes
                    .iter()
                    .any(|n| &n.session == to && n.status != Status::Running)
        };
        self.accepted.notify_waiters();
        if written.is_ok() {
            self.ends.send_modify(|n| *n += 1);
        }
        if wake {
            let _ = self.wake(to);
        }
    }
}

/// A posted message as the tree's mailbox holds it, with its key; `None` when it does not
/// have the form a tackle sender posts, or its key is not its sender's.
fn parse(w: &Waiting) -> Option<(String, Pending)> {
    let m = &w.message;
    let text = |k: &str| m.get(k).and_then(Value::as_str);
    let key = text("key")?;
    if !key.starts_with(&format!("{}/", w.sender)) || keyed_id(key) != w.message_id {
        return None;
    }
    Some((
        key.to_owned(),
        Pending {
            id: w.message_id.clone(),
            from: SessionId(w.sender.clone()),
            sender: text("sender")?.to_owned(),
            mode: Mode::parse(text("mode")?)?,
            body: text("body")?.to_owned(),
            hop: u32::try_from(m.get("hop")?.as_u64()?).ok()?,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waiting(sender: &str, key: &str, message: Value) -> Waiting {
        Waiting {
            message_id: keyed_id(key),
            sender: sender.to_owned(),
            message,
        }
    }

    #[test]
    fn a_key_names_one_message_id_everywhere() {
        assert_eq!(keyed_id("s/1/2/c"), keyed_id("s/1/2/c"));
        assert_ne!(keyed_id("s/1/2/c"), keyed_id("s/1/2/d"));
        assert!(keyed_id("x").starts_with("msg_") && keyed_id("x").len() == 20);
    }

    #[test]
    fn a_posted_message_is_read_back_with_its_key() {
        let body = json!({"sender": "general_1a2b3c4d", "mode": "queue", "body": "hi",
                          "hop": 2, "key": "S/7/1/c", "at_ms": 1});
        let (key, p) = parse(&waiting("S", "S/7/1/c", body)).unwrap();
        assert_eq!(key, "S/7/1/c");
        assert_eq!(p.from, SessionId("S".to_owned()));
        assert_eq!((p.mode, p.hop, p.body.as_str()), (Mode::Queue, 2, "hi"));
    }

    #[test]
    fn a_posted_message_that_is_not_its_senders_or_malformed_is_refused() {
        let good = json!({"sender": "x", "mode": "steer", "body": "b", "hop": 1, "key": "S/1/1/c"});
        // Another sender's key, a key the id was not made from, and each field missing or
        // of the wrong type.
        assert!(parse(&waiting("T", "S/1/1/c", good.clone())).is_none());
        let mut other_id = waiting("S", "S/1/1/c", good.clone());
        other_id.message_id = keyed_id("S/1/1/d");
        assert!(parse(&other_id).is_none());
        for field in ["sender", "mode", "body", "hop", "key"] {
            let mut m = good.clone();
            m.as_object_mut().unwrap().remove(field);
            assert!(parse(&waiting("S", "S/1/1/c", m)).is_none(), "{field}");
            let mut m = good.clone();
            m[field] = json!([1]);
            assert!(parse(&waiting("S", "S/1/1/c", m)).is_none(), "{field}");
        }
        let mut m = good;
        m["hop"] = json!(u64::MAX);
        assert!(parse(&waiting("S", "S/1/1/c", m)).is_none());
        assert!(parse(&waiting("S", "S/1/1/c", json!("text"))).is_none());
    }

    #[test]
    fn generated_nesting_in_any_field_is_refused_without_being_walked() {
        // As deep as serde_json parses (its recursion limit, 128), as arrays and as objects.
        for open_close in [("[", "]"), ("{\"a\":", "}")] {
            let (open, close) = open_close;
            let deep = format!("{}1{}", open.repeat(127), close.repeat(127));
            let nested: Value = serde_json::from_str(&deep).unwrap();
            for field in ["sender", "mode", "body", "hop", "key"] {
                let mut m = json!({"sender": "x", "mode": "steer", "body": "b", "hop": 1,
                                   "key": "S/1/1/c"});
                m[field] = nested.clone();
                assert!(parse(&waiting("S", "S/1/1/c", m)).is_none(), "{field}");
            }
            let past = format!("{}1{}", open.repeat(200), close.repeat(200));
            assert!(
                serde_json::from_str::<Value>(&past).is_err(),
                "refused by the parser"
            );
        }
    }
}
