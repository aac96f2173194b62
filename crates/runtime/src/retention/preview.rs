//! The bounded head of one stream that a model sees.

use crate::config::PreviewLimits;

/// Keeps the first `max_lines` lines / `max_bytes` bytes of a stream and counts the rest.
#[derive(Clone, Debug)]
pub struct Preview {
    limits: PreviewLimits,
    text: String,
    /// Complete lines (ending in `\n`) held in `text`.
    kept_lines: u64,
    truncated: bool,
    total_bytes: u64,
    total_newlines: u64,
    ends_with_newline: bool,
}

impl Preview {
    pub fn new(limits: PreviewLimits) -> Self {
        Self {
            limits,
            text: String::new(),
            kept_lines: 0,
            truncated: false,
            total_bytes: 0,
            total_newlines: 0,
            ends_with_newline: false,
        }
    }

    pub fn push(&mut self, chunk: &str) {
        self.push_counted(chunk, count_newlines(chunk.as_bytes()));
    }

    /// [`Preview::push`] for a chunk whose newlines the caller has already counted.
    pub fn push_counted(&mut self, mut chunk: &str, newlines: u64) {
        if chunk.is_empty() {
            return;
        }
        self.total_bytes += chunk.len() as u64;
        self.total_newlines += newlines;
        self.ends_with_newline = chunk.ends_with('\n');
        while !chunk.is_empty() && !self.truncated {
            if self.kept_lines as usize >= self.limits.max_lines {
                self.truncated = true;
                break;
            }
            let line_end = chunk.find('\n').map_or(chunk.len(), |i| i + 1);
            let (line, rest) = chunk.split_at(line_end);
            let room = self.limits.max_bytes.saturating_sub(self.text.len());
            if line.len() <= room {
                self.text.push_str(line);
                if line.ends_with('\n') {
                    self.kept_lines += 1;
                }
                chunk = rest;
            } else {
                self.text.push_str(&line[..floor_char_boundary(line, room)]);
                self.truncated = true;
            }
        }
    }

    /// Cut the preview to at most `bytes`, keeping the hint truthful.
    pub fn shrink_to(&mut self, bytes: usize) {
        if self.text.len() <= bytes {
            return;
        }
        let cut = floor_char_boundary(&self.text, bytes);
        self.text.truncate(cut);
        self.kept_lines = count_newlines(self.text.as_bytes());
        self.truncated = true;
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn truncated(&self) -> bool {
        self.truncated
    }

    /// The 1-based line a reader should continue from: the first line not shown whole, so a
    /// partial-line cut points back to that line and nothing unseen is skipped.
    pub fn continue_at_line(&self) -> u64 {
        self.kept_lines + 1
    }

    pub fn shown_lines(&self) -> u64 {
        self.kept_lines
    }

    pub fn total_bytes(&self) -> u64 {
        self.total_bytes
    }

    pub fn total_lines(&self) -> u64 {
        self.total_newlines + u64::from(self.total_bytes > 0 && !self.ends_with_newline)
    }
}

fn count_newlines(bytes: &[u8]) -> u64 {
    // SIMD count: every byte of every stream passes through here.
    bytecount::count(bytes, b'\n') as u64
}

pub(crate) fn floor_char_boundary(s: &str, mut at: usize) -> usize {
    if at >= s.len() {
        return s.len();
    }
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    fn preview(lines: usize, bytes: usize, chunks: &[&str]) -> Preview {
        let mut p = Preview::new(PreviewLimits {
            max_lines: lines,
            max_bytes: bytes,
        });
        for c in chunks {
            p.push(c);
        }
        p
    }

    #[test]
    fn below_at_and_above_each_limit() {
        // Below both limits.
        let p = preview(3, 100, &["a\nb\n"]);
        assert_eq!(
            (p.text(), p.truncated(), p.total_lines()),
            ("a\nb\n", false, 2)
        );
        // Exactly at the line limit: nothing hidden, not truncated.
        let p = preview(2, 100, &["a\n", "b\n"]);
        assert_eq!((p.text(), p.truncated()), ("a\nb\n", false));
        // One line over.
        let p = preview(2, 100, &["a\nb\nc"]);
        assert_eq!(
            (p.text(), p.truncated(), p.continue_at_line()),
            ("a\nb\n", true, 3)
        );
        assert_eq!(p.total_lines(), 3);
        // Exactly at the byte limit.
        let p = preview(10, 4, &["ab\ncd"]);
        assert_eq!((p.text(), p.truncated()), ("ab\nc", true));
        let p = preview(10, 5, &["ab\ncd"]);
        assert_eq!((p.text(), p.truncated()), ("ab\ncd", false));
        // A byte cut inside line 2 points back to line 2.
        let p = preview(10, 4, &["ab\n", "cdef\n"]);
        assert_eq!((p.text(), p.continue_at_line()), ("ab\nc", 2));
        // Never split a UTF-8 character.
        let p = preview(10, 2, &["é€"]);
        assert_eq!(p.text(), "é");
        // Empty stream.
        let p = preview(10, 10, &[]);
        assert_eq!(
            (p.text(), p.truncated(), p.total_lines(), p.total_bytes()),
            ("", false, 0, 0)
        );
    }

    /// However a stream is split into chunks, the preview and its hint are the same as for one
    /// push of the whole text.
    #[test]
    fn chunking_never_changes_the_preview() {
        let texts = [
            "",
            "a",
            "a\n",
            "ab\ncd",
            "ab\ncd\n",
            "abcd\nefghi\nj",
            "\n\n\n",
            "é€\n𝄞x\ny",
        ];
        let limits = [
            (0, 100),
            (1, 100),
            (2, 100),
            (100, 0),
            (100, 3),
            (100, 5),
            (2, 4),
        ];
        for text in texts {
            for (lines, bytes) in limits {
                let whole = preview(lines, bytes, &[text]);
                let cuts: Vec<usize> = (0..=text.len())
                    .filter(|&i| text.is_char_boundary(i))
                    .collect();
                for &i in &cuts {
                    for &j in cuts.iter().filter(|&&j| j >= i) {
                        let p = preview(lines, bytes, &[&text[..i], &text[i..j], &text[j..]]);
                        let case = format!("{text:?} limits ({lines}, {bytes}) cut at {i}, {j}");
                        assert_eq!(p.text(), whole.text(), "{case}");
                        assert_eq!(p.truncated(), whole.truncated(), "{case}");
                        assert_eq!(p.continue_at_line(), whole.continue_at_line(), "{case}");
                        assert_eq!(p.total_lines(), whole.total_lines(), "{case}");
                        assert_eq!(p.total_bytes(), text.len() as u64, "{case}");
                    }
                }
            }
        }
    }

    #[test]
    fn shrink_keeps_hint_truthful() {
        let mut p = preview(10, 100, &["one\ntwo\nthree\n"]);
        p.shrink_to(6);
        assert_eq!(
            (p.text(), p.truncated(), p.continue_at_line()),
            ("one\ntw", true, 2)
        );
    }
}
