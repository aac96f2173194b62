//! What a tool declares about itself, and the catalog entry a model receives.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use crate::stream_name::StreamName;

/// Whether a call may overlap sibling calls of the same turn (seed 000, "Execution
/// concurrency"). `Exclusive` is the default; `Parallel` must be declared.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Concurrency {
    #[default]
    Exclusive,
    Parallel,
}

/// Whether the runtime bounds a tool's output with previews and artifacts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Truncation {
    /// Capture every stream into an artifact and show bounded previews.
    #[default]
    Bounded,
    /// Self-paginating tools (read_file): the requested page is returned whole, without
    /// retention; a page over the result limit fails with `resource_limit`.
    OptOut,
}

/// The streams a tool produces: one unnamed output, or 1 to 8 named streams in rendering order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputDeclaration {
    Single,
    Named(Vec<StreamName>),
}

/// Why a named-output declaration is invalid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OutputDeclarationError {
    Empty,
    TooMany { count: usize },
    Duplicate { name: StreamName },
}

impl std::fmt::Display for OutputDeclarationError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Empty => write!(f, "named output declares no streams; declare 1 to 8"),
            Self::TooMany { count } => {
                write!(f, "named output declares {count} streams; the limit is 8")
            }
            Self::Duplicate { name } => write!(f, "named output declares `{name}` twice"),
        }
    }
}

impl std::error::Error for OutputDeclarationError {}

impl OutputDeclaration {
    pub const MAX_STREAMS: usize = 8;

    /// A validated named declaration: 1 to 8 unique names.
    pub fn named(names: Vec<StreamName>) -> Result<Self, OutputDeclarationError> {
        if names.is_empty() {
            return Err(OutputDeclarationError::Empty);
        }
        if names.len() > Self::MAX_STREAMS {
            return Err(OutputDeclarationError::TooMany { count: names.len() });
        }
        let mut seen = HashSet::new();
        for n in &names {
            if !seen.insert(n) {
                return Err(OutputDeclarationError::Duplicate { name: n.clone() });
            }
        }
        Ok(Self::Named(names))
    }

    pub fn streams(&self) -> Option<&[StreamName]> {
        match self {
            Self::Single => None,
            Self::Named(n) => Some(n),
        }
    }
}

/// A catalog entry: exactly what a model receives for one tool.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub input_schema: serde_json::Value,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: &[&str]) -> Vec<StreamName> {
        n.iter().map(|s| StreamName::parse(s).unwrap()).collect()
    }

    #[test]
    fn named_declarations_are_validated() {
        assert!(OutputDeclaration::named(names(&["stdout", "stderr"])).is_ok());
        assert_eq!(
            OutputDeclaration::named(vec![]),
            Err(OutputDeclarationError::Empty)
        );
        let nine: Vec<String> = (0..9).map(|i| format!("s{i}")).collect();
        let nine: Vec<&str> = nine.iter().map(String::as_str).collect();
        assert_eq!(
            OutputDeclaration::named(names(&nine)),
            Err(OutputDeclarationError::TooMany { count: 9 })
        );
        assert!(matches!(
            OutputDeclaration::named(names(&["a", "b", "a"])),
            Err(OutputDeclarationError::Duplicate { .. })
        ));
        // Case-sensitive: `out` and `Out` are different streams.
        assert!(OutputDeclaration::named(names(&["out", "Out"])).is_ok());
    }
}
