//! A peer's process and `tackle`'s, run with the environment a person's shell gives them.
//!
//! `cargo bench` runs a benchmark with `LD_LIBRARY_PATH` extended by the workspace's target
//! directories and the toolchain's libraries. The dynamic loader searches each of those
//! directories (and their `glibc-hwcaps`, `tls` and platform subdirectories) for every
//! library a program links before the system's own: about 160 failed lookups a start, paid by
//! both commands, and by neither when a person times them from a shell. Those entries are
//! removed; the rest of the environment, the user's own `LD_LIBRARY_PATH` entries included,
//! is kept.

use std::ffi::OsString;
use std::path::Path;
use std::process::Command;

/// `program` as a command whose environment lacks cargo's `LD_LIBRARY_PATH` entries.
pub fn command(program: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut cmd = Command::new(program);
    if let Some(path) = std::env::var_os("LD_LIBRARY_PATH") {
        match users_entries(&path, &crate::target_dir()) {
            Some(kept) => cmd.env("LD_LIBRARY_PATH", kept),
            None => cmd.env_remove("LD_LIBRARY_PATH"),
        };
    }
    cmd
}

/// The entries of `path` that are neither under `target` nor a toolchain's library
/// directory; `None` when none is left.
fn users_entries(path: &OsString, target: &Path) -> Option<OsString> {
    let target = target.canonicalize().unwrap_or_else(|_| target.to_owned());
    let kept: Vec<_> = std::env::split_paths(path)
        .filter(|entry| {
            let resolved = entry.canonicalize().unwrap_or_else(|_| entry.clone());
            !resolved.starts_with(&target)
                && !entry
                    .components()
                    .any(|c| c.as_os_str() == "toolchains" || c.as_os_str() == "rustlib")
        })
        .collect();
    if kept.is_empty() {
        None
    } else {
        std::env::join_paths(kept).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cargos_entries_go_and_the_users_stay() {
        let target = std::env::temp_dir().join("tackle-user-env-target");
        let path = std::env::join_paths([
            target.join("release"),
            target.join("release/deps"),
            "/home/u/.rustup/toolchains/stable-x86_64-unknown-linux-gnu/lib".into(),
            "/opt/own/lib".into(),
        ])
        .unwrap();
        assert_eq!(
            users_entries(&path, &target),
            Some(OsString::from("/opt/own/lib"))
        );
        let only_cargo = std::env::join_paths([target.join("release")]).unwrap();
        assert_eq!(users_entries(&only_cargo, &target), None);
    }
}
