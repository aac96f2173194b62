//! `goal_get`: the current root goal's objective, status, revision and whole checklist.

use std::borrow::Cow;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use tackle_tool::protocol::{Concurrency, ErrorCode, Truncation};
use tackle_tool::{
    ExecuteContext, PermissionResource, PrepareContext, Prepared, Routing, Tool, ToolCompletion,
    ToolError,
};

use crate::{Goal, GoalBook, GoalError};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GoalGetArgs {}

pub struct GoalGet {
    book: Arc<GoalBook>,
}

impl GoalGet {
    pub fn new(book: Arc<GoalBook>) -> Self {
        Self { book }
    }
}

impl Tool for GoalGet {
    type Args = GoalGetArgs;
    type Plan = ();

    fn name(&self) -> &str {
        "goal_get"
    }

    fn description(&self) -> Cow<'static, str> {
        Cow::Borrowed(
            "Read the user's current goal: its objective, status (active, paused, complete, \
             canceled), revision and the whole ordered checklist. Call it before planning work \
             toward the goal and after goal_update to confirm what was recorded. Only the user \
             sets, pauses, resumes or cancels a goal.",
        )
    }

    fn concurrency(&self) -> Concurrency {
        Concurrency::Parallel
    }

    fn read_only(&self) -> bool {
        true
    }

    fn truncation(&self) -> Truncation {
        // The full state, never a preview (seed 000); goal_update bounds its size.
        Truncation::OptOut
    }

    fn permission_actions(&self) -> &'static [&'static str] {
        &["read"]
    }

    fn prepare(&self, _: GoalGetArgs, _: &PrepareContext<'_>) -> Result<Prepared<()>, ToolError> {
        Ok(Prepared::new(
            Routing {
                resources: vec![PermissionResource::read("goal:current")],
            },
            (),
        ))
    }

    async fn execute(&self, _: (), _: ExecuteContext) -> Result<ToolCompletion, ToolError> {
        let book = self.book.clone();
        let current = tackle_tool::run_tool_blocking("goal_get", move || book.current())
            .await?
            .map_err(|e| goal_error("goal_get", &e))?;
        let goal = current.ok_or_else(|| goal_error("goal_get", &GoalError::NoGoal))?;
        goal_completion("goal_get", &goal)
    }
}

/// The goal as a tool returns it: the whole state as JSON, in the text and the metadata.
pub(crate) fn goal_completion(tool: &str, goal: &Goal) -> Result<ToolCompletion, ToolError> {
    let value = serde_json::to_value(goal)
        .map_err(|e| ToolError::new(ErrorCode::INTERNAL, format!("{tool}: {e}")))?;
    let text = serde_json::to_string_pretty(&value)
        .map_err(|e| ToolError::new(ErrorCode::INTERNAL, format!("{tool}: {e}")))?;
    Ok(ToolCompletion::single(text).with_metadata(value))
}

pub(crate) fn goal_error(tool: &str, e: &GoalError) -> ToolError {
    ToolError::new(ErrorCode::new(e.code()), format!("{tool}: {e}"))
}
