//! The search benchmarks' corpus: the vendored sources of this workspace's own dependencies
//! (`cargo vendor` into `target/bench-corpus/`), real code nobody here wrote.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The corpus directory, created with `cargo vendor` when absent.
pub fn vendored() -> Result<PathBuf, String> {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .ok_or("the bench crate is not inside a workspace")?
        .to_path_buf();
    let dir = workspace.join("target/bench-corpus");
    if dir.join(".done").exists() {
        return Ok(dir);
    }
    let status = Command::new(env!("CARGO"))
        .args(["vendor", "--locked", "--versioned-dirs", "--quiet"])
        .arg(&dir)
        .current_dir(&workspace)
        .stdout(std::process::Stdio::null())
        .status()
        .map_err(|e| format!("running cargo vendor: {e}"))?;
    if !status.success() {
        return Err(format!(
            "cargo vendor into {} failed: {status}",
            dir.display()
        ));
    }
    // A repository of its own, so every peer honours the crates' .gitignore files the same
    // way (fd before 8.7 does so only inside a git repository).
    let status = Command::new("git")
        .args(["init", "-q"])
        .current_dir(&dir)
        .status()
        .map_err(|e| format!("running git init: {e}"))?;
    if !status.success() {
        return Err(format!("git init in {} failed: {status}", dir.display()));
    }
    std::fs::write(dir.join(".done"), "").map_err(|e| e.to_string())?;
    Ok(dir)
}
