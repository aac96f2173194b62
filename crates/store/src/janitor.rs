//! The janitor: removes artifacts no durable event references, after a grace period.

use crate::fsutil::read_regular_nofollow;
use std::collections::HashSet;
use std::fs::{self, TryLockError};
use std::io;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use serde_json::Value;

use crate::id::scan_references;
use crate::{ArtifactId, ArtifactStore, Manifest, StoreError, TempSweep};

/// How old an unreferenced artifact must be before it is collected: one hour.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(60 * 60);

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
    /// Abandoned temp files under `tmp/` (their writer gone, their lock free): removed, or in
    /// a dry run, would be. Swept whether or not a guard is held: a temp's own lock decides.
    pub temps: TempSweep,
    /// A publication guard was held, so no artifact was scanned or removed.
    pub skipped_guard_held: bool,
    /// This pass removed nothing by request.
    pub dry_run: bool,
}

impl<'a> Janitor<'a> {
    /// A janitor for `store` that spares unreferenced artifacts younger than `grace`.
    pub fn new(store: &'a ArtifactStore, grace: Duration) -> Self {
        Self { store, grace }
    }

    /// Runs one pass as of `now`: sweeps abandoned temps, then collects artifacts. Collects
    /// nothing, and says so, while any publication guard is held (in any process); holds
    /// `gc.lock` exclusively for the whole collection otherwise.
    pub fn collect(&self, now: SystemTime, dry_run: bool) -> Result<JanitorReport, StoreError> {
        let mut report = JanitorReport {
            dry_run,
            temps: self.store.sweep_temps(dry_run)?,
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
            let data = match read_regular_nofollow(&log) {
                Ok(data) => data,
                Err(err) if err.kind() == io::ErrorKind::NotFound => continue,
                // Swapped for a symlink or a special file since it was listed: not a log.
                Err(err)
                    if err.raw_os_error() == Some(libc::ELOOP)
                        || err.kind() == io::ErrorKind::InvalidInput =>
                {
                    continue;
                }
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
                self.store.forget_fresh(artifact.id);
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
            // Only real session directories (a symlinked one is not ours to read).
            if !entry.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let log = entry.path().join("events.jsonl");
            if fs::symlink_metadata(&log).is_ok_and(|m| m.is_file()) {
                logs.push(log);
            }
        }
        logs.sort();
        Ok(logs)
    }

    /// The artifact parsed as a manifest, if it exists, is small and is one.
    fn read_manifest(&self, id: ArtifactId) -> Option<Manifest> {
        self.store.unverified_manifest(id)
    }
}

/// Calls `found` with every string in `value`, object keys included.
pub(crate) fn collect_strings(value: &Value, found: &mut impl FnMut(&str)) {
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

#[cfg(test)]
mod tests {
    use std::fs::OpenOptions;
    use std::path::Path;

    use serde_json::json;

    use super::*;
    use crate::{EventLog, ManifestStream, session_log_path};

    const HOUR: Duration = Duration::from_secs(3600);

    fn age(store: &ArtifactStore, id: ArtifactId, by: Duration) {
        let file = OpenOptions::new()
            .write(true)
            .open(store.artifact_path(id))
            .unwrap();
        file.set_modified(SystemTime::now() - by).unwrap();
    }

    fn log(store_dir: &Path, session: &str, events: &[serde_json::Value]) {
        let (log, _) = EventLog::open(&session_log_path(store_dir, session)).unwrap();
        for event in events {
            log.append(event).unwrap();
        }
    }

    fn collect(store: &ArtifactStore, dry_run: bool) -> JanitorReport {
        Janitor::new(store, DEFAULT_GRACE)
            .collect(SystemTime::now(), dry_run)
            .unwrap()
    }

    #[test]
    fn young_unreferenced_artifact_is_kept_in_grace() {
        let dir = tempfile::tempdir().unwrap();
        let store = ArtifactStore::open(dir.path()).unwrap();
        let young = store.put(b"young").unwrap();
        age(&store, young.id, Duration::from_secs(59 * 60));
        let report = collect(&store, false);
        assert_eq!(report.kept_in_grace, vec![young.id]);
        assert!(report.removed.is_empty());
        assert!(store.contains(young.id));
    }

    #[test]
    fn old_unreferenced_artifact_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let store = ArtifactStore::open(dir.path()).unwrap();
        let old = store.put(b"old").unwrap();
        age(&store, old.id, 2 * HOUR);
        let report = collect(&store, false);
        assert_eq!(report.removed, vec![old.id]);
        assert!(!store.contains(old.id));
    }

    #[test]
    fn referenced_artifacts_are_kept_in_both_uri_forms() {
        let dir = tempfile::tempdir().unwrap();
        let store = ArtifactStore::open(dir.path()).unwrap();
        let internal = store.put(b"internal form").unwrap();
        let public = store.put(b"public form").unwrap();
        let nested = store.put(b"nested in text").unwrap();
        for id in [internal.id, public.id, nested.id] {
            age(&store, id, 3 * HOUR);
        }
        log(
            dir.path(),
            "s1",
            &[
                json!({"type":"call_finished","retained_output":[{"artifact": internal.id.internal_uri()}]}),
                json!({"hint": format!("read_file(\"{}/stdout\", offset=10)", public.id.public_uri())}),
            ],
        );
        log(
            dir.path(),
            "s2",
            &[json!([1, {"deep": [format!("see {}.", nested.id.internal_uri())]}])],
        );
        let report = collect(&store, false);
        assert_eq!(report.logs_scanned, 2);
        assert_eq!(report.live, 3);
        assert!(report.removed.is_empty(), "{report:?}");
        for id in [internal.id, public.id, nested.id] {
            assert!(store.contains(id));
        }
    }

    #[test]
    fn manifest_streams_are_kept_through_a_referenced_manifest() {
        let dir = tempfile::tempdir().unwrap();
        let store = ArtifactStore::open(dir.path()).unwrap();
        let stdout = store.put(b"out\n").unwrap();
        let stderr = store.put(b"").unwrap();
        let manifest = store
            .put_manifest(&Manifest::new(vec![
                ManifestStream {
                    name: "stdout".into(),
                    artifact: stdout.id,
                    bytes: 4,
                    lines: 1,
                },
                ManifestStream {
                    name: "stderr".into(),
                    artifact: stderr.id,
                    bytes: 0,
                    lines: 0,
                },
            ]))
            .unwrap();
        let orphan_manifest = store
            .put_manifest(&Manifest::new(vec![ManifestStream {
                name: "results".into(),
                artifact: store.put(b"orphan stream").unwrap().id,
                bytes: 13,
                lines: 0,
            }]))
            .unwrap();
        for info in store.list().unwrap() {
            age(&store, info.id, 2 * HOUR);
        }
        log(
            dir.path(),
            "s",
            &[json!({"retained_output": manifest.id.internal_uri()})],
        );
        let report = collect(&store, false);
        assert_eq!(report.live, 3);
        assert!(store.contains(stdout.id) && store.contains(stderr.id));
        assert!(store.contains(manifest.id));
        assert!(!store.contains(orphan_manifest.id));
        assert_eq!(report.removed.len(), 2);
    }

    #[test]
    fn torn_and_malformed_lines_are_skipped_without_losing_good_refs() {
        let dir = tempfile::tempdir().unwrap();
        let store = ArtifactStore::open(dir.path()).unwrap();
        let before = store.put(b"before").unwrap();
        let after = store.put(b"after").unwrap();
        let torn = store.put(b"only in the torn line").unwrap();
        for id in [before.id, after.id, torn.id] {
            age(&store, id, 2 * HOUR);
        }
        let path = session_log_path(dir.path(), "s");
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        let text = format!(
            "{{\"seq\":1,\"event\":{{\"a\":\"{}\"}}}}\nnot json at all\n{{\"b\":\"{}\"}}\n{{\"seq\":4,\"event\":{{\"c\":\"{}",
            before.id.internal_uri(),
            after.id.public_uri(),
            torn.id.internal_uri()
        );
        fs::write(&path, text).unwrap();
        let report = collect(&store, false);
        assert_eq!(report.lines_skipped, 2);
        assert!(store.contains(before.id) && store.contains(after.id));
        assert_eq!(report.removed, vec![torn.id]);
    }

    #[test]
    fn nothing_is_removed_while_a_guard_is_held() {
        let dir = tempfile::tempdir().unwrap();
        let store = ArtifactStore::open(dir.path()).unwrap();
        let old = store.put(b"old").unwrap();
        age(&store, old.id, 2 * HOUR);
        // The publisher uses its own handle, as another process would.
        let publisher = ArtifactStore::open(dir.path()).unwrap();
        let guard = publisher.publication_guard().unwrap();
        let second_guard = store.publication_guard().unwrap();
        let report = collect(&store, false);
        assert!(report.skipped_guard_held);
        assert!(report.removed.is_empty());
        assert!(store.contains(old.id));
        drop(guard);
        assert!(
            collect(&store, false).skipped_guard_held,
            "one guard is still held"
        );
        drop(second_guard);
        let report = collect(&store, false);
        assert!(!report.skipped_guard_held);
        assert_eq!(report.removed, vec![old.id]);
    }

    #[test]
    fn a_pass_sweeps_abandoned_temps_even_while_a_guard_is_held() {
        let dir = tempfile::tempdir().unwrap();
        let store = ArtifactStore::open(dir.path()).unwrap();
        // Left by a killed capture: no age needed, its lock is free.
        let abandoned = dir.path().join("tmp/capture-1-1-00000000");
        fs::write(&abandoned, vec![b'x'; 1000]).unwrap();
        let mut live = store.begin_capture().unwrap();
        live.write(&vec![b'y'; crate::artifact::CAPTURE_BUFFER + 1])
            .unwrap();
        let _guard = store.publication_guard().unwrap();
        let report = collect(&store, true);
        assert_eq!(
            report.temps,
            TempSweep {
                files: 1,
                bytes: 1000
            }
        );
        assert!(abandoned.exists(), "a dry run removes nothing");
        let report = collect(&store, false);
        assert!(report.skipped_guard_held);
        assert_eq!(
            report.temps,
            TempSweep {
                files: 1,
                bytes: 1000
            }
        );
        assert!(!abandoned.exists());
        assert!(
            live.temp_path().unwrap().exists(),
            "a live capture's temp stays"
        );
        assert_eq!(collect(&store, false).temps, TempSweep::default());
        live.finish().unwrap();
    }

    #[test]
    fn dry_run_removes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let store = ArtifactStore::open(dir.path()).unwrap();
        let old = store.put(b"old").unwrap();
        age(&store, old.id, 2 * HOUR);
        let report = collect(&store, true);
        assert!(report.dry_run);
        assert_eq!(report.removed, vec![old.id]);
        assert!(store.contains(old.id));
    }

    #[test]
    fn grace_is_measured_from_the_given_now() {
        let dir = tempfile::tempdir().unwrap();
        let store = ArtifactStore::open(dir.path()).unwrap();
        let fresh = store.put(b"fresh").unwrap();
        let janitor = Janitor::new(&store, DEFAULT_GRACE);
        let later = SystemTime::now() + 2 * HOUR;
        assert_eq!(
            janitor.collect(later, false).unwrap().removed,
            vec![fresh.id]
        );
    }
}
