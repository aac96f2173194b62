//! `tackle goal`: the user's controls over the project's root goal (seed 000, "Goal checklist
//! tools"). The model reads the goal and replaces its checklist (goal_get, goal_update); only
//! the user sets an objective, pauses, resumes or cancels, and a control names the goal and the
//! revision it was decided on, so a control based on a stale view is refused.

use std::io::Write;

use anyhow::Context;
use serde_json::json;
use tackle_goals::{Control, Goal, GoalBook, GoalError};

use crate::args::GoalCommand;
use crate::commands::Failure;
use crate::exit;

pub fn run(root: &std::path::Path, command: GoalCommand) -> Result<u8, Failure> {
    let book = GoalBook::new(&tackle_runtime::Session::store_dir_for(root));
    let (outcome, json) = match command {
        GoalCommand::Set { objective, json } => (book.set(&objective).map(Some), json),
        GoalCommand::Show { json } => (book.current(), json),
        GoalCommand::Pause(c) => (
            book.control(Control::Pause, &c.goal_id, c.expected_revision)
                .map(Some),
            c.json,
        ),
        GoalCommand::Resume(c) => (
            book.control(Control::Resume, &c.goal_id, c.expected_revision)
                .map(Some),
            c.json,
        ),
        GoalCommand::Cancel(c) => (
            book.control(Control::Cancel, &c.goal_id, c.expected_revision)
                .map(Some),
            c.json,
        ),
    };
    match outcome {
        Ok(goal) => {
            print_goal(goal.as_ref(), json)?;
            Ok(exit::OK)
        }
        // The goal book could not be read or written: tackle could not work.
        Err(e @ (GoalError::Log(_) | GoalError::Io { .. } | GoalError::Unreadable { .. })) => {
            Err(Failure::Engine(anyhow::anyhow!("{e}")))
        }
        Err(e @ GoalError::EmptyObjective) => Err(Failure::Usage(anyhow::anyhow!("goal set: {e}"))),
        // A refusal: the goal is as it was.
        Err(e) => {
            if json {
                let out = json!({ "error": { "code": e.code(), "message": e.to_string() } });
                println!(
                    "{}",
                    serde_json::to_string_pretty(&out).context("writing the refusal")?
                );
            } else {
                eprintln!("tackle: goal: {e}");
            }
            Ok(exit::TOOL_ERROR)
        }
    }
}

fn print_goal(goal: Option<&Goal>, json: bool) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    if json {
        let value = match goal {
            Some(g) => serde_json::to_value(g)?,
            None => serde_json::Value::Null,
        };
        serde_json::to_writer_pretty(&mut out, &json!({ "goal": value }))?;
        writeln!(out)?;
        return Ok(());
    }
    writeln!(out, "{}", describe(goal, "tackle goal set"))?;
    Ok(())
}

/// The goal as text: its id, status and revision, the objective, then the checklist. `set` is
/// how the user sets one where the text is shown (`tackle goal set`, chat's `/goal set`).
pub(crate) fn describe(goal: Option<&Goal>, set: &str) -> String {
    let Some(g) = goal else {
        return format!("no goal is set; set one with `{set} \"<objective>\"`");
    };
    let objective = tackle_runtime::visible::visible(&g.objective);
    let mut text = format!(
        "{} ({}, revision {}): {objective}",
        g.goal_id,
        g.status.as_str(),
        g.revision
    );
    if g.checklist.is_empty() {
        text.push_str("\n  checklist: empty");
    }
    for item in &g.checklist {
        let mark = if item.finished { "[x]" } else { "[ ]" };
        let item = tackle_runtime::visible::visible(&item.description);
        text.push_str(&format!("\n  {mark} {item}"));
    }
    text
}
