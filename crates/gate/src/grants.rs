//! Approvals that last for the session.

use std::collections::HashSet;

use crate::key::UNPARSEABLE_BASH;

/// Keys the user approved for the rest of the session. A granted key that would ask is
/// allowed; a grant never turns a deny into an allow. Per-call approvals are not recorded here:
/// the runtime simply runs the approved call.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Grants {
    keys: HashSet<String>,
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

    /// True when `key` was granted for the session.
    pub fn is_granted(&self, key: &str) -> bool {
        !self.keys.is_empty() && self.keys.contains(key)
    }

    /// How many keys are granted.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// True when nothing is granted.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}
