//! Directory listing shared by `list_dir` and `read_file` on a directory.

use tackle_fs::{DirEntry, EntryKind};

/// `name/` for directories, `name@` for symlinks, the bare name otherwise.
pub fn display_name(entry: &DirEntry) -> String {
    let name = entry.name.to_string_lossy();
    match entry.kind {
        EntryKind::Dir => format!("{name}/"),
        EntryKind::Symlink => format!("{name}@"),
        EntryKind::File | EntryKind::Other => name.into_owned(),
    }
}
