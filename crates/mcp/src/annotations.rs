//! MCP tool annotations derived from what a tool declares, never written by hand.
//!
//! `readOnlyHint` is the tool's `read_only`; a tool that may mutate is `destructiveHint`
//! (tackle cannot tell an append from an overwrite, so it says the cautious thing);
//! `idempotentHint` holds for read-only tools; `openWorldHint` for tools that reach outside the
//! machine (their permission actions include `fetch`, `call_peer` or `message`, or their results
//! are labelled remote).

use tackle_protocol::Label;
use tackle_tool::DynTool;

/// The four MCP hints, SDK-free.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hints {
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
    pub open_world: bool,
}

/// Permission actions whose targets lie outside the machine.
const OPEN_WORLD_ACTIONS: &[&str] = &["fetch", "call_peer", "message"];

pub fn hints(tool: &dyn DynTool) -> Hints {
    hints_from(tool.read_only(), tool.permission_actions(), tool.label())
}

pub fn hints_from(read_only: bool, actions: &[&str], label: Label) -> Hints {
    Hints {
        read_only,
        destructive: !read_only,
        idempotent: read_only,
        open_world: label == Label::REMOTE
            || actions.iter().any(|a| OPEN_WORLD_ACTIONS.contains(a)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_follow_declarations() {
        let table: &[(bool, &[&str], Label, Hints)] = &[
            (
                true,
                &["read"],
                Label::LOCAL,
                Hints {
                    read_only: true,
                    destructive: false,
                    idempotent: true,
                    open_world: false,
                },
            ),
            (
                false,
                &["write"],
                Label::LOCAL,
                Hints {
                    read_only: false,
                    destructive: true,
                    idempotent: false,
                    open_world: false,
                },
            ),
            (
                true,
                &["fetch"],
                Label::REMOTE,
                Hints {
                    read_only: true,
                    destructive: false,
                    idempotent: true,
                    open_world: true,
                },
            ),
            (
                false,
                &[],
                Label::REMOTE,
                Hints {
                    read_only: false,
                    destructive: true,
                    idempotent: false,
                    open_world: true,
                },
            ),
        ];
        for (read_only, actions, label, want) in table {
            assert_eq!(
                hints_from(*read_only, actions, *label),
                *want,
                "{actions:?}"
            );
        }
    }
}
