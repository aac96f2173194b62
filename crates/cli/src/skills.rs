//! `tackle skills`: the skills a model may load, where each came from, what it bundles and
//! pre-approves, which skills a higher scope shadows, and what was warned or found invalid
//! (`tackle_config::skills`). `--check` prints only the problems, each with the format's rule.
//!
//! A skill's name, description and path are written by whoever wrote its folder, often a
//! repository: every such string reaches the terminal through `safe_text`. Invalid skills go
//! to stderr and make the exit status 1, so a script notices a skill it lost.

use std::io::Write;

use anyhow::Context;
use serde_json::{Value, json};
use tackle_agent::skills::Skill;
use tackle_config::skills::{Invalid, Note, Skills};

use crate::commands::Failure;
use crate::exit;
use crate::safe_text::{one_line, safe_line};

/// The longest description shown on the terminal (`--json` has all of it).
const DESCRIPTION_CHARS: usize = 240;

pub fn run(skills: &Skills, json_out: bool, check: bool) -> Result<u8, Failure> {
    let mut out = std::io::stdout().lock();
    if json_out {
        let text = serde_json::to_string_pretty(&to_json(skills)).context("encoding json")?;
        writeln!(out, "{text}").context("writing stdout")?;
    } else if check {
        out.write_all(check_text(skills).as_bytes())
            .context("writing stdout")?;
    } else {
        out.write_all(to_text(skills).as_bytes())
            .context("writing stdout")?;
    }
    drop(out);
    let invalid = skills.invalid();
    if invalid.is_empty() {
        return Ok(exit::OK);
    }
    let mut err = String::new();
    for i in invalid {
        err.push_str(&format!("tackle: invalid {}\n", safe_line(&i.to_string())));
    }
    err.push_str(&format!(
        "tackle: {} skill(s) invalid and not loaded; fix them by the rule named (the others loaded)\n",
        invalid.len()
    ));
    eprint!("{err}");
    Ok(exit::REFUSED_FILES)
}

fn path_of(skills: &Skills, s: &Skill) -> String {
    skills.file_of(&s.name).map_or_else(
        || s.origin.dir().display().to_string(),
        |p| p.display().to_string(),
    )
}

fn skill_json(skills: &Skills, s: &Skill) -> Value {
    json!({
        "name": s.name,
        "scope": s.origin.scope(),
        "path": path_of(skills, s),
        "description": s.description,
        "files": s.files,
        "pre_approved": s.pre_approved,
        "model_invocable": s.model_invocable,
        "user_invocable": s.user_invocable,
    })
}

fn note_json(n: &Note) -> Value {
    json!({
        "path": n.path.display().to_string(),
        "line": n.line,
        "rule": n.rule.map(|r| r.id),
        "message": n.message,
    })
}

fn invalid_json(i: &Invalid) -> Value {
    json!({
        "path": i.path.display().to_string(),
        "line": i.line,
        "rule": i.rule.id,
        "rule_text": i.rule.text,
        "message": i.message,
    })
}

/// The whole listing as one document.
pub fn to_json(skills: &Skills) -> Value {
    json!({
        "skills": skills.set().iter().map(|s| skill_json(skills, s)).collect::<Vec<_>>(),
        "shadowed": skills.shadowed().iter().map(|s| json!({
            "name": s.name,
            "used": s.used.display().to_string(),
            "shadowed": s.shadowed.display().to_string(),
        })).collect::<Vec<_>>(),
        "notes": skills.notes().iter().map(note_json).collect::<Vec<_>>(),
        "invalid": skills.invalid().iter().map(invalid_json).collect::<Vec<_>>(),
    })
}

fn skill_text(skills: &Skills, s: &Skill) -> String {
    let mut text = format!(
        "{}  ({} {})\n  {}\n",
        safe_line(&s.name),
        s.origin.scope(),
        safe_line(&path_of(skills, s)),
        one_line(&s.description, DESCRIPTION_CHARS)
    );
    let files = match s.files.len() {
        0 => "none".to_owned(),
        n if n <= 5 => s
            .files
            .iter()
            .map(|f| safe_line(f))
            .collect::<Vec<_>>()
            .join(", "),
        n => format!("{n} files"),
    };
    text.push_str(&format!("  bundles: {files}\n"));
    if !s.pre_approved.is_empty() {
        let patterns: Vec<String> = s.pre_approved.iter().map(|p| safe_line(p)).collect();
        text.push_str(&format!(
            "  pre-approves while loaded: {}\n",
            patterns.join(", ")
        ));
    }
    let by = match (s.model_invocable, s.user_invocable) {
        (true, true) => "the model and you (/skill in chat)",
        (true, false) => "the model only",
        (false, true) => "you only (/skill in chat); not listed to the model",
        (false, false) => "nobody (disable-model-invocation and user-invocable: false)",
    };
    text.push_str(&format!("  loaded by: {by}\n"));
    text
}

/// The skills, the shadowed ones, then the notes (invalid ones go to stderr, from [`run`]).
pub fn to_text(skills: &Skills) -> String {
    let mut text = String::new();
    if skills.set().is_empty() {
        text.push_str(
            "no skills: put one in .agents/skills/<name>/SKILL.md (the project's) or \
             ~/.agents/skills/<name>/SKILL.md (yours); tackle skills --help shows the format\n",
        );
    }
    for (i, s) in skills.set().iter().enumerate() {
        if i > 0 {
            text.push('\n');
        }
        text.push_str(&skill_text(skills, s));
    }
    if !skills.shadowed().is_empty() {
        text.push_str("\nshadowed (a higher scope has a skill of the same name):\n");
        for s in skills.shadowed() {
            text.push_str(&format!(
                "  {}: {} is used; {} is not\n",
                safe_line(&s.name),
                safe_line(&s.used.display().to_string()),
                safe_line(&s.shadowed.display().to_string())
            ));
        }
    }
    if !skills.notes().is_empty() {
        text.push_str("\nnotes:\n");
        for n in skills.notes() {
            text.push_str(&format!("  {}\n", safe_line(&n.to_string())));
        }
    }
    text
}

/// `--check`: the count, then each warning with its rule (invalid ones go to stderr).
fn check_text(skills: &Skills) -> String {
    let warnings: Vec<&Note> = skills.notes().iter().filter(|n| n.rule.is_some()).collect();
    let mut text = format!(
        "{} skill(s) valid, {} invalid, {} warning(s)\n",
        skills.set().len(),
        skills.invalid().len(),
        warnings.len()
    );
    for n in warnings {
        text.push_str(&format!("warning {}\n", safe_line(&n.to_string())));
    }
    text
}
