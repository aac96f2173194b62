//! Staged mutations: a change records the base it was computed against and publishes only if
//! the target still has that base (DESIGN §3 step 6).

use std::io::Read;

use cap_fs_ext::{FollowSymlinks, OpenOptionsFollowExt, OpenOptionsMaybeDirExt};
use cap_std::fs::{Dir, MetadataExt, OpenOptions, OpenOptionsExt};
use sha2::{Digest, Sha256};

use crate::root::{READ_FLAGS, describe};
use crate::temp::{SweepMode, TempFile, sweep_dir};
use crate::{FsError, RelPath, Root};

/// Mode of a file created where none existed.
const NEW_FILE_MODE: u32 = 0o600;

/// What a staged change expects the target to contain when it publishes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Base {
    pub sha256: [u8; 32],
    pub len: u64,
}

impl Base {
    pub fn sha256_hex(&self) -> String {
        hex::encode(self.sha256)
    }
}

/// New content for a file, staged against its current content (`base`, `None` if absent).
///
/// The fields are public so a tool can show a diff; [`Root::commit`] re-checks everything, so
/// editing them cannot get a write past the checks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StagedWrite {
    pub rel: RelPath,
    /// The in-root path `rel` resolved to when staged ([`Root::real_path`]): the file the gate
    /// was asked about. [`Root::commit`] refuses to publish anywhere else.
    pub real: RelPath,
    pub base: Option<Base>,
    pub bytes: Vec<u8>,
}

/// A file removal staged against its current content.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StagedDelete {
    pub rel: RelPath,
    /// The in-root path `rel` resolved to when staged; see [`StagedWrite::real`].
    pub real: RelPath,
    pub base: Option<Base>,
}

/// A published write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Committed {
    /// The file did not exist before.
    pub created: bool,
    pub bytes: u64,
}

/// A published removal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Deleted {
    /// False when the file was already gone: removal is idempotent.
    pub existed: bool,
}

/// The target as found inside its (already opened) parent directory.
enum Current {
    Absent,
    File { base: Base, mode: u32 },
    Symlink,
}

impl Root {
    /// Records the base of `rel` for a later [`Root::commit`] of `new_bytes`.
    ///
    /// Refuses directories, FIFOs and other non-regular files, files with more than one hard
    /// link, symlinks (a write never goes through a link; name the file it points to), and
    /// targets whose parent resolves outside the root.
    pub fn stage_write(&self, rel: &RelPath, new_bytes: Vec<u8>) -> Result<StagedWrite, FsError> {
        let base = self.current_base(rel)?;
        Ok(StagedWrite {
            rel: rel.clone(),
            real: self.real_path(rel)?,
            base,
            bytes: new_bytes,
        })
    }

    /// Publishes a staged write: missing parents are created (beneath the root), the bytes go
    /// to a temporary file in the target's directory (mode 0600, or the existing file's mode)
    /// that is fsynced, the base is checked again, and the temporary file is renamed over the
    /// target; then the directory is fsynced. A changed base is `Conflict` and leaves the
    /// target as it was, and so is a parent directory that is no longer the one `staged.real`
    /// names (a symlink on the way was swapped since staging: the write would land in a file
    /// the gate was not asked about).
    pub fn commit(&self, staged: StagedWrite) -> Result<Committed, FsError> {
        let rel = &staged.rel;
        let (parent_rel, name) = rel.split_last().ok_or_else(|| FsError::IsADirectory {
            path: rel.to_string(),
        })?;
        let parent = self.create_parents(rel, parent_rel)?;
        self.check_parent_is(&parent, &staged.real, rel)?;
        let mode = match self.current(&parent, name, rel)? {
            Current::Absent if staged.base.is_none() => NEW_FILE_MODE,
            Current::File { base, mode } if Some(base) == staged.base => mode,
            _ => return Err(conflict(rel)),
        };
        // Recorded before the temp exists, so a kill at any later point leaves a record of
        // where to look; dropped (removed) after the temp is gone, on every path out.
        let _intent = staged
            .real
            .split_last()
            .and_then(|(real_dir, _)| self.record_intent(real_dir));
        let temp = TempFile::create(&parent, rel, mode)?;
        temp.write_all(&staged.bytes)?;
        // The last look before publishing: anything that changed since staging is a conflict.
        let unchanged = match self.current(&parent, name, rel) {
            Ok(Current::Absent) => staged.base.is_none(),
            Ok(Current::File { base, .. }) => Some(base) == staged.base,
            Ok(Current::Symlink) => false,
            Err(e) => return Err(temp.discard_with(e)),
        };
        if !unchanged {
            return Err(temp.discard_with(conflict(rel)));
        }
        temp.publish(name, staged.base.is_none())?;
        // What killed writers left here goes now; the directory sync below covers it too.
        sweep_dir(&parent, SweepMode::Remove);
        sync_dir(parent, rel)?;
        Ok(Committed {
            created: staged.base.is_none(),
            bytes: staged.bytes.len() as u64,
        })
    }

    /// Records the base of `rel` for a later [`Root::commit_delete`]. Refuses what
    /// [`Root::stage_write`] refuses; a missing file stages a no-op.
    pub fn stage_delete(&self, rel: &RelPath) -> Result<StagedDelete, FsError> {
        let base = self.current_base(rel)?;
        Ok(StagedDelete {
            rel: rel.clone(),
            real: self.real_path(rel)?,
            base,
        })
    }

    /// Removes the file if it still has its staged base. Idempotent: a file that is already
    /// gone is `Deleted { existed: false }`; one that changed (or appeared) is `Conflict`.
    pub fn commit_delete(&self, staged: StagedDelete) -> Result<Deleted, FsError> {
        let rel = &staged.rel;
        let (parent_rel, name) = rel.split_last().ok_or_else(|| FsError::IsADirectory {
            path: rel.to_string(),
        })?;
        let Some(parent) = self.open_parent(rel, parent_rel)? else {
            return Ok(Deleted { existed: false });
        };
        self.check_parent_is(&parent, &staged.real, rel)?;
        match self.current(&parent, name, rel)? {
            Current::Absent => Ok(Deleted { existed: false }),
            Current::File { base, .. } if Some(base) == staged.base => {
                parent
                    .remove_file(name)
                    .map_err(|e| FsError::from_io("remove", rel, e))?;
                sync_dir(parent, rel)?;
                Ok(Deleted { existed: true })
            }
            Current::File { .. } => Err(conflict(rel)),
            Current::Symlink => Err(self.symlink_refusal(rel)),
        }
    }

    /// `Conflict` unless the open directory `parent` is the parent of `real` beneath the root.
    ///
    /// The handle is asked where it is (`/proc/self/fd`), so this holds whatever happened to
    /// the names since: the write goes into exactly this handle. Where `/proc` cannot answer,
    /// the name's symlinks are expanded again and compared, which narrows the window to the
    /// instant between that expansion and the open just made.
    fn check_parent_is(&self, parent: &Dir, real: &RelPath, rel: &RelPath) -> Result<(), FsError> {
        use std::os::fd::{AsFd, AsRawFd};
        let expected_rel = match real.split_last() {
            Some((dir, _)) => dir,
            None => return Err(conflict(rel)),
        };
        let expected = if expected_rel == "." {
            self.path().to_path_buf()
        } else {
            self.path().join(expected_rel)
        };
        let fd = parent.as_fd().as_raw_fd();
        let same = match std::fs::read_link(format!("/proc/self/fd/{fd}")) {
            Ok(actual) => actual == expected,
            Err(_) => match rel.split_last() {
                Some((parent_rel, name)) => {
                    let now = self.real_path(&self.resolve(parent_rel)?)?;
                    let now = if now.is_root() {
                        name.to_owned()
                    } else {
                        format!("{now}/{name}")
                    };
                    now == real.as_str()
                }
                None => false,
            },
        };
        if same { Ok(()) } else { Err(conflict(rel)) }
    }

    fn current_base(&self, rel: &RelPath) -> Result<Option<Base>, FsError> {
        let (parent_rel, name) = rel.split_last().ok_or_else(|| FsError::IsADirectory {
            path: rel.to_string(),
        })?;
        let Some(parent) = self.open_parent(rel, parent_rel)? else {
            return Ok(None);
        };
        match self.current(&parent, name, rel)? {
            Current::Absent => Ok(None),
            Current::File { base, .. } => Ok(Some(base)),
            Current::Symlink => Err(self.symlink_refusal(rel)),
        }
    }

    /// The parent directory of `rel`, opened beneath the root; `None` if it does not exist.
    fn open_parent(&self, rel: &RelPath, parent_rel: &str) -> Result<Option<Dir>, FsError> {
        let parent = self.resolve(parent_rel)?;
        let opened = self.retry_expanded(&parent, true, |p| {
            self.dir
                .open_dir(p.as_path())
                .map_err(|e| FsError::from_io("open directory", rel, e))
        });
        match opened {
            Ok(dir) => Ok(Some(dir)),
            Err(e) => match e {
                FsError::NotFound { .. } => Ok(None),
                FsError::NotADirectory { .. } => Err(FsError::NotADirectory {
                    path: parent_rel.to_owned(),
                }),
                other => Err(other),
            },
        }
    }

    fn create_parents(&self, rel: &RelPath, parent_rel: &str) -> Result<Dir, FsError> {
        if let Some(dir) = self.open_parent(rel, parent_rel)? {
            return Ok(dir);
        }
        let parent = self.resolve(parent_rel)?;
        self.retry_expanded(&parent, true, |p| {
            self.dir
                .create_dir_all(p.as_path())
                .map_err(|e| FsError::from_io("create directory", rel, e))
        })?;
        self.open_parent(rel, parent_rel)?
            .ok_or_else(|| FsError::NotFound {
                path: parent_rel.to_owned(),
            })
    }

    /// Looks at `name` inside `parent` without following it: `parent` is a handle, so nothing
    /// that happens to the path above it afterwards can redirect this.
    fn current(&self, parent: &Dir, name: &str, rel: &RelPath) -> Result<Current, FsError> {
        let meta = match parent.symlink_metadata(name) {
            Ok(m) => m,
            Err(e) => {
                return match FsError::from_io("stat", rel, e) {
                    FsError::NotFound { .. } => Ok(Current::Absent),
                    other => Err(other),
                };
            }
        };
        let ft = meta.file_type();
        if ft.is_symlink() {
            return Ok(Current::Symlink);
        }
        if ft.is_dir() {
            return Err(FsError::IsADirectory {
                path: rel.to_string(),
            });
        }
        if !ft.is_file() {
            return Err(FsError::NotRegularFile {
                path: rel.to_string(),
                kind: describe(ft),
            });
        }
        let mut opts = OpenOptions::new();
        opts.read(true)
            .custom_flags(READ_FLAGS)
            .follow(FollowSymlinks::No);
        let file = parent
            .open_with(name, &opts)
            .map_err(|e| FsError::from_io("open", rel, e))?;
        let meta = file
            .metadata()
            .map_err(|e| FsError::from_io("stat", rel, e))?;
        if !meta.is_file() {
            return Err(FsError::NotRegularFile {
                path: rel.to_string(),
                kind: describe(meta.file_type()),
            });
        }
        if meta.nlink() > 1 {
            return Err(FsError::HardLinked {
                path: rel.to_string(),
                links: meta.nlink(),
            });
        }
        let mut hasher = Sha256::new();
        let mut len = 0u64;
        let mut reader = file.into_std();
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = reader
                .read(&mut buf)
                .map_err(|e| FsError::from_io("read", rel, e))?;
            if n == 0 {
                break;
            }
            hasher.update(&buf[..n]);
            len += n as u64;
        }
        Ok(Current::File {
            base: Base {
                sha256: hasher.finalize().into(),
                len,
            },
            mode: meta.mode() & 0o7777,
        })
    }

    /// Why a symlink is not a write or delete target: out of the root, or never through a link.
    fn symlink_refusal(&self, rel: &RelPath) -> FsError {
        if let Err(e) = self.check_link_stays_inside(rel) {
            return e;
        }
        let dangling = self
            .retry_expanded(rel, true, |r| {
                self.dir
                    .metadata(r.as_path())
                    .map_err(|e| FsError::from_io("stat", r, e))
            })
            .is_err();
        FsError::NotRegularFile {
            path: rel.to_string(),
            kind: if dangling {
                "a dangling symbolic link"
            } else {
                "a symbolic link"
            },
        }
    }
}

fn conflict(rel: &RelPath) -> FsError {
    FsError::Conflict {
        path: rel.to_string(),
    }
}

/// Makes a rename or removal in `dir` durable. Directory handles may be `O_PATH`, which cannot
/// be fsynced, so the directory is opened again for reading through its own handle.
fn sync_dir(dir: Dir, rel: &RelPath) -> Result<(), FsError> {
    let mut opts = OpenOptions::new();
    opts.read(true).maybe_dir(true);
    dir.open_with(".", &opts)
        .and_then(|d| d.sync_all())
        .map_err(|e| FsError::from_io("sync directory", rel, e))
}
