//! `goal_update`: replace the current goal's whole ordered checklist.

use std::borrow::Cow;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tackle_tool::protocol::{Concurrency, ErrorCode, Truncation};
use tackle_tool::{
    ExecuteContext, PermissionResource, PrepareContext, Prepared, Routing, SerializationKey, Tool,
    ToolCompletion, ToolError,
};

use crate::goal_get::{goal_completion, goal_error};
use crate::{ChecklistItem, GoalBook};

/// The most items a checklist holds, and the longest description: the whole state always fits
/// a result, which goal_get returns without truncation.
pub const MAX_ITEMS: usize = 200;
pub const MAX_DESCRIPTION_CHARS: usize = 1000;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GoalUpdateArgs {
    /// The whole checklist, in order; it replaces the current one. Each item has only a
    /// `description` and whether it is `finished`.
    pub items: Vec<ChecklistItem>,
}

pub struct GoalUpdate {
    book: Arc<GoalBook>,
}

impl GoalUpdate {
    pub fn new(book: Arc<GoalBook>) -> Self {
        Self { book }
    }
}

impl Tool for GoalUpdate {
    type Args = GoalUpdateArgs;
    type Plan = Vec<ChecklistItem>;

    fn name(&self) -> &str {
        "goal_update"
    }

    fn description(&self) -> Cow<'static, str> {
        Cow::Borrowed(
            "Replace the current goal's checklist with `items`, the whole ordered list (each a \
             `description` and `finished`); send every item each time, changed or not. Mark an \
             item finished only after verifying the evidence. When every item of a non-empty \
             checklist is finished the goal completes. Returns the goal's full state. Refused \
             when there is no goal or it is complete or canceled.",
        )
    }

    fn concurrency(&self) -> Concurrency {
        Concurrency::Parallel
    }

    fn read_only(&self) -> bool {
        false
    }

    fn truncation(&self) -> Truncation {
        Truncation::OptOut
    }

    fn permission_actions(&self) -> &'static [&'static str] {
        &["write"]
    }

    fn prepare(
        &self,
        args: GoalUpdateArgs,
        _: &PrepareContext<'_>,
    ) -> Result<Prepared<Vec<ChecklistItem>>, ToolError> {
        if args.items.len() > MAX_ITEMS {
            return Err(ToolError::new(
                ErrorCode::INVALID_ARGUMENTS,
                format!(
                    "goal_update: {} items is over the {MAX_ITEMS} a checklist holds; merge \
                     steps",
                    args.items.len()
                ),
            )
            .with_metadata(json!({ "path": "$.items" })));
        }
        for (i, item) in args.items.iter().enumerate() {
            let chars = item.description.chars().count();
            if chars > MAX_DESCRIPTION_CHARS || item.description.trim().is_empty() {
                return Err(ToolError::new(
                    ErrorCode::INVALID_ARGUMENTS,
                    format!(
                        "goal_update: item {i} has a description of {chars} characters; \
                         describe each step in 1 to {MAX_DESCRIPTION_CHARS}"
                    ),
                )
                .with_metadata(json!({ "path": format!("$.items[{i}].description") })));
            }
        }
        // Replacements of one batch apply in turn order; the last one wins.
        Ok(Prepared::new(
            Routing {
                resources: vec![PermissionResource::write("goal:current")],
            },
            args.items,
        )
        .serialized_by(SerializationKey("goal:current".into())))
    }

    async fn execute(
        &self,
        items: Vec<ChecklistItem>,
        _: ExecuteContext,
    ) -> Result<ToolCompletion, ToolError> {
        let book = self.book.clone();
        let goal =
            tackle_tool::run_tool_blocking("goal_update", move || book.replace_checklist(items))
                .await?
                .map_err(|e| goal_error("goal_update", &e))?;
        goal_completion("goal_update", &goal)
    }
}
