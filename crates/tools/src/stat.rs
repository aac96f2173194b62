//! `stat`: metadata for a path; a missing path is `{exists: false}`, not an error (seed 003).

use std::borrow::Cow;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tackle_tool::protocol::{Concurrency, ErrorCode};
use tackle_tool::time::rfc3339_utc;
use tackle_tool::{
    Action, ExecuteContext, PrepareContext, Prepared, Routing, Tool, ToolCompletion, ToolError,
};

use tackle_fs::{EntryKind, RelPath};

use crate::{fs_error, open_root, resolve_real};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StatArgs {
    /// Path relative to the project root.
    pub path: String,
}

/// The `stat` built-in.
pub struct Stat;

impl Tool for Stat {
    type Args = StatArgs;
    type Plan = RelPath;

    fn name(&self) -> &str {
        "stat"
    }

    fn description(&self) -> Cow<'static, str> {
        Cow::Borrowed(
            "Metadata for a path: size, mtime (RFC 3339 UTC), mode, is_dir. A missing path \
             returns {\"exists\": false} (with the nearest existing paths, if any) instead of \
             an error, so use this to check whether a \
             file has been written yet rather than reading it or running `ls` or `test -e` in \
             bash.",
        )
    }

    fn concurrency(&self) -> Concurrency {
        Concurrency::Parallel
    }

    fn read_only(&self) -> bool {
        true
    }

    fn permission_actions(&self) -> &'static [&'static str] {
        &["read"]
    }

    fn prepare(
        &self,
        args: StatArgs,
        cx: &PrepareContext<'_>,
    ) -> Result<Prepared<RelPath>, ToolError> {
        let resolved = resolve_real("stat", cx.root, &args.path)?;
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
        let root = open_root("stat", &cx.root)?;
        let shown = plan.as_str();
        let value = match root.metadata(&plan).map_err(|e| fs_error("stat", e))? {
            None => {
                let nearest =
                    crate::nearest::nearest_paths(&cx.root, cx.read_scope.as_ref(), shown);
                if nearest.is_empty() {
                    json!({ "path": shown, "exists": false })
                } else {
                    json!({ "path": shown, "exists": false, "nearest": nearest })
                }
            }
            Some(meta) => json!({
                "path": shown,
                "exists": true,
                "size": meta.len,
                "mtime": rfc3339_utc(meta.mtime),
                "mode": format!("{:04o}", meta.mode),
                "is_dir": meta.kind == EntryKind::Dir,
                "type": meta.kind.as_str(),
            }),
        };
        let text = serde_json::to_string_pretty(&value)
            .map_err(|e| ToolError::new(ErrorCode::INTERNAL, format!("stat: {e}")))?;
        Ok(ToolCompletion::single(text + "\n").with_metadata(value))
    }
}
