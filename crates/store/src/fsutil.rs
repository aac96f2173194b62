//! Small filesystem helpers shared by the store and the event log.

use std::fs::{DirBuilder, File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::Path;

/// Creates `dir` and its missing parents with mode 0700; an existing directory is left as is.
pub(crate) fn create_private_dir(dir: &Path) -> io::Result<()> {
    DirBuilder::new().recursive(true).mode(0o700).create(dir)
}

/// Opens an existing regular file for reading without following a symlink in its last
/// component and without blocking on a FIFO or device; anything but a regular file is
/// `InvalidInput`. Files under the store are ours, but the tree they sit in may have come from
/// a repository: `events.jsonl -> /dev/zero` must not become an endless read.
pub(crate) fn open_regular_nofollow(path: &Path) -> io::Result<File> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    Ok(file)
}

/// Reads a whole regular file through [`open_regular_nofollow`].
pub(crate) fn read_regular_nofollow(path: &Path) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    open_regular_nofollow(path)?.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Makes a rename or create inside `dir` durable.
pub(crate) fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}
