//! Tool names as agent type files write them: tackle's own pass through, Claude Code's are
//! mapped to tackle's (its agent files say `tools: Read, Grep, Glob`), and the rest are said to
//! be what they are.

/// Claude Code's tool names and tackle's counterpart; `None` where tackle has none.
pub(super) const CLAUDE_CODE: &[(&str, Option<&str>)] = &[
    ("Read", Some("read_file")),
    ("Write", Some("write_file")),
    ("Edit", Some("edit_file")),
    ("MultiEdit", Some("edit_file")),
    ("Glob", Some("glob")),
    ("Grep", Some("grep")),
    ("Bash", Some("bash")),
    ("LS", Some("list_dir")),
    ("WebFetch", Some("fetch_url")),
    ("TodoWrite", Some("todo")),
    ("NotebookRead", Some("read_file")),
    ("WebSearch", None),
    ("Task", None),
    ("Agent", None),
    ("NotebookEdit", None),
    ("BashOutput", None),
    ("KillShell", None),
    ("KillBash", None),
    ("ExitPlanMode", None),
    ("SlashCommand", None),
    ("Skill", None),
    ("AskUserQuestion", None),
    ("ListMcpResourcesTool", None),
    ("ReadMcpResourceTool", None),
];

/// What one written name stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum ToolName {
    /// A tackle tool: a built-in, or an MCP tool (`mcp__<server>__<tool>`).
    Tackle(String),
    /// A Claude Code tool and the tackle tool it maps to.
    FromClaude {
        claude: &'static str,
        tackle: &'static str,
    },
    /// A Claude Code tool tackle does not have.
    ClaudeOnly(&'static str),
    /// A Claude Code rule form (`Bash(git diff:*)`): the tool it names, narrowed by arguments
    /// that a list of tools cannot hold.
    Scoped { tool: Option<&'static str> },
    /// A name nothing here knows.
    Unknown(String),
}

/// What `name` (trimmed) stands for.
pub(super) fn classify(name: &str) -> ToolName {
    if tackle_tools::BUILTIN_TOOL_NAMES.contains(&name) || name.starts_with("mcp__") {
        return ToolName::Tackle(name.to_owned());
    }
    if let Some((tool, _)) = name.split_once('(') {
        let tool = tool.trim();
        let mapped = CLAUDE_CODE
            .iter()
            .find(|(claude, _)| *claude == tool)
            .and_then(|(_, tackle)| *tackle)
            .or_else(|| {
                tackle_tools::BUILTIN_TOOL_NAMES
                    .iter()
                    .copied()
                    .find(|t| *t == tool)
            });
        return ToolName::Scoped { tool: mapped };
    }
    match CLAUDE_CODE.iter().find(|(claude, _)| *claude == name) {
        Some((claude, Some(tackle))) => ToolName::FromClaude { claude, tackle },
        Some((claude, None)) => ToolName::ClaudeOnly(claude),
        None => ToolName::Unknown(name.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mapped_name_is_a_tackle_tool() {
        for (claude, tackle) in CLAUDE_CODE {
            if let Some(t) = tackle {
                assert!(
                    tackle_tools::BUILTIN_TOOL_NAMES.contains(t),
                    "{claude} maps to {t}, which is not a built-in"
                );
            }
        }
    }

    #[test]
    fn names_are_classified_as_the_table_says() {
        let rows = [
            ("read_file", ToolName::Tackle("read_file".into())),
            (
                "mcp__ci__status",
                ToolName::Tackle("mcp__ci__status".into()),
            ),
            (
                "MultiEdit",
                ToolName::FromClaude {
                    claude: "MultiEdit",
                    tackle: "edit_file",
                },
            ),
            ("WebSearch", ToolName::ClaudeOnly("WebSearch")),
            ("Bash(git diff:*)", ToolName::Scoped { tool: Some("bash") }),
            ("Frob(x)", ToolName::Scoped { tool: None }),
            ("frobnicate", ToolName::Unknown("frobnicate".into())),
        ];
        for (name, want) in rows {
            assert_eq!(classify(name), want, "{name}");
        }
    }
}
