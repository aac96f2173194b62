//! `stat`: metadata for a path; a missing path is `{exists: false}`, not an error (seed 003).

use std::borrow::Cow;
use std::os::unix::fs::{MetadataExt, PermissionsExt};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tackle_tool::protocol::{Concurrency, ErrorCode};
use tackle_tool::time::rfc3339_utc;
use tackle_tool::{
    ExecuteContext, PermissionResource, PrepareContext, Prepared, Routing, Tool, ToolCompletion,
    ToolError,
};

use crate::confine::{Resolved, resolve};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StatArgs {
    /// Path relative to the project root.
    pub path: String,
}

pub struct Stat;

impl Tool for Stat {
    type Args = StatArgs;
    type Plan = Resolved;

    fn name(&self) -> &str {
        "stat"
    }

    fn description(&self) -> Cow<'static, str> {
        Cow::Borrowed(
            "Metadata for a path: size, mtime (RFC 3339 UTC), mode, is_dir. A missing path \
             returns {\"exists\": false} instead of an error, so use this to check whether a \
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

    fn prepare(
        &self,
        args: StatArgs,
        cx: &PrepareContext<'_>,
    ) -> Result<Prepared<Resolved>, ToolError> {
        let resolved = resolve("stat", cx.root, &args.path)?;
        let routing = Routing {
            resources: vec![PermissionResource::read(resolved.relative.clone())],
        };
        Ok(Prepared::new(routing, resolved))
    }

    async fn execute(
        &self,
        plan: Resolved,
        cx: ExecuteContext,
    ) -> Result<ToolCompletion, ToolError> {
        let again = resolve("stat", &cx.root, &plan.relative)?;
        let value = match std::fs::symlink_metadata(&again.absolute) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                json!({ "path": plan.relative, "exists": false })
            }
            Err(e) => return Err(ToolError::io(&format!("stat: {}", plan.relative), &e)),
            Ok(meta) => {
                let ft = meta.file_type();
                let kind = if ft.is_dir() {
                    "dir"
                } else if ft.is_file() {
                    "file"
                } else if ft.is_symlink() {
                    "symlink"
                } else {
                    "other"
                };
                json!({
                    "path": plan.relative,
                    "exists": true,
                    "size": meta.len(),
                    "mtime": rfc3339_utc(meta.mtime()),
                    "mode": format!("{:04o}", meta.permissions().mode() & 0o7777),
                    "is_dir": ft.is_dir(),
                    "type": kind,
                })
            }
        };
        let text = serde_json::to_string_pretty(&value)
            .map_err(|e| ToolError::new(ErrorCode::INTERNAL, format!("stat: {e}")))?;
        Ok(ToolCompletion::single(text + "\n").with_metadata(value))
    }
}
