//! A diff's lines under the cap: at most [`MAX_LINES`] kept, the rest only counted and said
//! in a closing "… N more lines" note, so a huge file is never held (or escaped) line by line.

use super::compute::{DiffKind, DiffLine, MAX_LINES, line, note};

/// At most [`MAX_LINES`] lines, and a count of the rest: a huge file is never held line by line.
#[derive(Default)]
pub(super) struct Capped {
    lines: Vec<DiffLine>,
    more: usize,
}

impl Capped {
    pub(super) fn push(&mut self, line: DiffLine) {
        if self.lines.len() < MAX_LINES {
            self.lines.push(line);
        } else {
            self.more += 1;
        }
    }

    pub(super) fn extend(&mut self, lines: impl IntoIterator<Item = DiffLine>) {
        for l in lines {
            self.push(l);
        }
    }

    /// Every line of `text` as `kind`; the ones past the cap are only counted.
    pub(super) fn text(&mut self, kind: DiffKind, text: &str) {
        for l in text.lines() {
            if self.lines.len() < MAX_LINES {
                self.lines.push(line(kind, l));
            } else {
                self.more += 1;
            }
        }
    }

    pub(super) fn finish(mut self) -> Vec<DiffLine> {
        match self.more {
            0 => {}
            1 => self.lines.push(note("… 1 more line".to_owned())),
            n => self.lines.push(note(format!("… {n} more lines"))),
        }
        self.lines
    }
}
