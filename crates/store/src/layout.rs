//! The store's directories are real directories beneath the project, never symlinks.
//!
//! A repository is hostile input: a committed `.agents/store/tmp -> ~` would make start-up
//! cleanup delete the user's files, and `sessions -> /elsewhere` would put the record of what
//! happened wherever the repository says. Every directory of the store (and `.agents` above it)
//! is therefore checked with `lstat` when the store or a log is opened: it is created with
//! `mkdir` (which never follows a symlink in its last component) or found to be a directory that
//! is not a symlink; anything else is [`LayoutError`], which names the path, what was found and
//! the fix. Files the store opens inside are opened with `O_NOFOLLOW`.
//!
//! Key decision: a check at open, not a directory handle held for every operation. The threat
//! is a tree that was committed or unpacked before tackle started; a process racing tackle to
//! swap a checked directory for a symlink can already write wherever tackle could, and the
//! tools that might be asked to do it never write under `.agents/store/` (the gate's protected
//! paths). Rejected: following the link when it points inside the project, which would still
//! let a repository merge its store with, say, its source tree.

use std::fs::DirBuilder;
use std::io;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

/// A store directory that is not a real directory.
#[derive(Debug, thiserror::Error)]
#[error(
    "{} is {found}, not {expected}: tackle keeps its store and logs only in real directories \
     and files beneath the project, so a repository cannot point them elsewhere; remove it \
     (rm {}) and run again",
    path.display(),
    path.display()
)]
pub struct LayoutError {
    /// The offending path.
    pub path: PathBuf,
    /// What is there instead: "a symbolic link to /home/u", "a regular file", ….
    pub found: String,
    /// What must be there: "a directory", "a regular file".
    pub expected: &'static str,
}

/// Why a store directory could not be made ready.
#[derive(Debug)]
pub(crate) enum DirError {
    Layout(LayoutError),
    Io(io::Error),
}

/// Makes `dir` a private (0700) real directory, creating it if missing. Its parent must exist
/// and is not checked here: callers check each level from the top down.
/// `true` when this call created it.
pub(crate) fn ensure_real_dir(dir: &Path) -> Result<bool, DirError> {
    match DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => return Ok(true),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(DirError::Io(e)),
    }
    let meta = std::fs::symlink_metadata(dir).map_err(DirError::Io)?;
    let kind = meta.file_type();
    if kind.is_dir() {
        return Ok(false);
    }
    let found = if kind.is_symlink() {
        match std::fs::read_link(dir) {
            Ok(target) => format!("a symbolic link to {}", target.display()),
            Err(_) => "a symbolic link".to_owned(),
        }
    } else if kind.is_file() {
        "a regular file".to_owned()
    } else {
        "a special file".to_owned()
    };
    Err(DirError::Layout(LayoutError {
        path: dir.to_path_buf(),
        found,
        expected: "a directory",
    }))
}

/// [`ensure_real_dir`] for `dir` and each of its `levels` ancestors, top down: the store
/// (`.agents/store`, 1 level: `.agents`), a session's directory (`sessions/<id>`, 1 level:
/// `sessions`). Missing directories above those are created as they are (they are the
/// project's, or a test's temp dir).
pub(crate) fn ensure_real_dirs(dir: &Path, levels: usize) -> Result<(), (PathBuf, DirError)> {
    let mut chain: Vec<&Path> = dir.ancestors().take(levels + 1).collect();
    if let Some(above) = dir.ancestors().nth(levels + 1)
        && !above.as_os_str().is_empty()
        && !above.exists()
    {
        crate::fsutil::create_private_dir(above)
            .map_err(|e| (above.to_path_buf(), DirError::Io(e)))?;
    }
    chain.reverse();
    for d in chain {
        if d.as_os_str().is_empty() {
            continue;
        }
        let created = ensure_real_dir(d).map_err(|e| (d.to_path_buf(), e))?;
        if created && d.file_name() == Some(AGENTS_DIR.as_ref()) {
            write_agents_gitignore(d).map_err(|e| (d.join(".gitignore"), DirError::Io(e)))?;
        }
    }
    Ok(())
}

/// The project directory the store lives in.
const AGENTS_DIR: &str = ".agents";

/// What `.agents/.gitignore` says when tackle creates `.agents`: the store (session logs, tool
/// output) is the user's record, not something to commit and hand to the next clone.
pub(crate) const AGENTS_GITIGNORE: &[u8] =
    b"# tackle's store: this user's session logs and tool output, never committed\nstore/\n";

/// Writes `.agents/.gitignore` into the `.agents` this process just created: a new regular file
/// (`O_CREAT | O_EXCL`, which never follows a link and never replaces what is there).
fn write_agents_gitignore(agents: &Path) -> io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .custom_flags(NO_FOLLOW)
        .open(agents.join(".gitignore"));
    match file {
        Ok(mut file) => file.write_all(AGENTS_GITIGNORE),
        // Someone else's `.gitignore` (made between our mkdir and now) is theirs to keep.
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

/// `O_NOFOLLOW`: the last component of a path the store opens must not be a symlink.
pub(crate) const NO_FOLLOW: i32 = libc::O_NOFOLLOW;

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// `.agents/.gitignore` is written when the store creates `.agents`, and only then: an
    /// existing `.agents` (with or without a `.gitignore`, or with a link by that name) is left
    /// exactly as it was.
    #[test]
    fn the_store_ignores_itself_only_in_an_agents_it_created() {
        #[derive(Debug)]
        enum Before {
            NoAgents,
            AgentsWithout,
            AgentsWithOwn,
            AgentsWithLink,
        }
        let cases = [
            (Before::NoAgents, Some(AGENTS_GITIGNORE.to_vec())),
            (Before::AgentsWithout, None),
            (Before::AgentsWithOwn, Some(b"mine\n".to_vec())),
            (Before::AgentsWithLink, None),
        ];
        for (before, want) in cases {
            let tmp = tempfile::tempdir().unwrap();
            let agents = tmp.path().join(AGENTS_DIR);
            let ignore = agents.join(".gitignore");
            match before {
                Before::NoAgents => {}
                Before::AgentsWithout => std::fs::create_dir(&agents).unwrap(),
                Before::AgentsWithOwn => {
                    std::fs::create_dir(&agents).unwrap();
                    std::fs::write(&ignore, b"mine\n").unwrap();
                }
                Before::AgentsWithLink => {
                    std::fs::create_dir(&agents).unwrap();
                    symlink(tmp.path().join("elsewhere"), &ignore).unwrap();
                }
            }
            ensure_real_dirs(&agents.join("store"), 1).unwrap();
            let meta = std::fs::symlink_metadata(&ignore).ok();
            match (&before, &want) {
                (Before::AgentsWithLink, _) => {
                    assert!(meta.unwrap().file_type().is_symlink());
                    assert!(!tmp.path().join("elsewhere").exists(), "{before:?}");
                }
                (_, Some(want)) => {
                    assert!(meta.unwrap().is_file(), "{before:?}");
                    assert_eq!(&std::fs::read(&ignore).unwrap(), want, "{before:?}");
                }
                (_, None) => assert!(meta.is_none(), "{before:?}"),
            }
        }
    }

    /// One case a row: what stands where a store directory should be → refused or accepted.
    #[test]
    fn only_real_directories_are_accepted() {
        #[derive(Debug)]
        enum Existing {
            Nothing,
            Directory,
            LinkToDirectory,
            LinkToNothing,
            RegularFile,
            Fifo,
        }
        let cases = [
            (Existing::Nothing, None),
            (Existing::Directory, None),
            (Existing::LinkToDirectory, Some("a symbolic link to ")),
            (Existing::LinkToNothing, Some("a symbolic link to ")),
            (Existing::RegularFile, Some("a regular file")),
            (Existing::Fifo, Some("a special file")),
        ];
        for (existing, refused) in cases {
            let tmp = tempfile::tempdir().unwrap();
            let outside = tempfile::tempdir().unwrap();
            let dir = tmp.path().join("tmp");
            match existing {
                Existing::Nothing => {}
                Existing::Directory => std::fs::create_dir(&dir).unwrap(),
                Existing::LinkToDirectory => symlink(outside.path(), &dir).unwrap(),
                Existing::LinkToNothing => symlink(outside.path().join("gone"), &dir).unwrap(),
                Existing::RegularFile => std::fs::write(&dir, b"x").unwrap(),
                Existing::Fifo => {
                    let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).unwrap();
                    // SAFETY: a valid NUL-terminated path.
                    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
                }
            }
            let got = ensure_real_dir(&dir);
            match (refused, got) {
                (None, Ok(_)) => assert!(std::fs::symlink_metadata(&dir).unwrap().is_dir()),
                (Some(found), Err(DirError::Layout(e))) => {
                    assert!(e.found.starts_with(found), "{existing:?}: {}", e.found);
                    assert!(e.to_string().contains("rm "), "{e}");
                }
                (want, got) => panic!("{existing:?}: wanted {want:?}, got {got:?}"),
            }
        }
    }
}
