//! What a person is asked about one call, made safe to show, for both approvers on a terminal
//! (chat's widget and the prompt of `tackle run` and `tackle call`), so they show the same
//! things: the tool, each key needing approval (a bash command's key as the command it is), the
//! diff a file change would apply (the call's JSON only when there is none) and the gate's
//! reason. Each front end only lays it out.

use std::path::Path;

use tackle_runtime::ApprovalRequest;
use tackle_runtime::visible::{visible, visible_json};

use crate::diff::{self, Diff};

/// The prefix of a bash command's key (`tackle_tools::shell::keys`).
const BASH_KEY: &str = "tool.bash.cmd:";

/// A key as it is shown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShownKey {
    /// A command bash would run, shown as the command.
    Command(String),
    /// Any other key (`write:src/a.rs`), shown whole.
    Key(String),
}

impl ShownKey {
    pub fn of(key: &str) -> Self {
        match key.strip_prefix(BASH_KEY) {
            Some(command) => ShownKey::Command(shown(command)),
            None => ShownKey::Key(shown(key)),
        }
    }
}

/// One ask, every string in it safe to show and whole (a front end cuts what it must).
#[derive(Clone, Debug, PartialEq)]
pub struct ApprovalView {
    pub tool: String,
    /// The call's arguments as one line of JSON.
    pub call: String,
    pub keys: Vec<ShownKey>,
    pub why: String,
    pub session_grant: bool,
    pub diff: Option<Diff>,
    /// What the tool says the call will do (a write through a reference, with the file's
    /// real name; a pipeline's argv), line by line, each made safe.
    pub effect: Vec<String>,
}

impl ApprovalView {
    /// The view of `request`; a file change's diff is read from the file under `root` as it
    /// is now.
    pub fn of(request: &ApprovalRequest<'_>, root: &Path) -> Self {
        Self {
            tool: match request.handle {
                Some(handle) => format!("{} (subagent {})", shown(request.tool), shown(handle)),
                None => shown(request.tool),
            },
            call: visible_json(request.arguments),
            keys: request.keys.iter().map(|k| ShownKey::of(k)).collect(),
            why: shown(request.message),
            session_grant: request.session_grant,
            diff: match request.effect {
                Some(_) => None,
                None => diff::for_call(root, request.tool, request.arguments),
            },
            effect: request
                .effect
                .map(|e| e.lines().map(shown).collect())
                .unwrap_or_default(),
        }
    }
}

/// Model-chosen text exactly as it is, every hidden character escaped (a tab too: a key is
/// not indentation).
fn shown(text: &str) -> String {
    visible(text).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bash_keys_are_commands_and_every_key_is_safe() {
        assert_eq!(
            ShownKey::of("tool.bash.cmd:rm -rf build"),
            ShownKey::Command("rm -rf build".into())
        );
        assert_eq!(
            ShownKey::of("write:a\u{1b}[2J"),
            ShownKey::Key("write:a\\x1b[2J".into())
        );
        assert_eq!(
            ShownKey::of("tool.bash.cmd:printf 'a\tb'\r"),
            ShownKey::Command("printf 'a\\tb'\\r".into())
        );
    }
}
