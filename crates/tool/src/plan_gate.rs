//! What the plan-first gate (seed 003, record_plan) shares between the tool that records a
//! plan and the runtime layer that denies mutating calls until one is on file.
//!
//! Key decision: the question "does this session have a plan on file?" is a trait here, so the
//! runtime's gate asks it without knowing where plans live, and the tools crate answers it from
//! the plan files themselves. Rejected: the runtime watching for successful `record_plan`
//! results, which would couple it to one tool's name and forget plans across `tackle call`
//! processes.

use tackle_protocol::SessionId;

/// `permissions.plan_mode`: whether plans are recorded, and whether mutating calls wait for one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PlanMode {
    /// No `record_plan`, no plan gate (the default).
    #[default]
    Off,
    /// `record_plan` is offered; nothing waits for it.
    Advisory,
    /// `record_plan` is offered, and every plan-gated tool is denied until the session has a
    /// plan on file.
    Required,
}

impl PlanMode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::Advisory => "advisory",
            Self::Required => "required",
        }
    }
}

impl std::str::FromStr for PlanMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "off" => Ok(Self::Off),
            "advisory" => Ok(Self::Advisory),
            "required" => Ok(Self::Required),
            other => Err(format!(
                "plan_mode `{other}` is not one of \"off\", \"advisory\", \"required\""
            )),
        }
    }
}

/// Answers whether `session` has a plan on file (one that was recorded and not revoked).
pub trait PlanRecords: Send + Sync {
    fn on_file(&self, session: &SessionId) -> bool;
}

/// Tools the plan gate never holds back: recording the plan itself, and loading a skill (seed
/// 003: the skill namespace is dropped as exempt), `skill` in the standard catalog and
/// `load_skill` in the sealed one.
pub const PLAN_EXEMPT: &[&str] = &["record_plan", "skill", "load_skill"];

/// Whether a call of a tool waits for a plan under `plan_mode = "required"`: every tool that is
/// not read-only, and every MCP tool whatever its server claims (a server's `readOnlyHint` is
/// the server's word, and a namespace is deliberately not plan-exempt), except
/// [`PLAN_EXEMPT`]. `gate_name` is the name in the tool's `tool.<name>` key.
pub fn plan_gated(gate_name: &str, read_only: bool) -> bool {
    if PLAN_EXEMPT.contains(&gate_name) {
        return false;
    }
    !read_only || gate_name.starts_with("mcp.")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn which_tools_wait_for_a_plan() {
        let rows: &[(&str, bool, bool)] = &[
            ("write_file", false, true),
            ("bash", false, true),
            ("read_file", true, false),
            ("record_plan", false, false),
            ("load_skill", false, false),
            ("skill", false, false),
            ("mcp.gke.apply", false, true),
            ("mcp.gke.get_pods", true, true),
        ];
        for &(name, read_only, gated) in rows {
            assert_eq!(plan_gated(name, read_only), gated, "{name}");
        }
    }
}
