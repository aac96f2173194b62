//! The janitor: removes artifacts no durable event references, after a grace period.

use std::collections::HashSet;
use std::fs::{self, File, TryLockError};
use std::io::{self, Read};
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use serde_json::Value;

use crate::id::scan_references;
use crate::{ArtifactId, ArtifactStore, Manifest, StoreError};

/// How old an unreferenced artifact must be before it is collected: one hour.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(60 * 60);

/// Artifacts larger than this are never read as manifests (a manifest lists at most a few
/// streams, so real ones are tiny).
const MANIFEST_READ_LIMIT: u64 = 1024 * 1024;

/// Collects unreferenced artifacts from one store.
///
/// An artifact is live when any string anywhere in a durable `sessions/*/events.jsonl` line
/// contains its URI (either form), or when it is a stream of a live manifest.
#[derive(Debug)]
pub struct Janitor<'a> {
    store: &'a ArtifactStore,
    grace: Duration,
}

/// What one [`Janitor::collect`] pass saw and did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JanitorReport {
    /// Event logs read.
    pub logs_scanned: usize,
    /// Malformed or torn lines skipped.
    pub lines_skipped: usize,
    /// Distinct artifact ids referenced, directly or through manifests.
    pub live: usize,
    /// Unreferenced artifacts past the grace period: removed, or in a dry run, would be.
    pub removed: Vec<ArtifactId>,
    /// Unreferenced artifacts still inside the grace period.
    pub kept_in_grace: Vec<ArtifactId>,
    /// A publication guard was held, so nothing was scanned or removed.
    pub skipped_guard_held: bool,
    /// This pass removed nothing by request.
    pub dry_run: bool,
}

impl<'a> Janitor<'a> {
    /// A janitor for `store` that spares unreferenced artifacts younger than `grace`.
    pub fn new(store: &'a ArtifactStore, grace: Duration) -> Self {
        Self { store, grace }
    }

    /// Runs one pass as of `now`. Does nothing, and says so, while any publication guard is
    /// held (in any process); holds `gc.lock` exclusively for the whole pass otherwise.
    pub fn collect(&self, now: SystemTime, dry_run: bool) -> Result<JanitorReport, StoreError> {
        let mut report = JanitorReport {
            dry_run,
            ..JanitorReport::default()
        };
        let lock = self.store.open_gc_lock()?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                report.skipped_guard_held = true;
                return Ok(report);
            }
            Err(TryLockError::Error(err)) => {
                return Err(StoreError::io("lock", self.store.root().join("gc.lock"))(
                    err,
                ));
            }
        }

        let mut live = HashSet::new();
        for log in self.event_logs()? {
            let data = match fs::read(&log) {
                Ok(data) => data,
                Err(err) if err.kind() == io::ErrorKind::NotFound => continue,
                Err(err) => return Err(StoreError::io("read event log", &log)(err)),
            };
            report.logs_scanned += 1;
            for line in data.split(|&b| b == b'\n') {
                if line.is_empty() {
                    continue;
                }
                match serde_json::from_slice::<Value>(line) {
                    Ok(value) => collect_strings(&value, &mut |s| {
                        scan_references(s, |id| {
                            live.insert(id);
                        })
                    }),
                    Err(_) => report.lines_skipped += 1,
                }
            }
        }

        let mut frontier: Vec<ArtifactId> = live.iter().copied().collect();
        while let Some(id) = frontier.pop() {
            if let Some(manifest) = self.read_manifest(id) {
                for stream in manifest.streams {
                    if live.insert(stream.artifact) {
                        frontier.push(stream.artifact);
                    }
                }
            }
        }
        report.live = live.len();

        let cutoff = now
            .checked_sub(self.grace)
            .unwrap_or(SystemTime::UNIX_EPOCH);
        for artifact in self.store.list()? {
            if live.contains(&artifact.id) {
                continue;
            }
            if artifact.modified >= cutoff {
                report.kept_in_grace.push(artifact.id);
                continue;
            }
            if !dry_run {
                let path = self.store.artifact_path(artifact.id);
                match fs::remove_file(&path) {
                    Ok(()) => {}
                    Err(err) if err.kind() == io::ErrorKind::NotFound => continue,
                    Err(err) => return Err(StoreError::io("remove artifact", &path)(err)),
                }
            }
            report.removed.push(artifact.id);
        }
        drop(lock);
        Ok(report)
    }

    fn event_logs(&self) -> Result<Vec<PathBuf>, StoreError> {
        let sessions = self.store.sessions_dir();
        let entries = match fs::read_dir(&sessions) {
            Ok(entries) => entries,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(err) => return Err(StoreError::io("list", &sessions)(err)),
        };
        let mut logs = Vec::new();
        for entry in entries {
            let entry = entry.map_err(StoreError::io("list", &sessions))?;
            let log = entry.path().join("events.jsonl");
            if log.is_file() {
                logs.push(log);
            }
        }
        logs.sort();
        Ok(logs)
    }

    /// The artifact parsed as a manifest, if it exists, is small and is one.
    fn read_manifest(&self, id: ArtifactId) -> Option<Manifest> {
        let file = File::open(self.store.artifact_path(id)).ok()?;
        if file.metadata().ok()?.len() > MANIFEST_READ_LIMIT {
            return None;
        }
        let mut bytes = Vec::new();
        file.take(MANIFEST_READ_LIMIT)
            .read_to_end(&mut bytes)
            .ok()?;
        Manifest::parse(&bytes)
    }
}

/// Calls `found` with every string in `value`, object keys included.
fn collect_strings(value: &Value, found: &mut impl FnMut(&str)) {
    match value {
        Value::String(s) => found(s),
        Value::Array(items) => items.iter().for_each(|v| collect_strings(v, found)),
        Value::Object(map) => {
            for (key, v) in map {
                found(key);
                collect_strings(v, found);
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}
