//! What a survey tool found, typed ([`SurveyListing`]): the runtime's digest of a large survey
//! result reads it, so the digest and the tools share a type rather than metadata keys.
//!
//! The listing is also part of the result's metadata, which clients see (MCP `_meta`, event
//! records): a tool's metadata object holds [`SurveyListing::key`] with `null` where the key
//! has always been, and [`crate::ToolCompletion::with_survey`] puts [`SurveyListing::to_json`]
//! there as it takes the listing, so the listing is turned into JSON once and the two cannot
//! differ. Rejected: appending the key when the listing is handed over, which would move it to
//! the end of the object clients read (objects keep their order); and each tool writing the
//! JSON itself, which `json!` then copied whole a second time.

use serde::Serialize;
use serde_json::Value;

/// The items a survey result is made of.
#[derive(Clone, Debug, PartialEq)]
pub enum SurveyListing {
    /// A directory's entries (list_dir): names, a directory's ending in `/`, a symlink's in
    /// `@`. Metadata key `entries`.
    Entries(Vec<String>),
    /// Matching lines (grep). Metadata key `matches`.
    Matches(Vec<LineMatch>),
    /// Paths found (glob). Metadata key `files`.
    Paths(Vec<String>),
    /// Files read or skipped (read_many_files). Metadata key `files`.
    Files(Vec<FileRead>),
}

/// One matching line.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LineMatch {
    pub path: String,
    /// 1-based.
    pub line: u64,
    pub text: String,
}

/// One file of a batch read, by the name it is shown under.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FileRead {
    pub path: String,
    #[serde(flatten)]
    pub outcome: FileReadOutcome,
}

/// Whether a file of a batch was read, and how much of it.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum FileReadOutcome {
    Read {
        lines: usize,
        bytes: u64,
        /// Cut at a per-file or whole-result limit.
        truncated: bool,
    },
    Skipped {
        /// Why it was not read.
        skipped: String,
    },
}

impl SurveyListing {
    /// The metadata key the listing is found under.
    pub fn key(&self) -> &'static str {
        match self {
            SurveyListing::Entries(_) => "entries",
            SurveyListing::Matches(_) => "matches",
            SurveyListing::Paths(_) | SurveyListing::Files(_) => "files",
        }
    }

    /// The listing as metadata (the value under [`SurveyListing::key`]).
    pub fn to_json(&self) -> Value {
        let value = match self {
            SurveyListing::Entries(names) | SurveyListing::Paths(names) => {
                serde_json::to_value(names)
            }
            SurveyListing::Matches(matches) => serde_json::to_value(matches),
            SurveyListing::Files(files) => serde_json::to_value(files),
        };
        // Strings, integers and booleans only: serializing them cannot fail.
        value.unwrap_or(Value::Null)
    }

    /// How many items the listing holds.
    pub fn len(&self) -> usize {
        match self {
            SurveyListing::Entries(items) | SurveyListing::Paths(items) => items.len(),
            SurveyListing::Matches(items) => items.len(),
            SurveyListing::Files(items) => items.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn text(v: &Value) -> String {
        serde_json::to_string(v).unwrap()
    }

    #[test]
    fn listings_serialize_to_the_metadata_clients_have_always_seen() {
        let matches = SurveyListing::Matches(vec![LineMatch {
            path: "a.rs".into(),
            line: 3,
            text: "fn main".into(),
        }]);
        assert_eq!(matches.key(), "matches");
        // Compared as text against what the tools built with `json!` before: the same keys in
        // the same order, whether or not serde_json preserves insertion order in this build.
        let before = json!([{ "path": "a.rs", "line": 3, "text": "fn main" }]);
        assert_eq!(text(&matches.to_json()), text(&before));
        let files = SurveyListing::Files(vec![
            FileRead {
                path: "a.rs".into(),
                outcome: FileReadOutcome::Read {
                    lines: 2,
                    bytes: 10,
                    truncated: false,
                },
            },
            FileRead {
                path: "b.bin".into(),
                outcome: FileReadOutcome::Skipped {
                    skipped: "binary".into(),
                },
            },
        ]);
        assert_eq!(files.key(), "files");
        let before = json!([
            { "path": "a.rs", "lines": 2, "bytes": 10, "truncated": false },
            { "path": "b.bin", "skipped": "binary" },
        ]);
        assert_eq!(text(&files.to_json()), text(&before));
        let entries = SurveyListing::Entries(vec!["src/".into(), "a.rs".into()]);
        assert_eq!(entries.key(), "entries");
        assert_eq!(entries.to_json(), json!(["src/", "a.rs"]));
        assert_eq!(entries.len(), 2);
        assert_eq!(SurveyListing::Paths(vec![]).key(), "files");
    }
}
