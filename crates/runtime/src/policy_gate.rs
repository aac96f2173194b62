//! The gate hook backed by a [`tackle_gate::Policy`], answering with the session's own
//! approval grants.

use std::sync::Arc;

use tackle_gate::{Decision, Policy, Request};
use tackle_tool::ReadScope;

use crate::gate::{GateHook, GateRequest, GateVerdict};
use crate::session_context::SessionContext;

/// Evaluates every call against a compiled policy and the grants of the call's session; "for
/// this session" approvals are kept by that session ([`SessionContext::grant`]), as exact keys:
/// a server's clients each have their own, and the gate holds no per-session state.
pub struct PolicyGate {
    policy: Arc<Policy>,
}

impl PolicyGate {
    pub fn new(policy: Policy) -> Self {
        Self {
            policy: Arc::new(policy),
        }
    }

    pub fn policy(&self) -> &Policy {
        &self.policy
    }
}

impl GateHook for PolicyGate {
    fn check(&self, request: &GateRequest<'_>) -> GateVerdict {
        let req = Request {
            tool: request.tool,
            keys: &request.keys,
            mutating: !request.read_only,
        };
        let decision = request
            .session
            .with_grants(|granted| self.policy.evaluate(&req, granted));
        match &decision {
            Decision::Allow { .. } => GateVerdict::Allow,
            Decision::Ask { keys } => GateVerdict::Ask {
                keys: keys.iter().map(|k| k.key.clone()).collect(),
                message: decision.message(),
            },
            Decision::Deny { verdict } => GateVerdict::Deny {
                key: verdict.key.clone(),
                rule: because(&verdict.because),
                message: decision.message(),
            },
        }
    }

    fn session_grantable(&self, key: &str) -> bool {
        !self.policy.is_protected(key)
    }

    fn read_scope(&self) -> Arc<dyn ReadScope> {
        Arc::new(WalkedReads(self.policy.clone()))
    }

    fn grant_session(&self, session: &SessionContext, keys: &[String]) {
        // A protected path asks every time: it never becomes a standing grant.
        for k in keys.iter().filter(|k| !self.policy.is_protected(k)) {
            session.grant(k);
        }
    }
}

/// Files a walking tool finds are read only if their own `read:<path>` key is allowed outright
/// ([`Policy::admits_walked_read`]).
struct WalkedReads(Arc<Policy>);

impl ReadScope for WalkedReads {
    fn admits(&self, path: &str) -> bool {
        self.0.admits_walked_read(path)
    }
}

/// A short, stable description of what decided a key, for the structured `tool_denied` reason.
fn because(b: &tackle_gate::Because) -> String {
    use tackle_gate::Because::*;
    match b {
        Rule { pattern, source } => format!("rule \"{pattern}\" ({source})"),
        Default { action } => format!("default for {action}"),
        PathScope { detail } => format!("path scope: {detail}"),
        UrlScope => "url scope".to_owned(),
        Mode(m) => format!("mode {m}"),
        Grant => "session grant".to_owned(),
        Protected { .. } => "protected path".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tackle_gate::{Mode, PathScope, UrlScope};
    use tackle_protocol::SessionId;

    use crate::session_context::SessionOptions;

    fn ask(gate: &PolicyGate, session: &SessionContext) -> bool {
        let keys = vec!["tool.write_file".to_owned(), "write:src/a.rs".to_owned()];
        let request = GateRequest {
            session,
            tool: "write_file",
            keys,
            resources: &[],
            read_only: false,
        };
        matches!(gate.check(&request), GateVerdict::Ask { .. })
    }

    /// Issue 13 §9: an approval "for this session" given to one client of a server is not a
    /// grant for another.
    #[test]
    fn a_session_grant_applies_to_its_own_session_only() {
        let policy = Policy::new(
            Vec::new(),
            Mode::Ask,
            PathScope::default(),
            UrlScope::default(),
        )
        .unwrap();
        let gate = PolicyGate::new(policy);
        let context =
            |id: &str| SessionContext::new(SessionId(id.into()), SessionOptions::default());
        let (a, b) = (context("a"), context("b"));
        assert!(ask(&gate, &a) && ask(&gate, &b));
        gate.grant_session(&a, &["write:src/a.rs".to_owned()]);
        assert!(!ask(&gate, &a), "granted where it was approved");
        assert!(ask(&gate, &b), "not granted in another session");
    }
}
