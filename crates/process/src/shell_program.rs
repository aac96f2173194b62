//! Which shell runs scripts: bash at a fixed absolute path, else `/bin/sh`.
//!
//! The caller's analyzer reads bash grammar, so the shell that runs a line must be bash, or the
//! caller must know it is not (and read the line as the more cautious `sh` dialect). The shell
//! is looked for at `/bin/bash`, then `/usr/bin/bash`, never through `PATH`: a `PATH` entry the
//! repository controls (`./bin`) must not decide which program interprets every line. A
//! candidate counts only if it is an executable regular file whose real name (every symlink
//! followed) is `bash`, so a `/bin/bash` that links to busybox is not taken for bash. Without
//! one, scripts run with `/bin/sh` and [`ShellKind::Sh`] says so.
//!
//! bash runs as `bash --norc --noprofile -c <script>`. A non-interactive `-c` shell reads no
//! startup file except `$BASH_ENV` (removed from its environment, see `shell_env.rs`), with one
//! exception the flags close: a bash built with `SSH_SOURCE_BASHRC` (Debian's is) reads
//! `~/.bashrc` when `SSH_CLIENT` is set, as it is for anyone working over ssh.
//!
//! Found once per process ([`ShellProgram::discover`]): the answer is part of what the
//! analyzer is told, so it must not change between a line's keys and its run.

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Where bash is looked for, in order.
pub const BASH_PATHS: &[&str] = &["/bin/bash", "/usr/bin/bash"];
/// The shell used where no bash is found.
pub const SH_PATH: &str = "/bin/sh";

/// The grammar the shell that runs scripts reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShellKind {
    /// bash, run as `bash --norc --noprofile -c`.
    Bash,
    /// `/bin/sh` (dash, busybox ash…), run as `sh -c`: not bash.
    Sh,
}

/// The shell that runs scripts: an absolute path and what it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShellProgram {
    path: PathBuf,
    kind: ShellKind,
}

impl ShellProgram {
    /// The shell of this machine, found once per process (see the module docs).
    pub fn discover() -> &'static ShellProgram {
        static FOUND: OnceLock<ShellProgram> = OnceLock::new();
        FOUND.get_or_init(|| {
            let candidates: Vec<&Path> = BASH_PATHS.iter().map(Path::new).collect();
            Self::find(&candidates, Path::new(SH_PATH))
        })
    }

    /// The first of `bash_candidates` that is bash, else `sh` as [`ShellKind::Sh`].
    pub fn find(bash_candidates: &[&Path], sh: &Path) -> ShellProgram {
        bash_candidates
            .iter()
            .find(|p| is_bash(p))
            .map_or_else(|| Self::sh(sh), Self::bash)
    }

    /// bash at `path` (which the caller knows to be bash).
    pub fn bash(path: impl Into<PathBuf>) -> ShellProgram {
        Self {
            path: path.into(),
            kind: ShellKind::Bash,
        }
    }

    /// A POSIX `sh` at `path` that is not to be read as bash.
    pub fn sh(path: impl Into<PathBuf>) -> ShellProgram {
        Self {
            path: path.into(),
            kind: ShellKind::Sh,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn kind(&self) -> ShellKind {
        self.kind
    }

    /// How a line is run, for people: `/bin/bash --norc --noprofile -c`.
    pub fn invocation(&self) -> String {
        let mut s = self.path.display().to_string();
        for flag in self.flags() {
            s.push(' ');
            s.push_str(flag);
        }
        s.push_str(" -c");
        s
    }

    /// The arguments that make the shell run `script` as its `-c` string.
    pub fn args_for(&self, script: &str) -> Vec<OsString> {
        let mut args: Vec<OsString> = self.flags().iter().map(OsString::from).collect();
        args.push(OsString::from("-c"));
        args.push(OsString::from(script));
        args
    }

    fn flags(&self) -> &'static [&'static str] {
        match self.kind {
            ShellKind::Bash => &["--norc", "--noprofile"],
            ShellKind::Sh => &[],
        }
    }
}

/// An executable regular file whose real name is `bash`.
fn is_bash(path: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(path) else {
        return false;
    };
    meta.is_file()
        && meta.permissions().mode() & 0o111 != 0
        && std::fs::canonicalize(path)
            .ok()
            .is_some_and(|real| real.file_name().is_some_and(|n| n == "bash"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use std::os::unix::fs::symlink;

    fn executable(path: &Path, mode: u32) {
        std::fs::write(path, "#!/bin/true\n").unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    /// Each case: how the candidates are laid out, and what is found.
    #[test]
    fn the_first_real_bash_wins_and_anything_else_falls_to_sh() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for sub in ["a", "b", "real", "busybox"] {
            std::fs::create_dir(d.join(sub)).unwrap();
        }
        executable(&d.join("real/bash"), 0o755);
        executable(&d.join("b/bash"), 0o755);
        executable(&d.join("busybox/busybox"), 0o755);
        executable(&d.join("a/noexec-bash"), 0o644);
        std::fs::create_dir(d.join("a/dir-bash")).unwrap();
        symlink(d.join("real/bash"), d.join("a/link-to-bash")).unwrap();
        symlink(d.join("busybox/busybox"), d.join("a/bash")).unwrap();
        symlink(d.join("nowhere"), d.join("a/dangling")).unwrap();
        let sh = d.join("sh");
        let p = |rel: &str| d.join(rel);
        let cases: &[(&[&str], Option<&str>)] = &[
            (&["real/bash"], Some("real/bash")),
            (&["missing/bash", "b/bash"], Some("b/bash")),
            (&["b/bash", "real/bash"], Some("b/bash")),
            (&["a/link-to-bash"], Some("a/link-to-bash")),
            (&["a/bash"], None),
            (&["a/bash", "b/bash"], Some("b/bash")),
            (&["a/noexec-bash"], None),
            (&["a/dir-bash"], None),
            (&["a/dangling"], None),
            (&[], None),
        ];
        for (candidates, want) in cases {
            let paths: Vec<PathBuf> = candidates.iter().map(|c| p(c)).collect();
            let refs: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
            let found = ShellProgram::find(&refs, &sh);
            let expected = match want {
                Some(rel) => ShellProgram::bash(p(rel)),
                None => ShellProgram::sh(&sh),
            };
            assert_eq!(found, expected, "{candidates:?}");
        }
    }

    #[test]
    fn bash_gets_no_startup_files_and_sh_plain_dash_c() {
        let bash = ShellProgram::bash("/bin/bash");
        assert_eq!(
            bash.args_for("echo hi"),
            ["--norc", "--noprofile", "-c", "echo hi"].map(OsString::from)
        );
        assert_eq!(bash.invocation(), "/bin/bash --norc --noprofile -c");
        let sh = ShellProgram::sh("/bin/sh");
        assert_eq!(sh.args_for("true"), ["-c", "true"].map(OsString::from));
        assert_eq!(sh.invocation(), "/bin/sh -c");
    }

    #[test]
    fn discovery_answers_the_same_every_time_and_never_from_path() {
        let first = ShellProgram::discover();
        assert!(std::ptr::eq(first, ShellProgram::discover()));
        assert!(first.path().is_absolute());
        match first.kind() {
            ShellKind::Bash => assert!(BASH_PATHS.iter().any(|p| first.path() == Path::new(p))),
            ShellKind::Sh => assert_eq!(first.path(), Path::new(SH_PATH)),
        }
    }
}
