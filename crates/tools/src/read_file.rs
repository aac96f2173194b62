//! `read_file`: pages of a text file, a directory's entries, or retained output by
//! `artifact://` URI (seed 000, "Filesystem tools" and "Retained tool output").
//!
//! Self-paginating: the requested page is returned whole (the runtime does not truncate or
//! retain it), bounded by `limit` and the per-line cut; `next_offset` says where to continue.
//!
//! Media (images, PDFs, audio, video) is recognised by content, never by extension
//! ([`crate::media`]), validated whole, and returned as an attachment the runtime retains; a
//! text file named `.png` is still read as text.

use std::borrow::Cow;
use std::fs::File;
use std::io::{Read, Seek};
use std::sync::{Arc, OnceLock};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tackle_tool::protocol::{ArtifactUri, Concurrency, ErrorCode, Truncation};
use tackle_tool::{
    Action, ExecuteContext, PermissionResource, PrepareContext, Prepared, Routing, Tool,
    ToolCompletion, ToolError,
};

use tackle_fs::{DirEntry, FsError, ReadOptions, ReadTarget, RelPath};

use crate::list::display_name;
use crate::page::{
    BINARY_SNIFF_BYTES, ContentIdentity, LineIndexCache, MAX_PAGE_LINES, PageError, PageRequest,
    looks_binary, read_page,
};
use crate::{fs_error, open_root, resolve_real};

/// Lines longer than this are cut with a marker, so one minified line cannot fill a page.
pub const MAX_LINE_BYTES: usize = 2000;

pub const NOT_A_REGULAR_FILE: ErrorCode = ErrorCode::new("not_a_regular_file");
pub const OFFSET_PAST_END: ErrorCode = ErrorCode::new("offset_past_end");
/// A file with a media signature that fails validation (truncated, bad checksums, ...).
pub const MEDIA_INVALID: ErrorCode = ErrorCode::new("media_invalid");
/// A media file over the configured attachment size limit.
pub const MEDIA_TOO_LARGE: ErrorCode = ErrorCode::new("media_too_large");

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadFileArgs {
    /// Path relative to the project root, or an `artifact://<digest>[/<stream>]` URI from a truncated tool result.
    pub path: String,
    /// 1-based number of the first line to return. Default 1.
    #[schemars(range(min = 1))]
    pub offset: Option<u64>,
    /// How many lines to return, 1 to 2000. Default 2000.
    #[schemars(range(min = 1, max = 2000))]
    pub limit: Option<u64>,
}

pub enum ReadFilePlan {
    File {
        rel: RelPath,
        request: PageRequest,
        /// The path the model asked for, when it did not exist and `rel` is the one existing
        /// file it ends with (read instead, and said so).
        asked: Option<String>,
    },
    Artifact {
        uri: ArtifactUri,
        request: PageRequest,
    },
}

/// The `read_file` built-in.
pub struct ReadFile {
    indexes: Arc<LineIndexCache>,
    media_max_bytes: u64,
}

impl ReadFile {
    pub fn new() -> Self {
        static SHARED: OnceLock<Arc<LineIndexCache>> = OnceLock::new();
        Self {
            indexes: SHARED
                .get_or_init(|| Arc::new(LineIndexCache::new(64)))
                .clone(),
            media_max_bytes: crate::media::DEFAULT_MEDIA_MAX_BYTES,
        }
    }

    /// A `read_file` with its own line-index cache instead of the process-wide one.
    pub fn with_cache(indexes: Arc<LineIndexCache>) -> Self {
        Self {
            indexes,
            media_max_bytes: crate::media::DEFAULT_MEDIA_MAX_BYTES,
        }
    }

    /// Refuse media files larger than `bytes` instead of attaching them.
    pub fn with_media_limit(mut self, bytes: u64) -> Self {
        self.media_max_bytes = bytes;
        self
    }
}

impl Default for ReadFile {
    fn default() -> Self {
        Self::new()
    }
}

impl Tool for ReadFile {
    type Args = ReadFileArgs;
    type Plan = ReadFilePlan;

    fn name(&self) -> &str {
        "read_file"
    }

    fn description(&self) -> Cow<'static, str> {
        Cow::Borrowed(
            "Read a text file, a page at a time. Returns up to 2000 lines starting at the 1-based \
             `offset`; when more remain the result says the `next_offset` to pass next. Lines \
             over 2000 bytes are cut with a marker. A directory path lists its entries. Images \
             (PNG, JPEG, GIF, WebP), PDFs, audio and video files are recognised by their \
             content and returned as attachments. Use this \
             instead of `cat`, `head` or `sed -n` in bash. When another tool's output was \
             truncated, pass the `artifact://…` URI from its hint as `path` to page through \
             the full output. When the file might be large and you need an answer about it \
             rather than its text, call agentic_read_file instead.",
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

    fn truncation(&self) -> Truncation {
        Truncation::OptOut
    }

    fn prepare(
        &self,
        args: ReadFileArgs,
        cx: &PrepareContext<'_>,
    ) -> Result<Prepared<ReadFilePlan>, ToolError> {
        let offset = args.offset.unwrap_or(1);
        if offset == 0 {
            return Err(ToolError::new(
                ErrorCode::INVALID_ARGUMENTS,
                "read_file: offset 0 is not a line number; offsets are 1-based, pass 1 to start \
                 at the first line",
            )
            .with_metadata(json!({ "path": "$.offset" })));
        }
        let limit = match args.limit {
            None => MAX_PAGE_LINES,
            Some(0) => {
                return Err(ToolError::new(
                    ErrorCode::INVALID_ARGUMENTS,
                    "read_file: limit 0 returns nothing; pass a limit between 1 and 2000",
                )
                .with_metadata(json!({ "path": "$.limit" })));
            }
            Some(n) => (n as usize).min(MAX_PAGE_LINES),
        };
        let request = PageRequest {
            offset,
            limit,
            max_line_bytes: MAX_LINE_BYTES,
        };
        // Artifact URIs are dispatched before any filesystem normalization; a malformed one is
        // an error and never falls back to reading a file of that name.
        if ArtifactUri::claims(&args.path) {
            let uri = ArtifactUri::parse(&args.path).map_err(|e| {
                ToolError::new(ErrorCode::INVALID_ARTIFACT_URI, format!("read_file: {e}"))
            })?;
            let routing = Routing {
                resources: vec![PermissionResource::read(uri.resource())],
            };
            return Ok(Prepared::new(
                routing,
                ReadFilePlan::Artifact { uri, request },
            ));
        }
        // A bare digest is a mistyped artifact reference (seed 000 rejects bare hashes), not a
        // file name: refuse it rather than read whatever file happens to be called that.
        if is_bare_digest(&args.path) {
            return Err(ToolError::new(
                ErrorCode::INVALID_ARTIFACT_URI,
                format!(
                    "read_file: `{}` is a bare hash, not an artifact URI; pass artifact://{}",
                    args.path,
                    args.path.to_ascii_lowercase()
                ),
            ));
        }
        let mut resolved = resolve_real("read_file", cx.root, &args.path)?;
        let mut asked = None;
        // A path that does not exist but ends with one that does (`project_root/notes.txt`)
        // is read as that file: a small model told the right name too often answers from
        // memory instead of calling again. The gate sees the file actually read.
        if is_missing(cx.root, &resolved.rel)
            && let Some(found) =
                crate::nearest::file_it_ends_with(cx.root, cx.read_scope, resolved.rel.as_str())
        {
            resolved = resolve_real("read_file", cx.root, &found)?;
            asked = Some(args.path);
        }
        let routing = Routing {
            resources: resolved.resources(Action::Read),
        };
        let rel = resolved.rel;
        Ok(Prepared::new(
            routing,
            ReadFilePlan::File {
                rel,
                request,
                asked,
            },
        ))
    }

    async fn execute(
        &self,
        plan: ReadFilePlan,
        cx: ExecuteContext,
    ) -> Result<ToolCompletion, ToolError> {
        let indexes = self.indexes.clone();
        let media_max_bytes = self.media_max_bytes;
        if let ReadFilePlan::File {
            rel,
            request,
            asked,
        } = &plan
            && small_regular_file(&cx.root, rel)
        {
            return read_path(&cx.root, rel, request, &indexes, media_max_bytes)
                .map(|done| said_instead(done, asked.as_deref(), rel));
        }
        tackle_tool::run_tool_blocking("read_file", move || match plan {
            ReadFilePlan::File {
                rel,
                request,
                asked,
            } => read_path(&cx.root, &rel, &request, &indexes, media_max_bytes)
                .map(|done| said_instead(done, asked.as_deref(), &rel))
                .map_err(|e| {
                    crate::nearest::hint_not_found(
                        e,
                        &cx.root,
                        cx.read_scope.as_ref(),
                        asked.as_deref().unwrap_or(rel.as_str()),
                    )
                }),
            ReadFilePlan::Artifact { uri, request } => {
                let opened = cx.artifacts.open(&uri)?;
                let id = ContentIdentity::Artifact(opened.digest);
                page_result(&opened.file, &id, &request, &indexes, &uri.to_string())
            }
        })
        .await?
    }
}

/// Whether nothing at all is at `rel` (a dangling link is something).
fn is_missing(root: &std::path::Path, rel: &RelPath) -> bool {
    std::fs::symlink_metadata(root.join(rel.as_str()))
        .is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
}

/// `done` with the status line saying which file was read when the model asked for another.
fn said_instead(mut done: ToolCompletion, asked: Option<&str>, rel: &RelPath) -> ToolCompletion {
    if let Some(asked) = asked {
        let note = format!(
            "{asked} does not exist; this is {}, the one existing file that path ends with",
            rel.as_str()
        );
        done.summary = Some(match done.summary.take() {
            Some(s) => format!("{note} · {s}"),
            None => note,
        });
        if let serde_json::Value::Object(m) = &mut done.metadata {
            m.insert("read_instead_of".into(), json!(asked));
        } else if done.metadata.is_null() {
            done.metadata = json!({ "read_instead_of": asked });
        }
    }
    done
}

/// A regular file up to this size is read on the calling worker: reading it costs less than
/// handing the worker's other tasks to another thread, as a blocking section must.
const INLINE_READ_BYTES: u64 = 1024 * 1024;

/// Whether `rel` looks like a small regular file now. Only a hint for where to read it: the
/// read itself opens it again beneath the root and checks everything, and anything else (a
/// FIFO, a device, a large file, an error) goes to a blocking section.
fn small_regular_file(root: &std::path::Path, rel: &RelPath) -> bool {
    std::fs::metadata(root.join(rel.as_str()))
        .is_ok_and(|m| m.is_file() && m.len() <= INLINE_READ_BYTES)
}

/// 64 hex digits and nothing else: the shape of a SHA-256 digest, whatever the case.
fn is_bare_digest(path: &str) -> bool {
    path.len() == tackle_tool::protocol::DIGEST_HEX_LEN
        && path.bytes().all(|b| b.is_ascii_hexdigit())
}

fn read_path(
    root: &std::path::Path,
    rel: &RelPath,
    request: &PageRequest,
    indexes: &LineIndexCache,
    media_max_bytes: u64,
) -> Result<ToolCompletion, ToolError> {
    let shown = rel.as_str();
    // Opened through the root handle: the path is resolved again, beneath the root, now.
    let target = open_root("read_file", root)?
        .open_read(rel, ReadOptions::default())
        .map_err(|e| match e {
            FsError::NotFound { .. } => ToolError::new(
                ErrorCode::NOT_FOUND,
                format!("read_file: {shown} does not exist; use list_dir or glob to find the file"),
            ),
            other => fs_error("read_file", other),
        })?;
    let (file, meta) = match target {
        ReadTarget::Dir(entries) => return directory_page(&entries, shown, request),
        ReadTarget::File { file, meta } => (file, meta),
    };
    let mut head = vec![0u8; BINARY_SNIFF_BYTES.min(meta.len() as usize)];
    let n = read_up_to(&file, &mut head)
        .map_err(|e| ToolError::io(&format!("read_file: {shown}"), &e))?;
    if let Some(format) = crate::media::sniff(&head[..n]) {
        return read_media(&file, meta.len(), format, shown, media_max_bytes);
    }
    if looks_binary(&head[..n]) {
        return Ok(ToolCompletion::single(format!(
            "[{shown} is a binary file ({} bytes); its contents are not shown as text]\n",
            meta.len()
        ))
        .with_metadata(json!({ "path": shown, "binary": true, "bytes": meta.len() })));
    }
    page_result(
        &file,
        &ContentIdentity::of_file(&meta),
        request,
        indexes,
        shown,
    )
}

fn page_result(
    file: &File,
    id: &ContentIdentity,
    request: &PageRequest,
    indexes: &LineIndexCache,
    shown: &str,
) -> Result<ToolCompletion, ToolError> {
    let index = indexes.get(id);
    let mut index = index.lock().unwrap_or_else(|p| p.into_inner());
    let page = read_page(file, &mut index, request).map_err(|e| match e {
        PageError::OffsetPastEnd {
            offset,
            total_lines,
        } => ToolError::new(
            OFFSET_PAST_END,
            format!(
                "read_file: offset {offset} is past the end of {shown}, which has {total_lines} \
                 lines; pass an offset between 1 and {}",
                total_lines.max(1)
            ),
        )
        .with_metadata(json!({ "total_lines": total_lines })),
        other => ToolError::new(ErrorCode::IO, format!("read_file: {shown}: {other}")),
    })?;
    let mut text = page.text;
    if page.lines == 0 {
        text.push_str(&format!("[{shown} is empty]\n"));
    } else if let Some(next) = page.next_offset {
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&format!(
            "[showing lines {}-{}{}; more remain: continue with offset {next}]\n",
            page.first_line,
            page.first_line + page.lines as u64 - 1,
            page.total_lines
                .map(|t| format!(" of {t}"))
                .unwrap_or_default(),
        ));
    }
    Ok(ToolCompletion::single(text).with_metadata(json!({
        "path": shown,
        "first_line": page.first_line,
        "lines": page.lines,
        "next_offset": page.next_offset,
        "total_lines": page.total_lines,
        "truncated_lines": page.truncated_lines,
    })))
}

fn directory_page(
    entries: &[DirEntry],
    shown: &str,
    request: &PageRequest,
) -> Result<ToolCompletion, ToolError> {
    let total = entries.len() as u64;
    let start = (request.offset - 1) as usize;
    if start > 0 && start >= entries.len() {
        return Err(ToolError::new(
            OFFSET_PAST_END,
            format!(
                "read_file: offset {} is past the end of directory {shown}, which has {total} \
                 entries; pass an offset between 1 and {}",
                request.offset,
                total.max(1)
            ),
        ));
    }
    let end = (start + request.limit).min(entries.len());
    let mut text = String::new();
    for e in &entries[start..end] {
        text.push_str(&display_name(e));
        text.push('\n');
    }
    let next_offset = (end < entries.len()).then_some(end as u64 + 1);
    if entries.is_empty() {
        text.push_str(&format!("[directory {shown} is empty]\n"));
    } else if let Some(next) = next_offset {
        text.push_str(&format!(
            "[showing entries {}-{end} of {total}; more remain: continue with offset {next}]\n",
            start + 1
        ));
    }
    Ok(ToolCompletion::single(text).with_metadata(json!({
        "path": shown,
        "directory": true,
        "first_line": request.offset,
        "lines": end - start,
        "next_offset": next_offset,
        "total_lines": total,
    })))
}

/// Fill `buf` as far as the file allows (one `read` may return less than asked).
fn read_up_to(mut file: &File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match file.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// Read a sniffed media file whole, validate it, and return it as an attachment.
fn read_media(
    mut file: &File,
    len: u64,
    format: crate::media::MediaFormat,
    shown: &str,
    max_bytes: u64,
) -> Result<ToolCompletion, ToolError> {
    if len > max_bytes {
        return Err(ToolError::new(
            MEDIA_TOO_LARGE,
            format!(
                "read_file: {shown} is a {} file of {len} bytes, over the {max_bytes} byte \
                 attachment limit ([tool_output] media_max_bytes); ask the user for a smaller \
                 file, or inspect it with bash",
                format.kind()
            ),
        )
        .with_metadata(json!({ "path": shown, "bytes": len, "limit": max_bytes })));
    }
    let mut data = Vec::with_capacity(len as usize);
    file.rewind()
        .and_then(|()| file.take(max_bytes + 1).read_to_end(&mut data))
        .map_err(|e| ToolError::io(&format!("read_file: {shown}"), &e))?;
    let mime = crate::media::validate(format, &data).map_err(|e| {
        ToolError::new(
            MEDIA_INVALID,
            format!(
                "read_file: {shown}: {e}; it cannot be attached. Ask the user for an intact \
                 copy, or inspect its bytes with bash"
            ),
        )
        .with_metadata(json!({ "path": shown, "kind": format.kind() }))
    })?;
    let bytes = data.len();
    Ok(
        ToolCompletion::single(format!("[{shown}: {mime}, {bytes} bytes, attached]\n"))
            .with_metadata(json!({
                "path": shown,
                "media": true,
                "kind": format.kind(),
                "mime_type": mime,
                "bytes": bytes,
            }))
            .with_attachment(tackle_tool::Attachment {
                mime_type: mime.to_owned(),
                data,
            }),
    )
}
