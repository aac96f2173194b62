//! The content-addressed artifact store: captures, publication, verified reads, guards.

use std::collections::{HashMap, HashSet};
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

use crate::backend::ArtifactBackend;
use crate::fsutil::{open_regular_nofollow, sync_dir};
use crate::layout::{DirError, ensure_real_dirs};
use crate::spill::SpilledSink;
use crate::temps::{
    CAPTURE_PREFIX, CORRUPT_PREFIX, Created, TempSweep, create_locked, sweep_temps,
};
use crate::{ArtifactId, Durability, Manifest, StoreError};

/// Artifacts larger than this are never read as manifests (a manifest lists at most a few
/// streams, so real ones are tiny).
pub const MANIFEST_READ_LIMIT: u64 = 1024 * 1024;

/// A capture holds this much in memory (hashed inline) before it spills into a temp file.
pub(crate) const CAPTURE_BUFFER: usize = 256 * 1024;

/// An artifact this store published or refreshed less than this long ago is deduplicated by a
/// metadata check alone: no guard, no open, no read, no mtime refresh. Its mtime is then at most
/// this stale, far inside the janitor's grace ([`crate::DEFAULT_GRACE`], one hour), so no janitor
/// pass can collect it before the event naming it is written. A janitor must never run with a
/// grace this short.
pub const FRESH_WINDOW: Duration = Duration::from_secs(60);

/// The fresh set is pruned of expired entries once it holds this many.
const FRESH_CAPACITY: usize = 4096;

/// What a publication produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArtifactInfo {
    /// The artifact's digest and name.
    pub id: ArtifactId,
    /// Length in bytes.
    pub bytes: u64,
    /// Number of `\n` bytes.
    pub newlines: u64,
}

/// An artifact as found on disk by [`ArtifactStore::list`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArtifactInfoOnDisk {
    /// The artifact's name (not verified against its content).
    pub id: ArtifactId,
    /// Length in bytes.
    pub bytes: u64,
    /// Last modification time; publication and deduplication refresh it.
    pub modified: SystemTime,
}

/// A content-addressed store of tool output under `<project>/.agents/store/`.
///
/// Share it through an `Arc`; every method takes `&self`.
#[derive(Debug)]
pub struct ArtifactStore {
    paths: Arc<StorePaths>,
    verified: Mutex<HashSet<ArtifactId>>,
}

/// The store's layout, shared with captures so they do not borrow the store.
#[derive(Debug)]
struct StorePaths {
    root: PathBuf,
    artifacts: PathBuf,
    tmp: PathBuf,
    gc_lock: PathBuf,
    /// Artifacts published with [`Durability::Written`] whose bytes and directory entry are not
    /// yet known to be on the device; [`ArtifactStore::sync_written`] empties it.
    unsynced: Mutex<Vec<PathBuf>>,
    /// The shared lock on `gc.lock` behind every [`PublicationGuard`] of this store.
    guards: Arc<GuardLock>,
    /// Artifacts published or refreshed within [`FRESH_WINDOW`].
    fresh: Mutex<FreshSet>,
    /// Held through [`ArtifactStore::sync_written`]: when several event logs share the store,
    /// one whose sync finds nothing owed must still wait for the files another is syncing.
    syncing: Mutex<()>,
    /// Where artifacts are durable besides these files (the installed backend's), and the
    /// artifacts published here and not yet there.
    remote: Option<Arc<dyn ArtifactBackend>>,
    unuploaded: Mutex<Vec<ArtifactId>>,
}

/// digest → (when it was published or refreshed, its length, its file's mtime then).
type FreshSet = HashMap<ArtifactId, (Instant, u64, SystemTime)>;

/// One open `gc.lock` for all of a store's guards: the first guard takes the shared flock, the
/// last one dropped releases it. flock belongs to the open file description, so every guard of
/// the store must share it rather than lock and unlock it independently.
#[derive(Debug)]
struct GuardLock {
    state: Mutex<GuardState>,
}

#[derive(Debug, Default)]
struct GuardState {
    file: Option<File>,
    holders: usize,
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

impl ArtifactStore {
    /// Opens (creating if needed) the store at `store_dir`, then removes abandoned temp files:
    /// those whose lock is free, their writer gone (see `temps.rs`).
    pub fn open(store_dir: &Path) -> Result<Self, StoreError> {
        let store = Self::open_unswept(store_dir)?;
        store.sweep_temps(false)?;
        Ok(store)
    }

    /// Opens (creating if needed) the store at `store_dir` and leaves `tmp/` as it is: for a
    /// caller that sweeps it and reports what it found ([`crate::Janitor`], `artifacts gc`,
    /// whose dry run must remove nothing).
    pub fn open_unswept(store_dir: &Path) -> Result<Self, StoreError> {
        let paths = StorePaths {
            root: store_dir.to_path_buf(),
            artifacts: store_dir.join("artifacts"),
            tmp: store_dir.join("tmp"),
            gc_lock: store_dir.join("gc.lock"),
            unsynced: Mutex::new(Vec::new()),
            guards: Arc::new(GuardLock {
                state: Mutex::new(GuardState::default()),
            }),
            fresh: Mutex::new(HashMap::new()),
            syncing: Mutex::new(()),
            remote: crate::backend::backend().and_then(|b| b.artifacts()),
            unuploaded: Mutex::new(Vec::new()),
        };
        let store = Self {
            paths: Arc::new(paths),
            verified: Mutex::new(HashSet::new()),
        };
        let p = &store.paths;
        // `.agents/store` and `.agents` above it, then the store's own directories: each a
        // real directory, never a symlink a repository committed.
        let ready = |r: Result<(), (PathBuf, DirError)>| match r {
            Ok(()) => Ok(()),
            Err((_, DirError::Layout(e))) => Err(StoreError::Layout(e)),
            Err((dir, DirError::Io(e))) => Err(StoreError::io("create directory", dir)(e)),
        };
        ready(ensure_real_dirs(&p.root, 1))?;
        for dir in [&p.artifacts, &p.tmp, &p.root.join("sessions")] {
            ready(ensure_real_dirs(dir, 0))?;
        }
        Ok(store)
    }

    /// Removes the temp files under `tmp/` whose writer is gone (their lock is free), or with
    /// `dry_run` only counts them. A live capture's temp, in this process or another, is locked
    /// and left alone.
    pub fn sweep_temps(&self, dry_run: bool) -> Result<TempSweep, StoreError> {
        sweep_temps(&self.paths.tmp, dry_run).map_err(StoreError::io("sweep", &self.paths.tmp))
    }

    /// The store directory this handle was opened on.
    pub fn root(&self) -> &Path {
        &self.paths.root
    }

    /// The directory holding `sessions/<id>/events.jsonl`.
    pub fn sessions_dir(&self) -> PathBuf {
        self.paths.root.join("sessions")
    }

    /// The final path of an artifact (whether or not it exists).
    pub fn artifact_path(&self, id: ArtifactId) -> PathBuf {
        self.paths.artifacts.join(id.to_hex())
    }

    /// Starts capturing a new artifact. Output is held in memory until it passes
    /// [`CAPTURE_BUFFER`] bytes, then spills into a locked temp file, so the many small outputs
    /// of ordinary calls never create, lock and fsync a temp file only to find the artifact
    /// already exists.
    pub fn begin_capture(&self) -> Result<Capture, StoreError> {
        self.begin_capture_with(Durability::Synced)
    }

    /// Like [`ArtifactStore::begin_capture`]; with [`Durability::Written`] the artifact is
    /// published without waiting for the device (temp → rename, no fsync) and synced later by
    /// [`ArtifactStore::sync_written`], which the event log runs before every sync so that no
    /// durable event names an artifact that is not.
    pub fn begin_capture_with(&self, durability: Durability) -> Result<Capture, StoreError> {
        Ok(Capture {
            durability,
            paths: Arc::clone(&self.paths),
            sink: CaptureSink::Memory(Vec::new()),
            path: PathBuf::new(),
            hasher: Sha256::new(),
            bytes: 0,
            newlines: 0,
            last_byte: None,
        })
    }

    /// Stores `bytes` as an artifact through the same publication path as a capture.
    pub fn put(&self, bytes: &[u8]) -> Result<ArtifactInfo, StoreError> {
        self.put_with(bytes, Durability::Synced)
    }

    /// [`ArtifactStore::put`] with the durability of the call it belongs to.
    pub fn put_with(
        &self,
        bytes: &[u8],
        durability: Durability,
    ) -> Result<ArtifactInfo, StoreError> {
        let mut capture = self.begin_capture_with(durability)?;
        capture.write(bytes)?;
        capture.finish()
    }

    /// Stores a manifest as an artifact.
    pub fn put_manifest(&self, manifest: &Manifest) -> Result<ArtifactInfo, StoreError> {
        self.put_manifest_with(manifest, Durability::Synced)
    }

    /// [`ArtifactStore::put_manifest`] with the durability of the call it belongs to.
    pub fn put_manifest_with(
        &self,
        manifest: &Manifest,
        durability: Durability,
    ) -> Result<ArtifactInfo, StoreError> {
        let bytes =
            serde_json::to_vec(manifest).map_err(|source| StoreError::EncodeManifest { source })?;
        self.put_with(&bytes, durability)
    }

    /// Makes every artifact published with [`Durability::Written`] so far durable: each file
    /// is fsynced, then the artifacts directory once. One that is gone since (set aside as
    /// corrupt, or collected) has nothing left to sync.
    pub fn sync_written(&self) -> io::Result<()> {
        // Nothing is inconsistent after a panic elsewhere: the unit only orders the syncs.
        let _syncing = self
            .paths
            .syncing
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        let pending = std::mem::take(
            &mut *self
                .paths
                .unsynced
                .lock()
                .unwrap_or_else(|poison| poison.into_inner()),
        );
        self.upload_published()?;
        if pending.is_empty() {
            return Ok(());
        }
        let result = pending
            .iter()
            .try_for_each(|path| match open_regular_nofollow(path) {
                Ok(file) => file.sync_data(),
                Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(e),
            });
        let result = result.and_then(|()| sync_dir(&self.paths.artifacts));
        if result.is_err() {
            // Still owed: a later sync tries again.
            self.paths
                .unsynced
                .lock()
                .unwrap_or_else(|poison| poison.into_inner())
                .extend(pending);
        }
        result
    }

    /// Hands the artifacts published since the last call to the backend, if there is one; on
    /// failure they stay owed.
    fn upload_published(&self) -> io::Result<()> {
        let Some(remote) = &self.paths.remote else {
            return Ok(());
        };
        let owed = std::mem::take(&mut *self.paths.lock_unuploaded());
        if owed.is_empty() {
            return Ok(());
        }
        let paths: Vec<PathBuf> = owed.iter().map(|id| self.artifact_path(*id)).collect();
        let batch: Vec<(ArtifactId, &Path)> = owed
            .iter()
            .copied()
            .zip(paths.iter().map(PathBuf::as_path))
            .collect();
        remote.upload(&batch).map_err(|e| {
            self.paths.lock_unuploaded().extend(owed.iter().copied());
            io::Error::from(e)
        })
    }

    /// Fetches a missing artifact from the backend into this store, checked against its
    /// digest; `Ok(false)` when there is no backend or it lacks the artifact too.
    fn fetch_missing(&self, id: ArtifactId) -> Result<bool, StoreError> {
        let Some(remote) = &self.paths.remote else {
            return Ok(false);
        };
        let fetched = remote
            .download(id)
            .map_err(|e| StoreError::Backend { id, source: e })?;
        let Some(bytes) = fetched else {
            return Ok(false);
        };
        let actual = ArtifactId::of(&bytes);
        if actual != id {
            return Err(StoreError::ArtifactCorrupt { id, actual });
        }
        // Published here without owing an upload: the backend has it.
        self.paths.publish_bytes(&bytes, id, Durability::Synced)?;
        self.verified_set().insert(id);
        Ok(true)
    }

    /// The artifact parsed as a manifest, if it exists, is a regular file no larger than
    /// [`MANIFEST_READ_LIMIT`] and is one. Its content is not verified (no hashing, no moving a
    /// corrupt copy aside): for the janitor and for a gate deciding what a read may touch,
    /// which verify nothing they serve from it.
    pub fn unverified_manifest(&self, id: ArtifactId) -> Option<Manifest> {
        let file = open_regular_nofollow(&self.artifact_path(id)).ok()?;
        if file.metadata().ok()?.len() > MANIFEST_READ_LIMIT {
            return None;
        }
        let mut bytes = Vec::new();
        file.take(MANIFEST_READ_LIMIT)
            .read_to_end(&mut bytes)
            .ok()?;
        Manifest::parse(&bytes)
    }

    /// Whether an artifact file with this name exists (its content is not checked).
    pub fn contains(&self, id: ArtifactId) -> bool {
        self.artifact_path(id).is_file()
    }

    /// Opens an artifact for reading, positioned at the start.
    ///
    /// The first time an id is opened in this process its whole content is hashed; a mismatch
    /// is [`StoreError::ArtifactCorrupt`] and is reported again on every later open.
    pub fn open_artifact(&self, id: ArtifactId) -> Result<File, StoreError> {
        let path = self.artifact_path(id);
        let mut file = match open_regular_nofollow(&path) {
            Ok(file) => file,
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                if !self.fetch_missing(id)? {
                    return Err(StoreError::ArtifactMissing { id });
                }
                open_regular_nofollow(&path).map_err(StoreError::io("open artifact", &path))?
            }
            Err(err) => return Err(StoreError::io("open artifact", &path)(err)),
        };
        if self.is_verified(id) {
            return Ok(file);
        }
        let actual = hash_reader(&mut file).map_err(StoreError::io("read artifact", &path))?;
        if actual != id {
            // Move the bad copy out of the way so the next publication of this content writes
            // a good one instead of deduplicating against it. It goes to `tmp/`, locked while
            // it moves like every temp there; the next sweep (start-up, `artifacts gc`)
            // removes it. Failure to move it changes nothing.
            let locked = file.try_lock().is_ok();
            let aside = self.paths.tmp.join(format!(
                "{CORRUPT_PREFIX}{}-{}-{}",
                id.to_hex(),
                std::process::id(),
                TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
            ));
            if locked {
                let _ = fs::rename(&path, aside);
            }
            drop(file);
            self.forget_fresh(id);
            return Err(StoreError::ArtifactCorrupt { id, actual });
        }
        file.seek(SeekFrom::Start(0))
            .map_err(StoreError::io("read artifact", &path))?;
        self.verified_set().insert(id);
        Ok(file)
    }

    /// Reads a whole artifact, verifying it as [`ArtifactStore::open_artifact`] does.
    pub fn read(&self, id: ArtifactId) -> Result<Vec<u8>, StoreError> {
        let mut file = self.open_artifact(id)?;
        let mut out = Vec::new();
        file.read_to_end(&mut out)
            .map_err(StoreError::io("read artifact", self.artifact_path(id)))?;
        Ok(out)
    }

    /// Every file under `artifacts/` whose name is a valid id, sorted by id.
    pub fn list(&self) -> Result<Vec<ArtifactInfoOnDisk>, StoreError> {
        let entries = fs::read_dir(&self.paths.artifacts)
            .map_err(StoreError::io("list", &self.paths.artifacts))?;
        let mut out = Vec::new();
        for entry in entries {
            let entry = entry.map_err(StoreError::io("list", &self.paths.artifacts))?;
            let Some(id) = entry.file_name().to_str().and_then(ArtifactId::from_hex) else {
                continue;
            };
            let meta = match entry.metadata() {
                Ok(meta) => meta,
                // Removed between listing and stat: a concurrent janitor, not an error.
                Err(err) if err.kind() == io::ErrorKind::NotFound => continue,
                Err(err) => return Err(StoreError::io("stat", entry.path())(err)),
            };
            if !meta.is_file() {
                continue;
            }
            let modified = meta
                .modified()
                .map_err(StoreError::io("stat", entry.path()))?;
            out.push(ArtifactInfoOnDisk {
                id,
                bytes: meta.len(),
                modified,
            });
        }
        out.sort_by_key(|info| info.id);
        Ok(out)
    }

    /// Takes a shared lock on `gc.lock` that keeps the janitor from collecting until dropped.
    ///
    /// Hold one from before a capture is published until the event referencing it has been
    /// appended. Any number of guards, in any number of processes, may be held at once; this
    /// blocks only while a janitor pass is running.
    pub fn publication_guard(&self) -> Result<PublicationGuard, StoreError> {
        self.paths.publication_guard()
    }

    pub(crate) fn open_gc_lock(&self) -> Result<File, StoreError> {
        self.paths.open_gc_lock()
    }

    /// Drops `id` from the fresh set, so its next publication checks the disk in full.
    pub(crate) fn forget_fresh(&self, id: ArtifactId) {
        self.paths.lock_fresh().remove(&id);
    }

    fn is_verified(&self, id: ArtifactId) -> bool {
        self.verified_set().contains(&id)
    }

    fn verified_set(&self) -> std::sync::MutexGuard<'_, HashSet<ArtifactId>> {
        // The set is only ever inserted into, so a panic elsewhere cannot leave it inconsistent.
        self.verified
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}

impl StorePaths {
    fn publication_guard(&self) -> Result<PublicationGuard, StoreError> {
        let mut state = self.guards.lock_state();
        if state.holders == 0 {
            if state.file.is_none() {
                state.file = Some(self.open_gc_lock()?);
            }
            if let Some(file) = &state.file {
                // Blocks only while a janitor pass holds the exclusive lock.
                file.lock_shared()
                    .map_err(StoreError::io("lock", &self.gc_lock))?;
            }
        }
        state.holders += 1;
        Ok(PublicationGuard {
            lock: self.guards.clone(),
        })
    }

    /// When `id` was published or refreshed within [`FRESH_WINDOW`] and its file still has the
    /// length and mtime it had then, it needs nothing more to be deduplicated. Any rewrite of
    /// the file changes its mtime, so a damaged or replaced copy takes the full check.
    fn is_fresh(&self, id: ArtifactId, final_path: &Path, len: u64) -> bool {
        let Some((at, known_len, mtime)) = self.lock_fresh().get(&id).copied() else {
            return false;
        };
        known_len == len
            && at.elapsed() < FRESH_WINDOW
            && fs::metadata(final_path).is_ok_and(|m| {
                m.is_file() && m.len() == len && m.modified().is_ok_and(|t| t == mtime)
            })
    }

    /// Records a publication or refresh of `id`, whose file now has `len` bytes and `mtime`.
    fn mark_fresh(&self, id: ArtifactId, len: u64, mtime: SystemTime) {
        let mut fresh = self.lock_fresh();
        if fresh.len() >= FRESH_CAPACITY {
            fresh.retain(|_, (at, _, _)| at.elapsed() < FRESH_WINDOW);
            if fresh.len() >= FRESH_CAPACITY {
                fresh.clear();
            }
        }
        fresh.insert(id, (Instant::now(), len, mtime));
    }

    fn lock_unuploaded(&self) -> std::sync::MutexGuard<'_, Vec<ArtifactId>> {
        // Only pushed to and taken whole: a panic elsewhere cannot leave it inconsistent.
        self.unuploaded
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    /// Owes the backend, if there is one, the artifact just published.
    fn published(&self, id: ArtifactId) {
        if self.remote.is_some() {
            self.lock_unuploaded().push(id);
        }
    }

    fn lock_fresh(&self) -> std::sync::MutexGuard<'_, FreshSet> {
        // Entries are independent; a panic elsewhere cannot leave the map inconsistent.
        self.fresh
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    fn open_gc_lock(&self) -> Result<File, StoreError> {
        OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .custom_flags(crate::layout::NO_FOLLOW)
            .open(&self.gc_lock)
            .map_err(|e| {
                if e.raw_os_error() == Some(libc::ELOOP) {
                    StoreError::Layout(crate::LayoutError {
                        path: self.gc_lock.clone(),
                        found: "a symbolic link".to_owned(),
                        expected: "a regular file",
                    })
                } else {
                    StoreError::io("open", &self.gc_lock)(e)
                }
            })
    }

    /// Creates `tmp/capture-…` with mode 0600 and an exclusive lock held through the handle
    /// from before its first byte (see `temps.rs`).
    fn create_temp(&self) -> Result<(File, PathBuf), StoreError> {
        loop {
            let nanos = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.subsec_nanos())
                .unwrap_or(0);
            let name = format!(
                "{CAPTURE_PREFIX}{}-{}-{nanos:08x}",
                std::process::id(),
                TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
            );
            let path = self.tmp.join(name);
            match create_locked(&path) {
                Ok(Created::File(file)) => return Ok((file, path)),
                // Taken: another name. Lost: a sweep removes this one; another name.
                Ok(Created::Taken | Created::Lost) => continue,
                Err(err) => return Err(StoreError::io("create temp file", &path)(err)),
            }
        }
    }

    /// Refreshes the mtime of an existing artifact that still matches `expected` and returns
    /// the mtime it now has; `Ok(None)` when there is none, or when the copy on disk is damaged
    /// (then it is replaced).
    fn refresh_existing(
        &self,
        final_path: &Path,
        expected: Expected<'_>,
    ) -> Result<Option<SystemTime>, StoreError> {
        // Read-only is enough: the owner may set times through any descriptor.
        let mut existing = match open_regular_nofollow(final_path) {
            Ok(f) => f,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
            // A symlink or special file under an artifact's name is no copy of it: the rename
            // that publishes replaces the name itself, never what it points to.
            Err(err)
                if err.raw_os_error() == Some(libc::ELOOP)
                    || err.kind() == io::ErrorKind::InvalidInput =>
            {
                return Ok(None);
            }
            Err(err) => return Err(StoreError::io("open artifact", final_path)(err)),
        };
        let len = existing
            .metadata()
            .map_err(StoreError::io("stat artifact", final_path))?
            .len();
        let intact = match expected {
            // Small content is compared byte for byte: cheap, and it catches any damage.
            Expected::Bytes(bytes) => {
                len == bytes.len() as u64 && {
                    let mut on_disk = Vec::with_capacity(bytes.len());
                    existing
                        .read_to_end(&mut on_disk)
                        .map_err(StoreError::io("read artifact", final_path))?;
                    on_disk == bytes
                }
            }
            // Large content is checked by length; a same-length corruption is caught (and set
            // aside) the first time the artifact is read.
            Expected::Len(n) => len == n,
        };
        if !intact {
            return Ok(None);
        }
        existing
            .set_modified(SystemTime::now())
            .map_err(StoreError::io("refresh mtime of", final_path))?;
        // Read back: the filesystem may keep a coarser time than was set.
        let mtime = modified_of(&existing).map_err(StoreError::io("stat artifact", final_path))?;
        Ok(Some(mtime))
    }

    /// Publishes bytes held in memory: dedup against an existing artifact, or temp → fsync →
    /// rename → fsync dir.
    fn publish_bytes(
        &self,
        bytes: &[u8],
        id: ArtifactId,
        durability: Durability,
    ) -> Result<(), StoreError> {
        let final_path = self.artifacts.join(id.to_hex());
        let len = bytes.len() as u64;
        if self.is_fresh(id, &final_path, len) {
            return Ok(());
        }
        let _guard = self.publication_guard()?;
        if let Some(mtime) = self.refresh_existing(&final_path, Expected::Bytes(bytes))? {
            self.mark_fresh(id, len, mtime);
            return Ok(());
        }
        let (mut file, temp) = self.create_temp()?;
        let synced = durability == Durability::Synced;
        let written = file
            .write_all(bytes)
            .and_then(|()| if synced { file.sync_all() } else { Ok(()) })
            .and_then(|()| modified_of(&file))
            .map_err(StoreError::io("write temp file", &temp))
            .and_then(|mtime| {
                fs::rename(&temp, &final_path)
                    .map(|()| mtime)
                    .map_err(StoreError::io("publish artifact", &final_path))
            });
        let mtime = match written {
            Ok(mtime) => mtime,
            Err(e) => {
                let _ = fs::remove_file(&temp);
                return Err(e);
            }
        };
        self.sync_published(final_path, durability)?;
        self.mark_fresh(id, len, mtime);
        Ok(())
    }

    /// After a rename: fsync the directory now, or owe both the file and the directory to
    /// [`ArtifactStore::sync_written`].
    fn sync_published(
        &self,
        final_path: PathBuf,
        durability: Durability,
    ) -> Result<(), StoreError> {
        match durability {
            Durability::Synced => {
                sync_dir(&self.artifacts).map_err(StoreError::io("fsync", &self.artifacts))
            }
            Durability::Written => {
                self.unsynced
                    .lock()
                    .unwrap_or_else(|poison| poison.into_inner())
                    .push(final_path);
                Ok(())
            }
        }
    }

    /// Moves a finished temp file to its final name (after fsyncing it), or deduplicates
    /// against an existing artifact (no fsync needed: the temp is discarded).
    fn publish(
        &self,
        temp: &Path,
        file: File,
        id: ArtifactId,
        len: u64,
        durability: Durability,
    ) -> Result<(), StoreError> {
        // Publishing under a guard means a janitor pass cannot delete the existing copy between
        // our existence check and the mtime refresh that puts it back inside the grace period.
        let final_path = self.artifacts.join(id.to_hex());
        if self.is_fresh(id, &final_path, len) {
            return discard_temp(temp, file, len);
        }
        let _guard = self.publication_guard()?;
        if let Some(mtime) = self.refresh_existing(&final_path, Expected::Len(len))? {
            self.mark_fresh(id, len, mtime);
            return discard_temp(temp, file, len);
        }
        if durability == Durability::Synced {
            file.sync_all()
                .map_err(StoreError::io("fsync temp file", temp))?;
        }
        let mtime = modified_of(&file).map_err(StoreError::io("stat temp file", temp))?;
        fs::rename(temp, &final_path).map_err(StoreError::io("publish artifact", &final_path))?;
        self.sync_published(final_path, durability)?;
        self.mark_fresh(id, len, mtime);
        Ok(())
    }
}

/// A deduplicated temp at least this large is removed on a thread of its own: freeing a GiB of
/// blocks takes a fifth of a second, which the call does not need to wait for.
const DISCARD_IN_BACKGROUND: u64 = 64 * 1024 * 1024;

/// Removes a temp whose content is already stored. Its blocks are freed when both the name and
/// the last descriptor are gone, so a large one is handed, with its descriptor, to a thread.
/// Should the process end first, the store's startup cleanup removes it (it is unlocked then).
fn discard_temp(temp: &Path, file: File, len: u64) -> Result<(), StoreError> {
    discard_temp_joinable(temp, file, len).map(drop)
}

/// [`discard_temp`], returning the thread that removes a large temp.
fn discard_temp_joinable(
    temp: &Path,
    file: File,
    len: u64,
) -> Result<Option<std::thread::JoinHandle<()>>, StoreError> {
    if len >= DISCARD_IN_BACKGROUND {
        let owned = temp.to_path_buf();
        let spawned = std::thread::Builder::new()
            .name("capture-discard".into())
            .spawn(move || {
                let _ = fs::remove_file(&owned);
                drop(file);
            });
        if let Ok(thread) = spawned {
            return Ok(Some(thread));
        }
    }
    fs::remove_file(temp).map_err(StoreError::io("remove temp file", temp))?;
    Ok(None)
}

fn modified_of(file: &File) -> io::Result<SystemTime> {
    file.metadata()?.modified()
}

fn hash_reader(reader: &mut impl Read) -> io::Result<ArtifactId> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        };
        hasher.update(&buf[..n]);
    }
    Ok(ArtifactId::from_bytes(hasher.finalize().into()))
}

/// Hashes a file on disk; used by tests and tools that audit the store.
pub fn hash_file(path: &Path) -> io::Result<ArtifactId> {
    hash_reader(&mut File::open(path)?)
}

/// Keeps the janitor from collecting while held. See [`ArtifactStore::publication_guard`].
#[derive(Debug)]
#[must_use = "the guard protects publication only while it is held"]
pub struct PublicationGuard {
    lock: Arc<GuardLock>,
}

impl GuardLock {
    fn lock_state(&self) -> std::sync::MutexGuard<'_, GuardState> {
        // The count is updated in one step under the lock; a panic cannot leave it half-done.
        self.state
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}

impl Drop for PublicationGuard {
    fn drop(&mut self) {
        let mut state = self.lock.lock_state();
        state.holders = state.holders.saturating_sub(1);
        let released = state.holders > 0 || state.file.as_ref().is_none_or(|f| f.unlock().is_ok());
        if !released {
            // Closing the description releases the flock for certain.
            state.file = None;
        }
    }
}

/// What a deduplicating publication expects the existing artifact to hold.
#[derive(Clone, Copy)]
enum Expected<'a> {
    Bytes(&'a [u8]),
    Len(u64),
}

/// Where a capture's bytes are while it runs.
#[derive(Debug)]
enum CaptureSink {
    /// Small so far: held in memory and hashed inline.
    Memory(Vec<u8>),
    /// Spilled into a locked temp file, hashed and written on threads of their own.
    File(SpilledSink),
    Finished,
}

/// An artifact being written: bytes in memory or a locked temp file, plus incremental hash and
/// counts.
///
/// Small output (up to [`CAPTURE_BUFFER`]) is hashed inline. Once a capture spills, bytes are
/// gathered into 2 MiB blocks (huge pages where available), each hashed on a `capture-hash` thread and then written to the
/// temp file on a `capture-write` thread (past the first few MiB, bypassing the page cache), so
/// SHA-256 and the device work run beside the producer; a small pool of blocks bounds the memory
/// and makes a slow hasher or device slow the writer down (see `spill.rs`).
///
/// Dropping it without [`Capture::finish`] removes the temp file, if one was created, and ends
/// both threads.
#[derive(Debug)]
pub struct Capture {
    paths: Arc<StorePaths>,
    /// Whether publication waits for the device or leaves that to a later sync.
    durability: Durability,
    sink: CaptureSink,
    /// The temp file's path once spilled; empty before.
    path: PathBuf,
    /// The hash of the bytes held in memory; moved to the hashing thread on spill.
    hasher: Sha256,
    bytes: u64,
    newlines: u64,
    last_byte: Option<u8>,
}

impl Capture {
    /// Appends `data`, updating the hash and counts.
    pub fn write(&mut self, data: &[u8]) -> Result<(), StoreError> {
        if data.is_empty() {
            return Ok(());
        }
        match &mut self.sink {
            CaptureSink::Memory(buf) if buf.len() + data.len() <= CAPTURE_BUFFER => {
                buf.extend_from_slice(data);
                self.hasher.update(data);
            }
            CaptureSink::Memory(buf) => {
                let held = std::mem::take(buf);
                let (file, path) = self.paths.create_temp()?;
                self.path = path;
                let hashed = std::mem::take(&mut self.hasher);
                // `held` is already part of the hash; it becomes the start of the file.
                let mut spilled = SpilledSink::start(file, hashed, &held).map_err(|e| {
                    StoreError::io("start hashing and writing threads for", &self.path)(e)
                })?;
                spilled
                    .write(data)
                    .map_err(|e| StoreError::io("write temp file", &self.path)(e))?;
                self.sink = CaptureSink::File(spilled);
            }
            CaptureSink::File(spilled) => spilled
                .write(data)
                // A closure, so the path is cloned only on failure.
                .map_err(|e| StoreError::io("write temp file", &self.path)(e))?,
            CaptureSink::Finished => {
                return Err(StoreError::io("write", &self.path)(io::Error::other(
                    "capture already finished",
                )));
            }
        }
        self.bytes += data.len() as u64;
        self.newlines += count_newlines(data);
        self.last_byte = data.last().copied();
        Ok(())
    }

    /// Bytes written so far.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// `\n` bytes written so far.
    pub fn newlines(&self) -> u64 {
        self.newlines
    }

    /// Whether the last byte written is `\n` (false when nothing was written).
    pub fn ends_with_newline(&self) -> bool {
        self.last_byte == Some(b'\n')
    }

    /// The temp file being written (under `tmp/`), once the output outgrew memory.
    pub fn temp_path(&self) -> Option<&Path> {
        matches!(self.sink, CaptureSink::File(_)).then_some(self.path.as_path())
    }

    /// Gone once the spilled capture's hashing thread has ended; `None` before a spill.
    #[cfg(test)]
    fn hash_thread_liveness(&self) -> Option<std::sync::Weak<()>> {
        match &self.sink {
            CaptureSink::File(spilled) => Some(spilled.alive.clone()),
            _ => None,
        }
    }

    /// Publishes the captured bytes under their digest (temp → fsync → rename → fsync dir), or
    /// deduplicates against an existing artifact.
    pub fn finish(mut self) -> Result<ArtifactInfo, StoreError> {
        let info = |id| ArtifactInfo {
            id,
            bytes: self.bytes,
            newlines: self.newlines,
        };
        let spilled = match std::mem::replace(&mut self.sink, CaptureSink::Finished) {
            CaptureSink::Memory(buf) => {
                let id = ArtifactId::from_bytes(std::mem::take(&mut self.hasher).finalize().into());
                self.paths.publish_bytes(&buf, id, self.durability)?;
                self.paths.published(id);
                return Ok(info(id));
            }
            CaptureSink::File(spilled) => spilled,
            CaptureSink::Finished => {
                return Err(StoreError::io("finish", &self.path)(io::Error::other(
                    "capture already finished",
                )));
            }
        };
        let path = std::mem::take(&mut self.path);
        // From here on the temp is published or removed below: nothing is left for Drop.
        let (file, hasher) = match spilled.finish() {
            Ok(done) => done,
            Err(err) => {
                let _ = fs::remove_file(&path);
                return Err(StoreError::io("write temp file", path)(err));
            }
        };
        let info = info(ArtifactId::from_bytes(hasher.finalize().into()));
        // The lock stays held (through `file`) until publication has renamed or removed the temp.
        let result = self
            .paths
            .publish(&path, file, info.id, info.bytes, self.durability);
        if result.is_err() {
            let _ = fs::remove_file(&path);
        }
        result?;
        self.paths.published(info.id);
        Ok(info)
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        if matches!(
            std::mem::replace(&mut self.sink, CaptureSink::Finished),
            CaptureSink::File(_)
        ) && !self.path.as_os_str().is_empty()
        {
            let _ = fs::remove_file(&self.path);
        }
    }
}

fn count_newlines(data: &[u8]) -> u64 {
    // SIMD count: captures see every byte a tool writes, so this is on the hot path.
    bytecount::count(data, b'\n') as u64
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;
    use crate::spill::{DIRECT_AFTER, SPILL_BUFFERS, SPILL_CHUNK};

    fn temp_names(store: &ArtifactStore) -> Vec<String> {
        fs::read_dir(store.root().join("tmp"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect()
    }

    fn set_age(path: &Path, age: Duration) {
        let file = OpenOptions::new().write(true).open(path).unwrap();
        file.set_modified(SystemTime::now() - age).unwrap();
    }

    /// Bytes with newlines and every byte value, so any reordering or loss changes the digest.
    fn pattern(len: usize) -> Vec<u8> {
        (0..len).map(|i| ((i * 7 + i / 4099) % 256) as u8).collect()
    }

    #[test]
    fn threaded_hash_equals_sha2_across_chunk_boundaries() {
        let m = SPILL_CHUNK;
        let cases: &[(&str, &[usize])] = &[
            ("spill exactly at the memory limit", &[CAPTURE_BUFFER, 1]),
            (
                "one write crossing the memory limit",
                &[CAPTURE_BUFFER - 3, 10],
            ),
            (
                "chunk boundary hit exactly",
                &[CAPTURE_BUFFER + 1, m - CAPTURE_BUFFER - 1, m, 1],
            ),
            (
                "writes straddling chunk boundaries",
                &[m - 1, 2, m - 2, 3, 5 * m + 7],
            ),
            (
                "a write larger than the whole pool",
                &[1, (SPILL_BUFFERS + 2) * m + 13],
            ),
            ("many small writes", &[4096; 3000]),
            ("ends on a chunk boundary", &[2 * m]),
            (
                "past the direct-write threshold, unaligned tail",
                &[DIRECT_AFTER as usize + 3 * m + 4097],
            ),
            (
                "writes straddling the direct-write threshold",
                &[DIRECT_AFTER as usize - 5, 10, m + 1, 4095],
            ),
        ];
        for (name, writes) in cases {
            let dir = tempfile::tempdir().unwrap();
            let store = ArtifactStore::open(dir.path()).unwrap();
            let total: usize = writes.iter().sum();
            let data = pattern(total);
            let mut capture = store.begin_capture().unwrap();
            let mut at = 0;
            for &len in *writes {
                capture.write(&data[at..at + len]).unwrap();
                at += len;
            }
            let liveness = capture.hash_thread_liveness();
            assert!(liveness.is_some(), "{name}: the capture did not spill");
            let info = capture.finish().unwrap();
            assert_eq!(info.id, ArtifactId::of(&data), "{name}");
            let expected_newlines = data.iter().filter(|&&b| b == b'\n').count() as u64;
            assert_eq!(
                (info.bytes, info.newlines),
                (total as u64, expected_newlines),
                "{name}"
            );
            assert!(
                fs::read(store.artifact_path(info.id)).unwrap() == data,
                "{name}: bytes differ"
            );
            assert!(
                liveness.unwrap().upgrade().is_none(),
                "{name}: hashing thread still running"
            );
            assert!(temp_names(&store).is_empty(), "{name}");
        }
    }

    #[test]
    fn small_capture_starts_no_hash_thread() {
        let dir = tempfile::tempdir().unwrap();
        let store = ArtifactStore::open(dir.path()).unwrap();
        let mut capture = store.begin_capture().unwrap();
        capture.write(&vec![b'x'; CAPTURE_BUFFER]).unwrap();
        assert!(capture.hash_thread_liveness().is_none());
        assert!(capture.temp_path().is_none());
    }

    #[test]
    fn dropping_a_spilled_capture_mid_write_ends_its_hash_thread_and_temp() {
        let dir = tempfile::tempdir().unwrap();
        let store = ArtifactStore::open(dir.path()).unwrap();
        let mut capture = store.begin_capture().unwrap();
        // Enough to fill the whole pool, with a partial chunk pending.
        let data = pattern((SPILL_BUFFERS + 1) * SPILL_CHUNK + 12_345);
        for chunk in data.chunks(100_000) {
            capture.write(chunk).unwrap();
        }
        let liveness = capture.hash_thread_liveness().unwrap();
        assert_eq!(temp_names(&store).len(), 1);
        drop(capture);
        assert!(liveness.upgrade().is_none(), "hashing thread still running");
        assert!(temp_names(&store).is_empty());
        assert!(store.list().unwrap().is_empty());
    }

    #[test]
    fn round_trip_is_byte_identical() {
        let dir = tempfile::tempdir().unwrap();
        let store = ArtifactStore::open(dir.path()).unwrap();
        let data: Vec<u8> = (0..700_000u32).map(|i| (i % 251) as u8).collect();
        let mut capture = store.begin_capture().unwrap();
        for chunk in data.chunks(65_536) {
            capture.write(chunk).unwrap();
        }
        let expected_newlines = data.iter().filter(|&&b| b == b'\n').count() as u64;
        assert_eq!(capture.bytes(), data.len() as u64);
        assert_eq!(capture.newlines(), expected_newlines);
        let info = capture.finish().unwrap();
        assert_eq!(info.id, ArtifactId::of(&data));
        assert_eq!(info.bytes, data.len() as u64);
        assert_eq!(info.newlines, expected_newlines);
        assert_eq!(store.read(info.id).unwrap(), data);
        assert!(store.contains(info.id));
        assert!(temp_names(&store).is_empty());
    }

    #[test]
    fn capture_tracks_trailing_newline() {
        let dir = tempfile::tempdir().unwrap();
        let store = ArtifactStore::open(dir.path()).unwrap();
        let mut capture = store.begin_capture().unwrap();
        assert!(!capture.ends_with_newline());
        capture.write(b"a\nb").unwrap();
        assert!(!capture.ends_with_newline());
        capture.write(b"\n").unwrap();
        capture.write(b"").unwrap();
        assert!(capture.ends_with_newline());
        assert_eq!(capture.newlines(), 2);
    }

    #[test]
    fn empty_artifact() {
        let dir = tempfile::tempdir().unwrap();
        let store = ArtifactStore::open(dir.path()).unwrap();
        let info = store.begin_capture().unwrap().finish().unwrap();
        assert_eq!(
            info,
            ArtifactInfo {
                id: ArtifactId::of(b""),
                bytes: 0,
                newlines: 0
            }
        );
        assert_eq!(store.read(info.id).unwrap(), b"");
        assert_eq!(store.put(b"").unwrap(), info);
    }

    #[test]
    fn dedup_refreshes_mtime_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let store = ArtifactStore::open(dir.path()).unwrap();
        let first = store.put(b"same bytes\n").unwrap();
        let path = store.artifact_path(first.id);
        set_age(&path, Duration::from_secs(3 * 3600));
        let old = fs::metadata(&path).unwrap().modified().unwrap();
        let second = store.put(b"same bytes\n").unwrap();
        assert_eq!(first, second);
        let new = fs::metadata(&path).unwrap().modified().unwrap();
        assert!(
            new > old + Duration::from_secs(3000),
            "mtime was not refreshed"
        );
        assert!(temp_names(&store).is_empty());
        assert_eq!(store.list().unwrap().len(), 1);
    }

    #[test]
    fn artifacts_are_mode_0600() {
        let dir = tempfile::tempdir().unwrap();
        let store = ArtifactStore::open(dir.path()).unwrap();
        let mut capture = store.begin_capture().unwrap();
        capture.write(&vec![b'x'; CAPTURE_BUFFER + 1]).unwrap();
        let temp_mode = fs::metadata(capture.temp_path().unwrap())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(temp_mode & 0o777, 0o600);
        drop(capture);
        let info = store.put(b"secret").unwrap();
        let mode = fs::metadata(store.artifact_path(info.id))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let dir_mode = fs::metadata(dir.path().join("artifacts"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(dir_mode & 0o777, 0o700);
    }

    #[test]
    fn corrupt_artifact_is_reported_and_store_keeps_working() {
        let dir = tempfile::tempdir().unwrap();
        let store = ArtifactStore::open(dir.path()).unwrap();
        let good = store.put(b"good\n").unwrap();
        let bad = store.put(b"will be damaged\n").unwrap();
        let path = store.artifact_path(bad.id);
        let mut bytes = fs::read(&path).unwrap();
        bytes[0] ^= 0x01;
        fs::write(&path, &bytes).unwrap();
        match store.read(bad.id) {
            Err(StoreError::ArtifactCorrupt { id, actual }) => {
                assert_eq!(id, bad.id);
                assert_eq!(actual, ArtifactId::of(&bytes));
            }
            other => panic!("expected ArtifactCorrupt, got {other:?}"),
        }
        // The damaged copy was set aside, never remembered as verified and never served.
        assert!(matches!(
            store.open_artifact(bad.id),
            Err(StoreError::ArtifactMissing { .. })
        ));
        assert!(temp_names(&store).iter().any(|n| n.starts_with("corrupt-")));
        // Publishing the same content again stores a good copy.
        assert_eq!(store.put(b"will be damaged\n").unwrap().id, bad.id);
        assert_eq!(store.read(bad.id).unwrap(), b"will be damaged\n");
        assert_eq!(store.read(good.id).unwrap(), b"good\n");
        let next = store.put(b"more\n").unwrap();
        assert_eq!(store.read(next.id).unwrap(), b"more\n");
    }

    #[test]
    fn dedup_replaces_a_damaged_copy_instead_of_trusting_it() {
        let dir = tempfile::tempdir().unwrap();
        let writer = ArtifactStore::open(dir.path()).unwrap();
        // Republished through another handle, as by a later process: the writer's fresh set
        // would trust a copy damaged within the same clock tick (see the next test).
        let store = ArtifactStore::open(dir.path()).unwrap();
        // Small: same length, one flipped byte, never read in between.
        let small = writer.put(b"small content\n").unwrap();
        let path = store.artifact_path(small.id);
        let mut bytes = fs::read(&path).unwrap();
        bytes[3] ^= 0x20;
        fs::write(&path, &bytes).unwrap();
        store.put(b"small content\n").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"small content\n");
        // Large (spilled to a temp file): truncated on disk.
        let big = vec![b'z'; CAPTURE_BUFFER * 2];
        let mut c = writer.begin_capture().unwrap();
        c.write(&big).unwrap();
        let info = c.finish().unwrap();
        let path = store.artifact_path(info.id);
        fs::write(&path, b"zz").unwrap();
        let mut c = store.begin_capture().unwrap();
        c.write(&big).unwrap();
        c.finish().unwrap();
        assert_eq!(fs::read(&path).unwrap(), big);
    }

    #[test]
    fn fresh_dedup_checks_metadata_and_falls_back_to_the_full_check() {
        let dir = tempfile::tempdir().unwrap();
        let store = ArtifactStore::open(dir.path()).unwrap();
        let first = store.put(b"fresh\n").unwrap();
        let path = store.artifact_path(first.id);
        let mtime = fs::metadata(&path).unwrap().modified().unwrap();
        // Within the window and untouched: deduplicated by metadata alone, mtime left as is.
        assert_eq!(store.put(b"fresh\n").unwrap(), first);
        assert_eq!(fs::metadata(&path).unwrap().modified().unwrap(), mtime);
        // Gone (removed behind the store's back): published again, not trusted from memory.
        fs::remove_file(&path).unwrap();
        assert_eq!(store.put(b"fresh\n").unwrap(), first);
        assert_eq!(fs::read(&path).unwrap(), b"fresh\n");
        // An older mtime (another janitor's view of it): the full check refreshes it.
        set_age(&path, Duration::from_secs(2 * 3600));
        let aged = fs::metadata(&path).unwrap().modified().unwrap();
        store.put(b"fresh\n").unwrap();
        assert!(fs::metadata(&path).unwrap().modified().unwrap() > aged);
        // A different length: the damaged copy is replaced.
        fs::write(&path, b"x").unwrap();
        store.put(b"fresh\n").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"fresh\n");
        // A spilled capture takes the same path and leaves no temp behind.
        let big = vec![b'q'; CAPTURE_BUFFER + 10];
        for _ in 0..2 {
            let mut c = store.begin_capture().unwrap();
            c.write(&big).unwrap();
            c.finish().unwrap();
        }
        assert!(temp_names(&store).is_empty());
    }

    #[test]
    fn a_large_discarded_temp_is_removed_on_its_own_thread_and_a_small_one_at_once() {
        let dir = tempfile::tempdir().unwrap();
        for (len, threaded) in [(10, false), (DISCARD_IN_BACKGROUND, true)] {
            let path = dir.path().join(format!("temp-{len}"));
            let file = File::create(&path).unwrap();
            file.set_len(len).unwrap();
            let thread = discard_temp_joinable(&path, file, len).unwrap();
            assert_eq!(thread.is_some(), threaded, "{len} bytes");
            if let Some(thread) = thread {
                thread.join().unwrap();
            }
            assert!(!path.exists(), "{len} bytes: the temp is gone");
        }
    }

    #[test]
    fn guards_of_one_store_share_its_lock_until_the_last_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let store = ArtifactStore::open(dir.path()).unwrap();
        let janitor_side = ArtifactStore::open(dir.path()).unwrap();
        let lock = janitor_side.open_gc_lock().unwrap();
        let first = store.publication_guard().unwrap();
        let second = store.publication_guard().unwrap();
        assert!(lock.try_lock().is_err(), "two guards held");
        drop(first);
        assert!(lock.try_lock().is_err(), "one guard still held");
        drop(second);
        lock.try_lock().unwrap();
        lock.unlock().unwrap();
        // Taken again after release.
        let third = store.publication_guard().unwrap();
        assert!(lock.try_lock().is_err(), "the lock is taken again");
        drop(third);
    }

    #[test]
    fn missing_artifact_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let store = ArtifactStore::open(dir.path()).unwrap();
        let id = ArtifactId::of(b"never stored");
        assert!(!store.contains(id));
        match store.read(id) {
            Err(StoreError::ArtifactMissing { id: missing }) => assert_eq!(missing, id),
            other => panic!("expected ArtifactMissing, got {other:?}"),
        }
        let message = store.read(id).unwrap_err().to_string();
        assert!(message.contains(&id.to_hex()), "{message}");
    }

    #[test]
    fn small_dedup_touches_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let store = ArtifactStore::open(dir.path()).unwrap();
        let first = store.put(b"ok\n").unwrap();
        let path = store.artifact_path(first.id);
        set_age(&path, Duration::from_secs(7200));
        let old = fs::metadata(&path).unwrap().modified().unwrap();
        let second = store.put(b"ok\n").unwrap();
        assert_eq!(first, second);
        assert!(
            fs::metadata(&path).unwrap().modified().unwrap() > old,
            "mtime refreshed"
        );
        assert!(temp_names(&store).is_empty());
        assert_eq!(store.read(first.id).unwrap(), b"ok\n");
    }

    #[test]
    fn spilled_capture_is_byte_identical() {
        let dir = tempfile::tempdir().unwrap();
        let store = ArtifactStore::open(dir.path()).unwrap();
        let mut capture = store.begin_capture().unwrap();
        let mut expected = Vec::new();
        for i in 0..(3 * CAPTURE_BUFFER / 1000) {
            let chunk = format!("{i:0999}\n");
            capture.write(chunk.as_bytes()).unwrap();
            expected.extend_from_slice(chunk.as_bytes());
        }
        let info = capture.finish().unwrap();
        assert_eq!(info.id, ArtifactId::of(&expected));
        assert_eq!(store.read(info.id).unwrap(), expected);
        assert!(temp_names(&store).is_empty());
    }

    #[test]
    fn dropped_capture_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let store = ArtifactStore::open(dir.path()).unwrap();
        let mut capture = store.begin_capture().unwrap();
        capture.write(b"partial output").unwrap();
        assert!(
            temp_names(&store).is_empty(),
            "small output stays in memory"
        );
        capture.write(&vec![b'x'; CAPTURE_BUFFER]).unwrap();
        assert_eq!(temp_names(&store).len(), 1);
        drop(capture);
        assert!(temp_names(&store).is_empty());
        assert!(store.list().unwrap().is_empty());
    }

    #[test]
    fn written_artifacts_are_readable_at_once_and_owed_to_the_next_sync() {
        let dir = tempfile::tempdir().unwrap();
        let store = ArtifactStore::open(dir.path()).unwrap();
        let owed = |store: &ArtifactStore| store.paths.unsynced.lock().unwrap().len();
        // Small (published from memory) and large (spilled to a temp file).
        let small = b"a read-only call's output\n".to_vec();
        let large = vec![b'x'; CAPTURE_BUFFER * 2 + 17];
        let mut ids = Vec::new();
        for bytes in [&small, &large] {
            let mut capture = store.begin_capture_with(Durability::Written).unwrap();
            capture.write(bytes).unwrap();
            let info = capture.finish().unwrap();
            assert_eq!(store.read(info.id).unwrap(), *bytes);
            ids.push(info.id);
        }
        assert_eq!(owed(&store), 2);
        // Publishing the same bytes again deduplicates and owes nothing more.
        let mut again = store.begin_capture_with(Durability::Written).unwrap();
        again.write(&small).unwrap();
        assert_eq!(again.finish().unwrap().id, ids[0]);
        assert_eq!(owed(&store), 2);
        store.sync_written().unwrap();
        assert_eq!(owed(&store), 0);
        // A synced publication never owes anything.
        store.put(b"synced").unwrap();
        assert_eq!(owed(&store), 0);
        assert!(temp_names(&store).is_empty());
    }

    #[test]
    fn an_owed_artifact_that_is_gone_has_nothing_left_to_sync() {
        let dir = tempfile::tempdir().unwrap();
        let store = ArtifactStore::open(dir.path()).unwrap();
        let mut capture = store.begin_capture_with(Durability::Written).unwrap();
        capture.write(b"soon gone").unwrap();
        let info = capture.finish().unwrap();
        fs::remove_file(store.artifact_path(info.id)).unwrap();
        store.sync_written().unwrap();
    }

    #[test]
    fn store_and_capture_are_send_and_sync() {
        fn send_sync<T: Send + Sync>() {}
        fn send<T: Send>() {}
        send_sync::<ArtifactStore>();
        send::<Capture>();
        send::<PublicationGuard>();
    }

    #[test]
    fn startup_removes_old_temp_with_free_lock() {
        let dir = tempfile::tempdir().unwrap();
        let store = ArtifactStore::open(dir.path()).unwrap();
        let abandoned = dir.path().join("tmp/capture-abandoned");
        fs::write(&abandoned, b"left by a crashed writer").unwrap();
        set_age(&abandoned, Duration::from_secs(2 * 3600));
        drop(store);
        let store = ArtifactStore::open(dir.path()).unwrap();
        assert!(!abandoned.exists());
        assert!(temp_names(&store).is_empty());
    }

    #[test]
    fn startup_keeps_old_temp_whose_lock_is_held() {
        let dir = tempfile::tempdir().unwrap();
        let store = ArtifactStore::open(dir.path()).unwrap();
        let mut silent = store.begin_capture().unwrap();
        // Enough output to spill into a temp file, then silence.
        silent.write(&vec![b'x'; CAPTURE_BUFFER + 1]).unwrap();
        set_age(silent.temp_path().unwrap(), Duration::from_secs(5 * 3600));
        let temp = silent.temp_path().unwrap().to_path_buf();
        // A second handle, as another process would open it on startup.
        let _other = ArtifactStore::open(dir.path()).unwrap();
        assert!(temp.exists(), "a locked temp file was removed");
        let info = silent.finish().unwrap();
        assert!(store.contains(info.id));
    }

    #[test]
    fn startup_removes_an_abandoned_temp_whatever_its_age() {
        let dir = tempfile::tempdir().unwrap();
        ArtifactStore::open(dir.path()).unwrap();
        // A capture SIGKILLed a moment ago: its lock went with it.
        let young = dir.path().join("tmp/capture-young");
        fs::write(&young, b"left by a killed writer").unwrap();
        let aside = dir.path().join("tmp/corrupt-00-1-1");
        fs::write(&aside, b"a damaged artifact set aside").unwrap();
        let store = ArtifactStore::open(dir.path()).unwrap();
        assert!(!young.exists() && !aside.exists());
        assert!(temp_names(&store).is_empty());
    }

    #[test]
    fn list_reports_size_and_ignores_foreign_names() {
        let dir = tempfile::tempdir().unwrap();
        let store = ArtifactStore::open(dir.path()).unwrap();
        let info = store.put(b"abc").unwrap();
        fs::write(dir.path().join("artifacts/README"), b"not an artifact").unwrap();
        let listed = store.list().unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!((listed[0].id, listed[0].bytes), (info.id, 3));
    }
}
