//! The scopes, later winning by name: the built-in types < the user's `agents/` < the project's
//! `.claude/agents/` < the project's `.agents/agents/`; what folder trust leaves of a project's
//! types; and the model catalog's check of every `model` a file names.
//!
//! Until the folder is trusted a project type may only narrow what its parent has: its tools,
//! ask and deny rules apply (a child's catalog is an intersection with its parent's and its
//! policy the parent's plus these), its `model` is ignored (another model is another place the
//! code goes), its allow rules are dropped, and it may not take the name of a built-in or user
//! type. Each of those three is a [`Widening`] in the project's trust decision, beside the
//! settings', so `tackle trust` accepts them and a later file that widens further asks again.

use std::path::{Path, PathBuf};

use tackle_agent::delegate::agent_type::{AgentType, ModelChoice, Origin, built_in};
use tackle_fs::Root;
use tackle_llm::catalog::ModelId;

use super::fields::{self, Draft};
use super::files::{self, PROJECT_DIRS, Source};
use super::{AgentTypes, FileFault, ProjectFile, Report};
use crate::models::ModelCatalog;
use crate::settings::Origin as SettingOrigin;
use crate::trust::Widening;

/// One file's type, parsed.
#[derive(Clone, Debug)]
struct Parsed {
    path: PathBuf,
    draft: Draft,
}

/// Every agent type file read and parsed, before trust and the model catalog apply: what
/// [`crate::load_with`] judges trust with, then resolves.
#[derive(Debug, Default)]
pub struct Scanned {
    /// The user's types, one a name.
    user: Vec<Parsed>,
    /// The project's types, one a name (`.agents/agents/` over `.claude/agents/`).
    project: Vec<Parsed>,
    report: Report,
}

/// A change trusting the folder makes to one project type.
struct TrustChange {
    key: &'static str,
    value: String,
    identity: String,
    line: usize,
    effect: String,
}

impl Scanned {
    /// Reads the user's `agents/` of `user_dir` (their config directory) and, with `root`, the
    /// project's directories. A file that cannot be read or parsed is refused in the report;
    /// the others are kept.
    pub fn read(root: Option<&Root>, user_dir: Option<&Path>) -> Scanned {
        let mut report = Report::default();
        let user_sources = user_dir.map_or_else(Vec::new, |d| files::read_user(d, &mut report));
        let user = one_a_name(
            parse_all(user_sources, Origin::User, &mut report),
            &mut report,
        );
        let project = root.map_or_else(Vec::new, |root| project_types(root, &mut report));
        Scanned {
            user,
            project,
            report,
        }
    }

    /// The built-in and user types a project type would replace, by name.
    fn lower(&self) -> Vec<(String, Origin)> {
        let mut lower: Vec<(String, Origin)> =
            built_in().into_iter().map(|t| (t.name, t.origin)).collect();
        for p in &self.user {
            lower.retain(|(n, _)| *n != p.draft.ty.name);
            lower.push((p.draft.ty.name.clone(), p.draft.ty.origin.clone()));
        }
        lower
    }

    /// What the project's types widen, for the folder's trust decision.
    pub fn widenings(&self) -> Vec<Widening> {
        let lower = self.lower();
        self.project
            .iter()
            .flat_map(|p| {
                trust_changes(p, &lower)
                    .into_iter()
                    .map(|c| Widening {
                        key: c.key,
                        value: c.value,
                        identity: c.identity,
                        origin: SettingOrigin::File {
                            path: p.path.clone(),
                            line: c.line,
                        },
                        effect: c.effect,
                        secrets: Vec::new(),
                    })
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// The types in force: the project's as far as `trusted` lets them apply, every `model`
    /// checked against `models` (a file naming one the user has not configured is refused).
    pub fn resolve(self, trusted: bool, models: &ModelCatalog) -> AgentTypes {
        let lower = self.lower();
        let Scanned {
            user,
            project,
            mut report,
        } = self;
        let mut types = built_in();
        for p in user {
            if let Some(ty) = checked(p, models, &mut report) {
                put(&mut types, ty);
            }
        }
        let mut project_files = Vec::new();
        for p in project {
            let changes = trust_changes(&p, &lower);
            let path = p.path.clone();
            let (name_line, model_line) = (p.draft.name_line, p.draft.model_line);
            let allow_lines = p.draft.allow_lines.clone();
            let Some(mut ty) = checked(p, models, &mut report) else {
                continue;
            };
            project_files.push(ProjectFile {
                path: path.clone(),
                name: ty.name.clone(),
                trust_would: changes.into_iter().map(|c| c.effect).collect(),
            });
            if !trusted {
                let later = "until this folder is trusted (tackle trust)";
                if let ModelChoice::Named(m) = &ty.model {
                    report.note(
                        &path,
                        model_line,
                        format!("model {m} is ignored {later}; the child runs its parent's model"),
                    );
                    ty.model = ModelChoice::Inherit;
                }
                for (rule, line) in ty.permissions.allow.drain(..).zip(allow_lines) {
                    report.note(
                        &path,
                        Some(line),
                        format!("permissions.allow {rule} is ignored {later}"),
                    );
                }
                if let Some((_, origin)) = lower.iter().find(|(n, _)| *n == ty.name) {
                    report.note(
                        &path,
                        Some(name_line),
                        format!(
                            "`{}` does not replace {} of that name {later}; that one is used",
                            ty.name,
                            whose(origin)
                        ),
                    );
                    continue;
                }
            }
            put(&mut types, ty);
        }
        types.sort_by(|a, b| a.name.cmp(&b.name));
        AgentTypes {
            types,
            notes: report.notes,
            refused: report.refused,
            project_files,
        }
    }
}

/// The project's types, one a name: `.agents/agents/` over `.claude/agents/`, the file that
/// loses noted. `.claude/agents` linked to `.agents/agents` is one directory, read once.
fn project_types(root: &Root, report: &mut Report) -> Vec<Parsed> {
    let dirs = if files::project_dirs_are_one(root) {
        &PROJECT_DIRS[1..]
    } else {
        &PROJECT_DIRS[..]
    };
    let mut project: Vec<Parsed> = Vec::new();
    for dir in dirs {
        let sources = files::read_project(root, dir, report);
        for p in one_a_name(parse_all(sources, Origin::Project, report), report) {
            if let Some(i) = project
                .iter()
                .position(|q| q.draft.ty.name == p.draft.ty.name)
            {
                let replaced = project.remove(i);
                let message = format!(
                    "is not used: {} defines `{}` too, and wins",
                    p.path.display(),
                    p.draft.ty.name
                );
                report.note(&replaced.path, None, message);
            }
            project.push(p);
        }
    }
    project
}

/// Each source parsed; a file that does not parse is refused.
fn parse_all(
    sources: Vec<Source>,
    origin: fn(PathBuf) -> Origin,
    report: &mut Report,
) -> Vec<Parsed> {
    sources
        .into_iter()
        .filter_map(|s| match fields::parse(&s.text, origin(s.path.clone())) {
            Ok(draft) => Some(Parsed {
                path: s.path,
                draft,
            }),
            Err(fault) => {
                report.refuse(&s.path, fault);
                None
            }
        })
        .collect()
}

/// One type a name within one directory: a second file with a name already taken is refused
/// (files are in name order, so the refusal is stable).
fn one_a_name(parsed: Vec<Parsed>, report: &mut Report) -> Vec<Parsed> {
    let mut kept: Vec<Parsed> = Vec::new();
    for p in parsed {
        if let Some(first) = kept.iter().find(|k| k.draft.ty.name == p.draft.ty.name) {
            let fault = FileFault::at(
                p.draft.name_line,
                format!(
                    "`{}` is already the name of {} in this directory; give each type its own name",
                    p.draft.ty.name,
                    first.path.display()
                ),
            );
            report.refuse(&p.path, fault);
            continue;
        }
        kept.push(p);
    }
    kept
}

/// The type of `p` once its model is checked against the catalog (refused when the user has
/// not configured it), its notes reported.
fn checked(p: Parsed, models: &ModelCatalog, report: &mut Report) -> Option<AgentType> {
    if let ModelChoice::Named(text) = &p.draft.ty.model
        && let Err(fault) = configured(text, p.draft.model_line, models)
    {
        report.refuse(&p.path, fault);
        return None;
    }
    for (line, message) in p.draft.notes {
        report.note(&p.path, line, message);
    }
    Some(p.draft.ty)
}

/// Whether the catalog has `text` (`provider:model`, already parsed once): its provider, and
/// the model among the catalog's entries.
fn configured(text: &str, line: Option<usize>, models: &ModelCatalog) -> Result<(), FileFault> {
    let line = line.unwrap_or(1);
    let inherit = "or write model: inherit to run the parent's model";
    let Ok(id) = text.parse::<ModelId>() else {
        return Err(FileFault::at(
            line,
            format!("model `{text}` is not provider:model; {inherit}"),
        ));
    };
    if !models.providers.iter().any(|p| p.spec.name == id.provider) {
        return Err(FileFault::at(
            line,
            format!(
                "model {text} names the provider `{}`, which your configuration does not have; \
                 add a [providers.{}] table to your user config, {inherit}",
                id.provider, id.provider
            ),
        ));
    }
    if models.entry(&id).is_none() {
        return Err(FileFault::at(
            line,
            format!(
                "model {text} is not in your model catalog (`tackle models` lists it); add a \
                 [models.\"{text}\"] table to your user config, {inherit}"
            ),
        ));
    }
    Ok(())
}

/// A type's origin as a message names it: `the built-in type`, `the user type at <path>`.
fn whose(origin: &Origin) -> String {
    match origin {
        Origin::BuiltIn => "the built-in type".to_owned(),
        Origin::User(p) | Origin::Project(p) => {
            format!("the {} type at {}", origin.scope(), p.display())
        }
    }
}

/// `ty` in `types`, in place of a type of the same name.
fn put(types: &mut Vec<AgentType>, ty: AgentType) {
    types.retain(|t| t.name != ty.name);
    types.push(ty);
}

/// What trusting the folder changes for `p`: its model used, its allow rules applied, and its
/// taking the name of a built-in or user type. Identities hold the values, not the lines, so a
/// moved line keeps trust and a changed value asks again.
fn trust_changes(p: &Parsed, lower: &[(String, Origin)]) -> Vec<TrustChange> {
    let ty = &p.draft.ty;
    let name = &ty.name;
    let mut changes = Vec::new();
    if let (ModelChoice::Named(m), Some(line)) = (&ty.model, p.draft.model_line) {
        changes.push(TrustChange {
            key: "agent_types.model",
            value: format!("{name}: {m}"),
            identity: format!("{name}\n{m}"),
            line,
            effect: format!("the `{name}` type runs {m} instead of its parent's model"),
        });
    }
    for (rule, line) in ty.permissions.allow.iter().zip(&p.draft.allow_lines) {
        changes.push(TrustChange {
            key: "agent_types.permissions.allow",
            value: format!("{name}: {rule}"),
            identity: format!("{name}\n{rule}"),
            line: *line,
            effect: format!("the `{name}` type adds the allow rule {rule}"),
        });
    }
    if let Some((_, origin)) = lower.iter().find(|(n, _)| n == name) {
        changes.push(TrustChange {
            key: "agent_types.replace",
            value: name.clone(),
            identity: format!("{name}\n{}", origin.scope()),
            line: p.draft.name_line,
            effect: format!(
                "the project's `{name}` type replaces {} of that name",
                whose(origin)
            ),
        });
    }
    changes
}
