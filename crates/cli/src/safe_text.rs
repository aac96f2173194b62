//! Text from a model, a tool or a file made safe to draw, for both terminal front ends (chat's
//! screen and the terminal approver): one screen line per line of the text, each through
//! [`tackle_runtime::visible`], so no escape sequence, carriage return or bidirectional
//! override reaches the terminal and redraws it.

/// The lines of `text`, each safe to show. A line's final `\r` (a CRLF ending) is dropped;
/// tabs become four spaces.
pub fn safe_lines(text: &str) -> Vec<String> {
    text.split('\n').map(safe_line).collect()
}

/// One line, safe to show (a newline in it is shown escaped).
pub fn safe_line(line: &str) -> String {
    let line = line.strip_suffix('\r').unwrap_or(line);
    let expanded = line.replace('\t', "    ");
    tackle_runtime::visible::visible(&expanded).into_owned()
}

/// `text` on one line, cut to `max` characters with an ellipsis.
pub fn one_line(text: &str, max: usize) -> String {
    cut(safe_line(text), max)
}

/// Already safe text cut to `max` characters with an ellipsis. (Safe text is not made safe
/// again: [`safe_line`] would double the backslash of every escape it wrote.)
pub fn cut(safe: String, max: usize) -> String {
    if safe.chars().count() <= max {
        return safe;
    }
    let mut cut: String = safe.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_cannot_reach_the_terminal() {
        let lines = safe_lines("ok\n\u{1b}[2Jgone\r\nx\ty");
        assert_eq!(lines, vec!["ok", "\\x1b[2Jgone", "x    y"]);
    }

    #[test]
    fn one_line_cuts_and_escapes_newlines() {
        assert_eq!(one_line("abcdef", 4), "abc…");
        assert_eq!(one_line("a\nb", 10), "a\\nb");
        assert_eq!(cut(safe_line("\u{1b}[2J"), 5), "\\x1b…");
    }
}
