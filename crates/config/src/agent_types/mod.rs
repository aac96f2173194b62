//! Agent types as files: where a delegated child's definition comes from (the type itself is
//! `tackle_agent::delegate::agent_type`).
//!
//! A type is a Markdown file: YAML frontmatter between `---` lines (`name`, `description`,
//! `tools`, `disallowedTools`, `model`, `maxTurns`, `permissions`) and a body that is the
//! child's system prompt. Claude Code's agent files read as they are: its tool names map to
//! tackle's, its model aliases mean the parent's model, its other fields are noted and ignored.
//! Types come from four scopes, later winning by name ([`scopes`]): the built-ins, the user's
//! `$XDG_CONFIG_HOME/tackle/agents/`, the project's `.claude/agents/`, then `.agents/agents/`.
//!
//! Key decision: one bad file is one refusal, never a failed load. A repository is hostile
//! input, and a type file it carries must not stop a run; every other file still loads, and
//! the refusal (file, line, problem and fix) is data for `tackle agents` to show. The bounds
//! are the same for every file: read through [`tackle_fs::OwnFile::AGENT_TYPE`] (256 KiB),
//! at most [`files::MAX_FILES_PER_DIR`] a directory, the frontmatter held to
//! [`crate::frontmatter::MAX_FRONTMATTER_BYTES`] and [`crate::frontmatter::MAX_NESTING`] before
//! the YAML parser sees it, aliases refused unexpanded ([`crate::frontmatter`]).
//!
//! Folder trust: until the project is trusted, its types may only narrow ([`scopes`]), and
//! what they would widen joins the settings' widenings in the trust decision
//! ([`Scanned::widenings`]).
//!
//! Refuses: to run or offer anything. The delegation tools read [`AgentTypes`]; this module
//! only says which types exist.

mod fields;
pub mod files;
mod scopes;
mod tool_names;

#[cfg(test)]
mod tests;

use std::fmt;

use crate::frontmatter::located;
use std::path::{Path, PathBuf};

use tackle_agent::delegate::agent_type::AgentType;

pub use fields::{CLAUDE_MODEL_ALIASES, FIELDS};
pub use scopes::Scanned;

use crate::models::ModelCatalog;

/// The agent types in force, and what was said about the files they came from.
#[derive(Clone, Debug, Default)]
pub struct AgentTypes {
    /// Sorted by name.
    types: Vec<AgentType>,
    notes: Vec<Note>,
    refused: Vec<Refusal>,
    project_files: Vec<ProjectFile>,
}

impl AgentTypes {
    pub fn get(&self, name: &str) -> Option<&AgentType> {
        self.types.iter().find(|t| t.name == name)
    }

    /// Every type, by name.
    pub fn iter(&self) -> impl Iterator<Item = &AgentType> {
        self.types.iter()
    }

    /// What was left out or changed in files that loaded.
    pub fn notes(&self) -> &[Note] {
        &self.notes
    }

    /// The files (or directories) that were not loaded, and why.
    pub fn refused(&self) -> &[Refusal] {
        &self.refused
    }

    /// The project's type files that loaded, with what trusting the folder changes for each.
    pub fn project_files(&self) -> &[ProjectFile] {
        &self.project_files
    }
}

/// Something said about a file that loaded: a field ignored, a tool left out, a model ignored
/// until the folder is trusted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    pub path: PathBuf,
    pub line: Option<usize>,
    pub message: String,
}

/// A file (or directory) that was not loaded: the problem and its fix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub path: PathBuf,
    pub line: Option<usize>,
    pub message: String,
}

/// A project type file, and what trusting the folder would change for it (nothing, for a type
/// that only narrows).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProjectFile {
    pub path: PathBuf,
    pub name: String,
    pub trust_would: Vec<String>,
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        located(f, &self.path, self.line, &self.message)
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        located(f, &self.path, self.line, &self.message)
    }
}

pub(crate) use crate::frontmatter::FileFault;

/// The words an agent type file's frontmatter refusals use.
pub(crate) const KIND: crate::frontmatter::Kind = crate::frontmatter::Kind {
    file: "an agent type file",
    body: "the prompt",
    fields: "an agent type's fields",
    flat_example: "tools: [read_file, grep]",
    field_example: "name: code-reviewer",
};

/// Notes and refusals as they are found.
#[derive(Clone, Debug, Default)]
struct Report {
    notes: Vec<Note>,
    refused: Vec<Refusal>,
}

impl Report {
    fn note(&mut self, path: &Path, line: Option<usize>, message: impl Into<String>) {
        self.notes.push(Note {
            path: path.to_path_buf(),
            line,
            message: message.into(),
        });
    }

    fn refuse(&mut self, path: &Path, fault: FileFault) {
        self.refused.push(Refusal {
            path: path.to_path_buf(),
            line: fault.line,
            message: fault.message,
        });
    }
}

/// The agent types of the project at `root` and of the user whose config directory is
/// `user_dir` (`crate::user_config_dir()`; its `agents/` is read), with the project's applying
/// whole only when `trusted`, every `model` checked against `models`. Never fails: a file or
/// directory that cannot be used is a [`Refusal`], and the rest load.
pub fn load(
    root: &Path,
    user_dir: Option<&Path>,
    trusted: bool,
    models: &ModelCatalog,
) -> AgentTypes {
    match tackle_fs::Root::open(root) {
        Ok(handle) => Scanned::read(Some(&handle), user_dir).resolve(trusted, models),
        Err(e) => {
            let mut types = Scanned::read(None, user_dir).resolve(trusted, models);
            types.refused.push(Refusal {
                path: root.to_path_buf(),
                line: None,
                message: format!("could not be opened ({e}), so its agent types are not read"),
            });
            types
        }
    }
}
