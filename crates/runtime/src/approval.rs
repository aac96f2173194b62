//! Asking a person about a call the gate wants approved.
//!
//! Three approvers serve the three front ends: a terminal prompt (in the binary, which owns the
//! terminal), MCP elicitation (in the MCP crate), and [`HeadlessApprover`], which refuses with
//! `approval_unavailable` so nothing ever blocks waiting for a person who is not there.

use std::future::Future;
use std::pin::Pin;

use tackle_protocol::{CallId, SessionId};

/// What the approver is shown: the exact call and the keys that need approval.
pub struct ApprovalRequest<'a> {
    pub session: &'a SessionId,
    /// The subagent's handle when the call is a child session's (`explore_1a2b3c4d`), so the
    /// person asked knows which agent of the tree wants it.
    pub handle: Option<&'a str>,
    pub call_id: &'a CallId,
    pub tool: &'a str,
    /// Whether the tool declares itself read-only (published to MCP clients as `readOnlyHint`,
    /// which clients that confirm calls themselves often wave through unasked).
    pub read_only: bool,
    pub arguments: &'a serde_json::Value,
    /// The keys whose decision was `ask`.
    pub keys: &'a [String],
    /// The gate's explanation, naming the rule or default that asks.
    pub message: &'a str,
    /// Whether an [`Approval::Session`] answer would be remembered. `false` when a key is one
    /// the gate asks about every time (a protected path): a front end then offers only once
    /// or deny.
    pub session_grant: bool,
    /// What the call will do, when its tool says so beyond the arguments
    /// (`tackle_tool::Prepared::effect`): to be shown to the person as it is, made safe.
    pub effect: Option<&'a str>,
}

/// A person's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Approval {
    /// Run this call only.
    Once,
    /// Run it, and allow these exact keys for the rest of the session.
    Session,
    /// Refuse; the message (if any) is shown to the model.
    Deny { message: Option<String> },
    /// Nobody can be asked (no terminal, client without elicitation).
    Unavailable { reason: String },
}

/// The answer an [`Approver`] gives, in time.
pub type ApprovalFuture<'a> = Pin<Box<dyn Future<Output = Approval> + Send + 'a>>;

/// Who answers the calls the gate wants approved: a person at a terminal, an MCP client, or
/// no one ([`HeadlessApprover`]).
pub trait Approver: Send + Sync {
    fn approve<'a>(&'a self, request: ApprovalRequest<'a>) -> ApprovalFuture<'a>;
}

/// Refuses every request: for scripts, CI and servers without a way to ask.
pub struct HeadlessApprover;

impl Approver for HeadlessApprover {
    fn approve<'a>(&'a self, _: ApprovalRequest<'a>) -> ApprovalFuture<'a> {
        Box::pin(std::future::ready(Approval::Unavailable {
            reason: "no one is available to approve calls here".to_owned(),
        }))
    }
}
