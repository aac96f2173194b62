//! The change a write or an edit would make, as the person approving it sees it.

/// The most diff lines shown.
const MAX_LINES: usize = 400;

/// `old` → `new` of the file known as `name`, as a unified diff (the whole new file when it
/// did not exist).
pub fn unified(name: &str, old: Option<&str>, new: &str) -> String {
    let before = old.unwrap_or("");
    let diff = similar::TextDiff::from_lines(before, new);
    let header = match old {
        Some(_) => (format!("a/{name}"), format!("b/{name}")),
        None => ("/dev/null".to_owned(), format!("b/{name}")),
    };
    let text = diff
        .unified_diff()
        .context_radius(3)
        .header(&header.0, &header.1)
        .to_string();
    let lines: Vec<&str> = text.lines().collect();
    if lines.is_empty() {
        return format!("(no change to {name})");
    }
    if lines.len() <= MAX_LINES {
        return lines.join("\n");
    }
    format!(
        "{}\n… {} more lines of diff not shown",
        lines[..MAX_LINES].join("\n"),
        lines.len() - MAX_LINES
    )
}
