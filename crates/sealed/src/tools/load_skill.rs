//! load_skill: one of the skills listed before the turn, by its exact name. A name never
//! becomes a path, and a near name is refused rather than guessed at.

use std::borrow::Cow;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use tackle_tool::{
    Action, ExecuteContext, PermissionResource, PrepareContext, Prepared, Routing, Tool,
    ToolCompletion, ToolError,
};

use crate::errors;
use crate::tools::Shared;

pub const NO_SUCH_SKILL: tackle_protocol::ErrorCode =
    tackle_protocol::ErrorCode::new("no_such_skill");

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The name exactly as it was listed, e.g. commit-style.
    pub name: String,
}

pub struct LoadSkill(pub Arc<Shared>);

impl Tool for LoadSkill {
    type Args = Args;
    type Plan = usize;

    fn name(&self) -> &str {
        "load_skill"
    }

    fn description(&self) -> Cow<'static, str> {
        "Reads one of the skills you were listed, by its name exactly as listed.".into()
    }

    fn read_only(&self) -> bool {
        true
    }

    fn permission_actions(&self) -> &'static [&'static str] {
        &["skill"]
    }

    fn prepare(&self, args: Args, _cx: &PrepareContext<'_>) -> Result<Prepared<usize>, ToolError> {
        let skills = &self.0.skills;
        if let Some(index) = skills.iter().position(|s| s.name == args.name) {
            let routing = Routing {
                resources: vec![PermissionResource {
                    action: Action::Custom("skill"),
                    target: args.name,
                }],
            };
            return Ok(Prepared::new(routing, index));
        }
        let listed: Vec<&str> = skills.iter().map(|s| s.name.as_str()).collect();
        let near: Vec<&str> = listed
            .iter()
            .copied()
            .filter(|n| distance(n, &args.name) <= 2)
            .collect();
        let hint = match (near.is_empty(), listed.is_empty()) {
            (_, true) => "no skills were listed".to_owned(),
            (false, _) => format!(
                "a close name is not taken as a match; if you meant {}, call load_skill with it exactly",
                near.join(" or ")
            ),
            (true, _) => format!("the listed skills are {}", listed.join(", ")),
        };
        let shown: String = args.name.chars().take(64).collect();
        if args.name.contains('/') || args.name.contains("..") {
            return Err(errors::invalid(format!(
                "a skill name is a name, never a path: `{shown}` matches nothing; {hint}"
            )));
        }
        Err(ToolError::new(
            NO_SUCH_SKILL,
            format!("no skill is named `{shown}`; {hint}"),
        )
        .with_metadata(serde_json::json!({ "closest": near })))
    }

    async fn execute(
        &self,
        index: usize,
        _cx: ExecuteContext,
    ) -> Result<ToolCompletion, ToolError> {
        let skill = &self.0.skills[index];
        Ok(ToolCompletion::single(format!(
            "# skill: {}\n\n{}",
            skill.name, skill.body
        )))
    }
}

/// Edit distance between two short names (insertions, deletions, substitutions).
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.len().abs_diff(b.len()) > 2 || b.len() > 128 {
        return usize::MAX;
    }
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitute = previous + usize::from(ca != cb);
            previous = row[j + 1];
            row[j + 1] = substitute.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance_counts_edits() {
        assert_eq!(distance("commit-style", "commit-style"), 0);
        assert_eq!(distance("commit-style", "commit-styles"), 1);
        assert_eq!(distance("commit-style", "comit-styl"), 2);
        assert!(distance("a", "abcdef") > 2);
    }
}
