//! The skills of one run: each skill as it was read, fixed when the run started.

use std::path::PathBuf;

/// Where a skill's folder is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SkillOrigin {
    /// The user's own (`$XDG_CONFIG_HOME/tackle/skills/`, `~/.agents/skills/`): the folder's
    /// absolute path.
    User(PathBuf),
    /// The project's (`.agents/skills/`, `.claude/skills/`): the folder relative to the root.
    Project(PathBuf),
}

impl SkillOrigin {
    /// `user` or `project`.
    pub fn scope(&self) -> &'static str {
        match self {
            SkillOrigin::User(_) => "user",
            SkillOrigin::Project(_) => "project",
        }
    }

    /// The skill's folder as the origin holds it.
    pub fn dir(&self) -> &std::path::Path {
        match self {
            SkillOrigin::User(p) | SkillOrigin::Project(p) => p,
        }
    }
}

/// One skill as it was read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skill {
    /// The folder's name, which the frontmatter's `name` equals.
    pub name: String,
    pub description: String,
    /// The instructions: `SKILL.md` after its frontmatter.
    pub body: String,
    /// The files the folder bundles besides `SKILL.md`, relative to it, sorted.
    pub files: Vec<String>,
    pub origin: SkillOrigin,
    /// Gate patterns (`tool.bash.cmd:git *`) the skill's `allowed-tools` pre-approves for the
    /// run it is loaded in: empty for a project skill until the folder is trusted.
    pub pre_approved: Vec<String>,
    /// False for `disable-model-invocation: true`: left out of the model's list and refused to
    /// the tool, loaded only by the user (`/skill <name>`).
    pub model_invocable: bool,
    /// False for `user-invocable: false`: not loaded by `/skill`.
    pub user_invocable: bool,
}

/// The skills a run offers, by name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SkillSet {
    /// Sorted by name, one a name.
    skills: Vec<Skill>,
}

impl SkillSet {
    /// The set of `skills`; a later skill of a name already present replaces it.
    pub fn new(skills: impl IntoIterator<Item = Skill>) -> Self {
        let mut set: Vec<Skill> = Vec::new();
        for skill in skills {
            set.retain(|s| s.name != skill.name);
            set.push(skill);
        }
        set.sort_by(|a, b| a.name.cmp(&b.name));
        Self { skills: set }
    }

    pub fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }

    pub fn len(&self) -> usize {
        self.skills.len()
    }

    /// Every skill, by name.
    pub fn iter(&self) -> impl Iterator<Item = &Skill> {
        self.skills.iter()
    }

    /// The skill named exactly `name`.
    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.skills.iter().find(|s| s.name == name)
    }

    /// The skills the model is offered (all but `disable-model-invocation` ones).
    pub fn for_model(&self) -> impl Iterator<Item = &Skill> {
        self.skills.iter().filter(|s| s.model_invocable)
    }

    /// Up to three names near `wanted` among `names`, best first.
    pub fn nearest<'a>(wanted: &str, names: impl Iterator<Item = &'a str>) -> Vec<String> {
        tackle_tools::nearest::nearest_names(wanted, names)
    }
}
