//! The files behind a survey tool's output: each listed file's `read:` key, under its name and
//! its real path, for the call's `call_finished.read_keys`.
//!
//! A walk is gated as `read:<start>`; the files it read or named are admitted one by one at
//! execute, never as keys of their own. Their output is still a copy of those files, so a later
//! deny on one (`read:.env`, `read:**/secrets/**`) must cover it: the runtime takes the files
//! from the typed listing the tool hands over, not from the tool's word, and keys them as a
//! file tool would, name and real path. A list_dir's entries are one directory's names, gated
//! and recorded as that directory.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use tackle_tool::{FileReadOutcome, SurveyListing};

/// `read:<name>` and, where it differs, `read:<real path>` of every file `listing` read or
/// named, root-relative as the listing shows them.
pub(crate) fn listed_files(root: &Path, listing: &SurveyListing) -> Vec<String> {
    let names: BTreeSet<&str> = match listing {
        SurveyListing::Matches(matches) => matches.iter().map(|m| m.path.as_str()).collect(),
        SurveyListing::Paths(paths) => paths.iter().map(String::as_str).collect(),
        SurveyListing::Files(files) => files
            .iter()
            .filter(|f| matches!(f.outcome, FileReadOutcome::Read { .. }))
            .map(|f| f.path.as_str())
            .collect(),
        SurveyListing::Entries(_) => BTreeSet::new(),
    };
    let mut real_dirs = RealDirs {
        root,
        known: HashMap::new(),
    };
    let mut keys = BTreeSet::new();
    for name in names {
        keys.insert(format!("read:{name}"));
        if let Some(real) = real_dirs.real_path(name)
            && real != name
        {
            keys.insert(format!("read:{real}"));
        }
    }
    keys.into_iter().collect()
}

/// Real paths of listed files, one `realpath` per directory: a walk hands over regular files
/// only and follows no link below its start, so a file's real path is its directory's real
/// path and its own name.
struct RealDirs<'a> {
    root: &'a Path,
    known: HashMap<PathBuf, Option<String>>,
}

impl RealDirs<'_> {
    fn real_path(&mut self, name: &str) -> Option<String> {
        let name = Path::new(name);
        let file = name.file_name()?.to_str()?;
        let dir = name.parent().unwrap_or(Path::new(""));
        let root = self.root;
        let real_dir = self
            .known
            .entry(dir.to_path_buf())
            .or_insert_with(|| {
                let real = std::fs::canonicalize(root.join(dir)).ok()?;
                let below = real.strip_prefix(root).ok()?;
                below.to_str().map(str::to_owned)
            })
            .as_deref()?;
        Some(if real_dir.is_empty() {
            file.to_owned()
        } else {
            format!("{real_dir}/{file}")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tackle_tool::{FileRead, LineMatch};

    #[test]
    fn every_listed_file_is_keyed_by_name_and_real_path() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("secrets")).unwrap();
        std::fs::write(root.join("secrets/key"), "k").unwrap();
        std::fs::write(root.join(".env"), "e").unwrap();
        std::os::unix::fs::symlink("secrets", root.join("link")).unwrap();
        let line = |path: &str| LineMatch {
            path: path.into(),
            line: 1,
            text: "x".into(),
        };
        let read = |path: &str| FileRead {
            path: path.into(),
            outcome: FileReadOutcome::Read {
                lines: 1,
                bytes: 1,
                truncated: false,
            },
        };
        let skipped = |path: &str| FileRead {
            path: path.into(),
            outcome: FileReadOutcome::Skipped {
                skipped: "binary".into(),
            },
        };
        // (listing, keys)
        let table: Vec<(SurveyListing, Vec<&str>)> = vec![
            (
                SurveyListing::Matches(vec![line(".env"), line(".env"), line("secrets/key")]),
                vec!["read:.env", "read:secrets/key"],
            ),
            (
                SurveyListing::Matches(vec![line("link/key")]),
                vec!["read:link/key", "read:secrets/key"],
            ),
            (
                SurveyListing::Paths(vec!["link/key".into(), ".env".into()]),
                vec!["read:.env", "read:link/key", "read:secrets/key"],
            ),
            (
                SurveyListing::Files(vec![read(".env"), skipped("secrets/key")]),
                vec!["read:.env"],
            ),
            (
                SurveyListing::Entries(vec!["a".into(), "b/".into()]),
                vec![],
            ),
            // A name that no longer resolves keeps its name.
            (
                SurveyListing::Matches(vec![line("gone/file")]),
                vec!["read:gone/file"],
            ),
        ];
        for (listing, want) in table {
            assert_eq!(listed_files(&root, &listing), want, "{listing:?}");
        }
    }
}
