//! A tool's compact description: one sentence, for catalogs sent to models with small context
//! windows (`[tools] descriptions = "compact"`). The schema stays the same; only the prose
//! around it shrinks.

use std::borrow::Cow;

/// The most characters a derived summary keeps when the first sentence runs on.
const MOST: usize = 200;

/// The first sentence of `description`: up to the first `.`, `!` or `?` followed by white
/// space or the end, cut at a word boundary near [`MOST`] characters when there is none.
pub fn first_sentence(description: &str) -> String {
    let text = description.trim();
    let mut end = None;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if matches!(c, '.' | '!' | '?') && chars.peek().is_none_or(|(_, next)| next.is_whitespace())
        {
            end = Some(at + c.len_utf8());
            break;
        }
        if c == '\n' && chars.peek().is_some_and(|(_, next)| *next == '\n') {
            end = Some(at);
            break;
        }
    }
    let sentence = &text[..end.unwrap_or(text.len())];
    if sentence.chars().count() <= MOST {
        return sentence.trim_end().to_owned();
    }
    let cut: String = sentence.chars().take(MOST).collect();
    let cut = cut.rsplit_once(' ').map_or(cut.as_str(), |(head, _)| head);
    format!("{}…", cut.trim_end())
}

/// [`first_sentence`] as the `Cow` a tool's `summary` returns.
pub(crate) fn derived(description: Cow<'static, str>) -> Cow<'static, str> {
    Cow::Owned(first_sentence(&description))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_sentences() {
        let cases: &[(&str, &str)] = &[
            (
                "Read a text file, a page at a time. Pass offset…",
                "Read a text file, a page at a time.",
            ),
            (
                "Metadata for a path: size, mtime (RFC 3339 UTC), mode.",
                "Metadata for a path: size, mtime (RFC 3339 UTC), mode.",
            ),
            // A dot inside a word or a version is not a sentence's end.
            (
                "Run `cargo fmt` on v1.2 files. Then stop.",
                "Run `cargo fmt` on v1.2 files.",
            ),
            ("No full stop at all", "No full stop at all"),
            ("Title\n\nBody text.", "Title"),
            ("  Padded.  ", "Padded."),
            ("", ""),
        ];
        for &(text, want) in cases {
            assert_eq!(first_sentence(text), want, "{text:?}");
        }
        let long = "word ".repeat(100);
        let cut = first_sentence(&long);
        assert!(
            cut.ends_with('…') && cut.chars().count() <= MOST + 1,
            "{cut}"
        );
    }
}
