//! `skill {name, file?}`: loads one of the run's skills. Without `file` it returns the
//! skill's instructions and the list of files it bundles (their paths, not their contents);
//! with `file`, one of those files. Exclusive (seed 000): a skill's instructions steer what
//! the calls after it do, so nothing runs beside its loading.
//!
//! The name selects from the set fixed when the run started and never becomes a path: a name
//! holding `/` or `..`, or one that is close to a real name, is refused with the nearest
//! names, never guessed (seed 004 `load_skill`). `file` likewise selects from the skill's
//! listed files. The gate sees `skill:<name>` (allowed unless a rule says otherwise) and, for
//! a project skill's file, the file's `read:` key, so a deny rule on the path holds.
//!
//! A skill whose `allowed-tools` applies (the user's, or a trusted project's) pre-approves
//! those keys for the rest of the run it is loaded in ([`tackle_gate::Grants::grant_for_run`]):
//! they answer asks, never denies, and the loop takes them back when the run ends.

use std::borrow::Cow;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tackle_fs::{OwnFile, Root};
use tackle_tool::protocol::{Concurrency, ErrorCode};
use tackle_tool::{
    Action, ExecuteContext, PermissionResource, PrepareContext, Prepared, Routing, Tool,
    ToolCompletion, ToolError,
};

use crate::delegate::Tree;
use crate::skills::{Skill, SkillOrigin, SkillSet};

/// The tool's name in the standard catalog.
pub const SKILL_TOOL: &str = "skill";

/// The most skill names a refusal lists when none is near.
const LISTED_IN_REFUSAL: usize = 20;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SkillArgs {
    /// The skill's name exactly as listed in your instructions, e.g. commit-style.
    pub name: String,
    /// One of the files the skill lists (its path relative to the skill, e.g.
    /// references/forms.md), to read it; leave out to load the skill's instructions.
    pub file: Option<String>,
}

/// What a call loads.
#[derive(Debug)]
pub struct Load {
    skill: Skill,
    file: Option<String>,
}

/// The `skill` tool over a run's [`SkillSet`].
pub struct SkillTool {
    skills: Arc<SkillSet>,
    /// Where the calling session is found, to pre-approve its `allowed-tools`; without a tree
    /// (a host with no agent loop) nothing is pre-approved.
    tree: Option<Arc<Tree>>,
}

impl SkillTool {
    pub fn new(skills: Arc<SkillSet>, tree: Option<Arc<Tree>>) -> Self {
        Self { skills, tree }
    }
}

fn refusal(code: ErrorCode, message: String) -> ToolError {
    ToolError::new(code, format!("skill: {message}"))
}

/// `a`, `b`, `c`, quoted, for a refusal.
fn quoted(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl SkillTool {
    fn names(&self) -> Vec<String> {
        self.skills.for_model().map(|s| s.name.clone()).collect()
    }

    /// The skill `name` selects, or the refusal naming the nearest.
    fn select(&self, name: &str) -> Result<&Skill, ToolError> {
        let names = self.names();
        let listing = || {
            let mut shown: Vec<String> = names.iter().take(LISTED_IN_REFUSAL).cloned().collect();
            if names.len() > LISTED_IN_REFUSAL {
                shown.push(format!("… {} more", names.len() - LISTED_IN_REFUSAL));
            }
            if shown.is_empty() {
                "this run has no skills".to_owned()
            } else {
                format!("the skills are {}", quoted(&shown))
            }
        };
        if name.contains(['/', '\\']) || name.contains("..") {
            return Err(refusal(
                ErrorCode::INVALID_ARGUMENTS,
                format!(
                    "`{name}` is not a skill's name: a name is one word from the list in your \
                     instructions, never a path; {}",
                    listing()
                ),
            ));
        }
        match self.skills.get(name).filter(|s| s.model_invocable) {
            Some(skill) => Ok(skill),
            None => {
                let near = SkillSet::nearest(name, names.iter().map(String::as_str));
                let message = if self.skills.get(name).is_some() {
                    format!(
                        "`{name}` is a skill only the user loads (disable-model-invocation); \
                         {}",
                        listing()
                    )
                } else if near.is_empty() {
                    format!("no skill is named `{name}`; {}", listing())
                } else {
                    format!(
                        "no skill is named `{name}`; the nearest are {}. Names are matched \
                         exactly: call again with one of them if it is the one you meant",
                        quoted(&near)
                    )
                };
                Err(refusal(ErrorCode::NOT_FOUND, message))
            }
        }
    }
}

impl Tool for SkillTool {
    type Args = SkillArgs;
    type Plan = Load;

    fn name(&self) -> &str {
        SKILL_TOOL
    }

    fn description(&self) -> Cow<'static, str> {
        Cow::Borrowed(
            "Load a skill: instructions for a particular kind of task, listed by name in your \
             instructions. Call it BEFORE starting a task a skill's description matches, then \
             follow what it says. It returns the instructions and the files the skill bundles; \
             call again with `file` to read one of them.",
        )
    }

    fn summary(&self) -> Cow<'static, str> {
        Cow::Borrowed("Load a listed skill's instructions before a task it matches.")
    }

    fn concurrency(&self) -> Concurrency {
        Concurrency::Exclusive
    }

    fn read_only(&self) -> bool {
        true
    }

    fn permission_actions(&self) -> &'static [&'static str] {
        &["skill", "read"]
    }

    fn prepare(
        &self,
        args: SkillArgs,
        _: &PrepareContext<'_>,
    ) -> Result<Prepared<Load>, ToolError> {
        let name = args.name.trim();
        if name.is_empty() {
            return Err(refusal(
                ErrorCode::INVALID_ARGUMENTS,
                "`name` is empty; give a skill's name from the list in your instructions"
                    .to_owned(),
            ));
        }
        let skill = self.select(name)?.clone();
        // Small models fill optional fields with "": that is no file.
        let file = args
            .file
            .map(|f| f.trim().to_owned())
            .filter(|f| !f.is_empty());
        if let Some(file) = &file
            && !skill.files.iter().any(|f| f == file)
        {
            let near = SkillSet::nearest(file, skill.files.iter().map(String::as_str));
            let hint = if near.is_empty() {
                format!("its files are {}", quoted(&skill.files))
            } else {
                format!("the nearest are {}", quoted(&near))
            };
            let message = if skill.files.is_empty() {
                format!(
                    "skill `{}` bundles no files; load it without `file`",
                    skill.name
                )
            } else {
                format!("skill `{}` lists no file `{file}`; {hint}", skill.name)
            };
            return Err(refusal(ErrorCode::NOT_FOUND, message));
        }
        let mut resources = vec![PermissionResource {
            action: Action::Custom("skill"),
            target: skill.name.clone(),
        }];
        if let (SkillOrigin::Project(dir), Some(file)) = (&skill.origin, &file) {
            resources.push(PermissionResource::read(project_path(dir, file)));
        }
        Ok(Prepared::new(Routing { resources }, Load { skill, file }))
    }

    async fn execute(&self, load: Load, cx: ExecuteContext) -> Result<ToolCompletion, ToolError> {
        let Load { skill, file } = load;
        if let Some(file) = file {
            let text = read_bundled(&cx, &skill, &file)?;
            return Ok(ToolCompletion::single(text).with_metadata(json!({
                "skill": skill.name,
                "file": file,
            })));
        }
        let granted = self.pre_approve(&cx, &skill);
        let text = rendered(&skill, &granted);
        Ok(ToolCompletion::single(text).with_metadata(json!({
            "skill": skill.name,
            "scope": skill.origin.scope(),
            "files": skill.files.len(),
            "pre_approved": granted,
        })))
    }
}

impl SkillTool {
    /// Grants the skill's pre-approved patterns to the calling session for its run; the
    /// patterns granted.
    fn pre_approve(&self, cx: &ExecuteContext, skill: &Skill) -> Vec<String> {
        let Some(session) = self.tree.as_ref().and_then(|t| t.session(&cx.session)) else {
            return Vec::new();
        };
        let mut granted = Vec::new();
        for text in &skill.pre_approved {
            // Checked when the skill was read; one that no longer parses grants nothing.
            if let Ok(pattern) = tackle_gate::Pattern::parse(text) {
                session.context().grant_for_run(pattern);
                granted.push(text.clone());
            }
        }
        granted
    }
}

/// A project skill's file as a root-relative path.
fn project_path(dir: &std::path::Path, file: &str) -> String {
    format!("{}/{file}", dir.display())
}

/// The skill's instructions, where it lives, its files and what it pre-approved: what the
/// tool returns, and what a front end sends when the user loads a skill themselves.
pub fn rendered(skill: &Skill, granted: &[String]) -> String {
    let mut out = format!(
        "<skill_content name=\"{}\">\n{}\n</skill_content>\n",
        skill.name,
        skill.body.trim()
    );
    match &skill.origin {
        SkillOrigin::Project(dir) => out.push_str(&format!(
            "Skill directory: {} (the project's; its files can also be read there with \
             read_file).\n",
            dir.display()
        )),
        SkillOrigin::User(_) => out.push_str("Skill directory: the user's own skills.\n"),
    }
    if skill.files.is_empty() {
        out.push_str("It bundles no files.\n");
    } else {
        out.push_str(&format!(
            "Bundled files (read one with skill {{\"name\": \"{}\", \"file\": \"<path>\"}} when \
             the instructions call for it):\n",
            skill.name
        ));
        for f in &skill.files {
            out.push_str(&format!("- {f}\n"));
        }
    }
    if !granted.is_empty() {
        out.push_str(&format!(
            "Pre-approved by this skill until the task ends (no question asked): {}.\n",
            granted.join(", ")
        ));
    }
    out
}

/// One of the skill's files, read as tackle reads its own ([`OwnFile::SKILL_FILE`]): a
/// project's through the root handle, the user's at its path.
fn read_bundled(cx: &ExecuteContext, skill: &Skill, file: &str) -> Result<String, ToolError> {
    let io = |message: String| refusal(ErrorCode::IO, message);
    let (read, shown) = match &skill.origin {
        SkillOrigin::Project(dir) => {
            let rel = project_path(dir, file);
            let root = Root::open_shared(&cx.root)
                .map_err(|e| io(format!("opening the project root: {e}")))?;
            (OwnFile::SKILL_FILE.read_in(&root, &rel), rel)
        }
        SkillOrigin::User(dir) => {
            let path = dir.join(file);
            let shown = format!("{}/{file}", skill.name);
            (OwnFile::SKILL_FILE.read_at(&path), shown)
        }
    };
    let bytes = read
        .map_err(|e| io(e.to_string()))?
        .ok_or_else(|| refusal(ErrorCode::NOT_FOUND, format!("{shown} is no longer there")))?;
    bytes
        .into_text(OwnFile::SKILL_FILE, &shown)
        .map_err(|e| io(e.to_string()))
}
