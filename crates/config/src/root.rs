//! Finding the project root.

use std::path::{Path, PathBuf};

use crate::bail;
use crate::error::Context;

/// `--root` if given, else the nearest ancestor of `cwd` holding `.agents/` or `.git/`.
pub fn find(explicit: Option<&Path>, cwd: &Path) -> crate::Result<PathBuf> {
    if let Some(root) = explicit {
        let meta = std::fs::metadata(root)
            .with_context(|| format!("--root {}: cannot read it", root.display()))?;
        if !meta.is_dir() {
            bail!(
                "--root {} is not a directory; pass the project directory",
                root.display()
            );
        }
        return root
            .canonicalize()
            .with_context(|| format!("--root {}", root.display()));
    }
    for dir in cwd.ancestors() {
        if dir.join(".agents").is_dir() || dir.join(".git").exists() {
            return Ok(dir.to_path_buf());
        }
    }
    bail!(
        "no project root found: neither {} nor any parent holds .agents/ or .git/; pass --root DIR \
         or create .agents/ in the project",
        cwd.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_marker_wins() {
        let t = tempfile::tempdir().unwrap();
        let outer = t.path();
        std::fs::create_dir_all(outer.join(".git")).unwrap();
        std::fs::create_dir_all(outer.join("inner/.agents")).unwrap();
        std::fs::create_dir_all(outer.join("inner/src/deep")).unwrap();
        assert_eq!(
            find(None, &outer.join("inner/src/deep")).unwrap(),
            outer.join("inner")
        );
        assert_eq!(
            find(None, &outer.join("inner")).unwrap(),
            outer.join("inner")
        );
        std::fs::create_dir_all(outer.join("other")).unwrap();
        assert_eq!(find(None, &outer.join("other")).unwrap(), outer);
        assert!(find(Some(&outer.join("nope")), outer).is_err());
    }
}
