//! The system prompt's section on skills: under `<tool_instructions provider="builtin.skills">`,
//! each skill the model may load, as `- name — description`, within [`LISTING_BUDGET_BYTES`].
//! A skill past the budget is counted, not dropped silently: the section ends with how many
//! were left out and that `skill` takes their names all the same. No section without skills.
//!
//! Rejected: listing in the `skill` tool's description (opencode's choice): the compact
//! catalog of a small window keeps one sentence a tool, which would drop the list exactly
//! where a model needs the instructions most.

use tackle_protocol::ToolSpec;

use crate::prompt::SystemPrompt;
use crate::skills::{SKILL_TOOL, SkillSet};

/// The most bytes the list of skills takes (about 2,000 tokens): at a typical 150 bytes a
/// skill, some sixty skills; the spec's "about 100 tokens a skill" at startup.
pub const LISTING_BUDGET_BYTES: usize = 8 * 1024;

/// The longest description shown, in characters; the spec's own limit is 1,024.
pub const SHOWN_DESCRIPTION_CHARS: usize = 300;

/// The section for `skills`, or `None` when the model is offered none.
pub fn section(skills: &SkillSet) -> Option<String> {
    let offered: Vec<_> = skills.for_model().collect();
    if offered.is_empty() {
        return None;
    }
    let mut out = String::from(
        "<tool_instructions provider=\"builtin.skills\">\nSkills: instructions for particular \
         tasks. When a task matches one, call skill with its name first and follow what it \
         says (name — when to use it):\n",
    );
    let mut used = 0;
    let mut left_out = 0;
    for skill in offered {
        let line = format!("- {} — {}\n", skill.name, shown(&skill.description));
        if used + line.len() > LISTING_BUDGET_BYTES {
            left_out += 1;
            continue;
        }
        used += line.len();
        out.push_str(&line);
    }
    if left_out > 0 {
        out.push_str(&format!(
            "({left_out} more skills are not listed here, for room; tackle skills lists them \
             for the user, and skill loads any by its exact name)\n"
        ));
    }
    out.push_str("</tool_instructions>");
    Some(out)
}

/// `system` (both forms) with the section added, when `offered` (the session's catalog) holds
/// the `skill` tool: a session without it (`--disable-tools skill`, a subagent type without
/// it) is told of no skills.
pub fn add_to(system: &mut SystemPrompt, offered: &[ToolSpec], skills: &SkillSet) {
    if !offered.iter().any(|t| t.name == SKILL_TOOL) {
        return;
    }
    if let Some(section) = section(skills) {
        system.full = format!("{}\n\n{section}", system.full);
        system.short = format!("{}\n\n{section}", system.short);
    }
}

/// A description on one line, cut at [`SHOWN_DESCRIPTION_CHARS`].
fn shown(description: &str) -> String {
    let flat: String = description.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= SHOWN_DESCRIPTION_CHARS {
        return flat;
    }
    let mut cut: String = flat.chars().take(SHOWN_DESCRIPTION_CHARS - 1).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skills::{Skill, SkillOrigin};

    fn skill(name: &str, description: &str, model_invocable: bool) -> Skill {
        Skill {
            name: name.into(),
            description: description.into(),
            body: String::new(),
            files: Vec::new(),
            origin: SkillOrigin::Project(format!(".agents/skills/{name}").into()),
            pre_approved: Vec::new(),
            model_invocable,
            user_invocable: true,
        }
    }

    #[test]
    fn lists_names_and_descriptions_within_the_budget_counting_the_rest() {
        assert_eq!(section(&SkillSet::default()), None);
        let only_user = SkillSet::new([skill("deploy", "Deploys.", false)]);
        assert_eq!(section(&only_user), None, "a user-only skill is not listed");
        let set = SkillSet::new([
            skill("pdf", "Fills PDF forms.\nUse for forms.", true),
            skill("deploy", "Deploys.", false),
        ]);
        let s = section(&set).unwrap();
        assert!(
            s.contains("- pdf — Fills PDF forms. Use for forms.\n"),
            "{s}"
        );
        assert!(!s.contains("deploy"), "{s}");
        let many = SkillSet::new(
            (0..200).map(|i| skill(&format!("skill-{i:03}"), &"d".repeat(1024), true)),
        );
        let s = section(&many).unwrap();
        assert!(s.len() < LISTING_BUDGET_BYTES + 600, "{}", s.len());
        let listed = s.lines().filter(|l| l.starts_with("- ")).count();
        assert!(listed > 10, "{listed}");
        assert!(
            s.contains(&format!("({} more skills are not listed", 200 - listed)),
            "{s}"
        );
    }
}
