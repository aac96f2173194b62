//! The scopes, later winning by name, and what folder trust leaves of the project's skills.
//!
//! Order, lowest first: `~/.agents/skills/`, `$XDG_CONFIG_HOME/tackle/skills/`, then for each
//! directory from the project root down to the working directory its `.claude/skills/` and
//! `.agents/skills/`. A skill replaced by a later one of its name is [`Shadowed`], named in
//! `tackle skills`. Byte-identical copies (one skill linked into several agents' directories)
//! replace each other without a word.
//!
//! Until the folder is trusted a project skill's `allowed-tools` pre-approves nothing and it
//! does not replace a user skill of its name (that one stays in force): each is a
//! [`Widening`] of the trust decision, keyed `skills.allowed_tools` and `skills.replace`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tackle_agent::skills::{Skill, SkillOrigin, SkillSet};
use tackle_fs::Root;

use super::fields::{self, Draft};
use super::files::{self, Found, PROJECT_DIRS};
use super::{ProjectSkill, Report, Shadowed, Skills};
use crate::settings::Origin as SettingOrigin;
use crate::trust::Widening;

/// One skill folder, parsed.
#[derive(Clone, Debug)]
struct Parsed {
    found: Found,
    draft: Draft,
}

/// Every skill read and parsed, before trust applies: what [`crate::load_with`] judges trust
/// with, then resolves.
#[derive(Debug, Default)]
pub struct Scanned {
    /// The user's skills, one a name.
    user: Vec<Parsed>,
    /// The project's skills, one a name.
    project: Vec<Parsed>,
    report: Report,
    shadowed: Vec<Shadowed>,
}

/// A change trusting the folder makes to one project skill.
struct TrustChange {
    key: &'static str,
    value: String,
    identity: String,
    line: usize,
    effect: String,
}

impl Scanned {
    /// Reads the user's `user_dirs` (lowest first) and, with `(root handle, root, cwd)`, the
    /// project's directories from the root down to `cwd`.
    pub fn read(project: Option<(&Root, &Path, &Path)>, user_dirs: &[PathBuf]) -> Scanned {
        let mut report = Report::default();
        let mut shadowed = Vec::new();
        let mut user = Vec::new();
        for dir in user_dirs {
            let found = files::read_user(dir, &mut report);
            add_all(&mut user, parse_all(found, &mut report), &mut shadowed);
        }
        let mut project_skills = Vec::new();
        if let Some((handle, root, cwd)) = project {
            for dir in project_dirs(root, cwd) {
                let found = files::read_project(handle, &dir, &mut report);
                add_all(
                    &mut project_skills,
                    parse_all(found, &mut report),
                    &mut shadowed,
                );
            }
        }
        Scanned {
            user,
            project: project_skills,
            report,
            shadowed,
        }
    }

    /// What the project's skills widen, for the folder's trust decision.
    pub fn widenings(&self) -> Vec<Widening> {
        self.project
            .iter()
            .flat_map(|p| {
                trust_changes(p, &self.user)
                    .into_iter()
                    .map(|c| Widening {
                        key: c.key,
                        value: c.value,
                        identity: c.identity,
                        origin: SettingOrigin::File {
                            path: p.found.file.clone(),
                            line: c.line,
                        },
                        effect: c.effect,
                        secrets: Vec::new(),
                    })
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// The skills in force: the project's as far as `trusted` lets them apply.
    pub fn resolve(self, trusted: bool) -> Skills {
        let Scanned {
            user,
            project,
            mut report,
            mut shadowed,
        } = self;
        let mut files = Vec::new();
        let mut skills: Vec<Skill> = Vec::new();
        for p in &user {
            warn_all(p, &mut report);
            files.push((p.draft.name.clone(), p.found.file.clone()));
            skills.push(skill(p, SkillOrigin::User(p.found.dir.clone()), true));
        }
        let mut project_files = Vec::new();
        let later = "until this folder is trusted (tackle trust)";
        for p in &project {
            warn_all(p, &mut report);
            let changes = trust_changes(p, &user);
            project_files.push(ProjectSkill {
                path: p.found.file.clone(),
                name: p.draft.name.clone(),
                trust_would: changes.iter().map(|c| c.effect.clone()).collect(),
            });
            if !trusted {
                if !p.draft.allowed.patterns.is_empty() {
                    report.note(
                        &p.found.file,
                        p.draft.allowed_line,
                        format!("allowed-tools pre-approves nothing {later}"),
                    );
                }
                if let Some(u) = user.iter().find(|u| u.draft.name == p.draft.name)
                    && u.found.text != p.found.text
                {
                    report.note(
                        &p.found.file,
                        Some(p.draft.name_line),
                        format!(
                            "`{}` does not replace the user skill at {} {later}; that one is used",
                            p.draft.name,
                            u.found.file.display()
                        ),
                    );
                    continue;
                }
            }
            // Project skills are one a name already: a clash here is with a user skill.
            if let Some(i) = skills.iter().position(|s| s.name == p.draft.name) {
                skills.remove(i);
                let (_, replaced_file) = files.remove(i);
                let same = user
                    .iter()
                    .any(|u| u.draft.name == p.draft.name && u.found.text == p.found.text);
                if !same {
                    shadowed.push(Shadowed {
                        name: p.draft.name.clone(),
                        used: p.found.file.clone(),
                        shadowed: replaced_file,
                    });
                }
            }
            files.push((p.draft.name.clone(), p.found.file.clone()));
            skills.push(skill(p, SkillOrigin::Project(p.found.dir.clone()), trusted));
        }
        Skills {
            set: Arc::new(SkillSet::new(skills)),
            files,
            report,
            shadowed,
            project_files,
        }
    }
}

/// The project directories holding skills, lowest first: for each directory from the root
/// down to `cwd` (root-relative), its `.claude/skills` then `.agents/skills`.
fn project_dirs(root: &Path, cwd: &Path) -> Vec<String> {
    let mut bases = vec![String::new()];
    if let Ok(rel) = cwd.strip_prefix(root) {
        let mut acc = String::new();
        for c in rel.components() {
            let std::path::Component::Normal(name) = c else {
                break;
            };
            let Some(name) = name.to_str() else { break };
            acc = if acc.is_empty() {
                name.to_owned()
            } else {
                format!("{acc}/{name}")
            };
            bases.push(acc.clone());
        }
    }
    bases
        .iter()
        .flat_map(|b| {
            PROJECT_DIRS.iter().map(move |d| {
                if b.is_empty() {
                    (*d).to_owned()
                } else {
                    format!("{b}/{d}")
                }
            })
        })
        .collect()
}

fn parse_all(found: Vec<Found>, report: &mut Report) -> Vec<Parsed> {
    found
        .into_iter()
        .filter_map(|f| match fields::parse(&f) {
            Ok(draft) => Some(Parsed { found: f, draft }),
            Err(b) => {
                report.invalid(&f.file, b.line, b.rule, b.message);
                None
            }
        })
        .collect()
}

/// `parsed` added to `into`, each replacing one of its name (the replaced one recorded as
/// shadowed, unless the two files are the same bytes).
fn add_all(into: &mut Vec<Parsed>, parsed: Vec<Parsed>, shadowed: &mut Vec<Shadowed>) {
    for p in parsed {
        if let Some(i) = into.iter().position(|q| q.draft.name == p.draft.name) {
            let old = into.remove(i);
            if old.found.text != p.found.text {
                shadowed.push(Shadowed {
                    name: p.draft.name.clone(),
                    used: p.found.file.clone(),
                    shadowed: old.found.file,
                });
            }
        }
        into.push(p);
    }
}

fn warn_all(p: &Parsed, report: &mut Report) {
    for (line, rule, message) in &p.draft.warnings {
        report.warn(&p.found.file, *line, *rule, message.clone());
    }
}

/// The skill `p` defines; its `allowed-tools` pre-approve only where `applies`.
fn skill(p: &Parsed, origin: SkillOrigin, applies: bool) -> Skill {
    Skill {
        name: p.draft.name.clone(),
        description: p.draft.description.clone(),
        body: p.draft.body.clone(),
        files: p.found.files.clone(),
        origin,
        pre_approved: if applies {
            p.draft.allowed.patterns.clone()
        } else {
            Vec::new()
        },
        model_invocable: p.draft.model_invocable,
        user_invocable: p.draft.user_invocable,
    }
}

/// What trusting the folder changes for `p`: its `allowed-tools` applied, and its replacing
/// a user skill of its name. Identities hold the values, not the lines.
fn trust_changes(p: &Parsed, user: &[Parsed]) -> Vec<TrustChange> {
    let name = &p.draft.name;
    let mut changes = Vec::new();
    if !p.draft.allowed.patterns.is_empty() {
        let patterns = p.draft.allowed.patterns.join(" ");
        changes.push(TrustChange {
            key: "skills.allowed_tools",
            value: format!("{name}: {patterns}"),
            identity: format!("{name}\n{patterns}"),
            line: p.draft.allowed_line.unwrap_or(1),
            effect: format!(
                "the `{name}` skill pre-approves {patterns} for the task it is loaded in"
            ),
        });
    }
    if user
        .iter()
        .any(|u| u.draft.name == *name && u.found.text != p.found.text)
    {
        changes.push(TrustChange {
            key: "skills.replace",
            value: name.clone(),
            identity: format!("{name}\nuser"),
            line: p.draft.name_line,
            effect: format!("the project's `{name}` skill replaces the user's skill of that name"),
        });
    }
    changes
}
