//! `tackle agents`: the agent types a model may delegate to, where each came from, and what was
//! noted or refused in their files (`tackle_config::agent_types`).
//!
//! A type's name, description, rules and path are written by whoever wrote its file, often a
//! repository: every such string reaches the terminal through `safe_text`. Refusals go to
//! stderr and make the exit status 1, so a script that lists types notices a file it lost.

use std::io::Write;

use anyhow::Context;
use serde_json::{Value, json};
use tackle_agent::delegate::agent_type::{AgentType, ModelChoice, Origin};
use tackle_config::agent_types::{AgentTypes, Note, Refusal};

use crate::commands::Failure;
use crate::exit;
use crate::safe_text::{one_line, safe_line};

/// The longest description shown on the terminal (`--json` has all of it).
const DESCRIPTION_CHARS: usize = 240;

pub fn run(types: &AgentTypes, json_out: bool) -> Result<u8, Failure> {
    let mut out = std::io::stdout().lock();
    if json_out {
        let text = serde_json::to_string_pretty(&to_json(types)).context("encoding json")?;
        writeln!(out, "{text}").context("writing stdout")?;
    } else {
        out.write_all(to_text(types).as_bytes())
            .context("writing stdout")?;
    }
    drop(out);
    let refused = types.refused();
    if refused.is_empty() {
        return Ok(exit::OK);
    }
    let mut err = String::new();
    for r in refused {
        err.push_str(&format!("tackle: refused {}\n", safe_line(&r.to_string())));
    }
    err.push_str(&format!(
        "tackle: {} agent type file(s) refused; fix or remove them (the other types loaded)\n",
        refused.len()
    ));
    eprint!("{err}");
    Ok(exit::REFUSED_FILES)
}

fn model_text(model: &ModelChoice) -> &str {
    match model {
        ModelChoice::Inherit => "inherit",
        ModelChoice::Named(m) => m,
    }
}

fn path_of(origin: &Origin) -> Option<String> {
    match origin {
        Origin::BuiltIn => None,
        Origin::User(p) | Origin::Project(p) => Some(p.display().to_string()),
    }
}

fn type_json(t: &AgentType) -> Value {
    json!({
        "name": t.name,
        "scope": t.origin.scope(),
        "path": path_of(&t.origin),
        "description": t.description,
        "tools": t.tools,
        "disallowed_tools": t.disallowed_tools,
        "model": model_text(&t.model),
        "max_turns": t.max_turns,
        "permissions": {
            "allow": t.permissions.allow,
            "ask": t.permissions.ask,
            "deny": t.permissions.deny,
        },
        "prompt": t.prompt,
    })
}

fn located_json(path: &std::path::Path, line: Option<usize>, message: &str) -> Value {
    json!({ "path": path.display().to_string(), "line": line, "message": message })
}

fn note_json(n: &Note) -> Value {
    located_json(&n.path, n.line, &n.message)
}

fn refusal_json(r: &Refusal) -> Value {
    located_json(&r.path, r.line, &r.message)
}

/// The whole listing as one document.
pub fn to_json(types: &AgentTypes) -> Value {
    json!({
        "types": types.iter().map(type_json).collect::<Vec<_>>(),
        "notes": types.notes().iter().map(note_json).collect::<Vec<_>>(),
        "refused": types.refused().iter().map(refusal_json).collect::<Vec<_>>(),
    })
}

/// `list` made safe and joined, or `none`.
fn joined(list: &[String], none: &str) -> String {
    if list.is_empty() {
        return none.to_owned();
    }
    list.iter()
        .map(|s| safe_line(s))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One type: its name and origin, then a line per property.
fn type_text(t: &AgentType) -> String {
    let mut text = format!(
        "{}  ({})\n  {}\n",
        safe_line(&t.name),
        safe_line(&t.origin.to_string()),
        one_line(&t.description, DESCRIPTION_CHARS)
    );
    let tools = match &t.tools {
        None => "all of the parent's".to_owned(),
        Some(tools) => joined(tools, "none"),
    };
    text.push_str(&format!("  tools: {tools}\n"));
    if !t.disallowed_tools.is_empty() {
        text.push_str(&format!(
            "  disallowed tools: {}\n",
            joined(&t.disallowed_tools, "none")
        ));
    }
    let model = match &t.model {
        ModelChoice::Inherit => "the parent's".to_owned(),
        ModelChoice::Named(m) => safe_line(m),
    };
    text.push_str(&format!("  model: {model}\n"));
    let turns = t
        .max_turns
        .map_or("the parent's bound".to_owned(), |n| n.to_string());
    text.push_str(&format!("  maxTurns: {turns}\n"));
    let p = &t.permissions;
    if p.is_empty() {
        text.push_str("  rules: none added to the parent's\n");
    }
    for (effect, rules) in [("allow", &p.allow), ("ask", &p.ask), ("deny", &p.deny)] {
        if !rules.is_empty() {
            text.push_str(&format!("  {effect}: {}\n", joined(rules, "")));
        }
    }
    let prompt = match t.prompt.lines().count() {
        0 => "tackle's own".to_owned(),
        1 => "1 line".to_owned(),
        n => format!("{n} lines"),
    };
    text.push_str(&format!("  prompt: {prompt}\n"));
    text
}

/// The types, then the notes (refusals go to stderr, from [`run`]).
pub fn to_text(types: &AgentTypes) -> String {
    let mut text = String::new();
    for (i, t) in types.iter().enumerate() {
        if i > 0 {
            text.push('\n');
        }
        text.push_str(&type_text(t));
    }
    if !types.notes().is_empty() {
        text.push_str("\nnotes:\n");
        for n in types.notes() {
            text.push_str(&format!("  {}\n", safe_line(&n.to_string())));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_files_text_cannot_reach_the_terminal_raw() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("proj");
        std::fs::create_dir_all(root.join(".agents/agents")).unwrap();
        std::fs::write(
            root.join(".agents/agents/x.md"),
            "---\nname: x\ndescription: \"a \\e[2J b\"\npermissions:\n  deny: [\"read:\\e]0;t\\a\"]\n---\n",
        )
        .unwrap();
        let models =
            tackle_config::models::resolve(&tackle_config::settings::Settings::defaults(1, 1))
                .unwrap();
        let types = tackle_config::agent_types::load(&root, None, true, &models);
        let text = to_text(&types);
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{7}'),
            "{text}"
        );
        assert!(text.contains("a \\x1b[2J b"), "{text}");
        assert!(text.contains("deny: read:\\x1b]0;t\\x07"), "{text}");
    }
}
