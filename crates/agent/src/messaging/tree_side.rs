//! The tree's side of messaging: who a recipient reference names and how it relates to the
//! sender ([`Tree::locate`]), durable acceptance ([`Tree::send`]), and what a recipient's loop
//! takes at its boundaries ([`Tree::take_messages`]).
//!
//! Acceptance checks the guards and reserves the message's place under the tree's lock, writes
//! the `message_accepted` record outside it, then moves the message into the mailbox: sends
//! to one recipient write concurrently and share the log's group commit (one `fdatasync` for
//! all of them), a reserved place counts against every guard so parallel sends cannot
//! overshoot one, and a repeat of a call whose record is being written waits for it. Rejected:
//! holding one lock across the write, which serializes every send of the tree behind one sync
//! each; and checking under the lock with no reservation, which lets two sends both pass the
//! last free slot.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use tackle_protocol::{ErrorCode, Event, MessageAccepted, SessionId};
use tackle_tool::ToolError;

use crate::delegate::tree::{State, Status, Tree};
use crate::messaging::codes;
use crate::messaging::mailbox::{Mode, Pending, Prior};
use crate::messaging::settings::MessagingSettings;
use crate::record::now_ms;

/// The recipient of a send, resolved: its session and its relationship to the sender
/// (`parent`, `child`, `sibling` or `*`), the resource of its `message:` key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Peer {
    pub id: SessionId,
    pub relation: &'static str,
}

/// A send that passed `prepare`.
#[derive(Clone, Debug)]
pub struct Outgoing {
    pub to: Peer,
    pub body: String,
    pub mode: Mode,
    /// Sender session, run, turn and tool call.
    pub key: String,
}

/// Where the recipient stood when the message was accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecipientState {
    /// It runs; a steer message joins at its next boundary.
    Running,
    /// It holds the message until its model ends its turn or its next run starts.
    Queued,
    /// It had finished; a new run of it starts with the message as input.
    WakingFinished,
}

impl RecipientState {
    pub fn as_str(self) -> &'static str {
        match self {
            RecipientState::Running => "running",
            RecipientState::Queued => "queued",
            RecipientState::WakingFinished => "waking_finished",
        }
    }
}

/// An accepted message (or, for a retried call, the one it accepted first).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sent {
    pub message_id: String,
    pub mode: Mode,
    pub recipient_state: RecipientState,
    /// The call's key had already produced this message: nothing was appended.
    pub repeated: bool,
}

fn fail(code: ErrorCode, message: impl Into<String>) -> ToolError {
    ToolError::new(code, message)
}

/// Whether `s` has the form of a session id: tackle's (`20250101T120000Z-<16 hex>`) or a UUID.
pub fn is_session_id(s: &str) -> bool {
    let hex = |p: &str, n: usize| p.len() == n && p.bytes().all(|b| b.is_ascii_hexdigit());
    if let Some((stamp, random)) = s.split_once('-')
        && stamp.len() == 16
        && stamp.as_bytes()[8] == b'T'
        && stamp.ends_with('Z')
        && stamp[..8].bytes().all(|b| b.is_ascii_digit())
        && stamp[9..15].bytes().all(|b| b.is_ascii_digit())
        && hex(random, 16)
    {
        return true;
    }
    let parts: Vec<&str> = s.split('-').collect();
    parts.len() == 5 && [8, 4, 4, 4, 12].iter().zip(&parts).all(|(n, p)| hex(p, *n))
}

fn parent_of(state: &State, id: &SessionId) -> Option<SessionId> {
    state
        .nodes
        .iter()
        .find(|n| &n.session == id)
        .map(|n| n.parent.clone())
}

fn root_of(state: &State, id: &SessionId) -> SessionId {
    let mut at = id.clone();
    while let Some(up) = parent_of(state, &at) {
        at = up;
    }
    at
}

/// Whether the tree holds `id`: a child, or a root it was given.
fn known(state: &State, id: &SessionId) -> bool {
    state.nodes.iter().any(|n| &n.session == id) || state.sessions.contains_key(id)
}

fn relation(state: &State, sender: &SessionId, to: &SessionId) -> &'static str {
    let sender_parent = parent_of(state, sender);
    let to_parent = parent_of(state, to);
    if sender_parent.as_ref() == Some(to) {
        "parent"
    } else if to_parent.as_ref() == Some(sender) {
        "child"
    } else if sender_parent.is_some() && to_parent == sender_parent {
        "sibling"
    } else {
        "*"
    }
}

/// How the recipient is told who sent a message.
fn sender_label(state: &State, sender: &SessionId, to: &SessionId) -> String {
    if parent_of(state, to).as_ref() == Some(sender) {
        return "parent".to_owned();
    }
    if let Some(origin) = state.origins.get(sender)
        && &origin.parent == to
    {
        return origin.handle.clone();
    }
    state
        .nodes
        .iter()
        .find(|n| &n.session == sender)
        .map_or_else(|| "root".to_owned(), |n| n.handle.clone())
}

impl Tree {
    /// The session `reference` names for `sender`: a handle of its tree, `parent`, or a full
    /// session id; refused with the seed's codes, or the self-repairing unknown reference
    /// error for a name that matches no peer.
    pub fn locate(&self, sender: &SessionId, reference: &str) -> Result<Peer, ToolError> {
        let reference = reference.trim();
        let state = self.lock();
        let own_handle = state
            .nodes
            .iter()
            .find(|n| &n.session == sender)
            .map(|n| n.handle.as_str());
        if reference == sender.0 || own_handle == Some(reference) {
            return Err(fail(
                codes::SELF_SEND,
                "send_message: `to` names your own session; a message goes to another session \
                 of your tree",
            ));
        }
        // A root opened apart from its parent (on another daemon of a fleet) still has it.
        if let Some(origin) = state.origins.get(sender)
            && (reference == "parent" || reference == origin.parent.0)
        {
            return Ok(Peer {
                id: origin.parent.clone(),
                relation: "parent",
            });
        }
        let root = root_of(&state, sender);
        let id = if is_session_id(reference) {
            let id = SessionId(reference.to_owned());
            if !known(&state, &id) {
                let in_store = state
                    .sessions
                    .get(sender)
                    .or_else(|| state.sessions.get(&root))
                    .and_then(|s| s.event_log_path().parent()?.parent().map(Path::to_path_buf))
                    .is_some_and(|dir| dir.join(&id.0).join("events.jsonl").exists());
                return Err(if in_store {
                    fail(
                        codes::NOT_TREE_PEER,
                        format!(
                            "send_message: session {} is not in your delegation tree; messages \
                             go only to your parent, children, siblings and their trees",
                            id.0
                        ),
                    )
                } else {
                    fail(
                        codes::UNKNOWN_SESSION,
                        format!(
                            "send_message: no session {} exists; give a handle or a session id \
                             exactly as a notice showed it",
                            id.0
                        ),
                    )
                });
            }
            if root_of(&state, &id) != root {
                return Err(fail(
                    codes::NOT_TREE_PEER,
                    format!(
                        "send_message: session {} is not in your delegation tree; messages go \
                         only to sessions of your own tree",
                        id.0
                    ),
                ));
            }
            id
        } else if reference == "parent" && parent_of(&state, sender).is_some() {
            parent_of(&state, sender).unwrap_or_else(|| root.clone())
        } else {
            let found = state
                .nodes
                .iter()
                .find(|n| n.handle == reference && root_of(&state, &n.session) == root);
            match found {
                Some(n) => n.session.clone(),
                None => return Err(unknown_reference(&state, sender, &root, reference)),
            }
        };
        Ok(Peer {
            relation: relation(&state, sender, &id),
            id,
        })
    }

    /// Accepts `out` from `sender`: the guards, then the `message_accepted` record in the
    /// recipient's log (synced) before anything else sees it, then the mailbox; a finished
    /// child is woken. A call whose key was seen returns its first message and appends nothing.
    pub async fn send(
        self: &Arc<Self>,
        sender: &SessionId,
        out: Outgoing,
        settings: &MessagingSettings,
    ) -> Result<Sent, ToolError> {
        let (session, message) = loop {
            // Created before the look, so a write that ends in between is not missed.
            let written = self.accepted.notified();
            match self.admit(sender, &out, settings)? {
                Admission::Repeat(sent) => return Ok(sent),
                Admission::Wait => written.await,
                Admission::Reserved(reserved) => break *reserved,
            }
        };
        if session.is_none() {
            let posts = match self.posts_to(&out.to.id) {
                Ok(posts) => posts,
                Err(e) => {
                    self.lock().mailbox.release(&out.key);
                    self.accepted.notify_waiters();
                    return Err(e);
                }
            };
            if let Some(mail) = posts {
                return self.post(mail.as_ref(), sender, &out, message, settings);
            }
        }
        // A send dropped while its record is written gives its place back.
        let mut held = Held {
            tree: self,
            key: &out.key,
            armed: true,
        };
        let written = self.write_accepted(session, &out, &message).await;
        held.armed = false;
        let (id, mode) = (message.id.clone(), message.mode);
        let (state_now, wake) = {
            let mut state = self.lock();
            state.mailbox.release(&out.key);
            if written.is_ok() {
                state.mailbox.accept(&out.to.id, out.key.clone(), message);
            }
            let child = state.nodes.iter().find(|n| n.session == out.to.id);
            match child {
                Some(n) if n.status != Status::Running => (RecipientState::WakingFinished, true),
                _ => (now_for(&state, &out.to.id, mode), false),
            }
        };
        self.accepted.notify_waiters();
        written?;
        self.ends.send_modify(|n| *n += 1);
        let recipient_state = if wake && self.wake(&out.to.id).is_err() {
            RecipientState::Queued
        } else {
            state_now
        };
        Ok(Sent {
            message_id: id,
            mode,
            recipient_state,
            repeated: false,
        })
    }

    /// Under the tree's lock: the call's first message if it has one, a wait while its record
    /// is being written, else the guards and a reserved place for a new message.
    fn admit(
        &self,
        sender: &SessionId,
        out: &Outgoing,
        settings: &MessagingSettings,
    ) -> Result<Admission, ToolError> {
        let mut state = self.lock();
        if let Some(prior) = state.mailbox.prior(&out.key).cloned() {
            return Ok(Admission::Repeat(Sent {
                recipient_state: now_for(&state, &prior.recipient, prior.mode),
                message_id: prior.message_id,
                mode: prior.mode,
                repeated: true,
            }));
        }
        if state.mailbox.in_flight(&out.key) {
            return Ok(Admission::Wait);
        }
        if self.shut.load(Ordering::SeqCst) {
            return Err(shutting_down());
        }
        let hop = state.mailbox.next_hop(sender);
        state
            .mailbox
            .admit(settings, sender, &out.to.id, hop)
            .map_err(|r| fail(r.code, r.message))?;
        state.mailbox.reserve(&out.key, sender, &out.to.id);
        let message = Pending {
            id: new_message_id(),
            from: sender.clone(),
            sender: sender_label(&state, sender, &out.to.id),
            mode: out.mode,
            body: out.body.clone(),
            hop,
        };
        Ok(Admission::Reserved(Box::new((
            state.sessions.get(&out.to.id).cloned(),
            message,
        ))))
    }

    /// The `message_accepted` record of `message`, synced in the recipient's log (opened again
    /// when this process no longer holds it).
    async fn write_accepted(
        &self,
        session: Option<tackle_runtime::Session>,
        out: &Outgoing,
        message: &Pending,
    ) -> Result<(), ToolError> {
        let session = match session {
            Some(s) => s,
            None => {
                let reopened = self
                    .spawner()
                    .ok_or_else(shutting_down)?
                    .reopen(&out.to.id)
                    .map_err(|e| {
                        fail(
                            ErrorCode::IO,
                            format!("send_message: opening the recipient's log: {e}"),
                        )
                    })?;
                self.lock()
                    .sessions
                    .insert(out.to.id.clone(), reopened.clone());
                reopened
            }
        };
        session
            .append_event(&accepted_record(message, &out.key))
            .await
            .map_err(|e| {
                fail(
                    ErrorCode::IO,
                    format!(
                        "send_message: recording the message in the recipient's log failed ({e}); \
                     nothing was accepted: send it again"
                    ),
                )
            })?;
        Ok(())
    }

    /// The messages `session`'s loop takes now: its steer ones, and its queued ones too when
    /// `with_queued` (its model ended its turn, or a run starts).
    pub fn take_messages(&self, session: &SessionId, with_queued: bool) -> Vec<Pending> {
        self.lock().mailbox.take(session, with_queued)
    }

    /// Whether `session` has a message it would take with `with_queued`.
    pub fn has_messages(&self, session: &SessionId, with_queued: bool) -> bool {
        self.lock().mailbox.has(session, with_queued)
    }

    /// How many messages wait for `session`.
    pub fn pending_messages(&self, session: &SessionId) -> usize {
        self.lock().mailbox.count(session)
    }

    /// `session` consumed a message of `hop`: what it sends next is a hop further.
    pub fn handling(&self, session: &SessionId, hop: u32) {
        self.lock().mailbox.handling(session, hop);
    }

    /// `session`'s loop began run `run` (the seq of its `run_started`).
    pub fn run_began(&self, session: &SessionId, run: u64) {
        let mut state = self.lock();
        state.active.insert(session.clone());
        state.runs.insert(session.clone(), run.to_string());
    }

    /// `session`'s loop ended its run.
    pub fn run_ended(&self, session: &SessionId) {
        let mut state = self.lock();
        state.active.remove(session);
        state.mailbox.idle(session);
    }

    /// The idempotency key of `call` made by `session` in model turn `turn` of its current
    /// run. The turn is part of it because a call id is unique only within its turn: a server
    /// that sends none gets ids by position (`tackle_call_0` in every turn), and without the
    /// turn a second message would be taken for a retry of the first and never sent.
    pub fn message_key(&self, session: &SessionId, turn: &str, call: &str) -> String {
        let state = self.lock();
        let run = state.runs.get(session).map_or("0", String::as_str);
        format!("{}/{run}/{turn}/{call}", session.0)
    }

    /// Sends from now on fail with `send_message:engine_shutdown`.
    pub fn shutdown(&self) {
        self.shut.store(true, Ordering::SeqCst);
    }

    /// A message the logs say was accepted: pending when not `consumed`, its key remembered
    /// either way ([`crate::messaging::restore`]).
    pub(crate) fn restore_message(
        &self,
        to: &SessionId,
        key: String,
        message: Pending,
        consumed: bool,
    ) {
        let mut state = self.lock();
        if consumed {
            state.mailbox.remember(
                key,
                Prior {
                    message_id: message.id,
                    recipient: to.clone(),
                    mode: message.mode,
                },
            );
        } else {
            state.mailbox.accept(to, key, message);
        }
    }
}

/// Where `to` stands for a message of `mode` that waits in its mailbox.
/// A reserved place, given back if the send is dropped before its record is written.
struct Held<'a> {
    tree: &'a Tree,
    key: &'a str,
    armed: bool,
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.tree.lock().mailbox.release(self.key);
            self.tree.accepted.notify_waiters();
        }
    }
}

/// What [`Tree::admit`] found.
enum Admission {
    /// The call already produced this message.
    Repeat(Sent),
    /// The call's record is being written by another send: wait, then look again.
    Wait,
    /// A place is held for the message; the session is the recipient's, when this process
    /// holds it.
    Reserved(Box<(Option<tackle_runtime::Session>, Pending)>),
}

fn now_for(state: &State, to: &SessionId, mode: Mode) -> RecipientState {
    let running = match state.nodes.iter().find(|n| &n.session == to) {
        Some(n) => n.status == Status::Running,
        None => state.active.contains(to),
    };
    match (running, mode) {
        (true, Mode::Steer) => RecipientState::Running,
        _ => RecipientState::Queued,
    }
}

/// The recipient's record of accepting `message`, sent under `key`.
pub(crate) fn accepted_record(message: &Pending, key: &str) -> Event {
    Event::MessageAccepted(MessageAccepted {
        message_id: message.id.clone(),
        from: message.from.clone(),
        sender: message.sender.clone(),
        mode: message.mode.as_str().to_owned(),
        body: message.body.clone(),
        hop: message.hop,
        key: key.to_owned(),
        at_ms: now_ms(),
    })
}

fn shutting_down() -> ToolError {
    fail(
        codes::ENGINE_SHUTDOWN,
        "send_message: the agent engine is shutting down; nothing was accepted",
    )
}

fn new_message_id() -> String {
    use rand::RngExt as _;
    let n: u64 = rand::rng().random();
    format!("msg_{n:016x}")
}

/// The self-repairing refusal for a name that matches no peer: the peers it could name.
fn unknown_reference(
    state: &State,
    sender: &SessionId,
    root: &SessionId,
    reference: &str,
) -> ToolError {
    let mut peers: Vec<String> = Vec::new();
    if parent_of(state, sender).is_some() {
        peers.push("- parent — your parent".to_owned());
    }
    for n in &state.nodes {
        if &n.session != sender && &root_of(state, &n.session) == root {
            peers.push(format!(
                "- {} — {} — {} (session_id {})",
                n.handle,
                n.description,
                n.status.as_str(),
                n.session.0
            ));
        }
    }
    let listed = if peers.is_empty() {
        "your tree has no other session to message".to_owned()
    } else {
        format!("the sessions you can message are:\n{}", peers.join("\n"))
    };
    fail(
        ErrorCode::new("unknown_subagent"),
        format!(
            "unknown subagent reference `{reference}`: give a handle or session id exactly as a \
             notice showed it; {listed}"
        ),
    )
}
