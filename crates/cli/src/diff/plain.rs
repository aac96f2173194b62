//! A [`Diff`] as plain text for a terminal prompt: a `--- a/path` / `+++ b/path` header
//! (`/dev/null` for the side where the file is absent), the `@@` hunks, ` `/`-`/`+` lines and
//! the notes, each line indented. ANSI colour only when the terminal wants it
//! ([`wants_colour`]); the only escape sequences in the text are those colours, since every
//! line of the diff was made safe when it was computed.

use std::ffi::OsStr;
use std::fmt::Write as _;

use super::compute::{Change, Diff, DiffKind};

const RESET: &str = "\u{1b}[0m";
const BOLD: &str = "\u{1b}[1m";
const DIM: &str = "\u{1b}[2m";
const RED: &str = "\u{1b}[31m";
const GREEN: &str = "\u{1b}[32m";
const CYAN: &str = "\u{1b}[36m";

/// Whether a terminal with this environment wants colour: not when `NO_COLOR` is set to
/// anything non-empty (no-color.org), nor on a `dumb` terminal or one with no `TERM`.
pub fn wants_colour(no_color: Option<&OsStr>, term: Option<&OsStr>) -> bool {
    let no_color = no_color.is_some_and(|v| !v.is_empty());
    let dumb = term.is_none_or(|t| t.is_empty() || t == "dumb");
    !no_color && !dumb
}

/// The diff's lines, each starting with `indent` and ending with a newline.
pub fn render(diff: &Diff, indent: &str, colour: bool) -> String {
    let paint = |style: &str, text: &str| {
        if colour {
            format!("{style}{text}{RESET}")
        } else {
            text.to_owned()
        }
    };
    let (old, new) = match diff.change {
        Change::Modify => (format!("a/{}", diff.path), format!("b/{}", diff.path)),
        Change::Create => ("/dev/null".to_owned(), format!("b/{}", diff.path)),
        Change::Delete => (format!("a/{}", diff.path), "/dev/null".to_owned()),
    };
    let mut out = String::new();
    let _ = writeln!(out, "{indent}{}", paint(BOLD, &format!("--- {old}")));
    let _ = writeln!(out, "{indent}{}", paint(BOLD, &format!("+++ {new}")));
    for l in &diff.lines {
        let shown = match l.kind {
            DiffKind::Added => paint(GREEN, &format!("+{}", l.text)),
            DiffKind::Removed => paint(RED, &format!("-{}", l.text)),
            DiffKind::Context => format!(" {}", l.text),
            DiffKind::Hunk => paint(CYAN, &l.text),
            DiffKind::Note => paint(DIM, &l.text),
        };
        let _ = writeln!(out, "{indent}{shown}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::compute::parse_unified;

    fn diff(change: Change) -> Diff {
        Diff {
            path: "src/a.rs".into(),
            change,
            lines: parse_unified("@@ -1,2 +1,2 @@\n keep\n-old\n+new\n"),
        }
    }

    #[test]
    fn plain_text_is_a_unified_diff() {
        assert_eq!(
            render(&diff(Change::Modify), "  ", false),
            "  --- a/src/a.rs\n  +++ b/src/a.rs\n  @@ -1,2 +1,2 @@\n   keep\n  -old\n  +new\n"
        );
        assert!(
            render(&diff(Change::Create), "", false).starts_with("--- /dev/null\n+++ b/src/a.rs\n")
        );
        assert!(
            render(&diff(Change::Delete), "", false).starts_with("--- a/src/a.rs\n+++ /dev/null\n")
        );
    }

    #[test]
    fn colour_paints_whole_lines() {
        let shown = render(&diff(Change::Modify), "", true);
        assert!(shown.contains("\u{1b}[31m-old\u{1b}[0m\n"), "{shown:?}");
        assert!(shown.contains("\u{1b}[32m+new\u{1b}[0m\n"), "{shown:?}");
        assert!(shown.contains("\n keep\n"), "{shown:?}");
    }

    #[test]
    fn colour_follows_no_color_and_term() {
        let os = |s: &'static str| Some(OsStr::new(s));
        let table = [
            (None, os("xterm-256color"), true),
            (os(""), os("xterm"), true),
            (os("1"), os("xterm"), false),
            (None, os("dumb"), false),
            (None, None, false),
        ];
        for (no_color, term, want) in table {
            assert_eq!(wants_colour(no_color, term), want, "{no_color:?} {term:?}");
        }
    }
}
