//! A skill's `allowed-tools` (experimental in the format: `Read Bash(git:*) Edit(docs/**)`)
//! read into the gate patterns it would pre-approve.
//!
//! Entries are separated by spaces outside parentheses (and, as Claude Code also accepts, by
//! commas, or given as a YAML list). Claude Code's names and tackle's own both work:
//!
//! | entry | pre-approves |
//! |---|---|
//! | `Bash`, `bash` | `tool.bash.cmd:*` |
//! | `Bash(git:*)` | `tool.bash.cmd:git`, `tool.bash.cmd:git *` |
//! | `Bash(git status)` | `tool.bash.cmd:git status` |
//! | `Write`, `Edit`, `MultiEdit`, `write_file`, `edit_file`, `delete_file` (`(path)`) | `write:**` (`write:<path>`) |
//! | `Read`, `Grep`, `Glob`, `LS`, tackle's read tools (`(path)`) | `read:**` (`read:<path>`) |
//! | `WebFetch`, `fetch_url` (`(domain:x.org)`) | `fetch:*` (`fetch:https://x.org/*`) |
//!
//! Anything else (a tool tackle lacks, an MCP tool) is left out with a note. A pre-approval
//! only answers what would ask: a deny rule, a protected path (`.git/`, `.agents/`) and a
//! script tackle cannot read still stand, and a fetch stays denied unless a rule asks.

use tackle_gate::Pattern;

/// What one `allowed-tools` value pre-approves, and what it leaves out.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AllowedTools {
    /// Gate patterns, as written in rules.
    pub patterns: Vec<String>,
    /// An entry left out, and why.
    pub notes: Vec<String>,
}

/// Splits `text` into entries: spaces and commas outside parentheses separate. `None` when
/// the parentheses do not balance.
pub fn entries(text: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '(' => {
                depth += 1;
                current.push(c);
            }
            ')' => {
                depth = depth.checked_sub(1)?;
                current.push(c);
            }
            c if (c.is_whitespace() || c == ',') && depth == 0 => {
                if !current.is_empty() {
                    out.push(std::mem::take(&mut current));
                }
            }
            c => current.push(c),
        }
    }
    if depth != 0 {
        return None;
    }
    if !current.is_empty() {
        out.push(current);
    }
    Some(out)
}

const WRITE_TOOLS: &[&str] = &[
    "Write",
    "Edit",
    "MultiEdit",
    "NotebookEdit",
    "write_file",
    "edit_file",
    "delete_file",
];
const READ_TOOLS: &[&str] = &[
    "Read",
    "Grep",
    "Glob",
    "LS",
    "read_file",
    "read_many_files",
    "grep",
    "glob",
    "list_dir",
    "stat",
    "view_file_outline",
];

/// The patterns the entries pre-approve.
pub fn read(entries: &[String]) -> AllowedTools {
    let mut out = AllowedTools::default();
    for entry in entries {
        let (tool, spec) = match entry.split_once('(') {
            Some((tool, rest)) => (tool, rest.strip_suffix(')').map(str::trim)),
            None => (entry.as_str(), None),
        };
        let patterns = match (tool, spec) {
            ("Bash" | "bash", None | Some("*" | "")) => vec!["tool.bash.cmd:*".to_owned()],
            ("Bash" | "bash", Some(command)) => match command.strip_suffix(":*") {
                Some(prefix) => vec![
                    format!("tool.bash.cmd:{}", prefix.trim()),
                    format!("tool.bash.cmd:{} *", prefix.trim()),
                ],
                None => vec![format!("tool.bash.cmd:{command}")],
            },
            (t, spec) if WRITE_TOOLS.contains(&t) => vec![path_pattern("write", spec)],
            (t, spec) if READ_TOOLS.contains(&t) => vec![path_pattern("read", spec)],
            ("WebFetch" | "fetch_url", None | Some("*" | "")) => vec!["fetch:*".to_owned()],
            ("WebFetch" | "fetch_url", Some(spec)) => match spec.strip_prefix("domain:") {
                Some(domain) => vec![format!("fetch:https://{}/*", domain.trim())],
                None => vec![format!("fetch:{spec}")],
            },
            _ => {
                out.notes.push(format!(
                    "allowed-tools `{entry}` is not a tool tackle pre-approves (Bash, Read, \
                     Write, Edit, WebFetch and tackle's own names are); it is left out"
                ));
                continue;
            }
        };
        for p in patterns {
            match Pattern::parse(&p) {
                Ok(_) if !out.patterns.contains(&p) => out.patterns.push(p),
                Ok(_) => {}
                Err(e) => out.notes.push(format!(
                    "allowed-tools `{entry}` is not a pattern tackle can read ({e}); it is left \
                     out"
                )),
            }
        }
    }
    out
}

/// `read:**`/`write:**`, or the path the entry names.
fn path_pattern(action: &str, spec: Option<&str>) -> String {
    match spec {
        None | Some("" | "*" | "**") => format!("{action}:**"),
        Some(path) => format!("{action}:{}", path.trim_start_matches("./")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_map_to_the_gate_patterns_they_pre_approve() {
        let cases: &[(&str, &[&str], usize)] = &[
            ("Read Grep", &["read:**"], 0),
            (
                "Bash(git:*) Bash(npm run test:*)",
                &[
                    "tool.bash.cmd:git",
                    "tool.bash.cmd:git *",
                    "tool.bash.cmd:npm run test",
                    "tool.bash.cmd:npm run test *",
                ],
                0,
            ),
            (
                "Bash(git status), Edit",
                &["tool.bash.cmd:git status", "write:**"],
                0,
            ),
            (
                "Edit(docs/**) write_file(./out.txt)",
                &["write:docs/**", "write:out.txt"],
                0,
            ),
            ("WebFetch(domain:docs.rs)", &["fetch:https://docs.rs/*"], 0),
            ("bash", &["tool.bash.cmd:*"], 0),
            ("Task TodoWrite mcp__github__create_issue", &[], 3),
        ];
        for (text, want, notes) in cases {
            let got = read(&entries(text).unwrap());
            assert_eq!(got.patterns, *want, "{text}");
            assert_eq!(got.notes.len(), *notes, "{text}: {:?}", got.notes);
        }
        assert_eq!(entries("Bash(git"), None);
        assert_eq!(entries("Bash)"), None);
    }
}
