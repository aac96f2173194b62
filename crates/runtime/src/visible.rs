//! Model-supplied text made safe to show a person: what is on the screen is what is there.
//!
//! An approval prompt prints paths, commands and arguments the model chose. Left raw, an escape
//! sequence redraws the terminal (`"x\u{1b}[1A\u{1b}[2K\r  call: write_file {}"` rewrites the
//! line above with a harmless-looking call), a carriage return overprints, a bidirectional
//! override reorders what is read, and a zero-width character makes two different keys look
//! alike. Every such character is replaced by a visible escape (`\x1b`, `\r`, `\u{202e}`);
//! printable text, including non-ASCII letters, is left as it is, and a backslash is shown
//! doubled only when it would be read as the start of such an escape.
//!
//! Key decision: escape, never strip. A stripped character would make the shown text differ from
//! the real one in a way nobody can see; an escaped one shows exactly where something is odd.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Whether `c` must not reach a terminal or a form raw: C0 and C1 controls, DEL, bidirectional
/// embeddings, overrides, isolates and marks, zero-width characters, the byte-order mark,
/// variation selectors, the invisible tag characters (U+E0000–E007F, which spell ASCII no one
/// sees), and the line and paragraph separators. A newline is one of them: a shown value stays on one line.
pub fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}'
                | '\u{200b}'..='\u{200f}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{2069}'
                | '\u{fe00}'..='\u{fe0f}'
                | '\u{feff}'
                | '\u{e0000}'..='\u{e007f}'
                | '\u{e0100}'..='\u{e01ef}'
        )
}

/// `text` with every [`is_hidden`] character replaced by a visible escape.
pub fn visible(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| is_hidden(c) || c == '\\') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            // A literal `\x1b` typed by the model must not look like an escaped ESC.
            '\\' if matches!(chars.peek(), Some('x' | 'u' | 'n' | 'r' | 't' | '\\')) => {
                out.push_str("\\\\")
            }
            c if is_hidden(c) && (c as u32) < 0x100 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if is_hidden(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Compact JSON of `value` with every [`is_hidden`] character written as a `\uXXXX` escape:
/// still valid JSON meaning the same value, and nothing in it acts on a terminal. (serde_json
/// escapes C0 controls itself, but not DEL, C1 controls or bidirectional overrides.)
pub fn visible_json(value: &serde_json::Value) -> String {
    let text = serde_json::to_string(value).unwrap_or_else(|_| "?".to_owned());
    if !text.chars().any(is_hidden) {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_hidden(c) {
            // JSON escapes are UTF-16 units: one for the Basic Multilingual Plane, a surrogate
            // pair for the tag characters above it.
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                let _ = write!(out, "\\u{:04x}", unit);
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One case a row: what the model sent → what a person is shown.
    #[test]
    fn hidden_characters_are_shown_as_escapes() {
        let cases: &[(&str, &str)] = &[
            ("src/main.rs", "src/main.rs"),
            ("données/été.txt", "données/été.txt"),
            ("漢字/ファイル", "漢字/ファイル"),
            (
                "x\u{1b}[1A\u{1b}[2K\r  call: write_file {}",
                "x\\x1b[1A\\x1b[2K\\r  call: write_file {}",
            ),
            ("a\nb", "a\\nb"),
            ("tab\there", "tab\\there"),
            ("bell\u{7}", "bell\\x07"),
            ("del\u{7f}", "del\\x7f"),
            ("csi\u{9b}31m", "csi\\x9b31m"),
            ("evil\u{202e}txt.exe", "evil\\u{202e}txt.exe"),
            ("iso\u{2066}late\u{2069}", "iso\\u{2066}late\\u{2069}"),
            ("zero\u{200b}width", "zero\\u{200b}width"),
            ("bom\u{feff}", "bom\\u{feff}"),
            ("line\u{2028}sep", "line\\u{2028}sep"),
            ("arabic\u{61c}mark", "arabic\\u{61c}mark"),
            ("tag\u{e0041}\u{e0042}", "tag\\u{e0041}\\u{e0042}"),
            ("vs\u{fe0f}", "vs\\u{fe0f}"),
            // A backslash that would read as an escape is doubled; others stay.
            ("C:\\dir", "C:\\dir"),
            ("typed\\x1b", "typed\\\\x1b"),
            ("typed\\\\", "typed\\\\\\"),
        ];
        for (given, shown) in cases {
            assert_eq!(visible(given), *shown, "{given:?}");
        }
    }

    #[test]
    fn nothing_hidden_survives_any_character() {
        // Every scalar value below U+3000 and the supplementary ranges that hide text, alone
        // and between letters.
        for u in (0..0x3000u32).chain(0xfe00..0xff00).chain(0xe0000..0xe0200) {
            let Some(c) = char::from_u32(u) else { continue };
            let shown = visible(&format!("a{c}b")).into_owned();
            assert!(!shown.chars().any(is_hidden), "U+{u:04X} → {shown:?}");
        }
    }

    #[test]
    fn json_stays_json_and_shows_nothing_hidden() {
        let value = serde_json::json!({
            "path": "x\u{1b}[1A\u{9b}2K\u{202e}gpj.exe\u{7f}\u{e0041}",
            "n": 3,
        });
        let shown = visible_json(&value);
        assert!(!shown.chars().any(is_hidden), "{shown}");
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&shown).unwrap(),
            value
        );
        assert!(shown.contains("\\u202e"), "{shown}");
    }

    #[test]
    fn plain_text_is_not_copied() {
        assert!(matches!(visible("plain/path.rs"), Cow::Borrowed(_)));
    }
}
