//! `[messaging]`, as the tree and `send_message` apply it.

/// The messaging settings (seed 000, "Agent messaging").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MessagingSettings {
    /// False: every send fails with `send_message:disabled`.
    pub enabled: bool,
    /// The largest body, in bytes.
    pub max_body_bytes: usize,
    /// The most messages pending (accepted, not yet consumed) for one recipient.
    pub max_pending_per_session: usize,
    /// The longest chain of messages each sent while handling the one before; `<= 0` turns
    /// hop counting off.
    pub max_hops: i64,
    /// The most unacknowledged messages from one sender to one recipient; 0 turns the window
    /// off.
    pub max_inflight_per_pair: usize,
}

impl MessagingSettings {
    /// The built-in values.
    pub const DEFAULT: Self = Self {
        enabled: true,
        max_body_bytes: 64 * 1024,
        max_pending_per_session: 32,
        max_hops: 8,
        max_inflight_per_pair: 4,
    };
}

impl Default for MessagingSettings {
    fn default() -> Self {
        Self::DEFAULT
    }
}
