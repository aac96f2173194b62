//! `list_dir`: a sorted directory listing.

use std::borrow::Cow;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tackle_tool::protocol::{Concurrency, ErrorCode};
use tackle_tool::{
    Action, ExecuteContext, PrepareContext, Prepared, Routing, SurveyListing, Tool, ToolCompletion,
    ToolError,
};

use tackle_fs::{FsError, RelPath};

use crate::list::display_name;
use crate::{fs_error, open_root, resolve_real};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListDirArgs {
    /// Directory relative to the project root; `.` for the root.
    pub path: String,
}

/// The `list_dir` built-in.
pub struct ListDir;

pub const NOT_A_DIRECTORY: ErrorCode = ErrorCode::new("not_a_directory");

impl Tool for ListDir {
    type Args = ListDirArgs;
    type Plan = RelPath;

    fn name(&self) -> &str {
        "list_dir"
    }

    fn description(&self) -> Cow<'static, str> {
        Cow::Borrowed(
            "List a directory's entries, sorted by name, one per line: directories end in `/`, \
             symlinks in `@`. Use this instead of `ls` in bash.",
        )
    }

    fn concurrency(&self) -> Concurrency {
        Concurrency::Parallel
    }

    fn read_only(&self) -> bool {
        true
    }

    fn survey(&self) -> bool {
        true
    }

    fn permission_actions(&self) -> &'static [&'static str] {
        &["read"]
    }

    fn prepare(
        &self,
        args: ListDirArgs,
        cx: &PrepareContext<'_>,
    ) -> Result<Prepared<RelPath>, ToolError> {
        let resolved = resolve_real("list_dir", cx.root, &args.path)?;
        let routing = Routing {
            resources: resolved.resources(Action::Read),
        };
        Ok(Prepared::new(routing, resolved.rel))
    }

    async fn execute(
        &self,
        plan: RelPath,
        cx: ExecuteContext,
    ) -> Result<ToolCompletion, ToolError> {
        let root = open_root("list_dir", &cx.root)?;
        let shown = plan.as_str();
        let entries = root.read_dir(&plan).map_err(|e| match e {
            FsError::NotADirectory { .. } => ToolError::new(
                NOT_A_DIRECTORY,
                format!("list_dir: {shown} is not a directory; use read_file or stat on it"),
            ),
            FsError::NotFound { .. } => ToolError::new(
                ErrorCode::NOT_FOUND,
                format!("list_dir: {shown} does not exist; list its parent to see what is there"),
            ),
            other => fs_error("list_dir", other),
        });
        let entries = entries.map_err(|e| {
            crate::nearest::hint_not_found(e, &cx.root, cx.read_scope.as_ref(), shown)
        })?;
        let mut text = String::new();
        for e in &entries {
            text.push_str(&display_name(e));
            text.push('\n');
        }
        if entries.is_empty() {
            text.push_str(&format!("[directory {shown} is empty]\n"));
        }
        let listing = SurveyListing::Entries(entries.iter().map(display_name).collect());
        Ok(ToolCompletion::single(text)
            .with_metadata(json!({ "path": shown, "entries": null }))
            .with_survey(listing))
    }
}
