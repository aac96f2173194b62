//! Absolute symlinks that point back inside the root.
//!
//! `RESOLVE_BENEATH` refuses every absolute symlink, including `src/link -> /proj/src/a.rs`
//! whose target is inside the root. When an operation is refused as an escape, the path is
//! expanded here in user space — each symlink on it replaced by its target, absolute targets
//! re-rooted if (and only if) they lie beneath the root — and the operation is retried once on
//! the expanded path, again beneath the root handle. The expansion only computes a path; the
//! kernel's confined resolution of the retry is still what decides, so a race here can at worst
//! pick a different path inside the root, never one outside it.

use std::collections::VecDeque;
use std::path::{Component, Path};

use crate::{FsError, RelPath, Root};

/// The kernel's own limit on symlinks followed in one resolution.
const MAX_LINKS: usize = 40;

impl Root {
    /// Runs `op` on `rel`; if it is refused as an escape and expanding `rel`'s symlinks gives a
    /// different in-root path, runs `op` once more on that path.
    pub(crate) fn retry_expanded<T>(
        &self,
        rel: &RelPath,
        follow_final: bool,
        op: impl Fn(&RelPath) -> Result<T, FsError>,
    ) -> Result<T, FsError> {
        match op(rel) {
            Err(FsError::OutsideRoot { input }) => {
                let expanded = self.expand_links(rel, follow_final)?;
                if &expanded == rel {
                    return Err(FsError::OutsideRoot { input });
                }
                op(&expanded)
            }
            other => other,
        }
    }

    /// `rel` with every symlink on it replaced by its target (the last one only if
    /// `follow_final`); `OutsideRoot` if any target lies outside the root.
    pub(crate) fn expand_links(
        &self,
        rel: &RelPath,
        follow_final: bool,
    ) -> Result<RelPath, FsError> {
        let outside = || FsError::OutsideRoot {
            input: rel.to_string(),
        };
        let mut pending: VecDeque<String> = components(rel.as_path())
            .ok_or_else(outside)?
            .into_iter()
            .collect();
        let mut done: Vec<String> = Vec::new();
        let mut links = 0;
        while let Some(part) = pending.pop_front() {
            if part == ".." {
                done.pop().ok_or_else(outside)?;
                continue;
            }
            if pending.is_empty() && !follow_final {
                done.push(part);
                break;
            }
            let candidate = RelPath::from_parts(done.iter().chain([&part]));
            let is_link = match self.dir.symlink_metadata(candidate.as_path()) {
                Ok(meta) => meta.file_type().is_symlink(),
                Err(e) => match FsError::from_io("stat", rel, e) {
                    // The rest does not exist yet: keep it as written.
                    FsError::NotFound { .. } | FsError::NotADirectory { .. } => false,
                    other => return Err(other),
                },
            };
            if !is_link {
                done.push(part);
                continue;
            }
            links += 1;
            if links > MAX_LINKS {
                return Err(FsError::Io {
                    op: "resolve",
                    path: rel.to_string(),
                    source: std::io::Error::from_raw_os_error(libc::ELOOP),
                });
            }
            let target = self
                .dir
                .read_link_contents(candidate.as_path())
                .map_err(|e| FsError::from_io("read link", rel, e))?;
            let target = if target.is_absolute() {
                done.clear();
                target.strip_prefix(self.path()).map_err(|_| outside())?
            } else {
                target.as_path()
            };
            let parts = components(target).ok_or_else(outside)?;
            for part in parts.into_iter().rev() {
                pending.push_front(part);
            }
        }
        Ok(RelPath::from_parts(done.iter()))
    }
}

/// The normal and `..` components of a relative path; `None` if it has a root or a prefix, or
/// is not UTF-8.
fn components(path: &Path) -> Option<Vec<String>> {
    let mut out = Vec::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => out.push("..".to_owned()),
            Component::Normal(s) => out.push(s.to_str()?.to_owned()),
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(out)
}
