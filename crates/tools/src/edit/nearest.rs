//! The nearest passage to an `old_string` that did not match, for the refusal.
//!
//! Lines are compared with whitespace normalized (runs of spaces, tabs and `\r` collapse, ends
//! trimmed). A passage equal to `old_string` under that normalization differs only in
//! whitespace or line endings, and the refusal says so. Otherwise the passage with the most
//! similar lines is offered. Either way the refusal only shows it; nothing is applied.

use super::cut_line;

/// A passage of the file near what `old_string` asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Nearest {
    /// 1-based line the passage starts on.
    pub line: u64,
    /// The passage, each line prefixed by its number.
    pub passage: String,
    /// Equal to `old_string` except for whitespace or line endings.
    pub whitespace_only: bool,
}

/// Lines of a passage shown.
const MAX_PASSAGE_LINES: usize = 12;
const MAX_LINE: usize = 200;
/// Below this similarity no passage is offered: it would mislead more than help.
const MIN_SIMILARITY: f64 = 0.4;
/// Line comparisons allowed for the fuzzy search, so a refusal on a huge file stays quick.
const MAX_COMPARISONS: usize = 400_000;

fn normalize(line: &str) -> String {
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

pub(super) fn find(content: &[u8], old: &str) -> Option<Nearest> {
    let text = String::from_utf8_lossy(content);
    let file: Vec<&str> = text.split('\n').collect();
    let mut wanted: Vec<&str> = old.split('\n').collect();
    if wanted.len() > 1 && wanted.last().is_some_and(|l| l.trim().is_empty()) {
        wanted.pop();
    }
    let wanted: Vec<String> = wanted.iter().map(|l| normalize(l)).collect();
    let normalized: Vec<String> = file.iter().map(|l| normalize(l)).collect();
    let k = wanted.len();
    if k == 0 || normalized.len() < k {
        return None;
    }
    let windows = normalized.len() - k + 1;
    // Whitespace-only: the first wanted line ends a file line, the last starts one, and the
    // lines between are equal.
    for i in 0..windows {
        let first = &normalized[i];
        let matched = if k == 1 {
            !wanted[0].is_empty() && first.contains(wanted[0].as_str())
        } else {
            first.ends_with(wanted[0].as_str())
                && normalized[i + k - 1].starts_with(wanted[k - 1].as_str())
                && (1..k - 1).all(|j| normalized[i + j] == wanted[j])
        };
        if matched {
            return Some(passage(&file, i, k, true));
        }
    }
    // Fuzzy: the window whose lines are most similar, line by line.
    let step = (windows * k / MAX_COMPARISONS).max(1);
    let mut best: Option<(f64, usize)> = None;
    for i in (0..windows).step_by(step) {
        let score = (0..k)
            .map(|j| similarity(&normalized[i + j], &wanted[j]))
            .sum::<f64>()
            / k as f64;
        if best.is_none_or(|(s, _)| score > s) {
            best = Some((score, i));
        }
    }
    let (score, i) = best?;
    (score >= MIN_SIMILARITY).then(|| passage(&file, i, k, false))
}

fn similarity(a: &str, b: &str) -> f64 {
    if a == b {
        return 1.0;
    }
    // Levenshtein is quadratic; very unequal lengths cannot be similar anyway.
    let (la, lb) = (a.len(), b.len());
    if la.max(lb) > 2 * la.min(lb) + 8 || la.max(lb) > 1000 {
        return 0.0;
    }
    strsim::normalized_levenshtein(a, b)
}

fn passage(file: &[&str], start: usize, k: usize, whitespace_only: bool) -> Nearest {
    let shown = k.clamp(1, MAX_PASSAGE_LINES);
    let mut text = String::new();
    for (n, line) in file.iter().enumerate().skip(start).take(shown) {
        let line = line.strip_suffix('\r').unwrap_or(line);
        text.push_str(&format!("{:>6}\t{}\n", n + 1, cut_line(line, MAX_LINE)));
    }
    if k > shown {
        text.push_str(&format!("     …\t({} more lines)\n", k - shown));
    }
    Nearest {
        line: start as u64 + 1,
        passage: text,
        whitespace_only,
    }
}
