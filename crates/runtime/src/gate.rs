//! The hook between prepare and schedule where the permission gate sits.
//!
//! The policy engine itself lives in its own crate; the runtime only needs a verdict per call.
//! Until a policy is wired, [`AllowAll`] admits everything, and says so in its name.

use std::sync::Arc;

use tackle_tool::{AdmitAll, PermissionResource, ReadScope};

use crate::session_context::SessionContext;

/// What the gate is asked about one call.
pub struct GateRequest<'a> {
    /// The session the call runs in: its grants are the only ones that apply, its plan the
    /// only one that counts.
    pub session: &'a SessionContext,
    pub tool: &'a str,
    /// `tool.<name>` followed by every routing key the call declared.
    pub keys: Vec<String>,
    pub resources: &'a [PermissionResource],
    pub read_only: bool,
    /// What produced each artifact the call reads back (one entry per `read:artifact://`
    /// resource), from the store's logs: a gate that decides reads asks about these sources
    /// too, so a deny on what was read covers its copies.
    pub artifacts: &'a [ArtifactRead],
}

/// An artifact a call reads and what produced it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArtifactRead {
    /// The call's key for it, `read:artifact://<digest>`.
    pub key: String,
    /// Its digest, 64 lowercase hex digits.
    pub digest: String,
    pub produced_by: ProducedBy,
}

/// What the store's records say produced an artifact.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProducedBy {
    /// Records vouch for it: the `read:` keys behind it, the union over every call that
    /// retained it (and over the streams it lists, for a manifest). Empty when nothing was
    /// read to produce it (a command's own output) or it is not in the store.
    Reads(Vec<String>),
    /// It is in the store but no record names it (a damaged or removed log, a hand-made
    /// file): what it copies is unknown. `damaged` when a log could not be read whole.
    Unknown { damaged: bool },
}

/// The gate's decision for one call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GateVerdict {
    Allow,
    /// Needs a person's approval for `keys`; `message` says which rule or default asks and how
    /// to allow it permanently.
    Ask {
        keys: Vec<String>,
        message: String,
    },
    /// Refused; becomes a `permission_denied` result carrying this reason.
    Deny {
        key: String,
        rule: String,
        message: String,
    },
}

/// What decides whether a call may run: asked once per call with its permission keys, before
/// anything runs ([`crate::PolicyGate`] over a policy, [`AllowAll`], or a program's own).
pub trait GateHook: Send + Sync {
    fn check(&self, request: &GateRequest<'_>) -> GateVerdict;

    /// Remember an approval "for this session": these exact keys no longer ask in `session`
    /// (and only there: the grants are the session's own, [`SessionContext::grant`]).
    fn grant_session(&self, _session: &SessionContext, _keys: &[String]) {}

    /// Whether a session grant of `key` would be remembered ([`GateHook::grant_session`]);
    /// `false` for keys the gate asks about every time.
    fn session_grantable(&self, _key: &str) -> bool {
        true
    }

    /// Which paths a walking tool may read beneath the directory the gate allowed: the gate's
    /// per-file answer for `read:<path>` in `session`, applied by the tool at execute.
    /// Default: all.
    fn read_scope(&self, _session: &SessionContext) -> Arc<dyn ReadScope> {
        Arc::new(AdmitAll)
    }
}

/// Admits every call. Used where no policy is configured yet (and in tests of other layers).
pub struct AllowAll;

impl GateHook for AllowAll {
    fn check(&self, _: &GateRequest<'_>) -> GateVerdict {
        GateVerdict::Allow
    }
}
