//! Typed errors of the gate: bad patterns, bad policies, unknown modes.

use thiserror::Error;

use crate::RuleSource;

/// A permission pattern that cannot be compiled.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum PatternError {
    /// The pattern text is empty.
    #[error("empty permission pattern; write a key glob such as \"write:src/**\" or \"tool.bash\"")]
    Empty,
    /// `read:` or `write:` with nothing after it.
    #[error(
        "permission pattern \"{pattern}\" has nothing after \"{action}:\"; add a path such as \"{action}:src/**\" or \"{action}:**\" for all"
    )]
    EmptyResource {
        /// The pattern as written.
        pattern: String,
        /// `read` or `write`.
        action: String,
    },
    /// The glob is malformed (unclosed class, inverted range, dangling escape...).
    #[error(
        "permission pattern \"{pattern}\" is malformed: {reason}; escape a literal '[', '*', '?' or '\\' with a backslash"
    )]
    Malformed {
        /// The pattern as written.
        pattern: String,
        /// What the glob compiler reported.
        reason: String,
    },
}

/// A policy that cannot be built from its parts.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum PolicyError {
    /// An allow rule names the unparseable-script key, which no allow rule may match.
    #[error(
        "allow rule \"tool.bash.cmd:?\" ({rule_source}) cannot take effect: scripts the gate cannot parse always need approval; remove the rule"
    )]
    AllowsUnparseable {
        /// Where the rule came from.
        rule_source: RuleSource,
    },
    /// A path scope pattern that is not root-relative.
    #[error(
        "path_scope.{list} pattern \"{pattern}\" {problem}; write patterns relative to the project root, such as \"src/**\""
    )]
    ScopePattern {
        /// `allow` or `deny`.
        list: &'static str,
        /// The pattern as written.
        pattern: String,
        /// What is wrong with it.
        problem: &'static str,
    },
    /// A scope pattern that does not parse in the dialect its scope uses.
    #[error(transparent)]
    Pattern(#[from] PatternError),
    /// The rule set could not be compiled into a matcher.
    #[error("permission rules could not be compiled: {reason}; check the rules' patterns")]
    Compile {
        /// What the glob compiler reported.
        reason: String,
    },
}

/// A mode name that is not one of `ask`, `accept-edits`, `plan`, `yolo`.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[error(
    "unknown permission mode \"{input}\"; did you mean \"{nearest}\"? (modes: ask, accept-edits, plan, yolo)"
)]
pub struct ParseModeError {
    /// What was given.
    pub input: String,
    /// The closest known mode name.
    pub nearest: &'static str,
}

/// An effect name that is not `allow`, `ask` or `deny`.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[error("unknown rule effect \"{input}\"; use allow, ask or deny")]
pub struct ParseEffectError {
    /// What was given.
    pub input: String,
}
