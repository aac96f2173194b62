//! `delete_file`: idempotent removal of one regular file (seed 003, "File system").
//!
//! Staged in `prepare` against the file's content hash and removed in `execute` only if it
//! still has it; a file already gone is success (`existed: false`). Directories, symlinks and
//! other non-regular files are refused: this tool never removes a tree.

use std::borrow::Cow;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tackle_fs::{FsError, StagedDelete};
use tackle_tool::protocol::{Concurrency, ErrorCode};
use tackle_tool::{
    Action, ExecuteContext, PrepareContext, Prepared, Routing, Tool, ToolCompletion, ToolError,
};

use crate::write_file::file_key;
use crate::{fs_error, open_root, path_keys};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteFileArgs {
    /// Path of a regular file, relative to the project root.
    pub path: String,
}

/// The `delete_file` built-in.
pub struct DeleteFile;

pub const IS_A_DIRECTORY: ErrorCode = ErrorCode::new("is_a_directory");

impl Tool for DeleteFile {
    type Args = DeleteFileArgs;
    type Plan = StagedDelete;

    fn name(&self) -> &str {
        "delete_file"
    }

    fn description(&self) -> Cow<'static, str> {
        Cow::Borrowed(
            "Delete one regular file. Deleting a file that does not exist succeeds and says so \
             (`existed: false`). Directories are refused. Use this instead of `rm` in bash: it \
             honours the permission gate and the path scope.",
        )
    }

    fn concurrency(&self) -> Concurrency {
        Concurrency::Parallel
    }

    fn read_only(&self) -> bool {
        false
    }

    fn permission_actions(&self) -> &'static [&'static str] {
        &["write"]
    }

    fn prepare(
        &self,
        args: DeleteFileArgs,
        cx: &PrepareContext<'_>,
    ) -> Result<Prepared<StagedDelete>, ToolError> {
        let root = open_root("delete_file", cx.root)?;
        let rel = root
            .resolve(&args.path)
            .map_err(|e| fs_error("delete_file", e))?;
        let staged = root.stage_delete(&rel).map_err(|e| match e {
            FsError::IsADirectory { path } => ToolError::new(
                IS_A_DIRECTORY,
                format!(
                    "delete_file: {path} is a directory; delete_file removes single files only, \
                     so delete the files inside it one by one"
                ),
            ),
            other => fs_error("delete_file", other),
        })?;
        let routing = Routing {
            resources: path_keys::resources(Action::Write, &staged.rel, &staged.real),
        };
        // Serialized by the file, not the name: two names of one file take turns.
        let key = file_key(staged.real.as_str());
        Ok(Prepared::new(routing, staged).serialized_by(key))
    }

    async fn execute(
        &self,
        staged: StagedDelete,
        cx: ExecuteContext,
    ) -> Result<ToolCompletion, ToolError> {
        tackle_tool::run_tool_blocking("delete_file", move || {
            let root = open_root("delete_file", &cx.root)?;
            let path = staged.rel.to_string();
            let deleted = root
                .commit_delete(staged)
                .map_err(|e| fs_error("delete_file", e))?;
            let text = if deleted.existed {
                format!("deleted {path}\n")
            } else {
                format!("{path} did not exist; nothing was deleted\n")
            };
            Ok(ToolCompletion::single(text)
                .with_metadata(json!({ "path": path, "existed": deleted.existed })))
        })
        .await?
    }
}
