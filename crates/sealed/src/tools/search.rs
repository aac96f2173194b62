//! search: a literal substring in workspace files. A result touching any file nobody vouched
//! for is quarantined whole: one reference, nothing of it shown.

use std::borrow::Cow;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use tackle_fs::RelPath;
use tackle_protocol::Concurrency;
use tackle_protocol::{Label, Privacy, Quarantined, Trust};
use tackle_tool::{
    ExecuteContext, PermissionResource, PrepareContext, Prepared, Routing, Tool, ToolCompletion,
    ToolError,
};

use crate::errors;
use crate::glob::Glob;
use crate::tools::Shared;
use crate::tools::read_file::record_failed;
use crate::walk::walk;

/// The most matching lines one search returns.
pub const MAX_MATCHES: usize = 500;
/// Files larger than this are not searched.
const SEARCH_FILE_CAP: u64 = 4 * 1024 * 1024;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Literal text to find; not a regular expression.
    pub pattern: String,
    /// Workspace-relative directory to search (default `.`).
    #[serde(default)]
    pub directory: Option<String>,
    /// Optional glob limiting which files are searched.
    #[serde(default)]
    pub include: Option<String>,
}

pub struct Search(pub Arc<Shared>);

pub struct Plan {
    pattern: String,
    dir: RelPath,
    shown: String,
    include: Option<Glob>,
}

impl Tool for Search {
    type Args = Args;
    type Plan = Plan;

    fn name(&self) -> &str {
        "search"
    }

    fn description(&self) -> Cow<'static, str> {
        "Finds a literal substring (not a regular expression) in workspace files and returns the \
         matching lines as path:line:text. A search that touches any file nobody vouched for \
         comes back as one reference (ref:N) instead."
            .into()
    }

    fn read_only(&self) -> bool {
        true
    }

    fn truncation(&self) -> tackle_protocol::Truncation {
        // Bounded here (at most MAX_MATCHES lines, each cut at MAX_LINE_CHARS), with notes the runtime's preview could cut off and a
        // hint naming an artifact this surface cannot open.
        tackle_protocol::Truncation::OptOut
    }

    fn concurrency(&self) -> Concurrency {
        Concurrency::Exclusive
    }

    fn permission_actions(&self) -> &'static [&'static str] {
        &["read"]
    }

    fn prepare(&self, args: Args, _cx: &PrepareContext<'_>) -> Result<Prepared<Plan>, ToolError> {
        if args.pattern.is_empty() {
            return Err(errors::invalid("pattern is empty; give the text to find"));
        }
        if args.pattern.contains('\n') {
            return Err(errors::invalid(
                "pattern spans lines; search finds text within one line",
            ));
        }
        let include = args
            .include
            .as_deref()
            .map(Glob::new)
            .transpose()
            .map_err(|e| errors::invalid(format!("include: {e}")))?;
        let shown = args.directory.unwrap_or_else(|| ".".to_owned());
        let dir = self
            .0
            .root
            .resolve(&shown)
            .map_err(|e| errors::fs(&e, &shown))?;
        let routing = Routing {
            resources: vec![PermissionResource::read(dir.as_str())],
        };
        Ok(Prepared::new(
            routing,
            Plan {
                pattern: args.pattern,
                dir,
                shown,
                include,
            },
        ))
    }

    async fn execute(&self, plan: Plan, cx: ExecuteContext) -> Result<ToolCompletion, ToolError> {
        let shared = &self.0;
        let walked = walk(&shared.root, &plan.dir).map_err(|e| errors::fs(&e, &plan.shown))?;
        let mut matches = Vec::new();
        let mut truncated = walked.truncated;
        let mut trusted = true;
        'files: for path in walked.selected(&plan.dir, plan.include.as_ref(), &*cx.read_scope) {
            // The file was searched: its content (and its name) touch the result, matched or not.
            let Ok(rel) = shared.root.resolve(&path) else {
                continue;
            };
            let real = shared.root.real_path(&rel).unwrap_or(rel.clone());
            if shared.trust.file(real.as_str()) != Trust::Trusted
                || shared.trust.name(&path) != Trust::Trusted
            {
                trusted = false;
            }
            let Ok(bytes) = shared.root.read_capped(&rel, SEARCH_FILE_CAP) else {
                continue;
            };
            if bytes.contains(&0) {
                continue;
            }
            let text = String::from_utf8_lossy(&bytes);
            for (n, line) in text.lines().enumerate() {
                if line.contains(&plan.pattern) {
                    if matches.len() == MAX_MATCHES {
                        truncated = true;
                        break 'files;
                    }
                    let line = cut_line(line);
                    matches.push(format!("{path}:{}:{line}", n + 1));
                }
            }
        }
        // Notes come first, so that a preview cut short by the runtime still carries them.
        let mut text = String::new();
        if truncated {
            text.push_str(&format!(
                "[incomplete: the search stopped at {} matches or {} files; narrow the directory or include]\n",
                MAX_MATCHES,
                crate::walk::MAX_ENTRIES
            ));
        }
        let regex_note = matches.is_empty() && looks_like_regex(&plan.pattern);
        if trusted && regex_note {
            text.push_str(
                "[the pattern is matched literally, and it looks like a regular expression: \
                 nothing found does not mean the text you meant is absent; search for a \
                 literal part of it]\n",
            );
        }
        if matches.is_empty() {
            text.push_str(&format!("no line contains `{}`\n", plan.pattern));
        } else {
            text.push_str(&(matches.join("\n") + "\n"));
        }
        if trusted {
            return Ok(ToolCompletion::single(text));
        }
        let label = Label {
            trust: Trust::Untrusted,
            privacy: Privacy::Private,
        };
        let total = text.len() as u64;
        let id = shared
            .state
            .add(
                &cx.call_id,
                Quarantined::Output {
                    stream: "search".to_owned(),
                    text,
                    total_bytes: total,
                    truncated,
                },
                label,
            )
            .await
            .map_err(record_failed)?;
        let mut shown = format!(
            "{id}: the search touched files nobody vouched for, so its result is quarantined. Pass {id} to spawn_processor to work on it.\n"
        );
        if truncated {
            shown.push_str("[the result is incomplete: the search stopped early]\n");
        }
        if looks_like_regex(&plan.pattern) {
            shown.push_str("[note: the pattern is matched literally, and it looks like a regular expression]\n");
        }
        Ok(ToolCompletion::single(shown))
    }
}

/// The most characters of one matching line shown.
pub const MAX_LINE_CHARS: usize = 500;

/// A matching line cut at [`MAX_LINE_CHARS`] (a minified file's one line is not a result).
fn cut_line(line: &str) -> std::borrow::Cow<'_, str> {
    match line.char_indices().nth(MAX_LINE_CHARS) {
        Some((at, _)) => format!("{}… [line cut]", &line[..at]).into(),
        None => line.into(),
    }
}

/// Whether a literal pattern reads like a regular expression the planner meant as one.
pub fn looks_like_regex(pattern: &str) -> bool {
    const SIGNS: [&str; 12] = [
        ".*", ".+", "\\d", "\\w", "\\s", "\\b", "[^", "(?", "|", "^", "$", "\\.",
    ];
    SIGNS.iter().any(|s| pattern.contains(s))
        || (pattern.contains('[') && pattern.contains(']'))
        || (pattern.contains('(') && pattern.contains(')') && pattern.contains('|'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regex_looking_patterns_are_recognised() {
        for yes in ["fn .*main", "\\d+", "foo|bar", "^use ", "[a-z]+", "a\\.b"] {
            assert!(looks_like_regex(yes), "{yes}");
        }
        for no in ["fn main", "TODO:", "a.b", "x + y"] {
            assert!(!looks_like_regex(no), "{no}");
        }
    }
}
