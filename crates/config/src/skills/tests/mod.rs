//! Skills: the format's rules as a table (each rule broken and kept), skills in the shapes
//! published skills take, and the scopes with folder trust.

mod fixtures;
mod rules_table;
mod scopes;

use std::path::{Path, PathBuf};

/// Writes `text` at `dir/rel`, making the folders.
pub(super) fn put(dir: &Path, rel: &str, text: &str) -> PathBuf {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    path
}
