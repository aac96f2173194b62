//! Markdown from the model drawn as terminal lines: headings, paragraphs, emphasis, inline
//! code, fenced and indented code blocks, ordered and unordered (nested) lists, block quotes,
//! rules and links. Parsed by pulldown-cmark; every piece of text goes through
//! [`crate::safe_text::safe_line`]. Streamed text is re-rendered whole as it grows: an unclosed
//! block renders as far as it goes.

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Parser, Tag, TagEnd};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

use crate::safe_text::safe_line;

/// `text` as lines.
pub fn render(text: &str) -> Vec<Line<'static>> {
    let mut r = Renderer::default();
    for event in Parser::new(text) {
        r.event(event);
    }
    r.flush();
    while r.out.last().is_some_and(|l| l.spans.is_empty()) {
        r.out.pop();
    }
    r.out
}

#[derive(Default)]
struct Renderer {
    out: Vec<Line<'static>>,
    spans: Vec<Span<'static>>,
    styles: Vec<Style>,
    /// One entry per open list: the next number of an ordered one.
    lists: Vec<Option<u64>>,
    /// The bullet of the item whose first line is being written.
    bullet: Option<String>,
    quote: usize,
    code: bool,
    link: Option<String>,
}

impl Renderer {
    fn style(&self) -> Style {
        self.styles
            .iter()
            .fold(Style::default(), |acc, s| acc.patch(*s))
    }

    fn push_style(&mut self, style: Style) {
        self.styles.push(style);
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) if self.code => {
                let body = text.strip_suffix('\n').unwrap_or(&text);
                for l in body.split('\n') {
                    let span = Span::styled(format!("  {}", safe_line(l)), code_style());
                    self.spans.push(span);
                    self.flush();
                }
            }
            Event::Text(text) => {
                let span = Span::styled(safe_line(&text), self.style());
                self.spans.push(span);
            }
            Event::Code(text) => self
                .spans
                .push(Span::styled(safe_line(&text), code_style())),
            Event::Html(text) | Event::InlineHtml(text) => {
                for (i, l) in text.trim_end_matches('\n').split('\n').enumerate() {
                    if i > 0 {
                        self.flush();
                    }
                    self.spans.push(Span::raw(safe_line(l)));
                }
            }
            Event::SoftBreak => self.spans.push(Span::raw(" ")),
            Event::HardBreak => self.flush(),
            Event::Rule => {
                self.flush();
                self.out.push(Line::styled(
                    "─".repeat(40),
                    Style::default().add_modifier(Modifier::DIM),
                ));
                self.blank();
            }
            _ => {}
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Heading { level, .. } => {
                self.flush();
                let marks = "#".repeat(heading_depth(level));
                self.push_style(heading_style(level));
                self.spans
                    .push(Span::styled(format!("{marks} "), heading_style(level)));
            }
            Tag::CodeBlock(kind) => {
                self.flush();
                if let CodeBlockKind::Fenced(lang) = kind
                    && !lang.is_empty()
                {
                    self.out.push(Line::styled(
                        format!("  {}", safe_line(&lang)),
                        Style::default().add_modifier(Modifier::DIM),
                    ));
                }
                self.code = true;
            }
            Tag::List(start) => {
                self.flush();
                self.lists.push(start);
            }
            Tag::Item => {
                self.flush();
                let depth = self.lists.len().saturating_sub(1);
                let mark = match self.lists.last_mut() {
                    Some(Some(n)) => {
                        let mark = format!("{n}. ");
                        *n += 1;
                        mark
                    }
                    _ => "• ".to_owned(),
                };
                self.bullet = Some(format!("{}{mark}", "  ".repeat(depth)));
            }
            Tag::Emphasis => self.push_style(Style::default().add_modifier(Modifier::ITALIC)),
            Tag::Strong => self.push_style(Style::default().add_modifier(Modifier::BOLD)),
            Tag::Strikethrough => {
                self.push_style(Style::default().add_modifier(Modifier::CROSSED_OUT));
            }
            Tag::BlockQuote(_) => {
                self.flush();
                self.quote += 1;
            }
            Tag::Link { dest_url, .. } => {
                self.push_style(Style::default().add_modifier(Modifier::UNDERLINED));
                self.link = Some(dest_url.to_string());
            }
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => {
                self.flush();
                if self.lists.is_empty() {
                    self.blank();
                }
            }
            TagEnd::Heading(_) => {
                self.styles.pop();
                self.flush();
                self.blank();
            }
            TagEnd::CodeBlock => {
                self.code = false;
                self.blank();
            }
            TagEnd::List(_) => {
                self.flush();
                self.lists.pop();
                if self.lists.is_empty() {
                    self.blank();
                }
            }
            TagEnd::Item => self.flush(),
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => {
                self.styles.pop();
            }
            TagEnd::BlockQuote(_) => {
                self.flush();
                self.quote = self.quote.saturating_sub(1);
            }
            TagEnd::Link => {
                self.styles.pop();
                if let Some(url) = self.link.take() {
                    self.spans.push(Span::styled(
                        format!(" ({})", safe_line(&url)),
                        Style::default().add_modifier(Modifier::DIM),
                    ));
                }
            }
            _ => {}
        }
    }

    /// Ends the line being written, if it holds anything.
    fn flush(&mut self) {
        if self.spans.is_empty() {
            return;
        }
        let mut spans = Vec::new();
        if self.quote > 0 {
            spans.push(Span::styled(
                "│ ".repeat(self.quote),
                Style::default().fg(Color::DarkGray),
            ));
        }
        if !self.lists.is_empty() {
            let indent = match self.bullet.take() {
                Some(bullet) => bullet,
                None => "  ".repeat(self.lists.len()),
            };
            spans.push(Span::raw(indent));
        }
        spans.append(&mut self.spans);
        self.out.push(Line::from(spans));
    }

    fn blank(&mut self) {
        if self.out.last().is_some_and(|l| !l.spans.is_empty()) {
            self.out.push(Line::default());
        }
    }
}

fn heading_depth(level: HeadingLevel) -> usize {
    match level {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

fn heading_style(level: HeadingLevel) -> Style {
    let colour = match level {
        HeadingLevel::H1 => Color::Magenta,
        HeadingLevel::H2 => Color::Cyan,
        _ => Color::Blue,
    };
    Style::default().fg(colour).add_modifier(Modifier::BOLD)
}

fn code_style() -> Style {
    Style::default().fg(Color::Yellow)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use ratatui::widgets::Paragraph;

    fn texts(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn headings_lists_and_code_blocks() {
        let md = "# Title\n\nSome *soft* and **strong** `code`.\n\n- one\n- two\n  1. inner\n\n```rust\nfn main() {}\n```\n";
        let lines = render(md);
        assert_eq!(
            texts(&lines),
            vec![
                "# Title",
                "",
                "Some soft and strong code.",
                "",
                "• one",
                "• two",
                "  1. inner",
                "",
                "  rust",
                "  fn main() {}",
            ]
        );
        assert!(
            lines[0].spans[0]
                .style
                .add_modifier
                .contains(Modifier::BOLD)
        );
        let para = &lines[2].spans;
        let soft = para.iter().find(|s| s.content == "soft").unwrap();
        assert!(soft.style.add_modifier.contains(Modifier::ITALIC));
        let strong = para.iter().find(|s| s.content == "strong").unwrap();
        assert!(strong.style.add_modifier.contains(Modifier::BOLD));
        let code = para.iter().find(|s| s.content == "code").unwrap();
        assert_eq!(code.style.fg, Some(Color::Yellow));
        assert_eq!(lines[9].spans[0].style.fg, Some(Color::Yellow));
    }

    #[test]
    fn quotes_rules_and_links() {
        let lines = render("> quoted\n\n---\n\nsee [docs](https://x.test)");
        let t = texts(&lines);
        assert_eq!(t[0], "│ quoted");
        assert!(t[2].starts_with("───"));
        assert_eq!(t[4], "see docs (https://x.test)");
    }

    #[test]
    fn escape_sequences_in_any_block_are_shown_escaped() {
        let lines = render("# a\u{1b}[2J\n\n```\nb\u{1b}]0;t\u{7}\n```\n\n`c\u{1b}`");
        let all = texts(&lines).join("\n");
        assert!(!all.contains('\u{1b}'), "{all}");
        assert!(all.contains("\\x1b[2J"));
    }

    #[test]
    fn an_unfinished_stream_renders_as_far_as_it_goes() {
        let lines = render("```py\nprint(1)");
        assert_eq!(texts(&lines), vec!["  py", "  print(1)"]);
    }

    #[test]
    fn drawn_into_a_buffer() {
        let backend = TestBackend::new(20, 3);
        let mut terminal = Terminal::new(backend).unwrap();
        terminal
            .draw(|f| f.render_widget(Paragraph::new(render("## Hi\n\n- a")), f.area()))
            .unwrap();
        let buffer = terminal.backend().buffer();
        let row = |y: u16| -> String { (0..20).map(|x| buffer[(x, y)].symbol()).collect() };
        assert_eq!(row(0).trim_end(), "## Hi");
        assert_eq!(row(2).trim_end(), "• a");
        assert_eq!(buffer[(0, 0)].fg, Color::Cyan);
    }
}
