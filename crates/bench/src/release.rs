//! The release build of tackle that a benchmark runs as a child process.

use std::path::PathBuf;
use std::process::Command;

/// This workspace's root.
pub fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Builds `tackle-cli` in release (a no-op when it is current) and returns the binary's path
/// under [`crate::target_dir`], where cargo put it.
pub fn release_tackle() -> std::io::Result<PathBuf> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .args(["build", "--release", "-q", "-p", "tackle-cli"])
        .current_dir(workspace())
        .status()?;
    if !status.success() {
        return Err(std::io::Error::other(format!(
            "building tackle in release failed ({status})"
        )));
    }
    Ok(crate::target_dir().join("release/tackle"))
}
