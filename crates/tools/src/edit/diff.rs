//! A short unified diff of an applied edit, computed from the known replacement sites rather
//! than by diffing the files: exact, and linear in the size of what changed.

use std::fmt::Write as _;

use super::cut_line;

/// Hunks shown; the rest are counted.
const MAX_HUNKS: usize = 3;
/// Removed or added lines shown per side of a hunk.
const MAX_HUNK_LINES: usize = 20;
const CONTEXT: usize = 2;
const MAX_LINE: usize = 200;

/// `old` had `old_len` bytes replaced by `new_len` at each of `starts` (ascending), giving
/// `new`; `lines` are the 1-based lines of `starts` in `old`.
pub(super) fn render(
    old: &[u8],
    new: &[u8],
    starts: &[usize],
    old_len: usize,
    new_len: usize,
    lines: &[u64],
) -> String {
    let mut out = String::new();
    // How far the new file's bytes and lines have moved relative to the old one's so far.
    let mut byte_shift: isize = 0;
    let mut line_shift: i64 = 0;
    for (i, (&start, &line)) in starts.iter().zip(lines).enumerate() {
        let region_start = line_start(old, start);
        let region_end = line_end(old, start + old_len - 1);
        let new_start = (region_start as isize + byte_shift) as usize;
        let delta = new_len as isize - old_len as isize;
        let new_end = ((region_end as isize + byte_shift + delta) as usize).min(new.len());
        byte_shift += delta;
        let removed = split(&old[region_start..region_end]);
        let added = split(&new[new_start.min(new_end)..new_end]);
        let before = context_before(old, region_start);
        let after = context_after(old, region_end);
        let old_first = line as i64 - before.len() as i64;
        let new_first = old_first + line_shift;
        line_shift += added.len() as i64 - removed.len() as i64;
        if i >= MAX_HUNKS {
            continue;
        }
        let _ = writeln!(
            out,
            "@@ -{},{} +{},{} @@",
            old_first,
            before.len() + removed.len() + after.len(),
            new_first,
            before.len() + added.len() + after.len()
        );
        for l in &before {
            push_line(&mut out, ' ', l);
        }
        push_side(&mut out, '-', &removed);
        push_side(&mut out, '+', &added);
        for l in &after {
            push_line(&mut out, ' ', l);
        }
    }
    if starts.len() > MAX_HUNKS {
        let _ = writeln!(
            out,
            "… {} more replacements not shown",
            starts.len() - MAX_HUNKS
        );
    }
    out
}

fn push_side(out: &mut String, mark: char, lines: &[&[u8]]) {
    for l in lines.iter().take(MAX_HUNK_LINES) {
        push_line(out, mark, l);
    }
    if lines.len() > MAX_HUNK_LINES {
        let _ = writeln!(out, "{mark}… {} more lines", lines.len() - MAX_HUNK_LINES);
    }
}

fn push_line(out: &mut String, mark: char, line: &[u8]) {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let text = String::from_utf8_lossy(line);
    out.push(mark);
    out.push_str(&cut_line(&text, MAX_LINE));
    out.push('\n');
}

/// Lines of `region` without their `\n`; a final line without one counts too.
fn split(region: &[u8]) -> Vec<&[u8]> {
    if region.is_empty() {
        return Vec::new();
    }
    let body = region.strip_suffix(b"\n").unwrap_or(region);
    body.split(|&b| b == b'\n').collect()
}

/// Offset of the start of the line containing `at`.
fn line_start(s: &[u8], at: usize) -> usize {
    memchr::memrchr(b'\n', &s[..at]).map_or(0, |i| i + 1)
}

/// Offset just past the `\n` ending the line containing `at` (or the end of `s`).
fn line_end(s: &[u8], at: usize) -> usize {
    memchr::memchr(b'\n', &s[at..]).map_or(s.len(), |i| at + i + 1)
}

fn context_before(s: &[u8], region_start: usize) -> Vec<&[u8]> {
    let mut lines = Vec::new();
    let mut end = region_start;
    while lines.len() < CONTEXT && end > 0 {
        let start = line_start(s, end - 1);
        lines.push(&s[start..end - 1]);
        end = start;
    }
    lines.reverse();
    lines
}

fn context_after(s: &[u8], region_end: usize) -> Vec<&[u8]> {
    let mut lines = Vec::new();
    let mut start = region_end;
    while lines.len() < CONTEXT && start < s.len() {
        let end = line_end(s, start);
        let line = &s[start..end];
        lines.push(line.strip_suffix(b"\n").unwrap_or(line));
        start = end;
    }
    lines
}
