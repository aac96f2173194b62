//! `read_many_files`: several files in one call, named (`paths`) or by pattern (`pattern`
//! under `path`) (seed 003, "File system").
//!
//! A file that cannot be read is a `skipped: "<reason>"` entry; the batch never aborts. Each
//! file shows at most [`MAX_FILE_LINES`] lines and [`MAX_FILE_BYTES`] bytes, the whole result
//! at most [`MAX_TOTAL_BYTES`] and [`MAX_FILES`] files; the output says where it stopped and
//! how to read the rest with read_file.
//!
//! Routing: explicit paths declare one `read:<path>` each, so the gate decides each file. A
//! pattern declares `read:<dir>` for the walked directory; the files it finds are then
//! filtered by the call's `ReadScope` (the gate's per-file answer: a file singled out by a deny
//! or ask rule, or outside the path scope, is left out and counted). Every file is opened
//! through the root handle.

use std::borrow::Cow;
use std::io::Read;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tackle_fs::{FsError, ReadOptions, ReadTarget, RelPath, Root};
use tackle_tool::protocol::{Concurrency, ErrorCode};
use tackle_tool::{
    Action, ExecuteContext, FileRead, FileReadOutcome, PermissionResource, PrepareContext,
    Prepared, Routing, SurveyListing, Tool, ToolCompletion, ToolError,
};

use crate::open_root;
use crate::page::looks_binary;
use crate::path_keys::ResolvedPath;
use crate::survey_walk::SurveyWalk;
use crate::walk::{FileVisitor, Found, NamePattern, WalkCounts};

pub const MAX_FILES: usize = 100;
pub const MAX_FILE_LINES: usize = 1000;
pub const MAX_FILE_BYTES: usize = 32 * 1024;
pub const MAX_TOTAL_BYTES: usize = 256 * 1024;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadManyFilesArgs {
    /// Files to read, relative to the project root. Pass this or `pattern`.
    pub paths: Option<Vec<String>>,
    /// A glob selecting the files to read: `*.rs` matches names at any depth, `src/**/*.rs` paths below `path`. Pass this or `paths`.
    pub pattern: Option<String>,
    /// With `pattern`: the directory to search. Default `.`.
    pub path: Option<String>,
}

pub enum ReadManyPlan {
    /// Each named path, resolved or with the reason it cannot be.
    Paths(Vec<(String, Result<RelPath, String>)>),
    Pattern {
        pattern: NamePattern,
        walk: SurveyWalk,
    },
}

/// The `read_many_files` built-in.
pub struct ReadManyFiles;

impl Tool for ReadManyFiles {
    type Args = ReadManyFilesArgs;
    type Plan = ReadManyPlan;

    fn name(&self) -> &str {
        "read_many_files"
    }

    fn description(&self) -> Cow<'static, str> {
        Cow::Borrowed(
            "Read several text files in one call: list them in `paths`, or select them with a \
             `pattern` such as `*.rs` (under `path`). Prefer this over several read_file calls when you \
             know the set of files up front. Files that cannot be read come back as `skipped` \
             entries with the reason; the rest are still returned. Each file shows at most 1000 \
             lines or 32 KiB and the whole result at most 256 KiB and 100 files; the output says \
             where a file was cut, so continue it with read_file and an offset.",
        )
    }

    fn concurrency(&self) -> Concurrency {
        Concurrency::Parallel
    }

    fn read_only(&self) -> bool {
        true
    }

    /// A survey: large results are shown as a digest, with retrieve_raw for the whole.
    fn survey(&self) -> bool {
        true
    }

    fn permission_actions(&self) -> &'static [&'static str] {
        &["read"]
    }

    fn prepare(
        &self,
        args: ReadManyFilesArgs,
        cx: &PrepareContext<'_>,
    ) -> Result<Prepared<ReadManyPlan>, ToolError> {
        let root = open_root("read_many_files", cx.root)?;
        match (args.paths, args.pattern) {
            (Some(paths), None) => {
                if args.path.is_some() {
                    return Err(invalid(
                        "$.path",
                        "`path` goes with `pattern`; with `paths`, name each file in full",
                    ));
                }
                if paths.is_empty() {
                    return Err(invalid(
                        "$.paths",
                        "`paths` is empty; name at least one file",
                    ));
                }
                let mut resources: Vec<PermissionResource> = Vec::new();
                let mut plan = Vec::with_capacity(paths.len());
                for p in paths {
                    let resolved = root
                        .resolve(&p)
                        .and_then(|rel| {
                            Ok(ResolvedPath {
                                real: root.real_path(&rel)?,
                                rel,
                            })
                        })
                        .map_err(|e| e.to_string());
                    if let Ok(path) = &resolved {
                        for r in path.resources(Action::Read) {
                            if !resources.contains(&r) {
                                resources.push(r);
                            }
                        }
                    }
                    plan.push((p, resolved.map(|path| path.rel)));
                }
                Ok(Prepared::new(
                    Routing { resources },
                    ReadManyPlan::Paths(plan),
                ))
            }
            (None, Some(pattern)) => {
                let pattern = NamePattern::new("read_many_files", &pattern)?;
                let walk = SurveyWalk::prepare("read_many_files", cx.root, args.path.as_deref())?;
                Ok(Prepared::new(
                    walk.routing(),
                    ReadManyPlan::Pattern { pattern, walk },
                ))
            }
            (Some(_), Some(_)) => Err(invalid(
                "$.pattern",
                "pass either `paths` or `pattern`, not both",
            )),
            (None, None) => Err(invalid(
                "$.paths",
                "pass `paths` (a list of files) or `pattern` (a glob such as `*.rs`)",
            )),
        }
    }

    async fn execute(
        &self,
        plan: ReadManyPlan,
        cx: ExecuteContext,
    ) -> Result<ToolCompletion, ToolError> {
        // A survey runs where the call runs (see `tackle_tool::run_blocking`): no hop to the
        // blocking pool and back on its critical path.
        tackle_tool::run_tool_blocking("read_many_files", move || {
            let root = open_root("read_many_files", &cx.root)?;
            let mut batch = Batch::default();
            match plan {
                ReadManyPlan::Paths(paths) => {
                    for (input, resolved) in paths {
                        match resolved {
                            Ok(rel) => batch.read(&root, rel.as_str(), &rel),
                            Err(reason) => batch.skip(&input, reason),
                        }
                    }
                }
                ReadManyPlan::Pattern { pattern, walk } => {
                    struct Collect<'a> {
                        pattern: &'a NamePattern,
                        start: &'a str,
                        out: Vec<Walked>,
                    }
                    impl FileVisitor for Collect<'_> {
                        type Output = Vec<Walked>;
                        fn visit(&mut self, found: Found<'_>) {
                            if self.pattern.matches(self.start, found.rel) {
                                self.out.push(Walked {
                                    shown: found.rel.to_owned(),
                                    real: found.real.to_owned(),
                                });
                            }
                        }
                        fn finish(self) -> Vec<Walked> {
                            self.out
                        }
                    }
                    let walked = walk.run("read_many_files", &cx, |_| Collect {
                        pattern: &pattern,
                        start: walk.start_rel(),
                        out: Vec::new(),
                    })?;
                    let mut all: Vec<Walked> = walked.parts.into_iter().flatten().collect();
                    all.sort_unstable();
                    batch.matched = Some(all.len());
                    batch.counts = walked.counts;
                    // Shown by name, opened by the real path the walk found (no link on it).
                    for Walked { shown, real } in all {
                        match root.resolve(&real) {
                            Ok(real) => batch.read(&root, &shown, &real),
                            Err(e) => batch.skip(&shown, e.to_string()),
                        }
                    }
                }
            }
            Ok(batch.finish())
        })
        .await?
    }
}

fn invalid(path: &str, message: &str) -> ToolError {
    ToolError::new(
        ErrorCode::INVALID_ARGUMENTS,
        format!("read_many_files: {message}"),
    )
    .with_metadata(json!({ "path": path }))
}

/// A file a pattern walk found: its name beneath the start as given, and where it really is.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Walked {
    shown: String,
    real: String,
}

#[derive(Default)]
struct Batch {
    text: String,
    entries: Vec<FileRead>,
    files_read: usize,
    total_bytes: usize,
    limit_reached: bool,
    matched: Option<usize>,
    counts: WalkCounts,
}

impl Batch {
    fn skip(&mut self, path: &str, reason: String) {
        self.text
            .push_str(&format!("==> {path} <==\n[skipped: {reason}]\n\n"));
        self.entries.push(FileRead {
            path: path.to_owned(),
            outcome: FileReadOutcome::Skipped { skipped: reason },
        });
    }

    /// Reads the file at `rel`, shown as `shown`.
    fn read(&mut self, root: &Root, shown: &str, rel: &RelPath) {
        if self.files_read >= MAX_FILES || self.total_bytes >= MAX_TOTAL_BYTES {
            self.limit_reached = true;
            let why = if self.files_read >= MAX_FILES {
                format!("the result already holds {MAX_FILES} files")
            } else {
                format!("the result already holds {} KiB", MAX_TOTAL_BYTES / 1024)
            };
            return self.skip(
                shown,
                format!("{why}; read it with read_file or in another call"),
            );
        }
        let (file, meta) = match root.open_read(rel, ReadOptions::default()) {
            Ok(ReadTarget::File { file, meta }) => (file, meta),
            Ok(ReadTarget::Dir(_)) => {
                return self.skip(
                    shown,
                    format!("{shown} is a directory; use list_dir, or a pattern with path"),
                );
            }
            Err(e @ FsError::NotFound { .. }) => return self.skip(shown, e.to_string()),
            Err(e) => return self.skip(shown, e.to_string()),
        };
        let budget = MAX_FILE_BYTES.min(MAX_TOTAL_BYTES - self.total_bytes);
        let mut buf = Vec::with_capacity(budget.min(meta.len() as usize) + 1);
        if let Err(e) = (&file).take(budget as u64 + 1).read_to_end(&mut buf) {
            return self.skip(shown, format!("reading {shown}: {e}"));
        }
        if looks_binary(&buf) {
            return self.skip(
                shown,
                format!("{shown} is a binary file ({} bytes)", meta.len()),
            );
        }
        let mut cut = buf.len() > budget;
        buf.truncate(budget);
        // Whole lines only, and at most MAX_FILE_LINES of them.
        let mut end = buf.len();
        if let Some(i) = memchr::memchr_iter(b'\n', &buf).nth(MAX_FILE_LINES - 1) {
            if i + 1 < buf.len() {
                cut = true;
            }
            end = i + 1;
        } else if cut && let Some(i) = memchr::memrchr(b'\n', &buf) {
            end = i + 1;
        }
        let body = String::from_utf8_lossy(&buf[..end]);
        let lines = bytecount::count(&buf[..end], b'\n')
            + usize::from(!body.ends_with('\n') && !body.is_empty());
        self.text.push_str(&format!("==> {shown} <==\n"));
        self.text.push_str(&body);
        if !body.ends_with('\n') && !body.is_empty() {
            self.text.push('\n');
        }
        if cut {
            self.text.push_str(&format!(
                "[truncated: showing lines 1-{lines} of {shown} ({} bytes in all); read the rest \
                 with read_file {{\"path\": \"{shown}\", \"offset\": {}}}]\n",
                meta.len(),
                lines + 1
            ));
        }
        self.text.push('\n');
        self.total_bytes += end;
        self.files_read += 1;
        self.entries.push(FileRead {
            path: shown.to_owned(),
            outcome: FileReadOutcome::Read {
                lines,
                bytes: meta.len(),
                truncated: cut,
            },
        });
    }

    fn finish(mut self) -> ToolCompletion {
        let skipped = self
            .entries
            .iter()
            .filter(|e| matches!(e.outcome, FileReadOutcome::Skipped { .. }))
            .count();
        let notes = self.counts.notes();
        self.text.push_str(&notes);
        if self.entries.is_empty() {
            self.text.push_str("[no files matched]\n");
        }
        if self.limit_reached {
            self.text.push_str(&format!(
                "[limit reached: at most {MAX_FILES} files and {} KiB per call; read the \
                 remaining files in another call]\n",
                MAX_TOTAL_BYTES / 1024
            ));
        }
        let listing = SurveyListing::Files(self.entries);
        ToolCompletion::single(self.text)
            .with_metadata(json!({
                "files": null,
                "read": self.files_read,
                "skipped": skipped,
                "matched": self.matched,
                "excluded_by_scope": self.counts.excluded_by_scope,
                "skipped_ignore_files": self.counts.skipped_json(),
                "truncated": self.limit_reached,
                "limits": {
                    "files": MAX_FILES,
                    "file_lines": MAX_FILE_LINES,
                    "file_bytes": MAX_FILE_BYTES,
                    "total_bytes": MAX_TOTAL_BYTES,
                },
            }))
            .with_survey(listing)
    }
}
