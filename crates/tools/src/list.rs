//! Directory listing shared by `list_dir` and `read_file` on a directory.

use std::path::Path;

use tackle_tool::ToolError;

/// One directory entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub name: String,
    pub kind: EntryKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryKind {
    File,
    Dir,
    Symlink,
    Other,
}

impl Entry {
    /// `name/` for directories, `name@` for symlinks, the bare name otherwise.
    pub fn display_name(&self) -> String {
        match self.kind {
            EntryKind::Dir => format!("{}/", self.name),
            EntryKind::Symlink => format!("{}@", self.name),
            EntryKind::File | EntryKind::Other => self.name.clone(),
        }
    }
}

/// Entries sorted by name (bytewise), without following symlinks.
pub fn list_entries(tool: &str, path: &Path, shown: &str) -> Result<Vec<Entry>, ToolError> {
    let rd = std::fs::read_dir(path).map_err(|e| ToolError::io(&format!("{tool}: {shown}"), &e))?;
    let mut out = Vec::new();
    for item in rd {
        let item = item.map_err(|e| ToolError::io(&format!("{tool}: {shown}"), &e))?;
        let kind = match item.file_type() {
            Ok(t) if t.is_dir() => EntryKind::Dir,
            Ok(t) if t.is_symlink() => EntryKind::Symlink,
            Ok(t) if t.is_file() => EntryKind::File,
            _ => EntryKind::Other,
        };
        out.push(Entry {
            name: item.file_name().to_string_lossy().into_owned(),
            kind,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}
