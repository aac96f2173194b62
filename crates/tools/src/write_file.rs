//! `write_file`: atomic create-or-overwrite of one file (seed 003, "File system").
//!
//! The write is staged in `prepare` against the file's current content hash and published in
//! `execute` only if the file still has it (`tackle_fs::Root::commit`: temp file, fsync,
//! rename, fsync of the directory). A file that changed in between is `conflict`, never
//! clobbered. Calls of one batch that write the same path share a serialization key, so they
//! run in turn order; the second then conflicts, because both were staged against the same base.

use std::borrow::Cow;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tackle_fs::StagedWrite;
use tackle_tool::protocol::Concurrency;
use tackle_tool::{
    Action, ExecuteContext, PrepareContext, Prepared, Routing, SerializationKey, Tool,
    ToolCompletion, ToolError,
};

use crate::{fs_error, open_root, path_keys};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteFileArgs {
    /// Path relative to the project root. Missing parent directories are created.
    pub path: String,
    /// The complete new content of the file.
    pub content: String,
}

/// The `write_file` built-in.
pub struct WriteFile;

/// The serialization key of every mutation of `path`: equal for write_file, edit_file and
/// delete_file, so mutations of one file in one batch run in turn order.
pub(crate) fn file_key(path: &str) -> SerializationKey {
    SerializationKey(format!("file:{path}"))
}

impl Tool for WriteFile {
    type Args = WriteFileArgs;
    type Plan = StagedWrite;

    fn name(&self) -> &str {
        "write_file"
    }

    fn description(&self) -> Cow<'static, str> {
        Cow::Borrowed(
            "Create a file or replace its whole content, atomically. Creates missing parent \
             directories. Use this for new files and complete rewrites; to change part of an \
             existing file use edit_file, which needs only the changed passage. Use this instead \
             of `cat > file`, `tee` or `echo >` in bash. If the file changes between this call \
             and its execution the write is refused with `conflict`: read it again and redo the \
             change.",
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
        args: WriteFileArgs,
        cx: &PrepareContext<'_>,
    ) -> Result<Prepared<StagedWrite>, ToolError> {
        let root = open_root("write_file", cx.root)?;
        let rel = root
            .resolve(&args.path)
            .map_err(|e| fs_error("write_file", e))?;
        let staged = root
            .stage_write(&rel, args.content.into_bytes())
            .map_err(|e| fs_error("write_file", e))?;
        let routing = Routing {
            resources: path_keys::resources(Action::Write, &staged.rel, &staged.real),
        };
        // Serialized by the file, not the name: two names of one file take turns.
        let key = file_key(staged.real.as_str());
        Ok(Prepared::new(routing, staged).serialized_by(key))
    }

    async fn execute(
        &self,
        staged: StagedWrite,
        cx: ExecuteContext,
    ) -> Result<ToolCompletion, ToolError> {
        tackle_tool::run_tool_blocking("write_file", move || {
            let root = open_root("write_file", &cx.root)?;
            let path = staged.rel.to_string();
            let committed = root.commit(staged).map_err(|e| fs_error("write_file", e))?;
            let verb = if committed.created {
                "created"
            } else {
                "overwrote"
            };
            Ok(
                ToolCompletion::single(format!("{verb} {path} ({} bytes)\n", committed.bytes))
                    .with_metadata(json!({
                        "path": path,
                        "bytes": committed.bytes,
                        "created": committed.created,
                    })),
            )
        })
        .await?
    }
}
