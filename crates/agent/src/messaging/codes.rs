//! The ten failure codes of `send_message`, exactly as the seed's table writes them.

use tackle_protocol::ErrorCode;

/// `[messaging] enabled = false`.
pub const DISABLED: ErrorCode = ErrorCode::new("send_message:disabled");
/// Missing, unknown or wrongly typed arguments (`recipient_session_id` included).
pub const INVALID_ARGUMENTS: ErrorCode = ErrorCode::new("send_message:invalid_arguments");
/// An empty body, or one over `max_body_bytes`.
pub const INVALID_BODY: ErrorCode = ErrorCode::new("send_message:invalid_body");
/// A well-formed session id that names no session of the store.
pub const UNKNOWN_SESSION: ErrorCode = ErrorCode::new("send_message:unknown_session");
/// A well-formed session id of a session in another delegation tree.
pub const NOT_TREE_PEER: ErrorCode = ErrorCode::new("send_message:not_tree_peer");
/// The sender named itself.
pub const SELF_SEND: ErrorCode = ErrorCode::new("send_message:self_send");
/// The recipient already has `max_pending_per_session` pending messages.
pub const INBOX_FULL: ErrorCode = ErrorCode::new("send_message:inbox_full");
/// The chain of messages would pass `max_hops`.
pub const MAX_HOPS_EXCEEDED: ErrorCode = ErrorCode::new("send_message:max_hops_exceeded");
/// The sender → recipient pair already has `max_inflight_per_pair` unacknowledged messages.
pub const INFLIGHT_FULL: ErrorCode = ErrorCode::new("send_message:inflight_full");
/// The tree is shutting down.
pub const ENGINE_SHUTDOWN: ErrorCode = ErrorCode::new("send_message:engine_shutdown");
