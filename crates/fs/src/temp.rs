//! Temporary files beside a target, and the sweep that removes those a killed writer left.
//!
//! **Owns** the temp name grammar (`.tackle-<pid>-<n>.tmp`), creating a temp with its lock
//! held, and removing abandoned ones ([`sweep_dir`], [`sweep_one`]).
//!
//! **Key decision:** a temp's writer is alive exactly while it holds an exclusive `flock` on the
//! temp's own descriptor, taken right after the `O_EXCL` create and before any byte is written;
//! the kernel drops it when the writer dies, SIGKILL included. So a sweep needs no age, no pid
//! check (pids are reused) and no clock: a temp whose lock can be taken is abandoned. The one
//! window, between create and lock, is closed from both sides: after locking, the writer checks
//! that the name still leads to its own inode (a sweep may have taken the lock first and
//! removed the name; the writer then starts again under a new name), and a sweep removes a name
//! only while it holds the lock on that very inode and has seen the name still lead to it.
//!
//! What a sweep touches is narrow, because the directory it sweeps is the user's worktree and
//! may come from a hostile repository: only names of the exact grammar, only regular files
//! with one link (checked with `lstat` and again on the open descriptor), opened and removed
//! through the directory handle without following any link. A symlink, FIFO, socket, device,
//! directory or hard link of that name is left alone. A planted *regular* file of that name is
//! removed, deliberately: the name is tackle's, a file by it holds at most an unfinished copy of
//! a sibling, and removing one name of a single-linked regular file inside the root can neither
//! reach outside it nor destroy another name's content (the worst a repository gains, even by
//! committing a write intent that points a start-up sweep at a directory of its choice, is
//! `git status` showing its planted file deleted).

use std::io;
use std::os::unix::fs::PermissionsExt;
use std::sync::atomic::{AtomicU64, Ordering};

use cap_fs_ext::{FollowSymlinks, OpenOptionsFollowExt};
use cap_std::fs::{Dir, MetadataExt, OpenOptions, OpenOptionsExt};

use crate::{FsError, RelPath};

/// How many names a writer tries before giving up.
const CREATE_ATTEMPTS: usize = 64;

/// Whether a sweep removes what it finds abandoned or only counts it (`--dry-run`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SweepMode {
    Remove,
    Count,
}

/// What a sweep removed (or, counting, would remove).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Swept {
    pub files: u64,
    pub bytes: u64,
}

impl Swept {
    pub fn add(&mut self, other: Swept) {
        self.files += other.files;
        self.bytes += other.bytes;
    }
}

/// A name of the temp grammar, exactly: `.tackle-`, 1–10 digits, `-`, 1–20 digits, `.tmp`.
pub fn is_temp_name(name: &str) -> bool {
    name.strip_prefix(".tackle-")
        .and_then(|rest| rest.strip_suffix(".tmp"))
        .and_then(|middle| middle.split_once('-'))
        .is_some_and(|(pid, n)| digits(pid, 10) && digits(n, 20))
}

/// `s` is 1 to `max` ASCII digits.
pub(crate) fn digits(s: &str, max: usize) -> bool {
    (1..=max).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_digit())
}

/// A fresh `<pid>-<n>` for a name this process creates.
pub(crate) fn next_suffix() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    format!(
        "{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// What [`create_locked`] found.
pub(crate) enum Created {
    /// Created, locked, and the name still leads to it.
    File(std::fs::File),
    /// Something already has that name.
    Taken,
    /// A sweep took the new file's lock first (and removes, or removed, the name).
    Lost,
}

/// Creates `name` in `dir` (`O_EXCL`, never following anything already there) and takes its
/// exclusive lock before anything is written; see the module docs for the race this closes.
pub(crate) fn create_locked(dir: &Dir, name: &str, mode: u32) -> io::Result<Created> {
    let mut opts = OpenOptions::new();
    opts.write(true)
        .create_new(true)
        .mode(mode)
        .custom_flags(libc::O_NOCTTY);
    let file = match dir.open_with(name, &opts) {
        Ok(file) => file.into_std(),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Ok(Created::Taken),
        Err(e) => return Err(e),
    };
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => return Ok(Created::Lost),
        Err(std::fs::TryLockError::Error(e)) => {
            let _ = dir.remove_file(name);
            return Err(e);
        }
    }
    let ours = file.metadata()?;
    let named = match dir.symlink_metadata(name) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Created::Lost),
        Err(e) => return Err(e),
    };
    use std::os::unix::fs::MetadataExt as _;
    if named.dev() != ours.dev() || named.ino() != ours.ino() {
        return Ok(Created::Lost);
    }
    Ok(Created::File(file))
}

/// Removes `name` from `dir` if it matches `grammar` and is abandoned: a regular file with one
/// link whose lock can be taken. Returns what was (or, counting, would be) removed; `None` for
/// anything left alone. Errors are answers too: whatever cannot be examined is left.
pub(crate) fn sweep_one(
    dir: &Dir,
    name: &str,
    grammar: fn(&str) -> bool,
    mode: SweepMode,
) -> Option<Swept> {
    let file = open_abandoned(dir, name, grammar)?;
    let len = file.metadata().ok()?.len();
    if mode == SweepMode::Remove {
        dir.remove_file(name).ok()?;
    }
    drop(file);
    Some(Swept {
        files: 1,
        bytes: len,
    })
}

/// Opens `name` and takes its lock when it is an abandoned file of `grammar` (see
/// [`sweep_one`]); the lock is held, and the name checked to still lead to it, on return.
pub(crate) fn open_abandoned(
    dir: &Dir,
    name: &str,
    grammar: fn(&str) -> bool,
) -> Option<std::fs::File> {
    if !grammar(name) {
        return None;
    }
    let single_regular = |m: &cap_std::fs::Metadata| m.is_file() && m.nlink() == 1;
    let before = dir.symlink_metadata(name).ok()?;
    if !single_regular(&before) {
        return None;
    }
    let mut opts = OpenOptions::new();
    opts.read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .follow(FollowSymlinks::No);
    let file = dir.open_with(name, &opts).ok()?.into_std();
    let same = |m: &cap_std::fs::Metadata| m.dev() == before.dev() && m.ino() == before.ino();
    {
        use std::os::unix::fs::MetadataExt as _;
        let opened = file.metadata().ok()?;
        if !opened.is_file()
            || opened.nlink() != 1
            || opened.dev() != before.dev()
            || opened.ino() != before.ino()
        {
            return None;
        }
    }
    // A live writer holds it, however long it has been silent.
    file.try_lock().ok()?;
    let now = dir.symlink_metadata(name).ok()?;
    if !(single_regular(&now) && same(&now)) {
        return None;
    }
    Some(file)
}

/// Sweeps every abandoned temp of the grammar in `dir` (see [`sweep_one`]).
pub(crate) fn sweep_dir(dir: &Dir, mode: SweepMode) -> Swept {
    let mut swept = Swept::default();
    let Ok(entries) = dir.entries() else {
        return swept;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if let Some(one) = sweep_one(dir, name, is_temp_name, mode) {
            swept.add(one);
        }
    }
    swept
}

/// A temporary file next to the target, locked from creation; removed unless published.
pub(crate) struct TempFile<'a> {
    pub(crate) parent: &'a Dir,
    pub(crate) name: String,
    pub(crate) file: std::fs::File,
    pub(crate) rel: &'a RelPath,
}

impl<'a> TempFile<'a> {
    pub(crate) fn create(parent: &'a Dir, rel: &'a RelPath, mode: u32) -> Result<Self, FsError> {
        let mut name = format!(".tackle-{}.tmp", next_suffix());
        for _ in 0..CREATE_ATTEMPTS {
            match create_locked(parent, &name, mode) {
                Ok(Created::File(file)) => {
                    let temp = TempFile {
                        parent,
                        name,
                        file,
                        rel,
                    };
                    // The umask may have narrowed the mode; set it exactly.
                    if let Err(e) = temp
                        .file
                        .set_permissions(std::fs::Permissions::from_mode(mode))
                    {
                        return Err(temp.discard_with(FsError::from_io("chmod", rel, e)));
                    }
                    return Ok(temp);
                }
                // A leftover of an earlier process with this pid: once swept, the name is
                // free again; a live one's name is not.
                Ok(Created::Taken) => {
                    if sweep_one(parent, &name, is_temp_name, SweepMode::Remove).is_none() {
                        name = format!(".tackle-{}.tmp", next_suffix());
                    }
                }
                Ok(Created::Lost) => name = format!(".tackle-{}.tmp", next_suffix()),
                Err(e) => return Err(FsError::from_io("create temporary file", rel, e)),
            }
        }
        Err(FsError::from_io(
            "create temporary file",
            rel,
            io::Error::new(
                io::ErrorKind::AlreadyExists,
                "every temporary name tried was taken; remove the .tackle-*.tmp files there",
            ),
        ))
    }

    pub(crate) fn write_all(&self, bytes: &[u8]) -> Result<(), FsError> {
        use std::io::Write;
        let result = (&self.file)
            .write_all(bytes)
            .and_then(|()| self.file.sync_all());
        result.map_err(|e| FsError::from_io("write", self.rel, e))
    }

    /// Puts the temporary file in place of `name`. A target that must still be absent is
    /// linked rather than renamed, which fails instead of replacing a file that appeared.
    pub(crate) fn publish(self, name: &str, must_be_absent: bool) -> Result<(), FsError> {
        if must_be_absent {
            match self.parent.hard_link(&self.name, self.parent, name) {
                Ok(()) => {
                    self.discard();
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    let e = FsError::Conflict {
                        path: self.rel.to_string(),
                    };
                    return Err(self.discard_with(e));
                }
                // A file system without hard links: fall back to rename, checked just above.
                Err(_) => {}
            }
        }
        match self.parent.rename(&self.name, self.parent, name) {
            Ok(()) => Ok(()),
            Err(e) => {
                let e = FsError::from_io("rename", self.rel, e);
                Err(self.discard_with(e))
            }
        }
    }

    fn discard(self) {
        // Best effort: what is left is unlocked once this descriptor closes, so the next
        // commit into this directory, or a start-up sweep, removes it.
        let _ = self.parent.remove_file(&self.name);
    }

    pub(crate) fn discard_with(self, e: FsError) -> FsError {
        self.discard();
        e
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_temp_is_locked_from_creation_until_its_descriptor_closes() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = Dir::open_ambient_dir(tmp.path(), cap_std::ambient_authority()).unwrap();
        let rel = crate::Root::open(tmp.path())
            .unwrap()
            .resolve("target")
            .unwrap();
        let temp = TempFile::create(&dir, &rel, 0o600).unwrap();
        let name = temp.name.clone();
        assert!(is_temp_name(&name), "{name}");
        // Nothing written yet, and already no sweep may take it.
        assert_eq!(
            sweep_one(&dir, &name, is_temp_name, SweepMode::Remove),
            None
        );
        temp.write_all(b"some bytes").unwrap();
        assert_eq!(sweep_dir(&dir, SweepMode::Remove), Swept::default());
        // The writer dies without discarding: its descriptor closes, the lock with it.
        drop(temp);
        assert_eq!(
            sweep_dir(&dir, SweepMode::Count),
            Swept {
                files: 1,
                bytes: 10
            }
        );
        assert!(tmp.path().join(&name).exists(), "counting removes nothing");
        assert_eq!(
            sweep_dir(&dir, SweepMode::Remove),
            Swept {
                files: 1,
                bytes: 10
            }
        );
        assert!(!tmp.path().join(&name).exists());
    }

    /// One name a row: is it a temp of ours?
    #[test]
    fn the_temp_name_grammar_is_exact() {
        let cases = [
            (".tackle-1-1.tmp", true),
            (".tackle-4194304-0.tmp", true),
            (".tackle-1234567890-12345678901234567890.tmp", true),
            (".tackle-12345678901-1.tmp", false),
            (".tackle-1-123456789012345678901.tmp", false),
            (".tackle--1.tmp", false),
            (".tackle-1-.tmp", false),
            (".tackle-1.tmp", false),
            (".tackle-1-1-1.tmp", false),
            (".tackle-a-1.tmp", false),
            (".tackle-1-1.tmp.bak", false),
            (".tackle-1-1.TMP", false),
            ("tackle-1-1.tmp", false),
            (".tackle-1-1.tmp/", false),
            (".tackle-+1-1.tmp", false),
            (".tackle-1-1 .tmp", false),
            (".tackle-١-1.tmp", false),
            ("", false),
        ];
        for (name, want) in cases {
            assert_eq!(is_temp_name(name), want, "{name:?}");
        }
    }
}
