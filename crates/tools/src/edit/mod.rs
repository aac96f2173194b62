//! The text edit behind `edit_file`: exact matching, line-ending and trailing-newline
//! preservation, the refusal that helps the model retry, and the diff it sees on success.
//!
//! Key decision: an edit that does not match exactly once is refused, never guessed (DESIGN
//! decision table). The refusal carries what the model needs to get it right next time: the
//! match count and lines, or the nearest passage and whether only whitespace differs. The
//! alternative, applying a fuzzy match, silently edits the wrong place.

mod diff;
mod nearest;

use memchr::memmem;

pub use nearest::Nearest;

/// What to replace with what.
#[derive(Clone, Copy, Debug)]
pub struct EditRequest<'a> {
    pub old: &'a str,
    pub new: &'a str,
    pub replace_all: bool,
}

/// A successful edit: the new bytes and what changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Applied {
    pub bytes: Vec<u8>,
    pub replacements: usize,
    /// 1-based line of each replacement in the original file.
    pub lines: Vec<u64>,
    /// A short unified diff of the change (at most a few hunks, long lines cut).
    pub diff: String,
    pub crlf: bool,
}

/// Why an edit was refused. Nothing was changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    EmptyOld,
    NoChange,
    Binary,
    NoMatch { nearest: Option<Nearest> },
    Multiple { count: usize, lines: Vec<u64> },
}

/// The most lines of a refusal's match list.
pub const MAX_LISTED_LINES: usize = 20;

/// Applies `req` to `content`.
///
/// A file whose every line ends in `\r\n` is CRLF: a `\n` in `old`/`new` matches and writes
/// `\r\n` there. When the replaced text reaches the end of the file, the file keeps its
/// trailing-newline state (present or absent) whatever `new` ends with.
pub fn apply(content: &[u8], req: EditRequest<'_>) -> Result<Applied, Refusal> {
    if req.old.is_empty() {
        return Err(Refusal::EmptyOld);
    }
    if memchr::memchr(0, &content[..content.len().min(8192)]).is_some() {
        return Err(Refusal::Binary);
    }
    let crlf = is_crlf(content);
    let (old, new) = if crlf {
        (to_crlf(req.old), to_crlf(req.new))
    } else {
        (req.old.as_bytes().to_vec(), req.new.as_bytes().to_vec())
    };
    if old == new {
        return Err(Refusal::NoChange);
    }
    let starts: Vec<usize> = memmem::find_iter(content, &old).collect();
    if starts.is_empty() {
        return Err(Refusal::NoMatch {
            nearest: nearest::find(content, req.old),
        });
    }
    let lines = line_numbers(content, &starts);
    if starts.len() > 1 && !req.replace_all {
        return Err(Refusal::Multiple {
            count: starts.len(),
            lines: lines.into_iter().take(MAX_LISTED_LINES).collect(),
        });
    }
    let mut bytes =
        Vec::with_capacity(content.len() + starts.len() * new.len().saturating_sub(old.len()) + 2);
    let mut at = 0;
    for &s in &starts {
        bytes.extend_from_slice(&content[at..s]);
        bytes.extend_from_slice(&new);
        at = s + old.len();
    }
    bytes.extend_from_slice(&content[at..]);
    // `at` is the end of the last match: did the edit touch the end of the file?
    if at == content.len() {
        let eol: &[u8] = if crlf { b"\r\n" } else { b"\n" };
        let had_newline = content.ends_with(b"\n");
        if had_newline && !bytes.is_empty() && !bytes.ends_with(b"\n") {
            bytes.extend_from_slice(eol);
        } else if !had_newline && bytes.ends_with(eol) {
            bytes.truncate(bytes.len() - eol.len());
        }
    }
    let diff = diff::render(content, &bytes, &starts, old.len(), new.len(), &lines);
    Ok(Applied {
        bytes,
        replacements: starts.len(),
        lines,
        diff,
        crlf,
    })
}

/// Every line ends in `\r\n` (and there is at least one line break).
fn is_crlf(content: &[u8]) -> bool {
    let lf = bytecount::count(content, b'\n');
    lf > 0 && memmem::find_iter(content, b"\r\n").count() == lf
}

/// `text` with every line break as `\r\n`, whichever it used.
fn to_crlf(text: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() + text.len() / 16);
    let bytes = text.as_bytes();
    let mut at = 0;
    for i in memchr::memchr_iter(b'\n', bytes) {
        let end = if i > 0 && bytes[i - 1] == b'\r' {
            i - 1
        } else {
            i
        };
        out.extend_from_slice(&bytes[at..end]);
        out.extend_from_slice(b"\r\n");
        at = i + 1;
    }
    out.extend_from_slice(&bytes[at..]);
    out
}

/// 1-based line number of each (ascending) offset.
fn line_numbers(content: &[u8], starts: &[usize]) -> Vec<u64> {
    let mut line = 1u64;
    let mut at = 0;
    starts
        .iter()
        .map(|&s| {
            line += bytecount::count(&content[at..s], b'\n') as u64;
            at = s;
            line
        })
        .collect()
}

/// `s` cut to at most `max` bytes on a character boundary, with a marker when cut.
pub(crate) fn cut_line(s: &str, max: usize) -> Cow<'_, str> {
    if s.len() <= max {
        return Cow::Borrowed(s);
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(format!("{}… [line cut]", &s[..end]))
}

use std::borrow::Cow;

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)] // a failed test should panic loudly
mod tests {
    use super::*;

    fn edit(content: &str, old: &str, new: &str, all: bool) -> Result<String, Refusal> {
        apply(
            content.as_bytes(),
            EditRequest {
                old,
                new,
                replace_all: all,
            },
        )
        .map(|a| String::from_utf8(a.bytes).unwrap())
    }

    #[test]
    fn unique_match_is_replaced() {
        assert_eq!(edit("a\nb\nc\n", "b", "B", false).unwrap(), "a\nB\nc\n");
    }

    #[test]
    fn multiple_matches_are_refused_with_lines() {
        let r = edit("x\nfoo\ny\nfoo\nfoo\n", "foo", "bar", false).unwrap_err();
        assert_eq!(
            r,
            Refusal::Multiple {
                count: 3,
                lines: vec![2, 4, 5]
            }
        );
    }

    #[test]
    fn replace_all_replaces_every_match() {
        assert_eq!(
            edit("foo foo\nfoo\n", "foo", "bar", true).unwrap(),
            "bar bar\nbar\n"
        );
    }

    #[test]
    fn no_match_shows_nearest_passage() {
        let file = "fn alpha() {\n    one();\n}\n\nfn beta() {\n    two();\n}\n";
        let Refusal::NoMatch { nearest: Some(n) } =
            edit(file, "fn beta() {\n    three();\n}", "x", false).unwrap_err()
        else {
            panic!("expected a nearest passage")
        };
        assert_eq!(n.line, 5);
        assert!(!n.whitespace_only);
        assert!(n.passage.contains("two();"), "{}", n.passage);
    }

    #[test]
    fn whitespace_only_difference_is_named_and_not_applied() {
        let file = "fn main() {\n\tlet x = 1;\n}\n";
        let Refusal::NoMatch { nearest: Some(n) } =
            edit(file, "fn main() {\n    let x  = 1;\n}", "y", false).unwrap_err()
        else {
            panic!("expected a nearest passage")
        };
        assert_eq!(n.line, 1);
        assert!(n.whitespace_only);
    }

    #[test]
    fn line_ending_only_difference_is_whitespace_only() {
        // A mixed file is not CRLF, so matching is exact and the \r makes the difference.
        let file = "a\r\nb\r\nc\n";
        let Refusal::NoMatch { nearest: Some(n) } = edit(file, "a\nb\n", "z", false).unwrap_err()
        else {
            panic!("expected a nearest passage")
        };
        assert_eq!(n.line, 1);
        assert!(n.whitespace_only);
    }

    #[test]
    fn crlf_file_stays_crlf() {
        let out = edit("one\r\ntwo\r\nthree\r\n", "one\ntwo\n", "uno\ndos\n", false).unwrap();
        assert_eq!(out, "uno\r\ndos\r\nthree\r\n");
        // The model may also send \r\n itself.
        let out = edit("one\r\ntwo\r\n", "two\r\n", "2\r\nextra\n", false).unwrap();
        assert_eq!(out, "one\r\n2\r\nextra\r\n");
    }

    #[test]
    fn trailing_newline_state_is_preserved() {
        // No trailing newline stays absent.
        assert_eq!(edit("a\nb", "b", "c\n", false).unwrap(), "a\nc");
        // A trailing newline stays present.
        assert_eq!(edit("a\nb\n", "b\n", "c", false).unwrap(), "a\nc\n");
        // Not at the end: untouched.
        assert_eq!(edit("a\nb", "a\n", "z", false).unwrap(), "zb");
    }

    #[test]
    fn refusals_without_a_match() {
        assert_eq!(edit("a", "", "b", false).unwrap_err(), Refusal::EmptyOld);
        assert_eq!(edit("a", "a", "a", false).unwrap_err(), Refusal::NoChange);
        assert_eq!(
            apply(
                b"\0binary",
                EditRequest {
                    old: "b",
                    new: "c",
                    replace_all: false
                }
            )
            .unwrap_err(),
            Refusal::Binary
        );
    }

    #[test]
    fn diff_shows_the_change_with_line_numbers() {
        let file = "1\n2\n3\n4\n5\n6\n7\n";
        let a = apply(
            file.as_bytes(),
            EditRequest {
                old: "4\n",
                new: "four\nFOUR\n",
                replace_all: false,
            },
        )
        .unwrap();
        assert_eq!(
            a.diff,
            "@@ -2,5 +2,6 @@\n 2\n 3\n-4\n+four\n+FOUR\n 5\n 6\n"
        );
    }
}
