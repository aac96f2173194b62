//! The store's temp files under `tmp/`: created with their lock held, swept once abandoned.
//!
//! **Owns** the names of what the store leaves in `tmp/` (`capture-…`, the temp of every
//! capture, spilled or published from memory, manifests included; `corrupt-…`, a damaged
//! artifact set aside), creating a temp locked, and the sweep ([`sweep_temps`]).
//!
//! **Key decision:** the lock alone says whether a temp's writer lives. Every temp is locked
//! (`flock`, exclusive) on its own descriptor right after its `O_EXCL` create, before a byte is
//! written, and stays locked until it is renamed into `artifacts/` or removed; the kernel drops
//! the lock when the process dies, however it dies. So a temp whose lock can be taken is
//! abandoned, whatever its age: a SIGKILLed capture is collected at the next start-up or
//! `artifacts gc`, not after an hour (the age the store used to require is gone). The window
//! between create and lock is closed from both sides, as in `tackle-fs`: the creator checks,
//! once locked, that the name still leads to its inode (else it starts over under a new name),
//! and a sweep removes a name only while it holds the lock on the inode the name still leads to.
//! A damaged artifact set aside is locked by the reader that found it and released at once, so
//! it stays for inspection only until the next sweep.
//!
//! A sweep touches only regular files with one link and one of the store's name prefixes,
//! opened with `O_NOFOLLOW | O_NONBLOCK` (the directories above were checked at open, see
//! `layout.rs`): a symlink, FIFO, directory or hard link a repository planted in `tmp/` is left.

use std::fs::{self, File, OpenOptions, TryLockError};
use std::io;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

/// The prefix of every capture's temp file.
pub(crate) const CAPTURE_PREFIX: &str = "capture-";
/// The prefix of a damaged artifact set aside.
pub(crate) const CORRUPT_PREFIX: &str = "corrupt-";

/// What a sweep of `tmp/` removed (or, in a dry run, would remove).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TempSweep {
    /// Abandoned temp files.
    pub files: u64,
    /// Their bytes.
    pub bytes: u64,
}

/// What [`create_locked`] found.
pub(crate) enum Created {
    File(File),
    /// Something already has the name.
    Taken,
    /// A sweep took the new file's lock first.
    Lost,
}

/// Creates `path` (mode 0600, `O_EXCL`) for reading and writing, with its exclusive lock held
/// and the name checked to still lead to it.
pub(crate) fn create_locked(path: &Path) -> io::Result<Created> {
    let file = match OpenOptions::new()
        .write(true)
        .read(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
    {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Ok(Created::Taken),
        Err(e) => return Err(e),
    };
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => return Ok(Created::Lost),
        Err(TryLockError::Error(e)) => {
            let _ = fs::remove_file(path);
            return Err(e);
        }
    }
    let ours = file.metadata()?;
    match fs::symlink_metadata(path) {
        Ok(named) if named.dev() == ours.dev() && named.ino() == ours.ino() => {
            Ok(Created::File(file))
        }
        Ok(_) => Ok(Created::Lost),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Created::Lost),
        Err(e) => Err(e),
    }
}

/// Whether a name in `tmp/` is one the store makes.
fn is_store_temp(name: &str) -> bool {
    name.len() > CAPTURE_PREFIX.len()
        && (name.starts_with(CAPTURE_PREFIX) || name.starts_with(CORRUPT_PREFIX))
}

/// Removes (or with `dry_run` only counts) every abandoned temp in `tmp`: see the module docs.
pub(crate) fn sweep_temps(tmp: &Path, dry_run: bool) -> io::Result<TempSweep> {
    let mut swept = TempSweep::default();
    for entry in fs::read_dir(tmp)? {
        let entry = entry?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if !is_store_temp(name) {
            continue;
        }
        if let Some(bytes) = sweep_one(&tmp.join(name), dry_run) {
            swept.files += 1;
            swept.bytes += bytes;
        }
    }
    Ok(swept)
}

/// The length of `path` if it is an abandoned temp (removed unless `dry_run`); `None` for
/// anything left alone, including what cannot be examined.
fn sweep_one(path: &Path, dry_run: bool) -> Option<u64> {
    let single_regular = |m: &fs::Metadata| m.is_file() && m.nlink() == 1;
    let before = fs::symlink_metadata(path).ok()?;
    if !single_regular(&before) {
        return None;
    }
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .ok()?;
    let same = |m: &fs::Metadata| m.dev() == before.dev() && m.ino() == before.ino();
    let opened = file.metadata().ok()?;
    if !(single_regular(&opened) && same(&opened)) {
        return None;
    }
    // A live writer holds it, however long it has been silent.
    file.try_lock().ok()?;
    let now = fs::symlink_metadata(path).ok()?;
    if !(single_regular(&now) && same(&now)) {
        return None;
    }
    if !dry_run {
        fs::remove_file(path).ok()?;
    }
    Some(opened.len())
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    /// What stands in `tmp/`.
    #[derive(Debug, Clone, Copy)]
    enum Planted {
        Abandoned,
        Locked,
        SymlinkOut,
        Fifo,
        Directory,
        HardLinkOut,
    }

    /// One case a row: name, what stands there, whether a sweep removes it.
    const CORPUS: &[(&str, Planted, bool)] = &[
        ("capture-1-1-0000abcd", Planted::Abandoned, true),
        ("corrupt-00ff-1-2", Planted::Abandoned, true),
        ("capture-2-1-0", Planted::Locked, false),
        ("capture-3-1-0", Planted::SymlinkOut, false),
        ("capture-4-1-0", Planted::Fifo, false),
        ("capture-5-1-0", Planted::Directory, false),
        ("capture-6-1-0", Planted::HardLinkOut, false),
        ("notes.txt", Planted::Abandoned, false),
        ("capture-", Planted::Abandoned, false),
    ];

    #[test]
    fn a_sweep_removes_only_abandoned_store_temps() {
        for &(name, what, removed) in CORPUS {
            let dir = tempfile::tempdir().unwrap();
            let tmp = dir.path().join("tmp");
            fs::create_dir(&tmp).unwrap();
            let victim = dir.path().join("victim");
            fs::write(&victim, b"keep me").unwrap();
            let path = tmp.join(name);
            let mut held = None;
            match what {
                Planted::Abandoned => fs::write(&path, b"12345").unwrap(),
                Planted::Locked => {
                    let Created::File(file) = create_locked(&path).unwrap() else {
                        panic!("{name}: not created");
                    };
                    held = Some(file);
                }
                Planted::SymlinkOut => symlink(&victim, &path).unwrap(),
                Planted::Fifo => {
                    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
                    // SAFETY: a valid NUL-terminated path.
                    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
                }
                Planted::Directory => fs::create_dir(&path).unwrap(),
                Planted::HardLinkOut => fs::hard_link(&victim, &path).unwrap(),
            }
            let counted = sweep_temps(&tmp, true).unwrap();
            assert!(
                fs::symlink_metadata(&path).is_ok(),
                "{name}: a dry run removes"
            );
            let swept = sweep_temps(&tmp, false).unwrap();
            assert_eq!(counted, swept, "{name}");
            let want = if removed {
                TempSweep { files: 1, bytes: 5 }
            } else {
                TempSweep::default()
            };
            assert_eq!(swept, want, "{name} ({what:?})");
            assert_eq!(fs::symlink_metadata(&path).is_err(), removed, "{name}");
            assert_eq!(fs::read(&victim).unwrap(), b"keep me", "{name}");
            drop(held);
        }
    }

    #[test]
    fn a_locked_temp_is_abandoned_the_moment_its_descriptor_closes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("capture-9-9-0");
        let Created::File(file) = create_locked(&path).unwrap() else {
            panic!("not created");
        };
        assert!(matches!(create_locked(&path).unwrap(), Created::Taken));
        assert_eq!(
            sweep_temps(dir.path(), false).unwrap(),
            TempSweep::default()
        );
        drop(file);
        assert_eq!(sweep_temps(dir.path(), false).unwrap().files, 1);
        assert!(!path.exists());
    }
}
