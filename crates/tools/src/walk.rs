//! Directory walks for the survey tools (`glob`, `grep`, `read_many_files` with a pattern):
//! ripgrep's `ignore` walker, in parallel when the cores are free and the walk is not short (see
//! [`crate::walk_share`]), with the same skipping rules everywhere.
//!
//! What is skipped: hidden files and directories (a name starting with `.`), the vendored
//! directories in [`VENDORED_DIRS`], tackle's store (`.agents/store`, never a walk's to read:
//! the gate denies every `read:` key in it, so each of its files would only be counted), and
//! whatever `.gitignore`, `.git/info/exclude`, the
//! global git excludes and `.ignore` files exclude — honoured whether or not the project is a
//! git repository (ripgrep's and fd's `--no-require-git`). Symlinks are not followed. The start
//! path itself is never skipped, so a model can name a hidden or vendored directory to search it.
//!
//! Ignore files: the walker reads none itself; [`crate::ignore_files`] reads each beneath the
//! root handle, as a bounded regular file, and the walk asks it about every entry. A hostile
//! ignore file (a FIFO, a link to `/dev/zero` or out of the root, a huge one) is skipped and
//! reported in [`WalkCounts::skipped_ignore_files`], never waited on or read whole.
//!
//! Confinement: the start path is resolved through `tackle_fs::Root` and walked by its real
//! path (every symlink on it followed beforehand, [`WalkStart::real`]: a link leading out of the
//! root is refused before the walk starts), entries come from directory listings that never
//! follow links, so no symlinked directory is ever descended into, FIFOs and devices are never
//! handed to a visitor, and files are opened by the tools through the root handle by their real
//! path, so contents never come from outside the root. What remains is a race on names only:
//! if a directory on the way is swapped for a link out *while* being walked, names (not
//! contents) from outside could be listed.
//!
//! Path scope: the gate saw `read:<start>` and `read:<real start>`. Each file found is passed
//! through the call's [`ReadScope`] (the gate's per-file answer) under both its name (beneath
//! the start as given) and its real path before it is matched, read or listed; excluded files
//! are counted, never shown.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ignore::{WalkBuilder, WalkState};
use tackle_fs::{EntryKind, FsError, RelPath, Root};
use tackle_tool::protocol::ErrorCode;
use tackle_tool::{ReadScope, ToolError};

use crate::fs_error;
use crate::ignore_files::{IgnoreRules, SkippedIgnoreFile};
use crate::walk_share::WalkShare;

/// Directory names skipped below the start of a walk: dependency trees nobody here wrote.
pub const VENDORED_DIRS: &[&str] = &["node_modules", "vendor"];

/// Where a walk starts: a directory, or a single file (which is then the only entry).
pub struct WalkStart {
    /// The start as the model named it, normalized (what results show).
    pub rel: RelPath,
    /// The in-root path it resolved to with every symlink followed (what is walked).
    pub real: RelPath,
    pub is_dir: bool,
}

/// Checks that `rel` exists beneath the root, follows its symlinks, and says whether it is a
/// directory.
pub fn check_start(tool: &str, root: &Root, rel: &RelPath) -> Result<WalkStart, ToolError> {
    let real = root.real_path(rel).map_err(|e| fs_error(tool, e))?;
    let meta = root.metadata(&real).map_err(|e| fs_error(tool, e))?;
    let shown = rel.as_str();
    match meta.map(|m| m.kind) {
        None => Err(ToolError::new(
            ErrorCode::NOT_FOUND,
            format!(
                "{tool}: {shown} does not exist; pass a directory inside the project, or . for all of it"
            ),
        )),
        Some(EntryKind::Dir) => Ok(WalkStart {
            rel: rel.clone(),
            real,
            is_dir: true,
        }),
        Some(EntryKind::File) => Ok(WalkStart {
            rel: rel.clone(),
            real,
            is_dir: false,
        }),
        Some(_) => Err(fs_error(
            tool,
            FsError::NotRegularFile {
                path: shown.to_owned(),
                kind: "not a regular file or directory",
            },
        )),
    }
}

/// What a walk hands each per-thread visitor.
pub struct Found<'a> {
    /// Absolute path, beneath the root, with no symlink on it.
    pub abs: &'a Path,
    /// Root-relative beneath the start as the model named it: what results show.
    pub rel: &'a str,
    /// Root-relative with no symlink on it: what to open.
    pub real: &'a str,
}

/// One walker thread's worker: visits files, then yields what it collected.
pub trait FileVisitor: Send {
    type Output: Send;
    fn visit(&mut self, found: Found<'_>);
    fn finish(self) -> Self::Output;
}

/// The outcome of a walk besides what the visitors collected.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WalkCounts {
    /// Files left out because the gate would not let this call read them.
    pub excluded_by_scope: u64,
    /// Ignore files that were not used (not regular, too large, leading out of the root).
    pub skipped_ignore_files: Vec<SkippedIgnoreFile>,
}

impl WalkCounts {
    /// One line per skipped ignore file, for a tool's text result (empty when none).
    pub fn notes(&self) -> String {
        self.skipped_ignore_files
            .iter()
            .map(|s| format!("[ignore file not used: {}]\n", s.reason))
            .collect()
    }

    /// The skipped ignore files as result metadata.
    pub fn skipped_json(&self) -> serde_json::Value {
        self.skipped_ignore_files
            .iter()
            .map(|s| serde_json::json!({ "path": s.path, "reason": s.reason }))
            .collect()
    }
}

/// Walks from `start` (beneath `root`), alone at first and then in parallel (see
/// [`crate::walk_share`]); every regular file the skipping rules and `scope` admit goes to a
/// visitor made by `make`, one per thread.
pub fn walk_files<V: FileVisitor>(
    root: &Arc<Root>,
    start: &WalkStart,
    scope: &dyn ReadScope,
    make: impl Fn() -> V + Sync,
) -> (Vec<V::Output>, WalkCounts) {
    walk_files_shared(root, start, scope, make, WalkShare::take())
}

/// [`walk_files`] with the threads and solo budget of `share`.
fn walk_files_shared<V: FileVisitor>(
    root: &Arc<Root>,
    start: &WalkStart,
    scope: &dyn ReadScope,
    make: impl Fn() -> V + Sync,
    share: WalkShare,
) -> (Vec<V::Output>, WalkCounts) {
    let root_abs = root.path();
    let start_abs: PathBuf = if start.real.is_root() {
        root_abs.to_path_buf()
    } else {
        root_abs.join(start.real.as_path())
    };
    let Some(root_str) = root_abs.to_str() else {
        // A root whose own path is not UTF-8 cannot produce `read:<path>` keys; nothing is found.
        return (Vec::new(), WalkCounts::default());
    };
    let names = Names {
        given: start.rel.as_str(),
        real: start.real.as_str(),
    };
    let outputs = Mutex::new(Vec::new());
    let excluded = std::sync::atomic::AtomicU64::new(0);
    let rules = Arc::new(IgnoreRules::new(Arc::clone(root)));
    let filter_rules = Arc::clone(&rules);
    let mut builder = WalkBuilder::new(&start_abs);
    builder
        .hidden(true)
        // Ignore files are read through the root by `rules`, never by the walker by path.
        .parents(false)
        .ignore(false)
        .git_ignore(false)
        .git_global(false)
        .git_exclude(false)
        .require_git(false)
        .follow_links(false)
        .threads(share.threads)
        .filter_entry(move |e| kept(e, &filter_rules));
    let admit = Admit {
        root: root_str,
        names: &names,
        scope,
        excluded: &excluded,
    };
    // First on this thread: a walk that ends within the solo budget has no walker threads to
    // start, wait for and join. Past it, a parallel walk takes over and skips what was visited.
    let solo = (share.threads > 1).then_some(share.solo);
    if let Some(solo) = walk_solo(&builder, &admit, &make, &outputs, solo) {
        let solo = &solo;
        // A directory whose whole subtree the solo walk got through is not listed again.
        let rules = Arc::clone(&rules);
        let listed = Arc::clone(&solo.listed);
        builder.filter_entry(move |e| {
            !(e.file_type().is_some_and(|t| t.is_dir()) && listed.contains(e.path()))
                && kept(e, &rules)
        });
        builder.build_parallel().run(|| {
            let mut slot = Slot {
                visitor: Some(make()),
                outputs: &outputs,
            };
            let admit = &admit;
            Box::new(move |entry| {
                if let (Ok(entry), Some(v)) = (entry, slot.visitor.as_mut())
                    && !solo.visited(&entry)
                {
                    admit.visit(v, &entry);
                }
                WalkState::Continue
            })
        });
    }
    drop(share);
    let outputs = outputs.into_inner().unwrap_or_else(|p| p.into_inner());
    (
        outputs,
        WalkCounts {
            excluded_by_scope: excluded.into_inner(),
            skipped_ignore_files: rules.skipped(),
        },
    )
}

/// Whether the walk goes into (or lists) `e`: the start always; below it, nothing vendored,
/// not tackle's store, and nothing the ignore files exclude.
fn kept(e: &ignore::DirEntry, rules: &IgnoreRules) -> bool {
    if e.depth() == 0 {
        return true;
    }
    let is_dir = e.file_type().is_some_and(|t| t.is_dir());
    if is_dir
        && e.file_name()
            .to_str()
            .is_some_and(|n| VENDORED_DIRS.contains(&n))
    {
        return false;
    }
    if is_dir && is_store_dir(e.path()) {
        return false;
    }
    !rules.is_ignored(e.path(), is_dir)
}

/// Whether `dir` is a `.agents/store` directory, spelled in any case as the gate's protection
/// matches it (`tackle_gate::PROTECTED`): a walk never enters one.
fn is_store_dir(dir: &Path) -> bool {
    let name = |p: Option<&Path>| {
        p.and_then(Path::file_name)
            .and_then(|n| n.to_str())
            .map(str::to_ascii_lowercase)
    };
    name(Some(dir)).as_deref() == Some("store") && name(dir.parent()).as_deref() == Some(".agents")
}

/// Where a solo walk that ran out of time stopped: the parallel walk that takes over skips
/// what it already did.
struct SoloEnd {
    /// The regular files handed to the visitor.
    files: HashSet<PathBuf>,
    /// Directories whose whole subtree was walked: not listed again.
    listed: Arc<HashSet<PathBuf>>,
    /// The directories the walk was inside when it stopped, the one at depth `i` at `i`.
    open: Vec<PathBuf>,
}

impl SoloEnd {
    /// Whether the solo walk handed `entry` to its visitor. Only a file directly in a
    /// directory it was still inside can be met again (the rest were in `listed` ones), so
    /// only such a file is looked up.
    fn visited(&self, entry: &ignore::DirEntry) -> bool {
        let Some(up) = entry.depth().checked_sub(1) else {
            return false;
        };
        self.open
            .get(up)
            .is_some_and(|dir| entry.path().parent() == Some(dir.as_path()))
            && self.files.contains(entry.path())
    }
}

/// Walks on this thread, every entry to a visitor of its own. With a budget it stops once it
/// has run that long and says how far it got; `None` when the walk is done.
///
/// The walk is depth first and a directory's subtree comes whole before anything after it, so
/// a directory is done once an entry no deeper than it arrives.
fn walk_solo<V: FileVisitor>(
    builder: &WalkBuilder,
    admit: &Admit<'_>,
    make: &impl Fn() -> V,
    outputs: &Mutex<Vec<V::Output>>,
    budget: Option<Duration>,
) -> Option<SoloEnd> {
    /// Entries between two looks at the clock.
    const CLOCK_EVERY: usize = 32;
    let started = Instant::now();
    let mut slot = Slot {
        visitor: Some(make()),
        outputs,
    };
    let mut files = HashSet::new();
    let mut listed = HashSet::new();
    // The directories the walk is inside, outermost first, with their depths (0, 1, 2, …).
    let mut open: Vec<(usize, PathBuf)> = Vec::new();
    for (n, entry) in builder.build().flatten().enumerate() {
        if let Some(budget) = budget {
            if n % CLOCK_EVERY == CLOCK_EVERY - 1 && started.elapsed() >= budget {
                return Some(SoloEnd {
                    files,
                    listed: Arc::new(listed),
                    open: open.into_iter().map(|(_, dir)| dir).collect(),
                });
            }
            let depth = entry.depth();
            while let Some((_, dir)) = open.pop_if(|(d, _)| *d >= depth) {
                listed.insert(dir);
            }
            match entry.file_type() {
                Some(t) if t.is_dir() => open.push((depth, entry.path().to_path_buf())),
                // Only regular files reach a visitor (see `Admit::visit`).
                Some(t) if t.is_file() => {
                    files.insert(entry.path().to_path_buf());
                }
                _ => {}
            }
        }
        if let Some(v) = slot.visitor.as_mut() {
            admit.visit(v, &entry);
        }
    }
    None
}

/// Decides which walked entries reach a visitor: regular files, with a UTF-8 name beneath the
/// root, that the call's scope admits under both names.
struct Admit<'a> {
    root: &'a str,
    names: &'a Names<'a>,
    scope: &'a dyn ReadScope,
    excluded: &'a std::sync::atomic::AtomicU64,
}

impl Admit<'_> {
    fn visit<V: FileVisitor>(&self, visitor: &mut V, entry: &ignore::DirEntry) {
        // Regular files only: links, FIFOs, sockets and devices are never handed over.
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            return;
        }
        let abs = entry.path();
        let Some(real) = relative(self.root, abs) else {
            return;
        };
        let given = self.names.given_name(real);
        let rel = given.as_deref().unwrap_or(real);
        // One name when no link is on the start: asked once.
        if !self.scope.admits(real) || (given.is_some() && !self.scope.admits(rel)) {
            self.excluded
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            return;
        }
        visitor.visit(Found { abs, rel, real });
    }
}

/// The start of a walk as named and as walked, to give each file found its name.
struct Names<'a> {
    given: &'a str,
    real: &'a str,
}

impl Names<'_> {
    /// The name beneath the start as given of a file found at `real`; `None` when the two are
    /// the same (no symlink on the start).
    fn given_name(&self, real: &str) -> Option<String> {
        if self.given == self.real {
            return None;
        }
        let below = if self.real == "." {
            Some(real)
        } else if real == self.real {
            Some("")
        } else {
            real.strip_prefix(self.real)
                .and_then(|r| r.strip_prefix('/'))
        }?;
        Some(match (self.given, below) {
            (given, "") => given.to_owned(),
            (".", below) => below.to_owned(),
            (given, below) => format!("{given}/{below}"),
        })
    }
}

/// Hands a visitor's output over when its walker thread is done with it.
struct Slot<'a, V: FileVisitor> {
    visitor: Option<V>,
    outputs: &'a Mutex<Vec<V::Output>>,
}

impl<V: FileVisitor> Drop for Slot<'_, V> {
    fn drop(&mut self) {
        if let Some(v) = self.visitor.take() {
            let out = v.finish();
            self.outputs
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(out);
        }
    }
}

/// `abs` relative to the root, as a normalized `/`-separated string; `None` for a name that
/// is not UTF-8 (it could not be passed back as a path).
fn relative<'a>(root: &str, abs: &'a Path) -> Option<&'a str> {
    let s = abs.to_str()?;
    let rest = s.strip_prefix(root)?;
    match rest.strip_prefix('/') {
        Some(r) if !r.is_empty() => Some(r),
        _ if rest.is_empty() => Some("."),
        _ => None,
    }
}

/// A compiled `glob` pattern: one without `/` matches the file name at any depth (`*.rs`); one
/// with `/` matches the path relative to the walk's start (`src/**/*.rs`).
#[derive(Clone, Debug)]
pub struct NamePattern {
    matcher: globset::GlobMatcher,
    by_path: bool,
}

pub const INVALID_PATTERN: ErrorCode = ErrorCode::new("invalid_pattern");

/// Longest glob pattern (the longest path Linux resolves). globset panicked on a pattern of a
/// megabyte (the regex it builds outgrew the regex crate's size limit); no useful pattern is
/// longer than a path.
pub const MAX_GLOB_PATTERN_BYTES: usize = 4096;

impl NamePattern {
    pub fn new(tool: &str, pattern: &str) -> Result<NamePattern, ToolError> {
        if pattern.len() > MAX_GLOB_PATTERN_BYTES {
            return Err(ToolError::new(
                INVALID_PATTERN,
                format!(
                    "{tool}: the glob is {} bytes, over the {MAX_GLOB_PATTERN_BYTES} byte limit; \
                     pass a shorter pattern (a directory as the path and a name pattern)",
                    pattern.len()
                ),
            ));
        }
        // globset builds a regex; should any pattern within the limit still make it panic,
        // that is a refused pattern, not a crashed call.
        let built = std::panic::catch_unwind(|| {
            globset::GlobBuilder::new(pattern)
                .literal_separator(true)
                .backslash_escape(true)
                .build()
                .map(|glob| glob.compile_matcher())
        })
        .map_err(|_| {
            ToolError::new(
                INVALID_PATTERN,
                format!(
                    "{tool}: the glob cannot be compiled; pass a simpler pattern with fewer \
                     alternatives and wildcards"
                ),
            )
        })?;
        let matcher = built.map_err(|e| {
            ToolError::new(
                INVALID_PATTERN,
                format!(
                    "{tool}: invalid glob {pattern:?}: {}; use `*` within a name, `**` across \
                         directories, `?` for one character, `[abc]` for a set",
                    e.kind()
                ),
            )
        })?;
        Ok(NamePattern {
            matcher,
            by_path: pattern.contains('/'),
        })
    }

    /// Whether `found` matches, for a walk that started at `start_rel`.
    pub fn matches(&self, start_rel: &str, rel: &str) -> bool {
        if self.by_path {
            let below = if start_rel == "." {
                rel
            } else {
                rel.strip_prefix(start_rel)
                    .and_then(|r| r.strip_prefix('/'))
                    .unwrap_or(rel)
            };
            self.matcher.is_match(below)
        } else {
            let name = rel.rsplit('/').next().unwrap_or(rel);
            self.matcher.is_match(name)
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)] // a failed test should panic loudly
mod tests {
    use super::*;

    #[test]
    fn names_beneath_a_symlinked_start() {
        let cases: &[(&str, &str, &str, Option<&str>)] = &[
            ("src", "src", "src/a.rs", None),
            ("sdir", "secrets", "secrets/key.pem", Some("sdir/key.pem")),
            ("sdir", "secrets", "secrets", Some("sdir")),
            ("a/link", "b/c", "b/c/d/e.rs", Some("a/link/d/e.rs")),
            ("up", ".", "x/y.rs", Some("up/x/y.rs")),
            (
                "alias.txt",
                "secrets/key.pem",
                "secrets/key.pem",
                Some("alias.txt"),
            ),
        ];
        for &(given, real, found, want) in cases {
            let names = Names { given, real };
            assert_eq!(
                names.given_name(found).as_deref(),
                want,
                "{given} -> {real}: {found}"
            );
        }
    }

    #[test]
    fn store_directories_are_recognised_in_any_case() {
        let table: &[(&str, bool)] = &[
            ("/p/.agents/store", true),
            ("/p/.AGENTS/Store", true),
            ("/p/sub/.agents/store", true),
            ("/p/.agents", false),
            ("/p/.agents/plans", false),
            ("/p/store", false),
            ("/p/agents/store", false),
            ("/p/.agents/store/artifacts", false),
        ];
        for &(dir, want) in table {
            assert_eq!(is_store_dir(Path::new(dir)), want, "{dir}");
        }
    }

    #[test]
    fn relative_paths() {
        assert_eq!(relative("/r", Path::new("/r/a/b")), Some("a/b"));
        assert_eq!(relative("/r", Path::new("/r")), Some("."));
        assert_eq!(relative("/r", Path::new("/rx/a")), None);
    }

    #[test]
    fn name_patterns() {
        let p = NamePattern::new("glob", "*.rs").unwrap();
        assert!(p.matches(".", "a/b/c.rs"));
        assert!(!p.matches(".", "a/b/c.rsx"));
        let p = NamePattern::new("glob", "src/**/*.rs").unwrap();
        assert!(p.matches(".", "src/a/b.rs"));
        assert!(p.matches(".", "src/b.rs"));
        assert!(!p.matches(".", "other/src/b.rs"));
        let p = NamePattern::new("glob", "*/x.rs").unwrap();
        assert!(p.matches("crates", "crates/a/x.rs"));
        assert!(!p.matches("crates", "crates/a/b/x.rs"));
        assert_eq!(
            NamePattern::new("glob", "a[").unwrap_err().code,
            INVALID_PATTERN
        );
    }

    /// Long and wildcard-heavy patterns: refused past the limit, compiled or refused within
    /// it, never a panic (a 1 MiB pattern panicked inside globset).
    #[test]
    fn huge_patterns_are_refused_not_panics() {
        let n = MAX_GLOB_PATTERN_BYTES;
        let rows: &[(&str, String, bool)] = &[
            ("1 MiB", "a".repeat(1 << 20), false),
            ("1 MiB of stars", "*".repeat(1 << 20), false),
            ("just past", "a".repeat(n + 1), false),
            ("at the limit", "a".repeat(n), true),
            ("sets", "[!a]".repeat(n / 4), true),
            ("globstars", "**/".repeat(n / 3), true),
            ("alternations", "{a,b}".repeat(n / 5), true),
            (
                "one wide alternation",
                format!("{{{}}}", "a,".repeat(n / 2 - 1)),
                true,
            ),
            ("questions", "?".repeat(n), true),
            ("nested alternation", "{a,".repeat(n / 4), false),
        ];
        for (name, pattern, may_compile) in rows {
            let got = NamePattern::new("glob", pattern);
            if let Err(e) = &got {
                assert_eq!(e.code, INVALID_PATTERN, "{name}");
            }
            if !may_compile {
                assert!(got.is_err(), "{name}");
            }
        }
    }

    /// Collects the names it is handed.
    struct Listed(Vec<String>);

    impl FileVisitor for Listed {
        type Output = Vec<String>;
        fn visit(&mut self, found: Found<'_>) {
            self.0.push(found.rel.to_owned());
        }
        fn finish(self) -> Vec<String> {
            self.0
        }
    }

    /// Leaves out every file named `secret*`.
    struct NoSecrets;

    impl ReadScope for NoSecrets {
        fn admits(&self, path: &str) -> bool {
            !path
                .rsplit('/')
                .next()
                .is_some_and(|n| n.starts_with("secret"))
        }
    }

    #[test]
    fn a_walk_that_goes_parallel_part_way_visits_each_file_once() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".gitignore"), "*.log\n").unwrap();
        // Files beside a subdirectory, so the hand-over falls among files of a directory the
        // solo walk is still inside, with earlier directories done.
        for d in 0..12 {
            let top = dir.path().join(format!("d{d}"));
            std::fs::create_dir_all(top.join("e")).unwrap();
            for f in 0..15 {
                std::fs::write(top.join(format!("f{f}.rs")), "x").unwrap();
                std::fs::write(top.join(format!("e/g{f}.rs")), "x").unwrap();
            }
            std::fs::write(top.join("skip.log"), "x").unwrap();
            std::fs::write(top.join(format!("secret{d}")), "x").unwrap();
        }
        let root = Arc::new(Root::open(dir.path()).unwrap());
        let start = check_start("glob", &root, &root.resolve(".").unwrap()).unwrap();
        let walk = |share| {
            let (parts, counts) =
                walk_files_shared(&root, &start, &NoSecrets, || Listed(Vec::new()), share);
            let mut names: Vec<String> = parts.into_iter().flatten().collect();
            names.sort();
            (names, counts.excluded_by_scope)
        };
        let alone = walk(WalkShare::forced(1, SOLO_WALK_NEVER_ENDS));
        assert_eq!(alone.0.len(), 12 * 30);
        assert_eq!(alone.1, 12);
        // A budget of zero hands over to the walker threads at the first look at the clock, part
        // way through the first directory; an unbounded one never does.
        for share in [
            WalkShare::forced(2, Duration::ZERO),
            WalkShare::forced(4, Duration::ZERO),
            WalkShare::forced(2, SOLO_WALK_NEVER_ENDS),
        ] {
            let threads = share.threads;
            assert_eq!(walk(share), alone, "{threads} threads");
        }
    }

    const SOLO_WALK_NEVER_ENDS: Duration = Duration::from_secs(3600);
}
