//! The plan-first layer (seed 003, record_plan): under `permissions.plan_mode = "required"`, a
//! call of a plan-gated tool is denied until its session has a plan on file.
//!
//! A wrapper around another [`GateHook`], asked first: a call that waits for a plan is refused
//! before the inner gate could prompt a person about it (approving a write that will be denied
//! anyway wastes the person's attention). Which tools wait is
//! [`tackle_tool::plan_gate::plan_gated`]; whether a plan is on file is the
//! [`PlanRecords`]' answer. Advisory mode needs no layer: nothing waits.

use std::sync::Arc;

use tackle_tool::plan_gate::plan_gated;
use tackle_tool::{PlanRecords, ReadScope};

use crate::gate::{GateHook, GateRequest, GateVerdict};
use crate::session_context::SessionContext;

/// The rule a plan-gate denial names.
pub const PLAN_REQUIRED_RULE: &str = "permissions.plan_mode = \"required\"";

/// Denies plan-gated calls of sessions without a plan on file; otherwise asks `inner`.
pub struct PlanGate {
    inner: Arc<dyn GateHook>,
    plans: Arc<dyn PlanRecords>,
}

impl PlanGate {
    pub fn new(inner: Arc<dyn GateHook>, plans: Arc<dyn PlanRecords>) -> Self {
        Self { inner, plans }
    }
}

impl GateHook for PlanGate {
    fn check(&self, request: &GateRequest<'_>) -> GateVerdict {
        // keys[0] is `tool.<gate name>`.
        let gate_name = request
            .keys
            .first()
            .and_then(|k| k.strip_prefix("tool."))
            .unwrap_or(request.tool);
        if plan_gated(gate_name, request.read_only) && !self.plans.on_file(request.session.id()) {
            return GateVerdict::Deny {
                key: format!("tool.{gate_name}"),
                rule: PLAN_REQUIRED_RULE.to_owned(),
                message: format!(
                    "{}: plan_mode is required and this session has no plan on file; call \
                     record_plan with your plan first, then retry this call",
                    request.tool
                ),
            };
        }
        self.inner.check(request)
    }

    fn grant_session(&self, session: &SessionContext, keys: &[String]) {
        self.inner.grant_session(session, keys);
    }

    fn session_grantable(&self, key: &str) -> bool {
        self.inner.session_grantable(key)
    }

    fn read_scope(&self, session: &SessionContext) -> Arc<dyn ReadScope> {
        self.inner.read_scope(session)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;
    use std::sync::Mutex;

    use super::*;
    use crate::gate::AllowAll;
    use crate::session_context::SessionOptions;
    use tackle_protocol::SessionId;

    struct Filed(Mutex<HashSet<String>>);

    impl PlanRecords for Filed {
        fn on_file(&self, session: &SessionId) -> bool {
            self.0.lock().unwrap().contains(&session.0)
        }
    }

    fn check(gate: &PlanGate, session: &str, tool: &str, read_only: bool) -> GateVerdict {
        let session = SessionContext::new(SessionId(session.into()), SessionOptions::default());
        let gate_name = tool.replace("mcp__", "mcp.").replace("__", ".");
        gate.check(&GateRequest {
            session: &session,
            tool,
            keys: vec![format!("tool.{gate_name}")],
            resources: &[],
            read_only,
            artifacts: &[],
        })
    }

    /// Per session: a plan on file in one session opens nothing in another.
    #[test]
    fn plan_gated_calls_wait_for_their_own_sessions_plan() {
        let filed = Arc::new(Filed(Mutex::new(HashSet::new())));
        let gate = PlanGate::new(Arc::new(AllowAll), filed.clone());
        let denied = |v: GateVerdict| matches!(v, GateVerdict::Deny { rule, .. } if rule == PLAN_REQUIRED_RULE);
        assert!(denied(check(&gate, "a", "write_file", false)));
        assert!(denied(check(&gate, "a", "mcp__gke__get_pods", true)));
        assert_eq!(check(&gate, "a", "read_file", true), GateVerdict::Allow);
        assert_eq!(check(&gate, "a", "record_plan", false), GateVerdict::Allow);
        filed.0.lock().unwrap().insert("a".into());
        assert_eq!(check(&gate, "a", "write_file", false), GateVerdict::Allow);
        assert!(denied(check(&gate, "b", "write_file", false)));
    }
}
