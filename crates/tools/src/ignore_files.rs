//! The ignore files of a walk (`.ignore`, `.gitignore`, `.git/info/exclude`, the user's global
//! git excludes), read through [`tackle_fs::Root`] and matched with `ignore::gitignore`.
//!
//! **Owns** which entries those files exclude, with the precedence ripgrep's `ignore` crate
//! gives them when it reads them itself (and `--no-require-git`): per kind of file the deepest
//! directory with a matching line decides, and the kinds rank `.ignore` over `.gitignore` over
//! `.git/info/exclude` over the global excludes, a `!` line in a higher rank overriding a lower.
//! Directories above the walk's start count up to the project root, never beyond it.
//!
//! **Key decision:** the walker is told to read no ignore file itself; this module reads each
//! one beneath the root handle, as a regular file of at most [`MAX_IGNORE_FILE_BYTES`]. A
//! committed `.gitignore` that is a link to `/dev/zero`, a FIFO, a directory or a link out of
//! the root would otherwise make every walk allocate until abort, hang, or read an outside
//! file (whose lines then decide which files are listed: an oracle). Such a file is skipped and
//! reported in the result ([`IgnoreRules::skipped`]); the walk goes on without it. A dangling
//! link or an absent file is simply no rules. The alternative, letting `WalkBuilder` open them
//! by path, cannot be confined: it opens with `std::fs` on absolute names.
//!
//! Differences from the `ignore` crate, all on the side of reading less: `.git/info/exclude` is
//! read only where `.git` is a directory (a `.git` *file* points to a repository elsewhere, which
//! may lie outside the root); the global excludes are skipped when the user's home or
//! `$XDG_CONFIG_HOME` lies inside the project root (the repository would then choose them).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use tackle_fs::{FsError, ReadOptions, RelPath, Root};

/// The largest ignore file read; a larger one is skipped and reported. Real ones are a few
/// kilobytes; the largest in common use (generated monorepo lists) stay far below a megabyte.
pub const MAX_IGNORE_FILE_BYTES: u64 = 1024 * 1024;

/// An ignore file that was not used, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkippedIgnoreFile {
    /// Root-relative path of the ignore file.
    pub path: String,
    /// The refusal, as a sentence (`… is a FIFO, not a regular file`).
    pub reason: String,
}

/// Which kind of ignore file a matcher came from, in rank order (a lower index wins).
const KINDS: usize = 3;
const DOT_IGNORE: usize = 0;
const GITIGNORE: usize = 1;
const GIT_EXCLUDE: usize = 2;

/// The matchers of one directory that has at least one rule, linked to the nearest ancestor
/// that has any. Directories without rules share their parent's chain.
#[derive(Debug)]
struct Level {
    matchers: [Gitignore; KINDS],
    parent: Option<Arc<Level>>,
}

/// The ignore rules of one walk, built lazily per directory as the walk meets it.
pub struct IgnoreRules {
    root: Arc<Root>,
    /// The root's canonical absolute path (what the walker's paths start with).
    root_abs: PathBuf,
    /// The same as text without a trailing `/` (empty for `/`); `None` when it is not UTF-8,
    /// and then no entry beneath it has a root-relative name.
    root_text: Option<String>,
    global: Arc<Gitignore>,
    /// Root-relative directory → its chain (`None` when neither it nor an ancestor has rules).
    chains: RwLock<HashMap<String, Option<Arc<Level>>, foldhash::fast::RandomState>>,
    skipped: Mutex<Vec<SkippedIgnoreFile>>,
}

impl IgnoreRules {
    pub fn new(root: Arc<Root>) -> IgnoreRules {
        let root_abs = root.path().to_path_buf();
        let root_text = root_abs
            .to_str()
            .map(|t| t.strip_suffix('/').unwrap_or(t).to_owned());
        IgnoreRules {
            global: global_excludes(&root_abs),
            root,
            root_abs,
            root_text,
            chains: RwLock::new(HashMap::default()),
            skipped: Mutex::new(Vec::new()),
        }
    }

    /// Whether the entry at `abs` (beneath the root; a directory when `is_dir`) is ignored.
    pub fn is_ignored(&self, abs: &Path, is_dir: bool) -> bool {
        let Some(parent) = self.parent_relative(abs) else {
            return false;
        };
        let chain = self.chain(parent);
        let mut found: [Match<()>; KINDS] = [Match::None, Match::None, Match::None];
        let mut level = chain.as_deref();
        while let Some(l) = level {
            for (kind, slot) in found.iter_mut().enumerate() {
                if slot.is_none() {
                    *slot = l.matchers[kind].matched(abs, is_dir).map(|_| ());
                }
            }
            level = l.parent.as_deref();
        }
        let global = self.global.matched(abs, is_dir).map(|_| ());
        let [dot_ignore, gitignore, exclude] = found;
        dot_ignore.or(gitignore).or(exclude).or(global).is_ignore()
    }

    /// The ignore files that were refused, sorted by path.
    pub fn skipped(&self) -> Vec<SkippedIgnoreFile> {
        let mut out = self
            .skipped
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        out.sort_by(|a, b| a.path.cmp(&b.path));
        out.dedup();
        out
    }

    /// The directory holding `abs`, root-relative (`.` for the root); `None` for the root
    /// itself, outside the root, or a name that is not UTF-8. On the text, not the path's
    /// components: every walked entry asks it, and the walker's paths are clean (absolute, no
    /// `.`, `..` or doubled `/`).
    fn parent_relative<'a>(&self, abs: &'a Path) -> Option<&'a str> {
        let (parent, _) = abs.to_str()?.rsplit_once('/')?;
        let rest = parent.strip_prefix(self.root_text.as_deref()?)?;
        if rest.is_empty() {
            return Some(".");
        }
        rest.strip_prefix('/').filter(|r| !r.is_empty())
    }

    /// The chain of `dir` (root-relative), building it and its ancestors' on first use.
    fn chain(&self, dir: &str) -> Option<Arc<Level>> {
        if let Some(known) = self
            .chains
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(dir)
        {
            return known.clone();
        }
        let parent = match dir.rsplit_once('/') {
            _ if dir == "." => None,
            Some((up, _)) => self.chain(up),
            None => self.chain("."),
        };
        let matchers = self.read_level(dir);
        let chain = if matchers.iter().all(Gitignore::is_empty) {
            parent
        } else {
            Some(Arc::new(Level { matchers, parent }))
        };
        self.chains
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .entry(dir.to_owned())
            .or_insert(chain)
            .clone()
    }

    /// The three matchers of one directory, each from its file read through the root.
    fn read_level(&self, dir: &str) -> [Gitignore; KINDS] {
        let abs_dir = if dir == "." {
            self.root_abs.clone()
        } else {
            self.root_abs.join(dir)
        };
        let mut matchers = [Gitignore::empty(), Gitignore::empty(), Gitignore::empty()];
        matchers[DOT_IGNORE] = self.matcher(&abs_dir, dir, ".ignore");
        matchers[GITIGNORE] = self.matcher(&abs_dir, dir, ".gitignore");
        matchers[GIT_EXCLUDE] = self.git_exclude(&abs_dir, dir);
        matchers
    }

    /// The matcher of `<dir>/.git/info/exclude`, used only where `.git` is a directory itself.
    /// The file is looked for first and `.git` checked only when it was there (or refused): it
    /// is absent from almost every directory a walk meets, and its absence costs one confined
    /// open where the check costs a confined stat resolved component by component. What is
    /// read through a `.git` that is not a directory is dropped unused and unreported.
    fn git_exclude(&self, abs_dir: &Path, dir: &str) -> Gitignore {
        let path = join(dir, ".git/info/exclude");
        match self.read_ignore_file(&path) {
            Probe::Absent => Gitignore::empty(),
            Probe::Read(bytes) if self.is_git_dir(dir) => {
                compile(abs_dir, &self.root_abs.join(&path), &bytes)
            }
            Probe::Refused(rel, e) if self.is_git_dir(dir) => {
                self.skip(&rel, &e);
                Gitignore::empty()
            }
            Probe::Read(_) | Probe::Refused(..) => Gitignore::empty(),
        }
    }

    /// Whether `<dir>/.git` is a directory itself (not a link, not a `gitdir:` file).
    fn is_git_dir(&self, dir: &str) -> bool {
        let Ok(rel) = self.root.resolve(&join(dir, ".git")) else {
            return false;
        };
        matches!(
            self.root.metadata(&rel),
            Ok(Some(m)) if m.kind == tackle_fs::EntryKind::Dir
        )
    }

    /// The matcher of `<dir>/<name>`, rooted at `abs_dir`; empty when absent or refused.
    fn matcher(&self, abs_dir: &Path, dir: &str, name: &str) -> Gitignore {
        let path = join(dir, name);
        match self.read_ignore_file(&path) {
            Probe::Absent => Gitignore::empty(),
            Probe::Read(bytes) => compile(abs_dir, &self.root_abs.join(&path), &bytes),
            Probe::Refused(rel, e) => {
                self.skip(&rel, &e);
                Gitignore::empty()
            }
        }
    }

    /// Reads the ignore file at root-relative `path` (as [`Self::parent_relative`] and
    /// [`join`] build it: no `.`, `..` or doubled `/`).
    ///
    /// Almost every directory a walk meets has none, so the common answers are cheap: one
    /// confined open of the name as it stands ([`Root::open_walked_file`]: beneath the root
    /// handle, a final link not followed, non-blocking) says "nothing there" in one system call,
    /// or hands over a regular file within the cap. Anything else (a link, a FIFO, a directory,
    /// a hard-linked or oversized file) goes the general way, [`Root::read_capped`], which
    /// follows links that stay beneath the root, looks before it opens and names the refusal,
    /// so what is read or reported is the same either way. The fast open does not look first:
    /// a device node named like an ignore file would be opened (without blocking, never read),
    /// which git checkouts and archives unpacked without privileges cannot create.
    fn read_ignore_file(&self, path: &str) -> Probe {
        use std::io::Read as _;
        match self.root.open_walked_file(path, ReadOptions::default()) {
            Err(FsError::NotFound { .. }) => return Probe::Absent,
            Ok(found) if found.len <= MAX_IGNORE_FILE_BYTES => {
                let mut bytes = Vec::with_capacity(usize::try_from(found.len).unwrap_or(0));
                let read = (&found.file)
                    .take(MAX_IGNORE_FILE_BYTES + 1)
                    .read_to_end(&mut bytes);
                if read.is_ok() && bytes.len() as u64 <= MAX_IGNORE_FILE_BYTES {
                    return Probe::Read(bytes);
                }
            }
            _ => {}
        }
        let Ok(rel) = self.root.resolve(path) else {
            return Probe::Absent;
        };
        match self.root.read_capped(&rel, MAX_IGNORE_FILE_BYTES) {
            Ok(bytes) => Probe::Read(bytes),
            // Nothing there (or a dangling link): no rules, nothing to report.
            Err(FsError::NotFound { .. } | FsError::NotADirectory { .. }) => Probe::Absent,
            Err(e) => Probe::Refused(rel, e),
        }
    }

    fn skip(&self, rel: &RelPath, e: &FsError) {
        self.skipped
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(SkippedIgnoreFile {
                path: rel.to_string(),
                reason: e.to_string(),
            });
    }
}

/// What looking for one ignore file found.
enum Probe {
    /// Nothing there, or a dangling link: no rules, nothing to report.
    Absent,
    /// The file's bytes.
    Read(Vec<u8>),
    /// Something there that is not read, and why (reported in the result).
    Refused(RelPath, FsError),
}

fn join(dir: &str, name: &str) -> String {
    if dir == "." {
        name.to_owned()
    } else {
        format!("{dir}/{name}")
    }
}

/// Compiles the lines of an ignore file; a malformed line is dropped, as git does.
fn compile(abs_dir: &Path, from: &Path, bytes: &[u8]) -> Gitignore {
    let text = String::from_utf8_lossy(bytes);
    let mut builder = GitignoreBuilder::new(abs_dir);
    for line in text.lines() {
        // A bad glob on one line leaves the others in force.
        let _ = builder.add_line(Some(from.to_path_buf()), line);
    }
    builder.build().unwrap_or_else(|_| Gitignore::empty())
}

/// The user's global git excludes (`core.excludesFile`, or `$XDG_CONFIG_HOME/git/ignore`),
/// rooted at the project root; read once per process, as a regular file of bounded size.
fn global_excludes(root_abs: &Path) -> Arc<Gitignore> {
    static GLOBAL: OnceLock<Mutex<HashMap<PathBuf, Arc<Gitignore>>>> = OnceLock::new();
    let cache = GLOBAL.get_or_init(|| Mutex::new(HashMap::new()));
    let mut cache = cache.lock().unwrap_or_else(|p| p.into_inner());
    cache
        .entry(root_abs.to_path_buf())
        .or_insert_with(|| Arc::new(read_global(root_abs)))
        .clone()
}

fn read_global(root_abs: &Path) -> Gitignore {
    let inside = |var: &str| {
        std::env::var_os(var)
            .map(PathBuf::from)
            .is_some_and(|p| p.starts_with(root_abs))
    };
    // A home inside the project: the repository would choose the user's git configuration.
    if inside("HOME") || inside("XDG_CONFIG_HOME") {
        return Gitignore::empty();
    }
    let Some(path) = ignore::gitignore::gitconfig_excludes_path() else {
        return Gitignore::empty();
    };
    if path.starts_with(root_abs) {
        return Gitignore::empty();
    }
    match read_user_file(&path) {
        Some(bytes) => compile(root_abs, &path, &bytes),
        None => Gitignore::empty(),
    }
}

/// A file of the user's own configuration: regular, at most [`MAX_IGNORE_FILE_BYTES`], opened
/// without blocking (a FIFO there is refused, not waited on).
fn read_user_file(path: &Path) -> Option<Vec<u8>> {
    use std::io::Read as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() > MAX_IGNORE_FILE_BYTES {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(MAX_IGNORE_FILE_BYTES)
        .read_to_end(&mut bytes)
        .ok()?;
    Some(bytes)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)] // a failed test should panic loudly
mod tests {
    use super::*;

    fn rules(files: &[(&str, &str)]) -> (tempfile::TempDir, IgnoreRules) {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let p = dir.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        let root = Arc::new(Root::open(dir.path()).unwrap());
        (dir, IgnoreRules::new(root))
    }

    /// One case a row: the files, the entry, whether it is a directory, ignored or not.
    #[test]
    fn precedence_table() {
        type Row = (
            &'static [(&'static str, &'static str)],
            &'static str,
            bool,
            bool,
        );
        let rows: &[Row] = &[
            (&[(".gitignore", "*.log\n")], "a.log", false, true),
            (&[(".gitignore", "*.log\n")], "sub/a.log", false, true),
            (&[(".gitignore", "/a.log\n")], "sub/a.log", false, false),
            (&[(".gitignore", "target/\n")], "target", true, true),
            (&[(".gitignore", "target/\n")], "target", false, false),
            // A deeper file overrides a shallower one of the same kind.
            (
                &[(".gitignore", "*.log\n"), ("sub/.gitignore", "!keep.log\n")],
                "sub/keep.log",
                false,
                false,
            ),
            (
                &[(".gitignore", "!*.log\n"), ("sub/.gitignore", "*.log\n")],
                "sub/x.log",
                false,
                true,
            ),
            // .ignore outranks .gitignore, even from a shallower directory.
            (
                &[(".ignore", "!x.log\n"), ("sub/.gitignore", "x.log\n")],
                "sub/x.log",
                false,
                false,
            ),
            (
                &[(".gitignore", "!x.log\n"), (".ignore", "x.log\n")],
                "x.log",
                false,
                true,
            ),
            // .git/info/exclude applies where .git is a directory, below .gitignore.
            (
                &[(".git/info/exclude", "secret.txt\n")],
                "secret.txt",
                false,
                true,
            ),
            (
                &[
                    (".git/info/exclude", "*.txt\n"),
                    (".gitignore", "!keep.txt\n"),
                ],
                "keep.txt",
                false,
                false,
            ),
            // Lines relative to the ignore file's own directory.
            (
                &[("sub/.gitignore", "/only.rs\n")],
                "sub/only.rs",
                false,
                true,
            ),
            (&[("sub/.gitignore", "/only.rs\n")], "only.rs", false, false),
            (&[], "anything.rs", false, false),
        ];
        for (files, entry, is_dir, ignored) in rows {
            let (dir, r) = rules(files);
            let abs = dir.path().canonicalize().unwrap().join(entry);
            assert_eq!(r.is_ignored(&abs, *is_dir), *ignored, "{files:?} {entry}");
            assert!(r.skipped().is_empty(), "{files:?}");
        }
    }

    #[test]
    fn hostile_ignore_files_are_skipped_and_reported() {
        let (dir, _) = rules(&[]);
        let base = dir.path().canonicalize().unwrap();
        std::os::unix::fs::symlink("/dev/zero", base.join(".gitignore")).unwrap();
        std::fs::create_dir(base.join(".ignore")).unwrap();
        std::fs::create_dir(base.join("big")).unwrap();
        std::fs::write(
            base.join("big/.gitignore"),
            vec![b'x'; MAX_IGNORE_FILE_BYTES as usize + 1],
        )
        .unwrap();
        let r = IgnoreRules::new(Arc::new(Root::open(&base).unwrap()));
        assert!(!r.is_ignored(&base.join("big/x"), false));
        let skipped: Vec<String> = r.skipped().into_iter().map(|s| s.path).collect();
        assert_eq!(skipped, [".gitignore", ".ignore", "big/.gitignore"]);
    }

    /// What the quick open hands to the general read gives the same answers: a link to an
    /// ignore file inside the root is followed, a FIFO is refused without waiting, and a
    /// `.git` that is not a directory (a link to one, or a `gitdir:` file) contributes no
    /// exclude file and no report.
    #[test]
    fn ignore_files_behind_links_fifos_and_git_pointers() {
        let (dir, _) = rules(&[
            ("shared/ignore-list", "*.log\n"),
            ("real-git/info/exclude", "*.tmp\n"),
            ("linked/.keep", ""),
            ("pointer/.git", "gitdir: ../real-git\n"),
            ("plain/.git/info/exclude", "*.bak\n"),
        ]);
        let base = dir.path().canonicalize().unwrap();
        std::os::unix::fs::symlink("shared/ignore-list", base.join(".gitignore")).unwrap();
        std::os::unix::fs::symlink("../real-git", base.join("linked/.git")).unwrap();
        let fifo = std::ffi::CString::new(
            base.join("shared/.ignore")
                .into_os_string()
                .into_encoded_bytes(),
        )
        .unwrap();
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        let r = IgnoreRules::new(Arc::new(Root::open(&base).unwrap()));
        assert!(
            r.is_ignored(&base.join("a.log"), false),
            "a linked .gitignore is read"
        );
        assert!(
            !r.is_ignored(&base.join("linked/a.tmp"), false),
            "a linked .git is no repository"
        );
        assert!(
            !r.is_ignored(&base.join("pointer/a.tmp"), false),
            "a gitdir file is not read"
        );
        assert!(
            r.is_ignored(&base.join("plain/a.bak"), false),
            "a real .git's exclude is read"
        );
        assert!(!r.is_ignored(&base.join("shared/x"), false));
        let skipped: Vec<String> = r.skipped().into_iter().map(|s| s.path).collect();
        assert_eq!(skipped, ["shared/.ignore"]);
    }
}
