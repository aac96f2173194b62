//! Permission modes: how asks are resolved for a whole session.

use std::fmt;
use std::str::FromStr;

use crate::error::ParseModeError;

/// The session's permission mode (DESIGN.md §4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Asks go to the approver. The default.
    #[default]
    Ask,
    /// Writes inside the path scope that would ask are allowed.
    AcceptEdits,
    /// Read-only: every mutating call and every `write:` key is denied.
    Plan,
    /// Every ask is allowed; denies (rules, scopes, deny defaults) still hold.
    Yolo,
}

const NAMES: [(&str, Mode); 4] = [
    ("ask", Mode::Ask),
    ("accept-edits", Mode::AcceptEdits),
    ("plan", Mode::Plan),
    ("yolo", Mode::Yolo),
];

impl Mode {
    /// The mode's name as written in config and flags.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Ask => "ask",
            Mode::AcceptEdits => "accept-edits",
            Mode::Plan => "plan",
            Mode::Yolo => "yolo",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Mode {
    type Err = ParseModeError;

    fn from_str(s: &str) -> Result<Mode, ParseModeError> {
        if let Some(&(_, mode)) = NAMES.iter().find(|(name, _)| *name == s) {
            return Ok(mode);
        }
        let nearest = NAMES
            .iter()
            .map(|&(name, _)| name)
            .min_by_key(|name| edit_distance(&s.to_ascii_lowercase(), name))
            .unwrap_or("ask");
        Err(ParseModeError {
            input: s.to_owned(),
            nearest,
        })
    }
}

/// Levenshtein distance over chars; the inputs are a few bytes long.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for (name, mode) in NAMES {
            assert_eq!(name.parse::<Mode>().unwrap(), mode);
            assert_eq!(mode.to_string(), name);
        }
        assert_eq!(Mode::default(), Mode::Ask);
    }

    #[test]
    fn typos_name_the_nearest_mode() {
        let cases: &[(&str, &str)] = &[
            ("acept-edits", "accept-edits"),
            ("accept_edits", "accept-edits"),
            ("YOLO", "yolo"),
            ("plna", "plan"),
            ("aks", "ask"),
        ];
        for &(input, nearest) in cases {
            let err = input.parse::<Mode>().unwrap_err();
            assert_eq!(err.nearest, nearest, "{input}");
            let text = err.to_string();
            assert!(
                text.contains(&format!("did you mean \"{nearest}\"")),
                "{text}"
            );
        }
    }
}
