//! Approvals that last for the session.

use std::collections::HashSet;

use crate::Pattern;
use crate::key::UNPARSEABLE_BASH;

/// Keys the user approved for the rest of the session. A granted key that would ask is
/// allowed; a grant never turns a deny into an allow. Per-call approvals are not recorded here:
/// the runtime simply runs the approved call.
///
/// Beside exact keys, a run may hold pre-approved patterns (a skill's `allowed-tools`, for the
/// run it was loaded in): a key one of them matches, as an allow rule reads it, is granted the
/// same way, and [`Grants::end_run`] takes them all back.
#[derive(Clone, Debug, Default)]
pub struct Grants {
    keys: HashSet<String>,
    run_patterns: Vec<Pattern>,
}

impl Grants {
    /// No grants.
    pub fn new() -> Grants {
        Grants::default()
    }

    /// Approves `key` (exactly, not as a pattern) for the session.
    ///
    /// `tool.bash.cmd:?` is not recorded: every unparseable script is a different script, so
    /// approving one must not approve the next. Returns whether the grant was recorded.
    pub fn grant_session(&mut self, key: impl Into<String>) -> bool {
        let key = key.into();
        if key == UNPARSEABLE_BASH {
            return false;
        }
        self.keys.insert(key);
        true
    }

    /// Approves every key `pattern` matches until [`Grants::end_run`]. Like every grant it
    /// only answers an ask: a deny, a protected path and an unparseable script still stand.
    pub fn grant_for_run(&mut self, pattern: Pattern) {
        if !self
            .run_patterns
            .iter()
            .any(|p| p.as_str() == pattern.as_str())
        {
            self.run_patterns.push(pattern);
        }
    }

    /// Takes back what [`Grants::grant_for_run`] approved: the run it was for ended.
    pub fn end_run(&mut self) {
        self.run_patterns.clear();
    }

    /// The patterns approved for the running run, as written.
    pub fn run_patterns(&self) -> impl Iterator<Item = &str> {
        self.run_patterns.iter().map(Pattern::as_str)
    }

    /// True when `key` was granted for the session (a person said so for this exact key).
    pub fn is_granted_for_session(&self, key: &str) -> bool {
        self.keys.contains(key)
    }

    /// True when `key` was granted for the session, or matches a pattern granted for the run.
    pub fn is_granted(&self, key: &str) -> bool {
        (!self.keys.is_empty() && self.keys.contains(key))
            || self.run_patterns.iter().any(|p| p.matches(key))
    }

    /// How many keys and run patterns are granted.
    pub fn len(&self) -> usize {
        self.keys.len() + self.run_patterns.len()
    }

    /// True when nothing is granted.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty() && self.run_patterns.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_patterns_grant_what_they_match_until_the_run_ends() {
        let mut g = Grants::new();
        g.grant_for_run(Pattern::parse("tool.bash.cmd:git *").unwrap());
        g.grant_for_run(Pattern::parse("write:docs/**").unwrap());
        for key in ["tool.bash.cmd:git status", "write:docs/a/b.md"] {
            assert!(g.is_granted(key), "{key}");
        }
        for key in [
            "tool.bash.cmd:rm -rf /",
            "write:src/a.rs",
            "tool.bash.cmd:gitx",
        ] {
            assert!(!g.is_granted(key), "{key}");
        }
        assert_eq!(g.len(), 2);
        g.end_run();
        assert!(!g.is_granted("tool.bash.cmd:git status") && g.is_empty());
    }
}
