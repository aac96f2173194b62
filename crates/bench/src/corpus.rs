//! The search benchmarks' corpus: the vendored sources of this workspace's own dependencies
//! (`cargo vendor` into `target/bench-corpus/`), real code nobody here wrote.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The corpus directory, created with `cargo vendor` when absent.
pub fn vendored() -> Result<PathBuf, String> {
    let workspace = workspace()?;
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
    finish(dir)
}

/// A small project of 20 files (15 `.rs` in `src/` and `tests/`, 4 `.md`, a `Cargo.toml`), the
/// size of a repository an agent is often pointed at, under `target/bench-corpus-small/`; a
/// git repository like [`vendored`]'s, so every peer honours the same rules.
pub fn small() -> Result<PathBuf, String> {
    let dir = workspace()?.join("target/bench-corpus-small");
    if dir.join(".done").exists() {
        return Ok(dir);
    }
    let write = |rel: String, text: String| -> Result<(), String> {
        let path = dir.join(&rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("creating {rel}: {e}"))?;
        }
        std::fs::write(&path, text).map_err(|e| format!("writing {rel}: {e}"))
    };
    for i in 0..10 {
        write(
            format!("src/module_{i}.rs"),
            format!("pub fn value_{i}() -> u32 {{\n    {i}\n}}\n"),
        )?;
    }
    for i in 0..3 {
        write(
            format!("src/nested/deep_{i}.rs"),
            format!("pub const DEPTH_{i}: usize = {i};\n"),
        )?;
    }
    for i in 0..2 {
        write(
            format!("tests/case_{i}.rs"),
            format!("#[test]\nfn case_{i}() {{}}\n"),
        )?;
    }
    for name in ["README", "CHANGELOG", "docs/guide", "docs/design"] {
        write(format!("{name}.md"), format!("# {name}\n"))?;
    }
    write(
        "Cargo.toml".to_owned(),
        "[package]\nname = \"small\"\nversion = \"0.1.0\"\n".to_owned(),
    )?;
    finish(dir)
}

/// This workspace's root.
fn workspace() -> Result<PathBuf, String> {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .map(Path::to_path_buf)
        .ok_or_else(|| "the bench crate is not inside a workspace".to_owned())
}

/// Makes a corpus directory a git repository of its own, so every peer honours its
/// `.gitignore` files the same way (fd before 8.7 does so only inside a git repository), and
/// marks it complete.
fn finish(dir: PathBuf) -> Result<PathBuf, String> {
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
