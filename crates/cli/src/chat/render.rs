//! Drawing: the transcript (scrolled to the bottom unless the reader scrolled up), the
//! approval on screen, the input line and the status line.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Position, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};
use tackle_protocol::CallStatus;

use super::app::App;
use super::diff;
use super::view::{Entry, NoticeKind, ToolEntry, ToolState};
use crate::safe_text::safe_lines;

pub fn draw(frame: &mut Frame<'_>, app: &App) {
    let area = frame.area();
    let approval = app.approval.as_ref().map(|p| {
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(Style::default().fg(Color::Yellow))
            .title(" approval ");
        Paragraph::new(p.lines())
            .wrap(Wrap { trim: false })
            .block(block)
    });
    // The widget's wrapped height (its borders included), at most half the screen.
    let approval_height = approval.as_ref().map_or(0, |p| {
        (p.line_count(area.width.saturating_sub(2)) as u16).min(area.height / 2)
    });
    let [transcript, asking, input, status] = Layout::vertical([
        Constraint::Min(1),
        Constraint::Length(approval_height),
        Constraint::Length(3),
        Constraint::Length(1),
    ])
    .areas(area);
    draw_transcript(frame, app, transcript);
    if let Some(approval) = approval {
        frame.render_widget(approval, asking);
    }
    draw_input(frame, app, input);
    frame.render_widget(
        Paragraph::new(Line::styled(
            app.status(),
            Style::default().add_modifier(Modifier::REVERSED),
        )),
        status,
    );
}

fn draw_transcript(frame: &mut Frame<'_>, app: &App, area: Rect) {
    let lines = transcript_lines(app);
    let paragraph = Paragraph::new(lines).wrap(Wrap { trim: false });
    let total = paragraph.line_count(area.width) as u16;
    let bottom = total.saturating_sub(area.height);
    let top = bottom.saturating_sub(app.scroll);
    frame.render_widget(paragraph.scroll((top, 0)), area);
}

fn draw_input(frame: &mut Frame<'_>, app: &App, area: Rect) {
    let title = if app.running.is_some() {
        " steer (queued to the next safe point) "
    } else {
        " message (/help for commands) "
    };
    let block = Block::default().borders(Borders::ALL).title(title);
    frame.render_widget(Paragraph::new(app.input.text.clone()).block(block), area);
    if app.approval.is_none() {
        let x = area.x + 1 + app.input.cursor as u16;
        frame.set_cursor_position(Position::new(
            x.min(area.right().saturating_sub(2)),
            area.y + 1,
        ));
    }
}

/// Every entry's lines, a blank line between entries.
pub fn transcript_lines(app: &App) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    for entry in &app.view.entries {
        if !out.is_empty() {
            out.push(Line::default());
        }
        match entry {
            Entry::User { text, queued } => {
                for (i, l) in safe_lines(text).into_iter().enumerate() {
                    let mark = if i == 0 { "› " } else { "  " };
                    out.push(Line::from(vec![
                        Span::styled(mark, Style::default().fg(Color::Green)),
                        Span::styled(l, Style::default().add_modifier(Modifier::BOLD)),
                    ]));
                }
                if *queued {
                    out.push(Line::styled(
                        "  (queued: joins the conversation at the next safe point)",
                        Style::default().add_modifier(Modifier::DIM),
                    ));
                }
            }
            Entry::Assistant(a) => out.extend(a.lines.iter().cloned()),
            Entry::Tool(t) => tool_lines(t, &mut out),
            Entry::Notice(n) => {
                let style = match n.kind {
                    NoticeKind::Info => Style::default().add_modifier(Modifier::DIM),
                    NoticeKind::Warning => Style::default().fg(Color::Yellow),
                    NoticeKind::Error => Style::default().fg(Color::Red),
                };
                for l in safe_lines(&n.text) {
                    out.push(Line::styled(format!("· {l}"), style));
                }
            }
        }
    }
    out
}

fn tool_lines(t: &ToolEntry, out: &mut Vec<Line<'static>>) {
    let (state, style) = match &t.state {
        ToolState::Running => ("running…".to_owned(), Style::default().fg(Color::Cyan)),
        ToolState::Finished { status, code, took } => {
            let word = match status {
                CallStatus::Ok => "ok",
                CallStatus::Error => "error",
                CallStatus::Denied => "denied",
                CallStatus::TimedOut => "timed out",
                CallStatus::Cancelled => "cancelled",
            };
            let colour = match status {
                CallStatus::Ok => Color::Green,
                CallStatus::Cancelled | CallStatus::TimedOut => Color::Yellow,
                CallStatus::Error | CallStatus::Denied => Color::Red,
            };
            let code = code.as_ref().map(|c| format!(" {c}")).unwrap_or_default();
            (
                format!("{word}{code} in {:.1}s", took.as_secs_f64()),
                Style::default().fg(colour),
            )
        }
    };
    out.push(Line::from(vec![
        Span::styled("⏺ ", style),
        Span::styled(
            t.tool.clone(),
            Style::default().add_modifier(Modifier::BOLD),
        ),
        Span::raw(format!(" {}  ", t.summary)),
        Span::styled(state, style),
    ]));
    if let Some(d) = &t.diff {
        out.extend(diff::render(d, "    "));
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use tackle_agent::AgentEvent;
    use tackle_protocol::CallId;

    fn screen(app: &App, width: u16, height: u16) -> Vec<String> {
        let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
        terminal.draw(|f| draw(f, app)).unwrap();
        let buffer = terminal.backend().buffer().clone();
        (0..height)
            .map(|y| {
                (0..width)
                    .map(|x| buffer[(x, y)].symbol())
                    .collect::<String>()
            })
            .collect()
    }

    #[test]
    fn a_turn_with_a_call_and_its_diff_on_screen() {
        let mut app = App::new(
            "replay:t".into(),
            1000,
            "posture: mode standard",
            "s".into(),
        );
        let t0 = Instant::now();
        app.view.user("fix it", false);
        app.view.apply(
            &AgentEvent::TextDelta {
                turn: 1,
                text: "**Fixing.**".into(),
            },
            None,
            t0,
        );
        let diff = diff::Diff {
            path: "a.txt".into(),
            change: crate::diff::compute::Change::Modify,
            lines: crate::diff::compute::parse_unified("@@ -1 +1 @@\n-old\n+new\n"),
        };
        app.view.apply(
            &AgentEvent::ToolCallStarted {
                call_id: CallId("c".into()),
                tool: "edit_file".into(),
                arguments: serde_json::json!({"path": "a.txt"}),
            },
            Some(diff),
            t0,
        );
        app.view.apply(
            &AgentEvent::ToolCallFinished {
                call_id: CallId("c".into()),
                tool: "edit_file".into(),
                status: CallStatus::Ok,
                code: None,
                display: None,
            },
            None,
            t0 + Duration::from_millis(200),
        );
        let rows = screen(&app, 60, 16);
        let text = rows.join("\n");
        assert!(rows[0].starts_with("› fix it"), "{text}");
        assert!(rows[2].starts_with("Fixing."), "{text}");
        assert!(
            rows[4].starts_with("⏺ edit_file a.txt  ok in 0.2s"),
            "{text}"
        );
        assert!(rows[5].starts_with("    diff a.txt"), "{text}");
        assert!(
            rows[7].starts_with("    -old") && rows[8].starts_with("    +new"),
            "{text}"
        );
        assert!(
            rows[15].starts_with("replay:t · mode standard · context 0/1.0k (0%) · ready"),
            "{text}"
        );
    }

    #[test]
    fn the_transcript_keeps_its_bottom_in_view() {
        let mut app = App::new("m".into(), 1, "", "s".into());
        for i in 0..30 {
            app.view.user(&format!("line {i}"), false);
        }
        let rows = screen(&app, 30, 10);
        assert!(rows[5].starts_with("› line 29"), "{rows:?}");
        app.scroll = 2;
        let rows = screen(&app, 30, 10);
        assert!(rows[5].starts_with("› line 28"), "{rows:?}");
    }
}
