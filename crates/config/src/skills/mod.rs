//! Skills as files: the Agent Skills format (a folder holding `SKILL.md`, as Claude Code,
//! Codex, Gemini CLI, opencode, Goose and Cursor read it) found across the user's and the
//! project's scopes, checked against the format's rules ([`rules`]), and filtered by folder
//! trust. The skills themselves, and the `skill` tool that offers them, are
//! `tackle_agent::skills`.
//!
//! Scopes, later winning by name ([`scopes`]): the user's `~/.agents/skills/`, then
//! `$XDG_CONFIG_HOME/tackle/skills/`; then the project's `.claude/skills/` and
//! `.agents/skills/` of every directory from the root down to the working directory (nearer
//! wins, `.agents` over `.claude`). Project over user, with the shadowed skill named.
//!
//! Key decision: one bad skill is one refusal naming the rule it breaks, never a failed load
//! and never a half-loaded skill; a repository is hostile input. Folder trust: a project
//! skill's instructions load like `AGENTS.md` (text the model reads, which changes nothing by
//! itself), but until the folder is trusted its `allowed-tools` pre-approve nothing and it may
//! not replace a user skill of its name; both are widenings in the folder's trust decision
//! ([`Scanned::widenings`]), shown by `tackle trust`.
//!
//! Departure from DESIGN.md §3, which gives skills a crate of their own over `tackle-fs`: they
//! are read here, beside agent types, with the same bounded frontmatter reader
//! ([`crate::frontmatter`]), which a crate below `tackle-config` could not share.

pub mod allowed_tools;
mod fields;
pub mod files;
pub mod rules;
mod scopes;

#[cfg(test)]
mod tests;

use std::fmt;

use crate::frontmatter::located;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tackle_agent::skills::SkillSet;

pub use scopes::Scanned;

use rules::Rule;

/// The skills in force, and what was said about the folders they came from.
#[derive(Clone, Debug, Default)]
pub struct Skills {
    set: Arc<SkillSet>,
    /// Each skill's `SKILL.md`, as messages show it, by name.
    files: Vec<(String, PathBuf)>,
    report: Report,
    shadowed: Vec<Shadowed>,
    project_files: Vec<ProjectSkill>,
}

impl Skills {
    /// The skills a run offers.
    pub fn set(&self) -> &Arc<SkillSet> {
        &self.set
    }

    /// The `SKILL.md` the skill `name` was read from.
    pub fn file_of(&self, name: &str) -> Option<&Path> {
        self.files
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, p)| p.as_path())
    }

    /// Warnings and notes on skills that loaded.
    pub fn notes(&self) -> &[Note] {
        &self.report.notes
    }

    /// Skills that did not load, each with the rule it breaks.
    pub fn invalid(&self) -> &[Invalid] {
        &self.report.invalid
    }

    /// Skills a skill of the same name in a higher scope replaced.
    pub fn shadowed(&self) -> &[Shadowed] {
        &self.shadowed
    }

    /// The project's skills that loaded, with what trusting the folder changes for each.
    pub fn project_files(&self) -> &[ProjectSkill] {
        &self.project_files
    }
}

/// Something said about a skill that loaded: a warning (a rule of the `Warning` kind), or a
/// note (an `allowed-tools` entry left out, trust).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    pub path: PathBuf,
    pub line: Option<usize>,
    pub rule: Option<Rule>,
    pub message: String,
}

/// A skill (or a skills directory) that did not load, and the rule it breaks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invalid {
    pub path: PathBuf,
    pub line: Option<usize>,
    pub rule: Rule,
    pub message: String,
}

/// A skill replaced by one of the same name in a higher scope.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shadowed {
    pub name: String,
    /// The `SKILL.md` in force.
    pub used: PathBuf,
    /// The `SKILL.md` it replaced.
    pub shadowed: PathBuf,
}

/// A project skill, and what trusting the folder would change for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProjectSkill {
    pub path: PathBuf,
    pub name: String,
    pub trust_would: Vec<String>,
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let message = match self.rule {
            Some(rule) => format!("{} [{}]", self.message, rule.id),
            None => self.message.clone(),
        };
        located(f, &self.path, self.line, &message)
    }
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        located(
            f,
            &self.path,
            self.line,
            &format!("{} [{}]", self.message, self.rule.id),
        )
    }
}

/// Notes and refusals as they are found.
#[derive(Clone, Debug, Default)]
struct Report {
    notes: Vec<Note>,
    invalid: Vec<Invalid>,
}

impl Report {
    fn note(&mut self, path: &Path, line: Option<usize>, message: impl Into<String>) {
        self.notes.push(Note {
            path: path.to_path_buf(),
            line,
            rule: None,
            message: message.into(),
        });
    }

    fn warn(&mut self, path: &Path, line: Option<usize>, rule: Option<Rule>, message: String) {
        self.notes.push(Note {
            path: path.to_path_buf(),
            line,
            rule,
            message,
        });
    }

    fn invalid(&mut self, path: &Path, line: Option<usize>, rule: Rule, message: String) {
        self.invalid.push(Invalid {
            path: path.to_path_buf(),
            line,
            rule,
            message,
        });
    }
}

/// The user's skills directories, lowest first: `~/.agents/skills`, then
/// `<config dir>/skills` (`user_config_dir()`, `$XDG_CONFIG_HOME/tackle`).
pub fn user_dirs(home: Option<&Path>, config_dir: Option<&Path>) -> Vec<PathBuf> {
    home.map(|h| h.join(".agents/skills"))
        .into_iter()
        .chain(config_dir.map(|c| c.join("skills")))
        .collect()
}

/// The skills of the project at `root` (the working directory `cwd` inside it) and of the
/// user's `user_dirs`, the project's applying whole only when `trusted`. Never fails: what
/// cannot be used is an [`Invalid`], and the rest load.
pub fn load(root: &Path, cwd: &Path, user_dirs: &[PathBuf], trusted: bool) -> Skills {
    match tackle_fs::Root::open(root) {
        Ok(handle) => Scanned::read(Some((&handle, root, cwd)), user_dirs).resolve(trusted),
        Err(e) => {
            let mut skills = Scanned::read(None, user_dirs).resolve(trusted);
            skills.report.invalid(
                root,
                None,
                rules::SKILL_FILE,
                format!("could not be opened ({e}), so its skills are not read"),
            );
            skills
        }
    }
}
