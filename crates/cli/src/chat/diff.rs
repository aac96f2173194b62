//! A computed [`Diff`] drawn as coloured screen lines, for the transcript and the approval
//! widget. What the lines are (and that they are safe to draw) is `crate::diff`'s.

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

pub use crate::diff::Diff;
use crate::diff::DiffKind;

/// The diff as screen lines, each indented by `indent`.
pub fn render(diff: &Diff, indent: &str) -> Vec<Line<'static>> {
    let mut out = vec![Line::from(vec![
        Span::raw(indent.to_owned()),
        Span::styled(
            format!("diff {}", diff.path),
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
    use crate::diff::compute::Change;
    use crate::diff::compute::parse_unified;

    #[test]
    fn rendered_lines_carry_signs_and_colours() {
        let diff = Diff {
            path: "a".into(),
            change: Change::Modify,
            lines: parse_unified("@@ -1 +1 @@\n+x\n-y\n"),
        };
        let lines = render(&diff, "  ");
        assert_eq!(lines[0].to_string(), "  diff a");
        assert_eq!(lines[2].spans[1].content, "+x");
        assert_eq!(lines[2].spans[1].style.fg, Some(Color::Green));
        assert_eq!(lines[3].spans[1].content, "-y");
        assert_eq!(lines[3].spans[1].style.fg, Some(Color::Red));
    }
}
