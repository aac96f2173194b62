//! The trust store: `$XDG_CONFIG_HOME/tackle/trust.json` (else `~/.config/tackle/trust.json`),
//! which roots the user trusted and what each trust accepted.
//!
//! Keyed by the canonical root. A record holds the SHA-256 of every widening the user accepted
//! (see [`super::classify::Widening::item`]), not the settings themselves, so the file says
//! nothing about the projects beyond their paths and a later config is judged by what it adds.
//!
//! The file is the user's alone: the directory is made 0700 and the file is written 0600,
//! temp → fsync → rename → fsync of the directory, under an exclusive lock on `trust.lock` so
//! two `tackle trust` runs cannot lose each other's record. A store another user could write
//! (group or other write permission on the file or its directory) is not believed: it is read
//! as empty, with a warning that says how to fix it.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::config_error;
use crate::error::Context;
use serde::{Deserialize, Serialize};

/// The store's file name inside the user's tackle config directory.
pub const FILE_NAME: &str = "trust.json";
const LOCK_NAME: &str = "trust.lock";
const VERSION: u32 = 1;

/// What trusting one root accepted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrustRecord {
    /// When the root was trusted, in seconds since the Unix epoch.
    pub trusted_at: u64,
    /// SHA-256 (hex) of every widening accepted.
    pub accepted: BTreeSet<String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct StoreFile {
    version: u32,
    roots: BTreeMap<String, TrustRecord>,
}

/// The records as read, and why they could not be believed if they could not.
#[derive(Debug, Default)]
pub struct Records {
    pub roots: BTreeMap<String, TrustRecord>,
    /// Set when the store exists but was not used (unsafe permissions, unreadable, malformed).
    pub problem: Option<String>,
}

/// The trust store in one directory.
#[derive(Clone, Debug)]
pub struct TrustStore {
    dir: PathBuf,
}

impl TrustStore {
    /// The store in `dir` (the user's tackle config directory).
    pub fn in_dir(dir: PathBuf) -> Self {
        Self { dir }
    }

    /// The user's store, when a config directory can be named (`$XDG_CONFIG_HOME` or `$HOME`).
    pub fn user() -> Option<Self> {
        crate::load::user_config_dir().map(Self::in_dir)
    }

    pub fn path(&self) -> PathBuf {
        self.dir.join(FILE_NAME)
    }

    /// Every record. A missing store is empty; one that cannot be believed is empty with a
    /// problem to report (never an error: a broken store must not stop the untrusted path).
    pub fn read(&self) -> Records {
        match self.read_checked() {
            Ok(roots) => Records {
                roots,
                problem: None,
            },
            Err(e) => Records {
                roots: BTreeMap::new(),
                problem: Some(format!("{e:#}")),
            },
        }
    }

    fn read_checked(&self) -> crate::Result<BTreeMap<String, TrustRecord>> {
        let path = self.path();
        // Regular files only, capped, never blocking: a FIFO or `/dev/zero` here is a problem
        // to report, never a hang.
        let kind = tackle_fs::OwnFile::TRUST_STORE;
        let text = match kind.read_at(&path) {
            Ok(Some(bytes)) => bytes
                .into_text(kind, &path.display().to_string())
                .map_err(|e| config_error!("{e}"))?,
            Ok(None) => return Ok(BTreeMap::new()),
            Err(e) => return Err(config_error!("{e}")),
        };
        for (what, p) in [("trust store", &path), ("its directory", &self.dir)] {
            let mode = std::fs::metadata(p)
                .with_context(|| format!("reading {}", p.display()))?
                .permissions()
                .mode();
            if mode & 0o022 != 0 {
                return Err(config_error!(
                    "the {what} {} is writable by other users (mode {:o}), so it is ignored; run chmod go-w {}",
                    p.display(),
                    mode & 0o777,
                    p.display()
                ));
            }
        }
        let file: StoreFile = serde_json::from_str(&text).map_err(|e| {
            config_error!(
                "the trust store {} is malformed ({e}), so it is ignored; run tackle trust again to rewrite it",
                path.display()
            )
        })?;
        if file.version != VERSION {
            return Err(config_error!(
                "the trust store {} has version {} (this tackle reads {VERSION}), so it is ignored",
                path.display(),
                file.version
            ));
        }
        Ok(file.roots)
    }

    /// Record that `root` is trusted with exactly `accepted`, replacing any earlier record.
    pub fn record(&self, root: &str, accepted: BTreeSet<String>, now: u64) -> crate::Result<()> {
        self.update(|roots| {
            roots.insert(
                root.to_owned(),
                TrustRecord {
                    trusted_at: now,
                    accepted,
                },
            );
        })
    }

    /// Forget `root`; whether it was trusted.
    pub fn revoke(&self, root: &str) -> crate::Result<bool> {
        let mut was = false;
        self.update(|roots| was = roots.remove(root).is_some())?;
        Ok(was)
    }

    /// Read, change and write the store under its lock. An unbelievable store is replaced.
    fn update(&self, change: impl FnOnce(&mut BTreeMap<String, TrustRecord>)) -> crate::Result<()> {
        self.make_dir()?;
        let lock_path = self.dir.join(LOCK_NAME);
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(&lock_path)
            .with_context(|| format!("opening {}", lock_path.display()))?;
        lock.lock()
            .with_context(|| format!("locking {}", lock_path.display()))?;
        let mut roots = self.read_checked().unwrap_or_default();
        change(&mut roots);
        let file = StoreFile {
            version: VERSION,
            roots,
        };
        let mut bytes = serde_json::to_vec_pretty(&file).context("encoding the trust store")?;
        bytes.push(b'\n');
        self.replace(&bytes)
    }

    /// The directory, created 0700 (its parents too), and tightened to 0700 if it exists.
    fn make_dir(&self) -> crate::Result<()> {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.dir)
            .with_context(|| format!("creating {}", self.dir.display()))?;
        let mode = std::fs::metadata(&self.dir)
            .with_context(|| format!("reading {}", self.dir.display()))?
            .permissions()
            .mode();
        if mode & 0o077 != 0 {
            std::fs::set_permissions(&self.dir, std::fs::Permissions::from_mode(0o700))
                .with_context(|| format!("making {} private (chmod 700)", self.dir.display()))?;
        }
        Ok(())
    }

    /// Temp file (0600, created new) → fsync → rename over the store → fsync the directory.
    fn replace(&self, bytes: &[u8]) -> crate::Result<()> {
        let path = self.path();
        let tmp = self
            .dir
            .join(format!(".{FILE_NAME}.{}.tmp", std::process::id()));
        let _ = std::fs::remove_file(&tmp);
        let written = (|| -> std::io::Result<()> {
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&tmp)?;
            f.write_all(bytes)?;
            f.sync_all()?;
            std::fs::rename(&tmp, &path)?;
            std::fs::File::open(&self.dir)?.sync_all()
        })();
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        written.with_context(|| format!("writing the trust store {}", path.display()))
    }
}

/// The SHA-256 of a widening's item text, in hex: what a record keeps.
pub fn digest(item: &str) -> String {
    use sha2::Digest;
    let hash = sha2::Sha256::digest(item.as_bytes());
    hash.iter().map(|b| format!("{b:02x}")).collect()
}

/// The key a root is recorded under: its canonical path, which must be UTF-8.
pub fn root_key(root: &Path) -> crate::Result<String> {
    let canonical = root
        .canonicalize()
        .with_context(|| format!("resolving the project root {}", root.display()))?;
    canonical.to_str().map(str::to_owned).ok_or_else(|| {
        config_error!(
            "the project root {} is not valid UTF-8, so it cannot be trusted; move it to a UTF-8 path",
            canonical.display()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn records_are_private_and_survive_a_round_trip() {
        let t = tempfile::tempdir().unwrap();
        let store = TrustStore::in_dir(t.path().join("xdg/tackle"));
        assert!(store.read().roots.is_empty() && store.read().problem.is_none());
        store
            .record("/a", BTreeSet::from([digest("x")]), 7)
            .unwrap();
        store.record("/b", BTreeSet::new(), 8).unwrap();
        assert_eq!(mode(&store.path()), 0o600);
        assert_eq!(mode(&t.path().join("xdg/tackle")), 0o700);
        let read = store.read();
        assert_eq!(read.problem, None);
        assert_eq!(read.roots["/a"].accepted, BTreeSet::from([digest("x")]));
        assert_eq!(read.roots["/b"].trusted_at, 8);
        assert!(store.revoke("/a").unwrap());
        assert!(!store.revoke("/a").unwrap());
        assert_eq!(store.read().roots.keys().collect::<Vec<_>>(), ["/b"]);
        let leftovers: Vec<_> = std::fs::read_dir(t.path().join("xdg/tackle"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }

    #[test]
    fn an_existing_directory_is_made_private() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("tackle");
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let store = TrustStore::in_dir(dir.clone());
        store.record("/a", BTreeSet::new(), 1).unwrap();
        assert_eq!(mode(&dir), 0o700);
    }

    #[test]
    fn a_store_others_can_write_is_not_believed() {
        let t = tempfile::tempdir().unwrap();
        let store = TrustStore::in_dir(t.path().join("tackle"));
        store.record("/a", BTreeSet::new(), 1).unwrap();
        std::fs::set_permissions(store.path(), std::fs::Permissions::from_mode(0o666)).unwrap();
        let read = store.read();
        assert!(read.roots.is_empty());
        let problem = read.problem.unwrap();
        assert!(
            problem.contains("writable by other users") && problem.contains("chmod go-w"),
            "{problem}"
        );
        // Recording again replaces it with a private file.
        store.record("/a", BTreeSet::new(), 2).unwrap();
        assert_eq!(mode(&store.path()), 0o600);
        assert_eq!(store.read().roots["/a"].trusted_at, 2);
    }

    #[test]
    fn a_malformed_store_is_reported_and_ignored() {
        let t = tempfile::tempdir().unwrap();
        let store = TrustStore::in_dir(t.path().to_path_buf());
        std::fs::write(
            store.path(),
            "{\"version\":1,\"roots\":{\"/a\":{\"trusted_at\":1,\"accepted\":[],\"extra\":1}}}",
        )
        .unwrap();
        std::fs::set_permissions(store.path(), std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        let read = store.read();
        assert!(read.roots.is_empty());
        assert!(read.problem.unwrap().contains("malformed"));
    }

    #[test]
    fn digests_are_sha256_hex() {
        assert_eq!(
            digest(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
