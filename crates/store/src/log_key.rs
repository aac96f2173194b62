//! The user's log key: 32 random bytes that only this user's tackle holds, kept in the user's
//! config directory (`$XDG_CONFIG_HOME/tackle/log-key`), never in a project.
//!
//! Every line of a session log carries a tag made with it ([`crate::LogSeal`]), so a log a
//! repository ships (or anyone without the key wrote) is told apart from the user's own.
//!
//! **Key decision:** the file is created once, whole, and never rewritten: the bytes are
//! written to a private temp file, synced, and hard-linked to the final name, which fails when
//! another process got there first (then its key is read back). A reader therefore never sees a
//! half-written key, and two first runs never end up with different keys. Reading accepts only a
//! regular file (no symlink followed) of exactly 32 bytes that no other user can read or write.
//! Rejected: deriving the key from something already on the machine (a machine id, the user's
//! name), which anyone who can read the repository's author's machine details could recompute.

use std::fs::OpenOptions;
use std::io::{self, Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use hmac::{Hmac, KeyInit};
use sha2::Sha256;

use crate::fsutil::{create_private_dir, sync_dir};

/// The key file's name inside the user's tackle config directory.
pub const LOG_KEY_FILE: &str = "log-key";

/// Bytes in a log key.
pub const LOG_KEY_LEN: usize = 32;

/// The user's secret for tagging session logs. Its bytes are never shown: `Debug` prints
/// nothing of them.
#[derive(Clone)]
pub struct LogKey {
    /// HMAC-SHA256 keyed once; each tag starts from a clone, so the key is never re-hashed.
    pub(crate) keyed: Hmac<Sha256>,
}

impl std::fmt::Debug for LogKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LogKey(..)")
    }
}

/// Why the log key could not be had.
#[derive(Debug, thiserror::Error)]
pub enum LogKeyError {
    /// The file could not be created, read or synced.
    #[error("log key {}: cannot {action}: {source}; check the directory's permissions", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        source: io::Error,
    },
    /// The file is there but is not a key this user alone holds.
    #[error("log key {} {problem}; remove it (rm {}) and tackle makes a new one, after which the logs tagged with the old key are listed as foreign", path.display(), path.display())]
    Unusable { path: PathBuf, problem: String },
}

impl LogKey {
    /// A key from its bytes (tests, and embedders that keep their key elsewhere).
    pub fn from_bytes(bytes: &[u8; LOG_KEY_LEN]) -> Self {
        Self {
            keyed: <Hmac<Sha256> as KeyInit>::new_from_slice(bytes)
                // HMAC takes keys of any length; a 32-byte slice is always accepted.
                .unwrap_or_else(|_| unreachable!("HMAC accepts a key of any length")),
        }
    }

    /// The key in `dir/log-key`, created (and `dir` with it, 0700) on first need.
    pub fn load_or_create(dir: &Path) -> Result<Self, LogKeyError> {
        let path = dir.join(LOG_KEY_FILE);
        let io = |action: &'static str, path: &Path| {
            let path = path.to_path_buf();
            move |source| LogKeyError::Io {
                action,
                path,
                source,
            }
        };
        match read_key(&path) {
            Err(ReadError::Missing) => {}
            Ok(bytes) => return Ok(Self::from_bytes(&bytes)),
            Err(ReadError::Io(e)) => return Err(io("read", &path)(e)),
            Err(ReadError::Unusable(problem)) => {
                return Err(LogKeyError::Unusable { path, problem });
            }
        }
        create_private_dir(dir).map_err(io("create its directory", dir))?;
        let bytes = random_bytes().map_err(io("draw random bytes for", &path))?;
        let temp = dir.join(format!(".{LOG_KEY_FILE}.{}.tmp", std::process::id()));
        let _ = std::fs::remove_file(&temp);
        let written = (|| {
            let mut file = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .custom_flags(libc::O_NOFOLLOW)
                .open(&temp)?;
            file.write_all(&bytes)?;
            file.sync_all()?;
            // Fails with EEXIST when another process made the key first; never replaces.
            std::fs::hard_link(&temp, &path)
        })();
        let _ = std::fs::remove_file(&temp);
        match written {
            Ok(()) => {
                sync_dir(dir).map_err(io("sync the directory of", &path))?;
                Ok(Self::from_bytes(&bytes))
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => match read_key(&path) {
                Ok(bytes) => Ok(Self::from_bytes(&bytes)),
                Err(ReadError::Unusable(problem)) => Err(LogKeyError::Unusable { path, problem }),
                Err(ReadError::Missing) => Err(io("read", &path)(io::ErrorKind::NotFound.into())),
                Err(ReadError::Io(e)) => Err(io("read", &path)(e)),
            },
            Err(e) => Err(io("create", &path)(e)),
        }
    }
}

enum ReadError {
    Missing,
    Io(io::Error),
    Unusable(String),
}

/// The key's bytes: a regular file, not a link, private to its owner, exactly 32 bytes.
fn read_key(path: &Path) -> Result<[u8; LOG_KEY_LEN], ReadError> {
    let mut file = match OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
    {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(ReadError::Missing),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(ReadError::Unusable("is a symbolic link".into()));
        }
        Err(e) => return Err(ReadError::Io(e)),
    };
    let meta = file.metadata().map_err(ReadError::Io)?;
    if !meta.is_file() {
        return Err(ReadError::Unusable("is not a regular file".into()));
    }
    if meta.mode() & 0o077 != 0 {
        return Err(ReadError::Unusable(format!(
            "can be read or written by other users (mode {:o})",
            meta.mode() & 0o777
        )));
    }
    if meta.len() != LOG_KEY_LEN as u64 {
        return Err(ReadError::Unusable(format!(
            "holds {} bytes, not {LOG_KEY_LEN}",
            meta.len()
        )));
    }
    let mut bytes = [0; LOG_KEY_LEN];
    file.read_exact(&mut bytes).map_err(ReadError::Io)?;
    // The size was checked on the open file; a longer file now is one being rewritten.
    let mut more = [0; 1];
    if file.read(&mut more).map_err(ReadError::Io)? != 0 {
        return Err(ReadError::Unusable(format!(
            "holds more than {LOG_KEY_LEN} bytes"
        )));
    }
    Ok(bytes)
}

/// 32 bytes from the kernel's random source.
fn random_bytes() -> io::Result<[u8; LOG_KEY_LEN]> {
    let mut bytes = [0; LOG_KEY_LEN];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn the_key_is_made_once_private_and_read_back_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config/tackle");
        let first = LogKey::load_or_create(&config).unwrap();
        let path = config.join(LOG_KEY_FILE);
        let meta = std::fs::symlink_metadata(&path).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        assert_eq!(meta.len(), LOG_KEY_LEN as u64);
        let dir_mode = std::fs::metadata(&config).unwrap().permissions().mode();
        assert_eq!(dir_mode & 0o777, 0o700);
        let bytes = std::fs::read(&path).unwrap();
        let again = LogKey::load_or_create(&config).unwrap();
        // Same key: the same tag for the same input.
        let tag = |k: &LogKey| crate::LogSeal::new(k, "s").tag(b"x");
        assert_eq!(tag(&first), tag(&again));
        assert_eq!(std::fs::read(&path).unwrap(), bytes, "never rewritten");
        assert_eq!(
            std::fs::read_dir(&config).unwrap().count(),
            1,
            "no temp left"
        );
    }

    /// One row a way the key file can be wrong: each refused with what is wrong and the fix.
    #[test]
    fn a_key_file_that_is_not_the_users_alone_is_refused() {
        type Make = fn(&Path);
        let cases: [(&str, Make, &str); 5] = [
            (
                "short",
                |p| std::fs::write(p, [7; 31]).unwrap(),
                "holds 31 bytes",
            ),
            (
                "long",
                |p| std::fs::write(p, [7; 33]).unwrap(),
                "holds 33 bytes",
            ),
            (
                "group-readable",
                |p| {
                    std::fs::write(p, [7; 32]).unwrap();
                    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o640)).unwrap();
                },
                "other users (mode 640)",
            ),
            (
                "symlink",
                |p| {
                    let target = p.with_file_name("elsewhere");
                    std::fs::write(&target, [7; 32]).unwrap();
                    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600))
                        .unwrap();
                    std::os::unix::fs::symlink(target, p).unwrap();
                },
                "symbolic link",
            ),
            (
                "directory",
                |p| std::fs::create_dir(p).unwrap(),
                "not a regular file",
            ),
        ];
        for (name, make, want) in cases {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join(LOG_KEY_FILE);
            make(&path);
            if let Ok(meta) = std::fs::symlink_metadata(&path)
                && meta.is_file()
                && name != "group-readable"
            {
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
            }
            let err = LogKey::load_or_create(dir.path()).unwrap_err().to_string();
            assert!(err.contains(want), "{name}: {err}");
            assert!(err.contains("rm "), "{name}: {err}");
        }
    }
}
