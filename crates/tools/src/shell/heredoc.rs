//! Where bash ends a here-document, computed from the script's text, and checked against where
//! the parser ended it.
//!
//! A here-document's body is data, never keyed; the lines after its delimiter line are commands.
//! So a parser that ends a body on a different line than bash hides commands from the keys:
//! brush-parser removes every quote and backslash from a delimiter word (`<<"a'b"` ends at `ab`,
//! bash at `a'b`), does not join a backslash-newline inside an unquoted body before comparing
//! (`EO\` + `F` ends bash's body), and compares `<<-` lines before their tabs are stripped.
//!
//! The model, from bash's `read_secondary_line`: the delimiter is the word after quote removal
//! (`'…'` and `\x` literally, `"…"` with its four escapes, `$'…'` decoded); any quoting leaves the
//! body unexpanded; each body line is read whole, and with an unquoted delimiter a line ending in
//! an odd run of backslashes continues on the next one (the pair removed) before the comparison;
//! with `<<-` leading tabs are stripped from that logical line; the first line equal to the
//! delimiter ends the body; several here-documents opened on one line are read in order.
//!
//! Key decision: do not trust the parser's boundary. [`agrees`] recomputes bash's boundary for
//! every here-document the tokenizer found, starting where the tokenizer started its body, and a
//! disagreement, or a delimiter form the model does not read (`$"…"`, a newline in the word), is
//! a line that cannot be read exactly: the analyzer treats it as one that does not parse, which
//! is unresolved. Rejected: patching brush-parser's tokenizer, whose next release could
//! reintroduce a difference silently; the check finds any.

use brush_parser::Token;

use super::analyze::ansi_c;

/// The delimiter bash compares body lines with, and whether any of it was quoted (which leaves
/// the body unexpanded).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delimiter {
    pub text: String,
    pub quoted: bool,
}

/// Bash's delimiter for the here-document word `raw` as written; `None` for a form this model
/// does not read.
pub fn delimiter(raw: &str) -> Option<Delimiter> {
    let chars: Vec<char> = raw.chars().collect();
    let mut text = String::new();
    let mut quoted = false;
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '\\' => {
                quoted = true;
                match chars.get(i + 1) {
                    // A line continuation inside the word is removed by the lexer; the model
                    // does not follow it.
                    Some('\n') | None => return None,
                    Some(&c) => text.push(c),
                }
                i += 2;
            }
            '\'' => {
                quoted = true;
                let end = find(&chars, i + 1, '\'')?;
                text.extend(&chars[i + 1..end]);
                i = end + 1;
            }
            '"' => {
                quoted = true;
                i = double_quoted(&chars, i + 1, &mut text)?;
            }
            '$' if chars.get(i + 1) == Some(&'\'') => {
                quoted = true;
                // `$'…'` ends at the first `'` not escaped by a backslash.
                let mut j = i + 2;
                while j < chars.len() && chars[j] != '\'' {
                    j += if chars[j] == '\\' { 2 } else { 1 };
                }
                if j >= chars.len() {
                    return None;
                }
                let body: String = chars[i + 2..j].iter().collect();
                text.push_str(&ansi_c(&body));
                i = j + 1;
            }
            // `$"…"` would be translated: not modelled.
            '$' if chars.get(i + 1) == Some(&'"') => return None,
            c => {
                text.push(c);
                i += 1;
            }
        }
    }
    // A delimiter holding a newline can never equal one line.
    if text.contains('\n') {
        return None;
    }
    Some(Delimiter { text, quoted })
}

fn find(chars: &[char], from: usize, c: char) -> Option<usize> {
    chars[from..].iter().position(|&x| x == c).map(|p| from + p)
}

/// The inside of `"…"` from `from`: a backslash is removed only before `$`, `` ` ``, `"`, `\`.
/// Returns the index after the closing quote.
fn double_quoted(chars: &[char], from: usize, out: &mut String) -> Option<usize> {
    let mut i = from;
    while i < chars.len() {
        match chars[i] {
            '"' => return Some(i + 1),
            '\\' => match chars.get(i + 1) {
                Some(&c @ ('$' | '`' | '"' | '\\')) => {
                    out.push(c);
                    i += 2;
                }
                Some('\n') | None => return None,
                Some(_) => {
                    out.push('\\');
                    i += 1;
                }
            },
            // An expansion inside the delimiter word is not performed; the model does not
            // follow what bash keeps of it.
            '$' | '`' => return None,
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    None
}

/// Where bash's body that starts at character `start` of `chars` ends: the index just after the
/// delimiter line (its newline included), or `None` when no line ends it.
pub fn body_end(chars: &[char], start: usize, d: &Delimiter, strip_tabs: bool) -> Option<usize> {
    let mut i = start;
    while i < chars.len() {
        let mut line = String::new();
        let mut j = i;
        loop {
            let k = find(chars, j, '\n').unwrap_or(chars.len());
            let segment = &chars[j..k];
            let backslashes = segment.iter().rev().take_while(|&&c| c == '\\').count();
            if !d.quoted && k < chars.len() && backslashes % 2 == 1 {
                line.extend(&segment[..segment.len() - 1]);
                j = k + 1;
                continue;
            }
            line.extend(segment);
            j = (k + 1).min(chars.len());
            break;
        }
        let compared = if strip_tabs {
            line.trim_start_matches('\t')
        } else {
            line.as_str()
        };
        if compared == d.text {
            return Some(j);
        }
        i = j;
    }
    None
}

/// Whether every here-document the tokenizer found in `script` ends where bash ends it.
pub fn agrees(script: &str, tokens: &[Token]) -> bool {
    let chars: Vec<char> = script.chars().collect();
    for (k, t) in tokens.iter().enumerate() {
        let strip_tabs = match t {
            Token::Operator(op, _) if op == "<<" => false,
            Token::Operator(op, _) if op == "<<-" => true,
            _ => continue,
        };
        // `a[1<<2]=1` and `a[1 <<2]=1` are assignments whose subscript bash reads as
        // arithmetic up to the matching `]`; the tokenizer sees a word `a[1` and a
        // here-document. A `<<` after a word of the same command with a `[` still open (the
        // test command `[` aside) is not modelled.
        let open_bracket = tokens[..k]
            .iter()
            .rev()
            .map_while(|t| match t {
                Token::Word(w, _) => Some(w),
                Token::Operator(..) => None,
            })
            .any(|w| w != "[" && w != "[[" && w.matches('[').count() > w.matches(']').count());
        if open_bracket {
            return false;
        }
        // The tokenizer yields the operator, the delimiter word, the body and the end tag.
        let (Some(Token::Word(tag, _)), Some(Token::Word(_, body))) =
            (tokens.get(k + 1), tokens.get(k + 2))
        else {
            return false;
        };
        let Some(d) = delimiter(tag) else {
            return false;
        };
        let start = body.start.index;
        // A body starts on a line of its own.
        if start == 0 || chars.get(start - 1) != Some(&'\n') {
            return false;
        }
        if body_end(&chars, start, &d, strip_tabs) != Some(body.end.index) {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delimiters_as_bash_reads_them() {
        // Each checked against bash 5.2 (`cat <<W` ended by which line).
        for (raw, text, quoted) in [
            ("EOF", "EOF", false),
            ("\"a'b\"", "a'b", true),
            ("'a\\b'", "a\\b", true),
            ("$'EOF'", "EOF", true),
            ("$'E\\x4fF'", "EOF", true),
            ("E\"O\"F", "EOF", true),
            ("\\EOF", "EOF", true),
            ("\"E\\$F\"", "E$F", true),
            ("\"E\\qF\"", "E\\qF", true),
            ("'E''O'F", "EOF", true),
            ("E\\$F", "E$F", true),
            ("$EOF", "$EOF", false),
            ("''", "", true),
        ] {
            assert_eq!(
                delimiter(raw),
                Some(Delimiter {
                    text: text.to_owned(),
                    quoted
                }),
                "{raw}"
            );
        }
        for raw in ["$\"EOF\"", "'a\nb'", "E\\\nOF", "\"$x\"", "'open"] {
            assert_eq!(delimiter(raw), None, "{raw}");
        }
    }

    /// The forms scripts use every day stay readable: the check refuses only disagreements.
    #[test]
    fn common_forms_parse() {
        for script in [
            "cat <<EOF\nx\nEOF\n",
            "cat <<'EOF'\n$x\nEOF\n",
            "cat <<\"EOF\"\n$x\nEOF\n",
            "cat <<\\EOF\nx\nEOF\n",
            "cat <<-EOF\n\tx\n\tEOF\n",
            "cat <<-'EOF'\n\tx\n\tEOF\n",
            "cat << EOF\nx\nEOF",
            "cat <<EOF > f\nx\nEOF\necho after\n",
            "cat <<A <<B\na\nA\nb\nB\n",
            "cat <<A; cat <<B\na\nA\nb\nB\n",
            "if true; then\n  cat <<EOF\nx\nEOF\nfi\n",
            "x=$(cat <<EOF\nx\nEOF\n)\n",
            "cat <<EOF\nx \\\n y\nEOF\n",
            "cat <<''\nx\n\n",
        ] {
            assert!(
                crate::shell::analyze::parse_checked(script).is_ok(),
                "{script:?} no longer parses"
            );
        }
    }

    #[test]
    fn bodies_end_where_bash_ends_them() {
        // (body text, delimiter word, <<-, the line bash ends on, 0-based; None: none does).
        for (body, raw, strip, want) in [
            ("EOF\n", "EOF", false, Some(0)),
            ("EO\\\nF\nx\nEOF\n", "EOF", false, Some(1)),
            ("EO\\\nF\nx\nEOF\n", "'EOF'", false, Some(3)),
            ("x\\\\\nEOF\n", "EOF", false, Some(1)),
            ("x\\\nEOF\nEOF\n", "EOF", false, Some(2)),
            ("\tEO\\\n\tF\nEOF\n", "EOF", true, Some(2)),
            ("\tEO\\\nF\nEOF\n", "EOF", true, Some(1)),
            ("\t\tEOF\n", "EOF", true, Some(0)),
            ("\t\tEOF\nEOF\n", "EOF", false, Some(1)),
            (" \tEOF\nEOF\n", "EOF", true, Some(1)),
            ("EOF \nEOF", "EOF", false, Some(1)),
            ("\\\nEOF\n", "EOF", false, Some(1)),
            ("x\n", "EOF", false, None),
        ] {
            let chars: Vec<char> = body.chars().collect();
            let d = delimiter(raw).unwrap();
            let expected = want.map(|n: usize| {
                body.split_inclusive('\n')
                    .take(n + 1)
                    .map(|l| l.chars().count())
                    .sum::<usize>()
            });
            let got = body_end(&chars, 0, &d, strip);
            assert_eq!(
                got,
                expected,
                "{body:?} <<{}{raw}",
                if strip { "-" } else { "" }
            );
        }
    }
}
