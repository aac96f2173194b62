//! The input line and what a key press means.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

/// What a key asks of the chat.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    None,
    /// Enter on a non-empty line: the line, taken out of the input.
    Submit(String),
    /// Ctrl-C.
    Interrupt,
    /// Ctrl-D on an empty line.
    Quit,
    ScrollUp,
    ScrollDown,
}

/// A line being typed, with a cursor counted in characters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InputLine {
    pub text: String,
    pub cursor: usize,
}

impl InputLine {
    fn byte(&self, chars: usize) -> usize {
        self.text
            .char_indices()
            .nth(chars)
            .map_or(self.text.len(), |(i, _)| i)
    }

    pub fn insert(&mut self, c: char) {
        let at = self.byte(self.cursor);
        self.text.insert(at, c);
        self.cursor += 1;
    }

    fn backspace(&mut self) {
        if self.cursor == 0 {
            return;
        }
        self.cursor -= 1;
        let at = self.byte(self.cursor);
        self.text.remove(at);
    }

    fn delete(&mut self) {
        if self.cursor < self.text.chars().count() {
            let at = self.byte(self.cursor);
            self.text.remove(at);
        }
    }

    pub fn take(&mut self) -> String {
        self.cursor = 0;
        std::mem::take(&mut self.text)
    }

    /// Applies an editing key; `Action` for the keys that are more than editing.
    pub fn key(&mut self, key: KeyEvent) -> Action {
        if key.kind == KeyEventKind::Release {
            return Action::None;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Char('c') if ctrl => return Action::Interrupt,
            KeyCode::Char('d') if ctrl && self.text.is_empty() => return Action::Quit,
            KeyCode::Char('u') if ctrl => {
                self.take();
            }
            KeyCode::Char('a') if ctrl => self.cursor = 0,
            KeyCode::Char('e') if ctrl => self.cursor = self.text.chars().count(),
            KeyCode::Char(c) if !ctrl => self.insert(c),
            KeyCode::Backspace => self.backspace(),
            KeyCode::Delete => self.delete(),
            KeyCode::Left => self.cursor = self.cursor.saturating_sub(1),
            KeyCode::Right => self.cursor = (self.cursor + 1).min(self.text.chars().count()),
            KeyCode::Home => self.cursor = 0,
            KeyCode::End => self.cursor = self.text.chars().count(),
            KeyCode::PageUp => return Action::ScrollUp,
            KeyCode::PageDown => return Action::ScrollDown,
            KeyCode::Enter if !self.text.trim().is_empty() => return Action::Submit(self.take()),
            _ => {}
        }
        Action::None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn press(line: &mut InputLine, code: KeyCode) -> Action {
        line.key(KeyEvent::new(code, KeyModifiers::NONE))
    }

    #[test]
    fn typing_editing_and_submitting() {
        let mut line = InputLine::default();
        for c in "héllo".chars() {
            press(&mut line, KeyCode::Char(c));
        }
        press(&mut line, KeyCode::Left);
        press(&mut line, KeyCode::Backspace);
        assert_eq!(line.text, "hélo");
        press(&mut line, KeyCode::Home);
        press(&mut line, KeyCode::Delete);
        assert_eq!(line.text, "élo");
        assert_eq!(
            press(&mut line, KeyCode::Enter),
            Action::Submit("élo".into())
        );
        assert_eq!(line, InputLine::default());
        assert_eq!(press(&mut line, KeyCode::Enter), Action::None);
    }

    #[test]
    fn control_keys() {
        let mut line = InputLine::default();
        let ctrl = |c| KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL);
        assert_eq!(line.key(ctrl('c')), Action::Interrupt);
        assert_eq!(line.key(ctrl('d')), Action::Quit);
        line.insert('x');
        assert_eq!(line.key(ctrl('d')), Action::None);
        line.key(ctrl('u'));
        assert!(line.text.is_empty());
        assert_eq!(press(&mut line, KeyCode::PageUp), Action::ScrollUp);
    }
}
