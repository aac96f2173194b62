//! The root directory handle and the read-side operations beneath it.

use std::ffi::OsString;
use std::io;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use cap_std::ambient_authority;
use cap_std::fs::{Dir, FileTypeExt, MetadataExt, OpenOptions, OpenOptionsExt};

use crate::rel_path::resolve_lexically;
use crate::{FsError, RelPath};

/// A directory every operation of this crate stays beneath.
///
/// Holds an open directory handle; paths are resolved against it with `openat2`
/// `RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS` on Linux, or cap-std's own component-by-component
/// resolver where that syscall is missing. Both refuse to leave the handle; neither falls back
/// to an unconfined open. The process's working directory is never consulted.
#[derive(Debug)]
pub struct Root {
    path: PathBuf,
    pub(crate) dir: Dir,
}

/// A file [`Root::open_walked_file`] opened, with the size its `fstat` found: a reader that
/// gets that many bytes need not ask again to learn it is at the end.
#[derive(Debug)]
pub struct WalkedFile {
    pub file: std::fs::File,
    pub len: u64,
}

/// How [`Root::open_read`] treats files with more than one name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// Read a regular file whose link count is above 1. Off by default: one of its other names
    /// may lie outside the root, so reading it may disclose an outside file.
    pub allow_hardlinked: bool,
}

/// What [`Root::open_read`] found.
#[derive(Debug)]
pub enum ReadTarget {
    /// A regular file, open for reading, with the metadata of the open handle.
    File {
        file: std::fs::File,
        meta: std::fs::Metadata,
    },
    /// A directory's entries, sorted bytewise by name.
    Dir(Vec<DirEntry>),
}

/// The type of a file, as seen without following a final symlink.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryKind {
    File,
    Dir,
    Symlink,
    /// FIFO, socket or device.
    Other,
}

impl EntryKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EntryKind::File => "file",
            EntryKind::Dir => "dir",
            EntryKind::Symlink => "symlink",
            EntryKind::Other => "other",
        }
    }

    fn of(ft: cap_std::fs::FileType) -> Self {
        if ft.is_dir() {
            EntryKind::Dir
        } else if ft.is_file() {
            EntryKind::File
        } else if ft.is_symlink() {
            EntryKind::Symlink
        } else {
            EntryKind::Other
        }
    }
}

/// One directory entry; symlinks are reported as symlinks, not followed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirEntry {
    pub name: OsString,
    pub kind: EntryKind,
}

/// Metadata of a path, taken without following a final symlink.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Metadata {
    pub kind: EntryKind,
    pub len: u64,
    /// Permission bits (`mode & 0o7777`).
    pub mode: u32,
    /// Seconds since the Unix epoch.
    pub mtime: i64,
    pub mtime_nsec: i64,
    pub nlink: u64,
    pub dev: u64,
    pub ino: u64,
}

impl Metadata {
    fn of(m: &cap_std::fs::Metadata) -> Self {
        Metadata {
            kind: EntryKind::of(m.file_type()),
            len: m.len(),
            mode: m.mode() & 0o7777,
            mtime: m.mtime(),
            mtime_nsec: m.mtime_nsec(),
            nlink: m.nlink(),
            dev: m.dev(),
            ino: m.ino(),
        }
    }
}

/// How a non-regular, non-directory file is named in messages.
pub(crate) fn describe(ft: cap_std::fs::FileType) -> &'static str {
    describe_parts(
        ft.is_fifo(),
        ft.is_socket(),
        ft.is_block_device() || ft.is_char_device(),
        ft.is_symlink(),
    )
}

fn describe_std(ft: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt as _;
    describe_parts(
        ft.is_fifo(),
        ft.is_socket(),
        ft.is_block_device() || ft.is_char_device(),
        ft.is_symlink(),
    )
}

fn describe_parts(fifo: bool, socket: bool, device: bool, symlink: bool) -> &'static str {
    if fifo {
        "a FIFO"
    } else if socket {
        "a socket"
    } else if device {
        "a device"
    } else if symlink {
        "a symbolic link"
    } else {
        "not a regular file"
    }
}

/// Flags for every read open: a FIFO or device must never block the open or become the
/// controlling terminal; the type is checked on the open handle afterwards.
pub(crate) const READ_FLAGS: i32 = libc::O_NONBLOCK | libc::O_NOCTTY;

impl Root {
    /// Canonicalizes `path` and opens it as the root directory handle.
    pub fn open(path: &Path) -> Result<Root, FsError> {
        let shown = path.display().to_string();
        let io = |op, source| FsError::Io {
            op,
            path: shown.clone(),
            source,
        };
        let canonical = path
            .canonicalize()
            .map_err(|e| io("canonicalize root", e))?;
        let dir =
            Dir::open_ambient_dir(&canonical, ambient_authority()).map_err(|e| match e.kind() {
                io::ErrorKind::NotFound => FsError::NotFound {
                    path: shown.clone(),
                },
                _ if e.raw_os_error() == Some(libc::ENOTDIR) => FsError::NotADirectory {
                    path: shown.clone(),
                },
                _ => io("open root", e),
            })?;
        Ok(Root {
            path: canonical,
            dir,
        })
    }

    /// Like [`Root::open`], but shares one handle per root path across calls: a call through
    /// the runtime resolves in prepare and opens in execute, and each would otherwise
    /// canonicalize the path and open the directory again.
    ///
    /// A shared handle is reused only while `path` still names the same directory (same device
    /// and inode, checked with one `stat` per use); a root that was replaced is opened afresh.
    pub fn open_shared(path: &Path) -> Result<Arc<Root>, FsError> {
        const KEEP: usize = 8;
        /// (path as given, (device, inode) of the directory opened, its handle)
        type Entry = (PathBuf, (u64, u64), Arc<Root>);
        static SHARED: Mutex<Vec<Entry>> = Mutex::new(Vec::new());
        let identity = |m: &std::fs::Metadata| (m.dev(), m.ino());
        let current = std::fs::metadata(path).ok().map(|m| identity(&m));
        {
            let shared = SHARED.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(id) = current
                && let Some((_, _, root)) = shared
                    .iter()
                    .find(|(p, known, _)| p == path && *known == id)
            {
                return Ok(Arc::clone(root));
            }
        }
        let root = Arc::new(Root::open(path)?);
        // The identity of what was opened, not of what the path named a moment before.
        let opened = root.dir.dir_metadata().ok().map(|m| (m.dev(), m.ino()));
        if let Some(id) = opened {
            let mut shared = SHARED.lock().unwrap_or_else(|p| p.into_inner());
            shared.retain(|(p, _, _)| p != path);
            if shared.len() >= KEEP {
                shared.remove(0);
            }
            shared.push((path.to_path_buf(), id, Arc::clone(&root)));
        }
        Ok(root)
    }

    /// The canonical path the root was opened at.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Normalizes a caller's path to a root-relative one, before any system call.
    ///
    /// Empty paths, NUL bytes, components over 255 bytes and paths over 4096 bytes are
    /// `InvalidPath`. An absolute path is accepted only inside the root (component-wise, so
    /// `/proj-evil` is not inside `/proj`); `..` that climbs above the root is `OutsideRoot`.
    /// Symlinks are not looked at here: every operation checks them when it opens the path.
    pub fn resolve(&self, input: &str) -> Result<RelPath, FsError> {
        resolve_lexically(&self.path, input)
    }

    /// The in-root path `rel` names once every symlink on it is followed (the final one
    /// included): what a rule about the file, rather than about the name, must see. Parts that
    /// do not exist yet are kept as written. `OutsideRoot` when a link leads out of the root.
    ///
    /// The answer is only as fresh as the moment it was computed: the open that follows still
    /// resolves beneath the root handle, so a race can change which in-root file is meant,
    /// never make one outside reachable.
    pub fn real_path(&self, rel: &RelPath) -> Result<RelPath, FsError> {
        self.expand_links(rel, true)
    }

    /// Opens a regular file for reading, or lists a directory.
    ///
    /// Symlinks are followed only while they stay beneath the root. FIFOs, sockets and devices
    /// are `NotRegularFile` (the open cannot block: it is non-blocking and checked afterwards);
    /// a file with more than one hard link is `HardLinked` unless `options` allow it.
    pub fn open_read(&self, rel: &RelPath, options: ReadOptions) -> Result<ReadTarget, FsError> {
        self.retry_expanded(rel, true, |rel| self.open_read_once(rel, options, true))
    }

    /// [`Root::open_read`] for a caller that wants only a file: a directory is `IsADirectory`,
    /// never listed (a hostile tree may put a million entries where a file was expected).
    pub(crate) fn open_read_file(
        &self,
        rel: &RelPath,
        options: ReadOptions,
    ) -> Result<ReadTarget, FsError> {
        self.retry_expanded(rel, true, |rel| self.open_read_once(rel, options, false))
    }

    fn open_read_once(
        &self,
        rel: &RelPath,
        options: ReadOptions,
        list_dirs: bool,
    ) -> Result<ReadTarget, FsError> {
        let err = |e| FsError::from_io("open", rel, e);
        // Look before opening so a device is refused without being opened at all; the open
        // handle is checked again below, which is what counts.
        let before = self.dir.metadata(rel.as_path()).map_err(err)?;
        let ft = before.file_type();
        if ft.is_block_device() || ft.is_char_device() || ft.is_socket() {
            return Err(self.not_regular(rel, describe(ft)));
        }
        let mut opts = OpenOptions::new();
        opts.read(true).custom_flags(READ_FLAGS);
        let file = self
            .dir
            .open_with(rel.as_path(), &opts)
            .map_err(|e| match e.raw_os_error() {
                // Opening a socket fails with ENXIO.
                Some(libc::ENXIO) => self.not_regular(rel, "a socket"),
                _ => err(e),
            })?
            .into_std();
        let meta = file.metadata().map_err(|e| FsError::Io {
            op: "stat",
            path: rel.to_string(),
            source: e,
        })?;
        if meta.is_dir() {
            if !list_dirs {
                return Err(FsError::IsADirectory {
                    path: rel.to_string(),
                });
            }
            return list(Dir::from_std_file(file), rel).map(ReadTarget::Dir);
        }
        if !meta.is_file() {
            return Err(self.not_regular(rel, describe_std(meta.file_type())));
        }
        if meta.nlink() > 1 && !options.allow_hardlinked {
            return Err(FsError::HardLinked {
                path: rel.to_string(),
                links: meta.nlink(),
            });
        }
        Ok(ReadTarget::File { file, meta })
    }

    /// Reads a small regular file whole: for files a tool consults rather than shows (the
    /// ignore files of a walk), which a hostile tree may make huge, endless or blocking.
    ///
    /// The open is [`Root::open_read`]'s (beneath the root, symlinks followed only while they
    /// stay inside, FIFOs, sockets and devices refused without blocking, hard-linked files
    /// refused); a directory is `IsADirectory`. More than `limit` bytes is `TooLarge`, checked
    /// on the open handle and again while reading, so a file that grows is never read past it.
    pub fn read_capped(&self, rel: &RelPath, limit: u64) -> Result<Vec<u8>, FsError> {
        use std::io::Read as _;
        let too_large = || FsError::TooLarge {
            path: rel.to_string(),
            limit,
        };
        let file = match self.open_read_file(rel, ReadOptions::default())? {
            ReadTarget::File { file, meta } if meta.len() <= limit => file,
            ReadTarget::File { .. } => return Err(too_large()),
            ReadTarget::Dir(_) => {
                return Err(FsError::IsADirectory {
                    path: rel.to_string(),
                });
            }
        };
        let mut bytes = Vec::new();
        file.take(limit.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|e| FsError::from_io("read", rel, e))?;
        if bytes.len() as u64 > limit {
            return Err(too_large());
        }
        Ok(bytes)
    }

    /// Opens a regular file that a directory walk found, for reading, in as few system calls as
    /// the platform allows (one `openat2` and one `fstat` on Linux): for searching many files.
    ///
    /// `rel` is root-relative as the walk produced it. The open is as confined as every other
    /// (beneath the root handle, no magic links); a final symlink is refused rather than
    /// followed (a walk that does not follow links never hands one over unless the tree changed
    /// under it); FIFOs, sockets and devices are `NotRegularFile` (the open cannot block); a
    /// file with more than one hard link is `HardLinked` unless `options` allow it. Unlike
    /// [`Root::open_read`], a symlink is never expanded and retried: a walk has no use for it.
    pub fn open_walked_file(&self, rel: &str, options: ReadOptions) -> Result<WalkedFile, FsError> {
        use cap_fs_ext::{FollowSymlinks, OpenOptionsFollowExt};
        let fail = |op: &'static str, e: io::Error| {
            if crate::error::is_escape(&e) {
                return FsError::OutsideRoot {
                    input: rel.to_owned(),
                };
            }
            match e.raw_os_error() {
                Some(libc::ENOENT) => FsError::NotFound {
                    path: rel.to_owned(),
                },
                Some(libc::ELOOP) => FsError::NotRegularFile {
                    path: rel.to_owned(),
                    kind: "a symbolic link",
                },
                Some(libc::ENXIO) => FsError::NotRegularFile {
                    path: rel.to_owned(),
                    kind: "a socket",
                },
                _ => FsError::Io {
                    op,
                    path: rel.to_owned(),
                    source: e,
                },
            }
        };
        let mut opts = OpenOptions::new();
        opts.read(true)
            .custom_flags(READ_FLAGS)
            .follow(FollowSymlinks::No);
        let file = self
            .dir
            .open_with(rel, &opts)
            .map_err(|e| fail("open", e))?
            .into_std();
        let meta = file.metadata().map_err(|e| fail("stat", e))?;
        if !meta.is_file() {
            return Err(FsError::NotRegularFile {
                path: rel.to_owned(),
                kind: if meta.is_dir() {
                    "a directory"
                } else {
                    describe_std(meta.file_type())
                },
            });
        }
        if meta.nlink() > 1 && !options.allow_hardlinked {
            return Err(FsError::HardLinked {
                path: rel.to_owned(),
                links: meta.nlink(),
            });
        }
        Ok(WalkedFile {
            file,
            len: meta.len(),
        })
    }

    /// Metadata of `rel` without following a final symlink; `None` when nothing is there.
    ///
    /// A final symlink is reported as a symlink only if it resolves beneath the root (or is
    /// dangling inside it); one that leads outside is `OutsideRoot`, like every other way out.
    pub fn metadata(&self, rel: &RelPath) -> Result<Option<Metadata>, FsError> {
        self.retry_expanded(rel, false, |rel| self.metadata_once(rel))
    }

    fn metadata_once(&self, rel: &RelPath) -> Result<Option<Metadata>, FsError> {
        let meta = match self.dir.symlink_metadata(rel.as_path()) {
            Ok(m) => m,
            Err(e) => {
                return match FsError::from_io("stat", rel, e) {
                    FsError::NotFound { .. } | FsError::NotADirectory { .. } => Ok(None),
                    other => Err(other),
                };
            }
        };
        if meta.file_type().is_symlink() {
            self.check_link_stays_inside(rel)?;
        }
        Ok(Some(Metadata::of(&meta)))
    }

    /// The entries of a directory, sorted bytewise, symlinks not followed.
    pub fn read_dir(&self, rel: &RelPath) -> Result<Vec<DirEntry>, FsError> {
        self.retry_expanded(rel, true, |rel| {
            let dir = self
                .dir
                .open_dir(rel.as_path())
                .map_err(|e| FsError::from_io("open directory", rel, e))?;
            list(dir, rel)
        })
    }

    /// `OutsideRoot` if following `rel`'s final symlink leads out of the root.
    ///
    /// The kernel (or cap-std's resolver) reports an escape as soon as it meets it, before it
    /// could report a missing target, so a dangling link out is an escape while a dangling link
    /// to a missing in-tree name is not.
    pub(crate) fn check_link_stays_inside(&self, rel: &RelPath) -> Result<(), FsError> {
        let followed = self.retry_expanded(rel, true, |rel| {
            self.dir
                .metadata(rel.as_path())
                .map_err(|e| FsError::from_io("stat", rel, e))
        });
        match followed {
            Err(FsError::OutsideRoot { .. }) => Err(FsError::OutsideRoot {
                input: rel.to_string(),
            }),
            _ => Ok(()),
        }
    }

    fn not_regular(&self, rel: &RelPath, kind: &'static str) -> FsError {
        FsError::NotRegularFile {
            path: rel.to_string(),
            kind,
        }
    }
}

fn list(dir: Dir, rel: &RelPath) -> Result<Vec<DirEntry>, FsError> {
    let err = |e| FsError::from_io("read directory", rel, e);
    let mut out = Vec::new();
    for item in dir.entries().map_err(err)? {
        let item = item.map_err(err)?;
        let kind = match item.file_type() {
            Ok(ft) => EntryKind::of(ft),
            Err(_) => EntryKind::Other,
        };
        out.push(DirEntry {
            name: item.file_name(),
            kind,
        });
    }
    out.sort_by(|a, b| a.name.as_encoded_bytes().cmp(b.name.as_encoded_bytes()));
    Ok(out)
}
