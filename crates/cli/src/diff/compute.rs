//! The diff a file-changing call would apply, computed from its arguments and the file as it
//! is now: `edit_file`, `write_file` and `delete_file`, the catalog's tools that change a file.
//!
//! An edit is applied to the file's current bytes with the tool's own matcher
//! (`tackle_tools::edit::apply`), so the diff shown is the one the tool will make, and an edit
//! the tool will refuse says why instead of showing an empty diff; a whole-file write is diffed
//! by `similar`. The file is read through `tackle_fs::Root`, confined as the tool's own read
//! is, and never past [`MAX_READ`]; a binary or larger file is said to be one, not diffed.
//! Every line's text is made safe to show here, once, so no front end can forget it.

use std::path::Path;
use std::time::Duration;

use tackle_fs::{FsError, Root};
use tackle_tools::edit::{EditRequest, Refusal, apply};

use super::capped::Capped;
use crate::safe_text::{cut, safe_line};

/// Files (and new contents) larger than this are not diffed.
pub const MAX_READ: u64 = 4 * 1024 * 1024;
/// Lines of a diff shown; the rest are counted.
pub const MAX_LINES: usize = 80;
/// Characters of one shown line; the rest is cut.
const MAX_LINE_CHARS: usize = 240;
/// How long `similar` may look for the smallest diff of a write before it settles for a
/// coarser one (still a correct diff).
const DIFF_TIMEOUT: Duration = Duration::from_millis(500);
/// Bytes looked at for a NUL, as git and the edit matcher do, to call content binary.
const BINARY_SNIFF: usize = 8192;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiffKind {
    Hunk,
    Context,
    Added,
    Removed,
    Note,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiffLine {
    pub kind: DiffKind,
    /// Safe to show: every hidden character escaped.
    pub text: String,
}

/// Whether the file is there before the call, after it, or both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    Modify,
    Create,
    Delete,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diff {
    /// The root-relative path of the file the call changes (`src/a.rs` for `./src/../src/a.rs`,
    /// for an absolute name inside the root, or for `link/a.rs` when `link` leads to `src`),
    /// safe to show; the name as given when it does not resolve.
    pub path: String,
    pub change: Change,
    pub lines: Vec<DiffLine>,
}

/// What the call asks for, read from its arguments.
enum Request<'a> {
    Edit(EditRequest<'a>),
    Write(&'a str),
    Delete,
}

/// The diff `tool` would apply with `arguments`; `None` for a tool that changes no file or
/// arguments without the fields it needs (the strict parser will refuse them).
pub fn for_call(root: &Path, tool: &str, arguments: &serde_json::Value) -> Option<Diff> {
    let text = |k: &str| arguments.get(k).and_then(serde_json::Value::as_str);
    let name = text("path")?;
    let request = match tool {
        "edit_file" => Request::Edit(EditRequest {
            old: text("old_string")?,
            new: text("new_string")?,
            replace_all: arguments
                .get("replace_all")
                .and_then(serde_json::Value::as_bool)
                .unwrap_or(false),
        }),
        "write_file" => Request::Write(text("content")?),
        "delete_file" => Request::Delete,
        _ => return None,
    };
    let target = Target::find(root, name);
    let mut lines = Capped::default();
    if let Some(link) = &target.link_note {
        lines.push(note(link.clone()));
    }
    let change = match request {
        Request::Edit(edit) => {
            edit_lines(&target.current, edit, &mut lines);
            Change::Modify
        }
        Request::Write(content) => write_lines(&target.current, content, &mut lines),
        Request::Delete => {
            delete_lines(&target.current, &mut lines);
            Change::Delete
        }
    };
    Some(Diff {
        path: target.path,
        change,
        lines: lines.finish(),
    })
}

/// The diff from `old` (`None`: the file is new) to `new` of the file shown as `path`, as a
/// daemon sends a starting call's change.
pub fn between(path: &str, old: Option<&str>, new: &str) -> Diff {
    let current = old.map(|o| o.as_bytes().to_vec()).ok_or(Unread::Missing);
    let mut lines = Capped::default();
    let change = write_lines(&current, new, &mut lines);
    Diff {
        path: tackle_runtime::visible::visible(path).into_owned(),
        change,
        lines: lines.finish(),
    }
}

/// The file a call names, as it is now.
struct Target {
    path: String,
    /// Said when the name differs from the file it leads to.
    link_note: Option<String>,
    current: Result<Vec<u8>, Unread>,
}

/// Why the current content is not known.
enum Unread {
    Missing,
    TooLarge,
    /// The path is refused (outside the root, invalid): the call will fail.
    Refused(String),
    Other(String),
}

impl Unread {
    fn why(&self) -> String {
        match self {
            Unread::Missing => "the file does not exist".to_owned(),
            Unread::TooLarge => format!("the file is larger than {} MiB", MAX_READ >> 20),
            Unread::Refused(e) => format!("the path is refused ({e}): the call will fail"),
            Unread::Other(e) => format!("the file could not be read ({e})"),
        }
    }
}

impl Target {
    fn find(root: &Path, name: &str) -> Target {
        let unresolved = |current| Target {
            path: safe_line(name),
            link_note: None,
            current: Err(current),
        };
        let dir = match Root::open(root) {
            Ok(dir) => dir,
            Err(e) => return unresolved(Unread::Other(safe_line(&e.to_string()))),
        };
        let rel = match dir.resolve(name) {
            Ok(rel) => rel,
            Err(e) => return unresolved(Unread::Refused(safe_line(&e.to_string()))),
        };
        let current = match dir.read_capped(&rel, MAX_READ) {
            Ok(bytes) => Ok(bytes),
            Err(FsError::NotFound { .. }) => Err(Unread::Missing),
            Err(FsError::TooLarge { .. }) => Err(Unread::TooLarge),
            Err(e @ FsError::OutsideRoot { .. }) => Err(Unread::Refused(safe_line(&e.to_string()))),
            Err(e) => Err(Unread::Other(safe_line(&e.to_string()))),
        };
        match dir.real_path(&rel) {
            Ok(real) if real != rel => Target {
                path: safe_line(real.as_str()),
                link_note: Some(format!(
                    "({} leads to {})",
                    safe_line(rel.as_str()),
                    safe_line(real.as_str())
                )),
                current,
            },
            _ => Target {
                path: safe_line(rel.as_str()),
                link_note: None,
                current,
            },
        }
    }
}

fn edit_lines(current: &Result<Vec<u8>, Unread>, edit: EditRequest<'_>, out: &mut Capped) {
    let why = match current {
        Ok(bytes) => match apply(bytes, edit) {
            Ok(applied) => return out.extend(parse_unified(&applied.diff)),
            Err(refusal) => refused(&refusal),
        },
        Err(Unread::Missing) => "the file does not exist: the call will fail".to_owned(),
        Err(unread) => unread.why(),
    };
    out.push(note(format!("({why}; the replacement it asks for:)")));
    out.text(DiffKind::Removed, edit.old);
    out.text(DiffKind::Added, edit.new);
}

/// Why the tool will refuse the edit, as the note says it.
fn refused(refusal: &Refusal) -> String {
    let why = match refusal {
        Refusal::EmptyOld => "old_string is empty".to_owned(),
        Refusal::NoChange => "old_string and new_string are the same".to_owned(),
        Refusal::Binary => "the file is binary".to_owned(),
        Refusal::NoMatch { .. } => "old_string is not found in the file".to_owned(),
        Refusal::Multiple { count, .. } => {
            format!("old_string occurs {count} times and replace_all is not set")
        }
    };
    format!("{why}: the call will fail")
}

fn write_lines(current: &Result<Vec<u8>, Unread>, content: &str, out: &mut Capped) -> Change {
    let old = match current {
        Err(Unread::Missing) => {
            new_file_lines(content, out);
            return Change::Create;
        }
        Err(unread) => {
            out.push(note(format!(
                "({}; the write replaces it whole)",
                unread.why()
            )));
            return Change::Modify;
        }
        Ok(bytes) => bytes,
    };
    if old.as_slice() == content.as_bytes() {
        out.push(note("(the content is unchanged)".to_owned()));
    } else if let Some(what) = not_diffable(content.as_bytes()) {
        out.push(note(format!(
            "(the new content is {what}: no diff is shown)"
        )));
    } else {
        match text_of(old) {
            Some(old) => {
                let diff = similar::TextDiff::configure()
                    .timeout(DIFF_TIMEOUT)
                    .diff_lines(old, content);
                let unified = diff.unified_diff().context_radius(2).to_string();
                out.extend(parse_unified(&unified));
            }
            None => {
                out.push(note(format!(
                    "(replaces a binary file of {} bytes; the new content:)",
                    old.len()
                )));
                added_lines(content, out);
            }
        }
    }
    Change::Modify
}

fn new_file_lines(content: &str, out: &mut Capped) {
    if content.is_empty() {
        return out.push(note("(a new, empty file)".to_owned()));
    }
    if let Some(what) = not_diffable(content.as_bytes()) {
        return out.push(note(format!("(a new file; its content is {what})")));
    }
    out.push(note("(a new file)".to_owned()));
    added_lines(content, out);
}

fn added_lines(content: &str, out: &mut Capped) {
    let count = content.lines().count();
    out.push(note_kind(DiffKind::Hunk, format!("@@ -0,0 +1,{count} @@")));
    out.text(DiffKind::Added, content);
}

fn delete_lines(current: &Result<Vec<u8>, Unread>, out: &mut Capped) {
    let bytes = match current {
        Err(Unread::Missing) => {
            return out.push(note(
                "(the file does not exist: nothing is deleted)".to_owned(),
            ));
        }
        Err(unread) => return out.push(note(format!("({}; it is deleted)", unread.why()))),
        Ok(bytes) => bytes,
    };
    match text_of(bytes) {
        Some("") => out.push(note("(deletes an empty file)".to_owned())),
        Some(text) => {
            let count = text.lines().count();
            out.push(note_kind(DiffKind::Hunk, format!("@@ -1,{count} +0,0 @@")));
            out.text(DiffKind::Removed, text);
        }
        None => out.push(note(format!(
            "(deletes a binary file of {} bytes)",
            bytes.len()
        ))),
    }
}

/// The bytes as text, unless they are binary (a NUL near the start, or not UTF-8).
fn text_of(bytes: &[u8]) -> Option<&str> {
    if memchr_nul(bytes) {
        return None;
    }
    std::str::from_utf8(bytes).ok()
}

/// Why new content is not diffed, if it is not.
fn not_diffable(bytes: &[u8]) -> Option<String> {
    if bytes.len() as u64 > MAX_READ {
        return Some(format!("larger than {} MiB", MAX_READ >> 20));
    }
    memchr_nul(bytes).then(|| format!("binary ({} bytes)", bytes.len()))
}

fn memchr_nul(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(BINARY_SNIFF)].contains(&0)
}

/// Lines of a unified diff; the `---`/`+++` header before the first hunk is left out (the
/// front ends draw their own from [`Diff::path`] and [`Diff::change`]).
pub fn parse_unified(text: &str) -> Vec<DiffLine> {
    let mut lines = Vec::new();
    let mut in_hunk = false;
    for raw in text.lines() {
        if !in_hunk && (raw.starts_with("--- ") || raw.starts_with("+++ ")) {
            continue;
        }
        let kind = if raw.starts_with("@@") {
            in_hunk = true;
            DiffKind::Hunk
        } else if let Some(rest) = raw.strip_prefix('+') {
            lines.push(line(DiffKind::Added, rest));
            continue;
        } else if let Some(rest) = raw.strip_prefix('-') {
            lines.push(line(DiffKind::Removed, rest));
            continue;
        } else if let Some(rest) = raw.strip_prefix(' ') {
            lines.push(line(DiffKind::Context, rest));
            continue;
        } else if raw.is_empty() {
            DiffKind::Context
        } else {
            DiffKind::Note
        };
        lines.push(line(kind, raw));
    }
    lines
}

pub(super) fn line(kind: DiffKind, text: &str) -> DiffLine {
    DiffLine {
        kind,
        text: cut(safe_line(text), MAX_LINE_CHARS),
    }
}

/// A line of our own words (already safe).
pub(super) fn note(text: String) -> DiffLine {
    note_kind(DiffKind::Note, text)
}

fn note_kind(kind: DiffKind, text: String) -> DiffLine {
    DiffLine { kind, text }
}

#[cfg(test)]
#[path = "compute_tests.rs"]
mod tests;
