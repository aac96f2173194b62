//! The nearest existing paths to one that does not exist, so a model that named
//! `project_root/notes.txt` or `src/mian.rs` is told `notes.txt` or `src/main.rs` at once
//! instead of giving up or spending a call on list_dir.
//!
//! **Owns** the ranking and the hint a not-found error carries. Candidates come from one walk of
//! the project with the survey tools' rules ([`crate::walk`]: hidden, vendored and ignored
//! files skipped, links never followed) and each file through the call's [`ReadScope`], so a
//! hint never names a file the call could not have read (a denied `.env`, tackle's store); the
//! directories offered are the parents of files that passed.
//!
//! Ranking, best first: most trailing components in common (`a/b/notes.txt` and
//! `notes.txt` share one; the model's extra or missing leading directories cost nothing), then
//! the closest file name (equal, equal but for case, or a few edits apart), then the shortest
//! path. A candidate shares at least its last component's name within a small edit distance,
//! or it is not offered.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use tackle_fs::Root;
use tackle_tool::protocol::ErrorCode;
use tackle_tool::{ReadScope, ToolError};

use crate::walk::{FileVisitor, Found, check_start, walk_files};

/// How many paths a hint names.
const MOST: usize = 3;

/// The most files the walk collects; a larger project is ranked on the first ones found.
const MOST_FILES: usize = 50_000;

/// `error` with the nearest existing paths to `missing` appended, when it says a path does not
/// exist and there are any; otherwise `error` as it is.
pub(crate) fn hint_not_found(
    error: ToolError,
    root: &Path,
    scope: &dyn ReadScope,
    missing: &str,
) -> ToolError {
    if error.code != ErrorCode::NOT_FOUND {
        return error;
    }
    let found = nearest_paths(root, scope, missing);
    if found.is_empty() {
        return error;
    }
    let mut error = error;
    error.message = format!(
        "{}; the nearest existing paths: {}",
        error.message.trim_end_matches('.'),
        found.join(", ")
    );
    error
}

/// Up to [`MOST`] existing paths nearest to `missing`, best first.
pub(crate) fn nearest_paths(root: &Path, scope: &dyn ReadScope, missing: &str) -> Vec<String> {
    let Ok(root) = Root::open_shared(root) else {
        return Vec::new();
    };
    let wanted = components(missing);
    if wanted.is_empty() {
        return Vec::new();
    }
    let paths = project_paths(&root, scope);
    rank(&wanted, paths.iter().map(String::as_str))
}

/// The one existing file `missing` ends with, when the model put directories of its own in
/// front of a real path (`project_root/notes.txt` for `notes.txt`): the longest file whose
/// components are the last components of `missing`. `None` for an absolute path, a path
/// with `..`, or when no file qualifies. Files come through `scope` as hints do.
pub(crate) fn file_it_ends_with(
    root: &Path,
    scope: &dyn ReadScope,
    missing: &str,
) -> Option<String> {
    if missing.starts_with('/') || missing.split('/').any(|c| c == "..") {
        return None;
    }
    let wanted = components(missing);
    if wanted.len() < 2 {
        return None;
    }
    let root = Root::open_shared(root).ok()?;
    let start = root
        .resolve(".")
        .map_err(|e| crate::fs_error("nearest", e))
        .and_then(|rel| check_start("nearest", &root, &rel))
        .ok()?;
    let (outputs, _) = walk_files(&root, &start, scope, || Collect(Vec::new()));
    outputs
        .into_iter()
        .flatten()
        .filter(|file| {
            let have = components(file);
            have.len() < wanted.len() && wanted.ends_with(&have)
        })
        .max_by_key(|file| components(file).len())
}

/// Every file the walk admits, and every directory above one.
fn project_paths(root: &Arc<Root>, scope: &dyn ReadScope) -> BTreeSet<String> {
    let Ok(start) = root
        .resolve(".")
        .map_err(|e| crate::fs_error("nearest", e))
        .and_then(|rel| check_start("nearest", root, &rel))
    else {
        return BTreeSet::new();
    };
    let (outputs, _) = walk_files(root, &start, scope, || Collect(Vec::new()));
    let mut paths = BTreeSet::new();
    for file in outputs.into_iter().flatten().take(MOST_FILES) {
        let mut dir = Path::new(&file).parent();
        while let Some(d) = dir.and_then(Path::to_str).filter(|d| !d.is_empty()) {
            if !paths.insert(d.to_owned()) {
                break;
            }
            dir = Path::new(d).parent();
        }
        paths.insert(file);
    }
    paths
}

struct Collect(Vec<String>);

impl FileVisitor for Collect {
    type Output = Vec<String>;
    fn visit(&mut self, found: Found<'_>) {
        if self.0.len() < MOST_FILES {
            self.0.push(found.rel.trim_start_matches("./").to_owned());
        }
    }
    fn finish(self) -> Vec<String> {
        self.0
    }
}

/// Up to [`MOST`] of `candidates` nearest to the name `wanted`, best first: those it is a
/// prefix of (a truncated id), then by name distance; for ids and names that are not paths
/// (session ids, skill names).
pub fn nearest_names<'a>(wanted: &str, candidates: impl Iterator<Item = &'a str>) -> Vec<String> {
    if wanted.is_empty() {
        return Vec::new();
    }
    let mut scored: Vec<(usize, usize, &str)> = candidates
        .filter(|c| *c != wanted)
        .filter_map(|c| {
            let distance = if c.starts_with(wanted) {
                0
            } else {
                name_distance(wanted, c)? + 1
            };
            Some((distance, c.len(), c))
        })
        .collect();
    scored.sort();
    scored
        .into_iter()
        .take(MOST)
        .map(|(_, _, c)| c.to_owned())
        .collect()
}

fn components(path: &str) -> Vec<&str> {
    path.split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect()
}

/// The candidates near `wanted`, best first, at most [`MOST`].
fn rank<'a>(wanted: &[&str], candidates: impl Iterator<Item = &'a str>) -> Vec<String> {
    let Some(name) = wanted.last() else {
        return Vec::new();
    };
    let mut scored: Vec<(usize, usize, usize, &str)> = candidates
        .filter_map(|candidate| {
            let have = components(candidate);
            let last = have.last()?;
            let distance = name_distance(name, last)?;
            let shared = wanted
                .iter()
                .rev()
                .zip(have.iter().rev())
                .take_while(|(a, b)| a == b)
                .count();
            // The same path as asked for is not a suggestion.
            (have != wanted).then_some((usize::MAX - shared, distance, candidate.len(), candidate))
        })
        .collect();
    scored.sort();
    scored
        .into_iter()
        .take(MOST)
        .map(|(_, _, _, path)| path.to_owned())
        .collect()
}

/// How far apart two file names are: 0 equal, 1 equal but for case, else 2 + their edit
/// distance when it is small for their length (a quarter of the longer, at least 1); `None`
/// when they are not near.
fn name_distance(a: &str, b: &str) -> Option<usize> {
    if a == b {
        return Some(0);
    }
    if a.eq_ignore_ascii_case(b) {
        return Some(1);
    }
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let allowed = (a.len().max(b.len()) / 4).max(1);
    if a.len().abs_diff(b.len()) > allowed {
        return None;
    }
    // Edit distance with adjacent transpositions (`mian` → `main` is one edit).
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    let d = d[a.len()][b.len()];
    (d <= allowed).then_some(2 + d)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROJECT: &[&str] = &[
        "notes.txt",
        "docs/notes.txt",
        "docs/guide.md",
        "src/main.rs",
        "src/lib.rs",
        "src/bin/tool.rs",
        "tests/main_test.rs",
        "README.md",
    ];

    fn near(missing: &str) -> Vec<String> {
        rank(&components(missing), PROJECT.iter().copied())
    }

    #[test]
    fn ranked_by_shared_tail_then_name_then_length() {
        let cases: &[(&str, &[&str])] = &[
            ("project_root/notes.txt", &["notes.txt", "docs/notes.txt"]),
            ("/home/user/project/src/main.rs", &["src/main.rs"]),
            ("notes.txt.bak", &[]),
            ("src/mian.rs", &["src/main.rs"]),
            ("guide.md", &["docs/guide.md"]),
            ("readme.md", &["README.md"]),
            ("src/bin/tool.rs", &[]),
            ("zzz/qqq.py", &[]),
            ("lib.rs", &["src/lib.rs"]),
        ];
        for &(missing, want) in cases {
            assert_eq!(near(missing), want, "{missing}");
        }
    }

    #[test]
    fn nearest_names_by_prefix_then_distance() {
        let ids = [
            "s-20261206-ab12",
            "s-20261206-ab13",
            "s-20261105-ff00",
            "plan",
        ];
        assert_eq!(
            nearest_names("s-20261206-ab1", ids.iter().copied()),
            ["s-20261206-ab12", "s-20261206-ab13"]
        );
        assert_eq!(
            nearest_names("s-20261206-ab21", ids.iter().copied()),
            ["s-20261206-ab12", "s-20261206-ab13"]
        );
        assert!(nearest_names("zzz", ids.iter().copied()).is_empty());
    }

    #[test]
    fn name_distances() {
        assert_eq!(name_distance("main.rs", "main.rs"), Some(0));
        assert_eq!(name_distance("Main.rs", "main.rs"), Some(1));
        assert_eq!(name_distance("mian.rs", "main.rs"), Some(3));
        assert_eq!(name_distance("a.rs", "b.rs"), Some(3));
        assert_eq!(name_distance("lib.rs", "main.rs"), None);
        assert_eq!(name_distance("x", "notes.txt"), None);
    }

    /// Through a real walk: ignored, hidden and out-of-scope files are never named.
    #[test]
    fn a_hint_names_only_files_the_call_could_read() {
        struct NoSecrets;
        impl ReadScope for NoSecrets {
            fn admits(&self, path: &str) -> bool {
                !path.split('/').any(|c| c == ".env")
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for (path, text) in [
            ("notes.txt", "n"),
            ("config/.env", "SECRET=1"),
            ("config/app.env", "A=1"),
            ("target/notes.txt", "built"),
            (".hidden/notes.txt", "h"),
            (".gitignore", "target/\n"),
        ] {
            std::fs::create_dir_all(root.join(path).parent().unwrap()).unwrap();
            std::fs::write(root.join(path), text).unwrap();
        }
        assert_eq!(
            nearest_paths(root, &NoSecrets, "project_root/notes.txt"),
            ["notes.txt"]
        );
        assert_eq!(
            nearest_paths(root, &NoSecrets, "app.env"),
            ["config/app.env"]
        );
        assert!(nearest_paths(root, &NoSecrets, ".env").is_empty());
        let error = ToolError::new(
            ErrorCode::NOT_FOUND,
            "read_file: x/notes.txt does not exist",
        );
        let hinted = hint_not_found(error, root, &NoSecrets, "x/notes.txt");
        assert_eq!(
            hinted.message,
            "read_file: x/notes.txt does not exist; the nearest existing paths: notes.txt"
        );
        let other = ToolError::new(ErrorCode::INVALID_ARGUMENTS, "bad");
        assert_eq!(
            hint_not_found(other, root, &NoSecrets, "notes.txt").message,
            "bad"
        );
    }
}
