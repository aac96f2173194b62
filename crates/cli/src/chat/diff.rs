//! The diff an `edit_file` or `write_file` call applies, computed from its arguments before it
//! runs (for the transcript and the approval prompt) and drawn as coloured lines.
//!
//! An edit is applied to the file's current bytes with the tool's own matcher
//! (`tackle_tools::edit::apply`), so the diff shown is the one the tool will make; a whole-file
//! write is diffed by `similar`. When the file cannot be read (outside the root, too large) or
//! the edit would not apply, the replacement itself is shown, said as such.

use std::path::Path;

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use tackle_tools::edit::{EditRequest, apply};

use super::text::safe_line;

/// Files larger than this are not read to show a diff.
const MAX_READ: u64 = 4 * 1024 * 1024;
/// Lines of a diff shown; the rest are counted.
pub const MAX_LINES: usize = 80;

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
    pub text: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diff {
    /// The path as the call names it.
    pub path: String,
    pub lines: Vec<DiffLine>,
}

/// The diff `tool` would apply with `arguments`, for the two tools that change a file.
pub fn for_call(root: &Path, tool: &str, arguments: &serde_json::Value) -> Option<Diff> {
    let text = |k: &str| arguments.get(k).and_then(serde_json::Value::as_str);
    let path = text("path")?;
    let current = read(root, path);
    let lines = match tool {
        "edit_file" => {
            let old = text("old_string")?;
            let new = text("new_string")?;
            let replace_all = arguments
                .get("replace_all")
                .and_then(serde_json::Value::as_bool)
                .unwrap_or(false);
            edit_lines(current.as_deref(), old, new, replace_all)
        }
        "write_file" => write_lines(current.as_deref(), text("content")?),
        _ => return None,
    };
    Some(Diff {
        path: path.to_owned(),
        lines: capped(lines),
    })
}

/// The file's bytes, read confined to the root; `None` when it cannot be read.
fn read(root: &Path, path: &str) -> Option<Vec<u8>> {
    let dir = tackle_fs::Root::open(root).ok()?;
    let rel = dir.resolve(path).ok()?;
    dir.read_capped(&rel, MAX_READ).ok()
}

fn edit_lines(current: Option<&[u8]>, old: &str, new: &str, replace_all: bool) -> Vec<DiffLine> {
    let request = EditRequest {
        old,
        new,
        replace_all,
    };
    match current.map(|bytes| apply(bytes, request)) {
        Some(Ok(applied)) => parse_unified(&applied.diff),
        Some(Err(_)) => replacement("the edit does not apply to the file as it is", old, new),
        None => replacement("the file could not be read", old, new),
    }
}

fn replacement(why: &str, old: &str, new: &str) -> Vec<DiffLine> {
    let mut lines = vec![note(format!("({why}; the replacement it asks for:)"))];
    lines.extend(old.lines().map(|l| line(DiffKind::Removed, l)));
    lines.extend(new.lines().map(|l| line(DiffKind::Added, l)));
    lines
}

fn write_lines(current: Option<&[u8]>, content: &str) -> Vec<DiffLine> {
    let Some(bytes) = current else {
        let mut lines = vec![note("(a new file)".to_owned())];
        lines.extend(content.lines().map(|l| line(DiffKind::Added, l)));
        return lines;
    };
    let old = String::from_utf8_lossy(bytes);
    if old == content {
        return vec![note("(the content is unchanged)".to_owned())];
    }
    let diff = similar::TextDiff::from_lines(old.as_ref(), content);
    let unified = diff.unified_diff().context_radius(2).to_string();
    parse_unified(&unified)
}

/// Lines of a unified diff; the `---`/`+++` header before the first hunk is left out.
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

fn line(kind: DiffKind, text: &str) -> DiffLine {
    DiffLine {
        kind,
        text: safe_line(text),
    }
}

fn note(text: String) -> DiffLine {
    DiffLine {
        kind: DiffKind::Note,
        text,
    }
}

fn capped(mut lines: Vec<DiffLine>) -> Vec<DiffLine> {
    if lines.len() > MAX_LINES {
        let more = lines.len() - MAX_LINES;
        lines.truncate(MAX_LINES);
        lines.push(note(format!("… {more} more line(s)")));
    }
    lines
}

/// The diff as screen lines, each indented by `indent`.
pub fn render(diff: &Diff, indent: &str) -> Vec<Line<'static>> {
    let mut out = vec![Line::from(vec![
        Span::raw(indent.to_owned()),
        Span::styled(
            format!("diff {}", safe_line(&diff.path)),
            Style::default().add_modifier(Modifier::BOLD),
        ),
    ])];
    for l in &diff.lines {
        let (sign, style) = match l.kind {
            DiffKind::Added => ("+", Style::default().fg(Color::Green)),
            DiffKind::Removed => ("-", Style::default().fg(Color::Red)),
            DiffKind::Context => (" ", Style::default()),
            DiffKind::Hunk => ("", Style::default().fg(Color::Cyan)),
            DiffKind::Note => ("", Style::default().add_modifier(Modifier::DIM)),
        };
        out.push(Line::from(vec![
            Span::raw(indent.to_owned()),
            Span::styled(format!("{sign}{}", l.text), style),
        ]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn kinds(diff: &Diff) -> Vec<(DiffKind, &str)> {
        diff.lines
            .iter()
            .map(|l| (l.kind, l.text.as_str()))
            .collect()
    }

    #[test]
    fn an_edit_shows_the_tools_own_diff() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "one\ntwo\nthree\n").unwrap();
        let args = json!({"path": "a.txt", "old_string": "two", "new_string": "TWO"});
        let diff = for_call(dir.path(), "edit_file", &args).unwrap();
        let lines = kinds(&diff);
        assert!(lines.contains(&(DiffKind::Removed, "two")), "{lines:?}");
        assert!(lines.contains(&(DiffKind::Added, "TWO")), "{lines:?}");
        assert!(lines.contains(&(DiffKind::Context, "one")), "{lines:?}");
    }

    #[test]
    fn an_edit_that_does_not_apply_shows_the_replacement_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
        let args = json!({"path": "a.txt", "old_string": "zzz", "new_string": "y"});
        let diff = for_call(dir.path(), "edit_file", &args).unwrap();
        assert_eq!(diff.lines[0].kind, DiffKind::Note);
        assert!(diff.lines[0].text.contains("does not apply"));
        assert_eq!(diff.lines[1], line(DiffKind::Removed, "zzz"));
    }

    #[test]
    fn a_write_diffs_the_whole_file_and_a_new_file_is_all_added() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("b.txt"), "a\nb\nc\n").unwrap();
        let args = json!({"path": "b.txt", "content": "a\nB\nc\n"});
        let diff = for_call(dir.path(), "write_file", &args).unwrap();
        let lines = kinds(&diff);
        assert_eq!(lines[0].0, DiffKind::Hunk);
        assert!(lines.contains(&(DiffKind::Removed, "b")));
        assert!(lines.contains(&(DiffKind::Added, "B")));
        let new = json!({"path": "new.txt", "content": "x\n\u{1b}[2J"});
        let diff = for_call(dir.path(), "write_file", &new).unwrap();
        assert_eq!(
            kinds(&diff)[1..],
            [(DiffKind::Added, "x"), (DiffKind::Added, "\\x1b[2J")]
        );
    }

    #[test]
    fn a_path_outside_the_root_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let args = json!({"path": "../../etc/passwd", "old_string": "root", "new_string": "x"});
        let diff = for_call(dir.path(), "edit_file", &args).unwrap();
        assert!(diff.lines[0].text.contains("could not be read"));
    }

    #[test]
    fn other_tools_have_no_diff() {
        assert!(for_call(Path::new("/"), "bash", &json!({"command": "ls"})).is_none());
    }

    #[test]
    fn long_diffs_are_capped_with_a_count() {
        let content: String = (0..200).map(|i| format!("{i}\n")).collect();
        let dir = tempfile::tempdir().unwrap();
        let diff = for_call(
            dir.path(),
            "write_file",
            &json!({"path": "n", "content": content}),
        )
        .unwrap();
        assert_eq!(diff.lines.len(), MAX_LINES + 1);
        assert!(diff.lines[MAX_LINES].text.contains("more line(s)"));
    }

    #[test]
    fn rendered_lines_carry_signs_and_colours() {
        let diff = Diff {
            path: "a".into(),
            lines: vec![line(DiffKind::Added, "x"), line(DiffKind::Removed, "y")],
        };
        let lines = render(&diff, "  ");
        assert_eq!(lines[1].spans[1].content, "+x");
        assert_eq!(lines[1].spans[1].style.fg, Some(Color::Green));
        assert_eq!(lines[2].spans[1].content, "-y");
        assert_eq!(lines[2].spans[1].style.fg, Some(Color::Red));
    }
}
