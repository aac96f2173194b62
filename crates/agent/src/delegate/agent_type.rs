//! An agent type: what a delegated child is (seed 000, "Delegation and skills"; issue 39).
//! A type is data: its name and description (what the parent's model reads when it picks
//! one), the child's system prompt, the part of the parent's catalog it may use, its model,
//! its turn bound and the rules it adds to the parent's. Where types come from (built-ins,
//! the user's and the project's Markdown files, folder trust) is `tackle_config::agent_types`;
//! this crate only runs them.

use std::fmt;
use std::path::PathBuf;

/// The longest agent type name: it is the front of every handle (`<name>_<8 hex>`).
pub const MAX_NAME_BYTES: usize = 64;

/// One agent type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentType {
    /// `[a-z0-9][a-z0-9_-]*` lowercased, at most [`MAX_NAME_BYTES`]; the handle's prefix.
    pub name: String,
    /// One line the parent's model reads to choose the type.
    pub description: String,
    /// The child's system prompt (the file's body); empty for a type without one, which then
    /// runs with tackle's own prompt.
    pub prompt: String,
    /// The tools the child may use, by tackle name; `None` is the parent's whole catalog. The
    /// child is offered the intersection with the parent's catalog, never more.
    pub tools: Option<Vec<String>>,
    /// Tools taken out of whatever `tools` leaves.
    pub disallowed_tools: Vec<String>,
    pub model: ModelChoice,
    /// The child's turn bound, when the type sets one.
    pub max_turns: Option<u32>,
    /// Rules the child adds to its parent's.
    pub permissions: Overlay,
    pub origin: Origin,
}

/// Which model a child runs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum ModelChoice {
    /// The parent's model (`model: inherit`, or no `model` field).
    #[default]
    Inherit,
    /// `provider:model`, a model of the user's catalog.
    Named(String),
}

/// A type's permission rules, as written (gate patterns: `read:src/**`, `tool.bash`,
/// `message:child`). A child's policy is its parent's plus these deny and ask rules, so it is
/// never wider; an allow rule cannot lift what the parent asks about or denies.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Overlay {
    pub allow: Vec<String>,
    pub ask: Vec<String>,
    pub deny: Vec<String>,
}

impl Overlay {
    pub fn is_empty(&self) -> bool {
        self.allow.is_empty() && self.ask.is_empty() && self.deny.is_empty()
    }
}

/// Where a type was defined; later scopes replace earlier ones of the same name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    BuiltIn,
    /// A file of the user's `$XDG_CONFIG_HOME/tackle/agents/`.
    User(PathBuf),
    /// A file of the project's `.agents/agents/` or `.claude/agents/`.
    Project(PathBuf),
}

impl Origin {
    /// `built-in`, `user` or `project`.
    pub fn scope(&self) -> &'static str {
        match self {
            Origin::BuiltIn => "built-in",
            Origin::User(_) => "user",
            Origin::Project(_) => "project",
        }
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::BuiltIn => f.write_str("built-in"),
            Origin::User(p) | Origin::Project(p) => write!(f, "{} {}", self.scope(), p.display()),
        }
    }
}

/// The read-only tools the built-in `explore` type may use (those the catalog has).
pub const EXPLORE_TOOLS: &[&str] = &[
    "read_file",
    "read_many_files",
    "list_dir",
    "stat",
    "glob",
    "grep",
    "view_file_outline",
    "json_query",
];

/// The built-in types: `explore` (read-only tools) and `general` (the parent's catalog).
pub fn built_in() -> Vec<AgentType> {
    vec![
        AgentType {
            name: "explore".to_owned(),
            description: "Read-only research: finds files, reads code and answers a question \
                          about the project, changing nothing."
                .to_owned(),
            prompt: "You are a read-only research agent working for another agent. Answer \
                     the question you are given by reading the project: search with grep and \
                     glob, read the files that matter, and end with a short, self-contained \
                     answer that names the files and lines it rests on. You cannot change \
                     anything."
                .to_owned(),
            tools: Some(EXPLORE_TOOLS.iter().map(|s| (*s).to_owned()).collect()),
            disallowed_tools: Vec::new(),
            model: ModelChoice::Inherit,
            max_turns: None,
            permissions: Overlay::default(),
            origin: Origin::BuiltIn,
        },
        AgentType {
            name: "general".to_owned(),
            description: "A general-purpose agent with the same tools as you, for a \
                          self-contained piece of work."
                .to_owned(),
            prompt: String::new(),
            tools: None,
            disallowed_tools: Vec::new(),
            model: ModelChoice::Inherit,
            max_turns: None,
            permissions: Overlay::default(),
            origin: Origin::BuiltIn,
        },
    ]
}

/// Whether `name` may name an agent type (and so begin a handle).
pub fn valid_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    name.len() <= MAX_NAME_BYTES
        && bytes
            .next()
            .is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        && bytes.all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_lowercase_words_without_paths() {
        for good in ["explore", "general", "code-reviewer", "a1_b2"] {
            assert!(valid_name(good), "{good}");
        }
        let long = "a".repeat(MAX_NAME_BYTES + 1);
        for bad in [
            "",
            "../x",
            "Explore",
            "_x",
            "a/b",
            "a b",
            "é",
            long.as_str(),
        ] {
            assert!(!valid_name(bad), "{bad}");
        }
    }

    #[test]
    fn the_built_ins_are_explore_and_general() {
        let names: Vec<String> = built_in().into_iter().map(|t| t.name).collect();
        assert_eq!(names, ["explore", "general"]);
        assert!(built_in().iter().all(|t| valid_name(&t.name)));
    }
}
