//! The recursive listing list_files and search share: through the root handle, no link
//! followed, `.git` and tackle's store never entered, bounded.

use tackle_fs::{EntryKind, RelPath, Root};
use tackle_tool::ReadScope;

use crate::glob::Glob;

/// The most entries one walk visits.
pub const MAX_ENTRIES: usize = 5_000;

/// Directories a walk never enters.
const SKIPPED: [&str; 2] = [".git", ".agents/store"];

/// What a walk found: root-relative paths of regular files and directories, in order.
pub struct Walked {
    pub files: Vec<String>,
    /// The walk stopped at [`MAX_ENTRIES`].
    pub truncated: bool,
}

impl Walked {
    /// The files found beneath `dir` that the call's read scope admits and `glob` (matched
    /// against the path relative to `dir`) selects, in order.
    pub fn selected<'a>(
        self,
        dir: &'a RelPath,
        glob: Option<&'a Glob>,
        scope: &'a dyn ReadScope,
    ) -> impl Iterator<Item = String> + 'a {
        self.files.into_iter().filter(move |path| {
            let within = if dir.is_root() {
                path.as_str()
            } else {
                path.strip_prefix(dir.as_str())
                    .and_then(|p| p.strip_prefix('/'))
                    .unwrap_or(path)
            };
            scope.admits(path) && glob.is_none_or(|g| g.matches(within))
        })
    }
}

pub fn walk(root: &Root, start: &RelPath) -> Result<Walked, tackle_fs::FsError> {
    let mut files = Vec::new();
    let mut stack = vec![start.as_str().to_owned()];
    let mut visited = 0usize;
    while let Some(dir) = stack.pop() {
        let rel = root.resolve(&dir)?;
        let mut entries = match root.read_dir(&rel) {
            Ok(entries) => entries,
            // The start must be listable; a directory below that vanished or is refused is
            // left out.
            Err(e) if dir == start.as_str() => return Err(e),
            Err(_) => continue,
        };
        let mut subdirs = Vec::new();
        for entry in std::mem::take(&mut entries) {
            visited += 1;
            if visited > MAX_ENTRIES {
                return Ok(Walked {
                    files,
                    truncated: true,
                });
            }
            let name = entry.name.to_string_lossy().into_owned();
            let path = if rel.is_root() {
                name
            } else {
                format!("{}/{name}", rel.as_str())
            };
            if SKIPPED.contains(&path.as_str()) {
                continue;
            }
            match entry.kind {
                EntryKind::Dir => subdirs.push(path),
                EntryKind::File => files.push(path),
                _ => {}
            }
        }
        // Popped last-pushed first: pushed in reverse, the directories are entered in order.
        stack.extend(subdirs.into_iter().rev());
    }
    Ok(Walked {
        files,
        truncated: false,
    })
}
