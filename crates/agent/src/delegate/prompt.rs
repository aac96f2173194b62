//! The system prompt's section on delegation: under `<tool_instructions
//! provider="builtin.delegate">`, the agent types a session may start (the same depth ceiling
//! the tool checks), with their descriptions; no section when there are none.

use crate::delegate::tree::Tree;
use tackle_protocol::SessionId;

/// The section for `session`, or `None` when it may start no subagent.
pub fn instructions(tree: &Tree, session: &SessionId) -> Option<String> {
    let types = tree.eligible(session);
    if types.is_empty() {
        return None;
    }
    let mut out = String::from(
        "<tool_instructions provider=\"builtin.delegate\">\nSubagent types for \
         delegate_subagent (agent_type — what it is for):\n",
    );
    for ty in types {
        let description = ty.description.replace(['\n', '\r'], " ");
        out.push_str(&format!("- {} — {}\n", ty.name, description.trim()));
    }
    out.push_str("</tool_instructions>");
    Some(out)
}
