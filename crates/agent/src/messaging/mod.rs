//! Agent messaging (seed 000, "Agent messaging"): `send_message` delivers a durable message
//! from one session of a delegation tree to another — its parent, a child, a sibling or any
//! other peer of the same tree.
//!
//! The mailbox lives in the [`crate::delegate::Tree`] (pending messages per recipient, the
//! idempotency keys, the hop each session is handling), and every message is first a
//! `message_accepted` record in the recipient's own event log: acceptance is durable before
//! the sender hears of it. The recipient's loop takes its messages at a safe boundary and
//! records each as `message_consumed` (the text its model read), which the conversation
//! rebuild applies as input; a tree rebuilt from the logs ([`restore`]) holds again every
//! message accepted and not consumed, and every key, so nothing is lost or repeated.
//!
//! Key decision: the recipient's log is the inbox. Rejected: a mailbox file per tree, which a
//! crash could leave disagreeing with the conversation the recipient's log rebuilds.
//!
//! **Refuses** to be an approval or to change a permission: a message is input to a model,
//! nothing more; the `message:<relation>` key is the gate's to decide.

pub mod codes;
pub mod envelope;
pub mod fleet_side;
pub mod mailbox;
pub mod restore;
pub mod send_message;
pub mod settings;
pub mod tree_side;

pub use mailbox::{Mailbox, Mode, Pending};
pub use send_message::SendMessage;
pub use settings::MessagingSettings;
pub use tree_side::{RecipientState, Sent};
