//! `edit_file`: replace an exact passage of a file (seed 003, "File system"; DESIGN decision
//! table: edits that do not match are refused, never guessed).
//!
//! The new bytes are computed in `prepare` from the file as read, and staged against the hash
//! of exactly those bytes; `execute` publishes them only if the file still has that hash. Two
//! edits of one file in one batch therefore both stage against the same base; they share a
//! serialization key and run in turn order, and the second gets `conflict` instead of
//! silently undoing the first (no lost update).
//!
//! Routing: `read:` keys for the name and its real path as well as `write:` keys, since the
//! result shows the file (the diff's context, a refusal's nearest passage and matching lines).
//! An edit that does not apply is refused in `execute`, after the gate has allowed reading the
//! file, never in `prepare`, which runs before the gate: a refusal must not show a file that
//! a rule or the path scope keeps from the model.

use std::borrow::Cow;
use std::io::Read;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use sha2::{Digest, Sha256};
use tackle_fs::{FsError, ReadOptions, ReadTarget, StagedWrite};
use tackle_tool::protocol::{Concurrency, ErrorCode};
use tackle_tool::{
    Action, ExecuteContext, PrepareContext, Prepared, Routing, Tool, ToolCompletion, ToolError,
};

use crate::edit::{self, Applied, EditRequest, Refusal};
use crate::path_keys::{self, ResolvedPath};
use crate::write_file::file_key;
use crate::{fs_error, open_root};

pub const NO_MATCH: ErrorCode = ErrorCode::new("no_match");
pub const MULTIPLE_MATCHES: ErrorCode = ErrorCode::new("multiple_matches");
pub const NO_CHANGE: ErrorCode = ErrorCode::new("no_change");
pub const BINARY_FILE: ErrorCode = ErrorCode::new("binary_file");

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditFileArgs {
    /// Path of an existing file, relative to the project root.
    pub path: String,
    /// The exact text to replace, including its whitespace and indentation. It must occur exactly once unless replace_all is true.
    pub old_string: String,
    /// The text to put in its place.
    pub new_string: String,
    /// Replace every occurrence of old_string instead of requiring exactly one. Default false.
    #[serde(default)]
    pub replace_all: bool,
}

/// What `execute` will do, decided in `prepare`.
pub enum EditPlan {
    /// Publish the staged write; the result shows `applied`'s diff.
    Apply {
        staged: StagedWrite,
        applied: Applied,
        /// The path the model asked for, when it did not exist and this edit is of the one
        /// existing file it ends with.
        asked: Option<String>,
    },
    /// The edit does not apply: report this refusal (it quotes the file, so it waits for the
    /// gate).
    Refuse(ToolError),
}

/// The `edit_file` built-in.
pub struct EditFile;

impl Tool for EditFile {
    type Args = EditFileArgs;
    type Plan = EditPlan;

    fn name(&self) -> &str {
        "edit_file"
    }

    fn description(&self) -> Cow<'static, str> {
        Cow::Borrowed(
            "Replace an exact passage of an existing file. `old_string` must match the file \
             exactly (whitespace and indentation included) and occur exactly once; include \
             enough surrounding lines to make it unique, or pass `replace_all: true` to change \
             every occurrence (a rename). When it does not match, nothing is changed and the \
             result shows the match count and lines, or the nearest passage with its line \
             number. Read the file with read_file first. Line endings and the final newline are \
             kept as the file has them. Use this instead of `sed -i` or `perl -pi` in bash, and \
             instead of write_file when only part of a file changes.",
        )
    }

    fn concurrency(&self) -> Concurrency {
        Concurrency::Parallel
    }

    fn read_only(&self) -> bool {
        false
    }

    fn permission_actions(&self) -> &'static [&'static str] {
        &["read", "write"]
    }

    fn prepare(
        &self,
        args: EditFileArgs,
        cx: &PrepareContext<'_>,
    ) -> Result<Prepared<EditPlan>, ToolError> {
        let root = open_root("edit_file", cx.root)?;
        let rel = root
            .resolve(&args.path)
            .map_err(|e| fs_error("edit_file", e))?;
        let shown = rel.as_str();
        let read_keys = ResolvedPath::of("edit_file", &root, rel.clone())?.resources(Action::Read);
        let content = match root.open_read(&rel, ReadOptions::default()) {
            Ok(ReadTarget::File { mut file, meta }) => {
                let mut buf = Vec::with_capacity(meta.len() as usize);
                file.read_to_end(&mut buf)
                    .map_err(|e| ToolError::io(&format!("edit_file: {shown}"), &e))?;
                buf
            }
            Ok(ReadTarget::Dir(_)) => {
                return Err(ToolError::new(
                    ErrorCode::new("is_a_directory"),
                    format!("edit_file: {shown} is a directory; pass a file inside it"),
                ));
            }
            Err(FsError::NotFound { .. }) => {
                // Directories of the model's own in front of a real path: edit that file, as
                // read_file reads it; the gate sees its keys, and old_string must match there.
                if let Some(found) =
                    crate::nearest::file_it_ends_with(cx.root, cx.read_scope, shown)
                {
                    let asked = args.path.clone();
                    let mut prepared = self.prepare(
                        EditFileArgs {
                            path: found,
                            ..args
                        },
                        cx,
                    )?;
                    if let EditPlan::Apply { asked: a, .. } = &mut prepared.plan {
                        *a = Some(asked);
                    }
                    return Ok(prepared);
                }
                let error = ToolError::new(
                    ErrorCode::NOT_FOUND,
                    format!(
                        "edit_file: {shown} does not exist; create it with write_file, or use \
                         glob to find the file you meant"
                    ),
                );
                return Err(crate::nearest::hint_not_found(
                    error,
                    cx.root,
                    cx.read_scope,
                    shown,
                ));
            }
            Err(e) => return Err(fs_error("edit_file", e)),
        };
        let request = EditRequest {
            old: &args.old_string,
            new: &args.new_string,
            replace_all: args.replace_all,
        };
        let applied = match edit::apply(&content, request) {
            Ok(applied) => applied,
            Err(r) => {
                let routing = Routing {
                    resources: read_keys,
                };
                return Ok(Prepared::new(routing, EditPlan::Refuse(refusal(shown, r))));
            }
        };
        let staged = root
            .stage_write(&rel, applied.bytes.clone())
            .map_err(|e| fs_error("edit_file", e))?;
        // The edit was computed from `content`; stage it only against exactly that content, so
        // a change between the read and the staging is a conflict, not a lost update.
        let read_hash: [u8; 32] = Sha256::digest(&content).into();
        if staged.base.map(|b| b.sha256) != Some(read_hash) {
            return Err(fs_error(
                "edit_file",
                FsError::Conflict {
                    path: shown.to_owned(),
                },
            ));
        }
        let mut resources = read_keys;
        resources.extend(path_keys::resources(
            Action::Write,
            &staged.rel,
            &staged.real,
        ));
        let routing = Routing { resources };
        // Serialized by the file, not the name: two names of one file take turns.
        let key = file_key(staged.real.as_str());
        Ok(Prepared::new(
            routing,
            EditPlan::Apply {
                staged,
                applied,
                asked: None,
            },
        )
        .serialized_by(key))
    }

    async fn execute(
        &self,
        plan: EditPlan,
        cx: ExecuteContext,
    ) -> Result<ToolCompletion, ToolError> {
        tackle_tool::run_tool_blocking("edit_file", move || {
            let root = open_root("edit_file", &cx.root)?;
            let (staged, applied, asked) = match plan {
                EditPlan::Apply {
                    staged,
                    applied,
                    asked,
                } => (staged, applied, asked),
                EditPlan::Refuse(refusal) => return Err(refusal),
            };
            let path = staged.rel.to_string();
            let committed = root.commit(staged).map_err(|e| fs_error("edit_file", e))?;
            let n = applied.replacements;
            let what = if n == 1 {
                "1 replacement".to_owned()
            } else {
                format!("{n} replacements")
            };
            let text = format!("edited {path}: {what}\n{}", applied.diff);
            let mut done = ToolCompletion::single(text).with_metadata(json!({
                "path": path,
                "replacements": n,
                "lines": applied.lines,
                "bytes": committed.bytes,
                "line_endings": if applied.crlf { "crlf" } else { "lf" },
            }));
            if let Some(asked) = asked {
                done.summary = Some(format!(
                    "{asked} does not exist; edited {path}, the one existing file that path \
                     ends with"
                ));
                done.metadata["edited_instead_of"] = json!(asked);
            }
            Ok(done)
        })
        .await?
    }
}

/// A refusal as a result that tells the model exactly what to do next.
fn refusal(path: &str, r: Refusal) -> ToolError {
    match r {
        Refusal::EmptyOld => ToolError::new(
            ErrorCode::INVALID_ARGUMENTS,
            "edit_file: old_string is empty; pass the exact text to replace, or use write_file \
             to write a whole file",
        )
        .with_metadata(json!({ "path": "$.old_string" })),
        Refusal::NoChange => ToolError::new(
            NO_CHANGE,
            "edit_file: old_string and new_string are the same, so the edit changes nothing; \
             pass the text you want in new_string",
        ),
        Refusal::Binary => ToolError::new(
            BINARY_FILE,
            format!(
                "edit_file: {path} is a binary file; edit_file changes text files only, use \
                 write_file to replace it whole"
            ),
        ),
        Refusal::Multiple { count, lines } => {
            let list = lines
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ");
            let more = if count > lines.len() { ", …" } else { "" };
            ToolError::new(
                MULTIPLE_MATCHES,
                format!(
                    "edit_file: old_string matches {count} places in {path} (lines {list}{more}); \
                     pass replace_all: true or include more context. Nothing was changed."
                ),
            )
            .with_metadata(json!({ "path": path, "matches": count, "lines": lines }))
        }
        Refusal::NoMatch { nearest: None } => ToolError::new(
            NO_MATCH,
            format!(
                "edit_file: old_string was not found in {path} and no similar passage exists; \
                 read the file with read_file and copy the exact text. Nothing was changed."
            ),
        )
        .with_metadata(json!({ "path": path, "matches": 0 })),
        Refusal::NoMatch { nearest: Some(n) } => {
            let message = if n.whitespace_only {
                format!(
                    "edit_file: old_string was not found in {path} exactly; the passage at line \
                     {} differs from it only in whitespace or line endings:\n{}Repeat old_string \
                     with the file's exact whitespace. Nothing was changed.",
                    n.line, n.passage
                )
            } else {
                format!(
                    "edit_file: old_string was not found in {path}; the nearest passage starts at \
                     line {}:\n{}Copy the exact text from the file (read_file shows it) and try \
                     again. Nothing was changed.",
                    n.line, n.passage
                )
            };
            ToolError::new(NO_MATCH, message).with_metadata(json!({
                "path": path,
                "matches": 0,
                "nearest_line": n.line,
                "whitespace_only": n.whitespace_only,
            }))
        }
    }
}
