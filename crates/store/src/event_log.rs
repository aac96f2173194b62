//! The durable JSONL event log with CRC-32C per record and group commit.
//!
//! One record per line (see [`crate::record`] for the format and what counts as a torn write);
//! opening checks the tail and reading history checks every line ([`crate::log_read`]).

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::ops::ControlFlow;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::thread::JoinHandle;

use serde_json::Value;

use crate::EventLogError;
use crate::backend::LogReplica;
use crate::fsutil::{open_regular_nofollow, sync_dir};
use crate::layout::{DirError, ensure_real_dirs};
use crate::log_read::{check_tail, scan_all, scan_origin};
use crate::log_seal::{LogOrigin, LogSeal};
use crate::record::{Record, encode_record};

/// How long the flusher gathers written-only records before one `fdatasync` covers them all:
/// the longest a read-only call's record waits in the page cache (plus the sync itself).
///
/// A second, not milliseconds: under load every client of `tackle serve` is a session with
/// its own log, and a window shorter than the gap between one session's calls syncs once per
/// read (an `fdatasync` costs more CPU than the read). The page cache survives the process
/// being killed, so the window is what a power loss can forget: the last second of reads,
/// never a call with effects (those are synced before they are acknowledged). The kernel's
/// own writeback would take up to 30 s.
pub const FLUSH_WINDOW: std::time::Duration = std::time::Duration::from_secs(1);

/// The event log of session `session_id` in the store at `store_dir`:
/// `<store_dir>/sessions/<session_id>/events.jsonl`.
///
/// `session_id` must be a single path segment; the runtime validates ids when it mints them.
pub fn session_log_path(store_dir: &Path, session_id: &str) -> PathBuf {
    store_dir
        .join("sessions")
        .join(session_id)
        .join("events.jsonl")
}

/// What [`EventLog::open`] found at the end of the log (it reads nothing before the tail; see
/// [`EventLog::read_records`] for the history).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recovery {
    /// The seq of the last record kept (0 for an empty log); the next append gets one more.
    pub last_seq: u64,
    /// Bytes of torn tail removed from the end of the file (0 after a clean shutdown).
    pub truncated_bytes: u64,
}

/// How long an append waits before it is acknowledged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    /// Written with `O_APPEND` and `fdatasync`ed: survives a power loss once acknowledged.
    Synced,
    /// Written with `O_APPEND` (it survives the process being killed) and made durable by the
    /// log's flusher thread within [`FLUSH_WINDOW`], or by the next [`Durability::Synced`]
    /// append, whichever comes first. For events whose loss in a power failure loses nothing of the user's state:
    /// the record of a read, or the start of a call whose end will be synced. Artifacts
    /// published this way are synced before the next sync of the log (see
    /// [`EventLog::set_before_sync`]).
    Written,
}

/// An append-only JSONL log. `Send + Sync`: share it through an `Arc`.
///
/// One writer at a time takes every pending record and writes it in one `write`, so records
/// reach the file in seq order. Synced appends then group-commit: whoever finds no sync in
/// progress becomes the leader and `fdatasync`s everything written so far; the others wait for
/// a sync that started after their record was written. Written-only appends return after the
/// write and wake a flusher thread (started on first use) that syncs in the background; dropping
/// the log syncs whatever is still unsynced.
#[derive(Debug)]
pub struct EventLog {
    inner: Arc<Inner>,
    flusher: Mutex<Option<JoinHandle<()>>>,
}

#[derive(Debug)]
struct Inner {
    path: PathBuf,
    file: File,
    state: Mutex<CommitState>,
    /// Signalled whenever `written`, `durable` or `poisoned` changes and
    /// [`CommitState::waiting`] says a thread waits on it.
    progress: Condvar,
    /// Signalled when written records wait for the flusher, or the log is closing.
    flush_wanted: Condvar,
    /// Runs before every `fdatasync` of the log (see [`EventLog::set_before_sync`]).
    before_sync: OnceLock<BeforeSync>,
    /// Tags every appended line when set ([`EventLog::open_sealed`]).
    seal: Option<LogSeal>,
    /// Where the log is durable besides its file ([`EventLog::replicate_to`]).
    replica: OnceLock<Arc<dyn LogReplica>>,
    /// The log was empty when opened, and its directory has not been synced since: the next
    /// sync does so after the file's ([`Inner::sync_entry`]).
    entry_pending: AtomicBool,
}

/// What must be durable before any record that may name it.
struct BeforeSync(Box<dyn Fn() -> std::io::Result<()> + Send + Sync>);

impl std::fmt::Debug for BeforeSync {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BeforeSync")
    }
}

#[derive(Debug)]
struct CommitState {
    /// The seq the next append receives.
    next_seq: u64,
    /// Encoded records not yet handed to a writer, in seq order.
    pending: Vec<u8>,
    /// The highest seq in `pending`.
    pending_last: u64,
    /// Every seq up to this one is in the file (not necessarily on the device).
    written: u64,
    /// Every seq up to this one is durable.
    durable: u64,
    /// A thread is writing a batch right now.
    writing: bool,
    /// A thread is running `fdatasync` right now.
    syncing: bool,
    /// A write or sync failed; the file's tail is unknown until it is reopened.
    poisoned: bool,
    /// The log is being dropped: the flusher syncs what is left and ends.
    closing: bool,
    /// The flusher has been woken and has not gone idle since.
    flusher_busy: bool,
    /// Threads waiting on `progress` right now. Signalling a condition variable costs a system
    /// call even when nobody waits (two per tool call, one per append), so it is skipped then.
    waiting: usize,
    /// With a replica: the events appended and not yet replicated, in seq order from
    /// `unshipped_first` (empty without one, and then never filled).
    unshipped: Vec<Vec<u8>>,
    unshipped_first: u64,
    /// Why the log is poisoned, when a backend said.
    poison_why: Option<String>,
}

/// An open of the log refused because its name is a symlink (`ELOOP` under `O_NOFOLLOW`) or
/// not a regular file is a layout error; anything else is I/O.
fn not_a_log(path: &Path, e: std::io::Error) -> EventLogError {
    // ENXIO: opening a socket; EISDIR: opening a directory for writing.
    if matches!(
        e.raw_os_error(),
        Some(libc::ELOOP | libc::ENXIO | libc::EISDIR)
    ) || e.kind() == std::io::ErrorKind::InvalidInput
    {
        use std::os::unix::fs::FileTypeExt as _;
        let found = match (fs::read_link(path), fs::symlink_metadata(path)) {
            (Ok(target), _) => format!("a symbolic link to {}", target.display()),
            (_, Ok(m)) if m.is_dir() => "a directory".to_owned(),
            (_, Ok(m)) if m.file_type().is_fifo() => "a FIFO".to_owned(),
            (_, Ok(m)) if m.file_type().is_socket() => "a socket".to_owned(),
            (_, Ok(m)) if m.file_type().is_char_device() || m.file_type().is_block_device() => {
                "a device".to_owned()
            }
            _ => "a special file".to_owned(),
        };
        return EventLogError::Layout(crate::LayoutError {
            path: path.to_path_buf(),
            found,
            expected: "a regular file",
        });
    }
    EventLogError::io("open", path)(e)
}

impl EventLog {
    /// Opens (creating if needed) the log at `path`, truncating a torn tail.
    ///
    /// Reads only the end of the file: the last complete line (and every line starting in the
    /// last 64 KiB) must be a valid record, or the log is [`EventLogError::Corrupt`]. Only a
    /// final line without its newline that could be the start of the next record (or the NUL
    /// bytes a crash leaves in unwritten blocks) is the remains of an unacknowledged write: it
    /// is cut off, and the cut fsynced. Damage further back is found by
    /// [`EventLog::read_records`]. Appended lines carry no tag: a session's log is opened
    /// with [`EventLog::open_sealed`].
    pub fn open(path: &Path) -> Result<(Self, Recovery), EventLogError> {
        Self::open_with_seal(path, None)
    }

    /// [`EventLog::open`], tagging every line appended from now on with `seal` (the user's key
    /// bound to the session's id), so [`EventLog::origin`] knows them for the user's own. Lines
    /// already in the file are left as they are.
    pub fn open_sealed(path: &Path, seal: LogSeal) -> Result<(Self, Recovery), EventLogError> {
        Self::open_with_seal(path, Some(seal))
    }

    /// Whose log the file at `path` is under `seal`: [`LogOrigin::Own`] when every complete
    /// line carries the tag `seal` makes for it. Reads and checks the whole log as
    /// [`EventLog::read_records`] does (a damaged line is [`EventLogError::Corrupt`]), stopping
    /// at the first line that is foreign; a torn tail is ignored.
    pub fn origin(path: &Path, seal: &LogSeal) -> Result<LogOrigin, EventLogError> {
        let file = open_regular_nofollow(path).map_err(|e| not_a_log(path, e))?;
        scan_origin(path, file, seal)
    }

    fn open_with_seal(
        path: &Path,
        seal: Option<LogSeal>,
    ) -> Result<(Self, Recovery), EventLogError> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            // `sessions/<id>` and `sessions` above it are real directories, never symlinks.
            ensure_real_dirs(parent, 1).map_err(|(dir, e)| match e {
                DirError::Layout(e) => EventLogError::Layout(e),
                DirError::Io(e) => EventLogError::Io {
                    action: "create its directory",
                    path: dir,
                    source: e,
                },
            })?;
        }
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
            .open(path)
            .map_err(|e| not_a_log(path, e))?;
        let meta = file.metadata().map_err(EventLogError::io("stat", path))?;
        if !meta.is_file() {
            return Err(EventLogError::Layout(crate::LayoutError {
                path: path.to_path_buf(),
                found: "a special file".to_owned(),
                expected: "a regular file",
            }));
        }
        let len = meta.len();
        let tail = check_tail(path, &file, len)?;
        let truncated_bytes = len - tail.valid_len;
        if truncated_bytes > 0 {
            file.set_len(tail.valid_len)
                .map_err(EventLogError::io("truncate torn tail", path))?;
            file.sync_all()
                .map_err(EventLogError::io("fsync after truncation", path))?;
        }
        // An empty log's entry in its directory is made durable with its first sync (nothing in
        // it was durable before, so nothing waited for it): one sync fewer for a log that never
        // syncs, and on ext4 the file's sync has committed the directory's change by then.
        let entry_pending = AtomicBool::new(len == 0);
        let last = tail.last_seq;
        let log = Self {
            inner: Arc::new(Inner {
                path: path.to_path_buf(),
                file,
                state: Mutex::new(CommitState {
                    next_seq: last + 1,
                    pending: Vec::new(),
                    pending_last: last,
                    written: last,
                    durable: last,
                    writing: false,
                    syncing: false,
                    poisoned: false,
                    closing: false,
                    flusher_busy: false,
                    waiting: 0,
                    unshipped: Vec::new(),
                    unshipped_first: last + 1,
                    poison_why: None,
                }),
                progress: Condvar::new(),
                flush_wanted: Condvar::new(),
                before_sync: OnceLock::new(),
                seal,
                replica: OnceLock::new(),
                entry_pending,
            }),
            flusher: Mutex::new(None),
        };
        Ok((
            log,
            Recovery {
                last_seq: last,
                truncated_bytes,
            },
        ))
    }

    /// Reads and checks a whole log without modifying it; a torn tail is ignored. Every
    /// complete line must be a valid record following the one before.
    pub fn read_records(path: &Path) -> Result<Vec<Record>, EventLogError> {
        let mut records = Vec::new();
        Self::visit_records(path, |record| {
            records.push(record);
            ControlFlow::Continue(())
        })?;
        Ok(records)
    }

    /// Hands the records of a log to `visit` in order, checking each as
    /// [`EventLog::read_records`] does, until `visit` breaks. Holds one line in memory, so a
    /// search through a long history costs its largest line, not its length.
    pub fn visit_records(
        path: &Path,
        visit: impl FnMut(Record) -> ControlFlow<()>,
    ) -> Result<(), EventLogError> {
        let file = open_regular_nofollow(path).map_err(|e| not_a_log(path, e))?;
        scan_all(path, file, visit)
    }

    /// The log file.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// The seq of the last durable record (0 for an empty log).
    pub fn last_durable_seq(&self) -> u64 {
        self.inner.lock_state().durable
    }

    /// The seq of the last record written to the file, durable or not.
    pub fn last_written_seq(&self) -> u64 {
        self.inner.lock_state().written
    }

    /// Appends `event` and returns its seq once the record has been written with `O_APPEND`
    /// and `fdatasync`ed — only then is the event acknowledged.
    pub fn append(&self, event: &Value) -> Result<u64, EventLogError> {
        self.append_with(event, Durability::Synced)
    }

    /// Appends `event` and returns its seq once it is as durable as `durability` asks. Any
    /// serializable event is written as one JSON object, with no intermediate `Value`.
    pub fn append_with<T: serde::Serialize + ?Sized>(
        &self,
        event: &T,
        durability: Durability,
    ) -> Result<u64, EventLogError> {
        let body = serde_json::to_vec(event).map_err(|source| EventLogError::Encode { source })?;
        let inner = &*self.inner;
        // The seq and checksum add a few dozen bytes; what is written must stay readable.
        if body.len() as u64 + 64 > crate::MAX_RECORD_BYTES {
            return Err(EventLogError::RecordTooLarge {
                path: inner.path.clone(),
                bytes: body.len(),
            });
        }
        let mut state = inner.lock_state();
        if state.poisoned {
            return Err(inner.poisoned(&state));
        }
        let seq = state.next_seq;
        state.next_seq += 1;
        encode_record(&mut state.pending, seq, &body, inner.seal.as_ref());
        state.pending_last = seq;
        if inner.replica.get().is_some() {
            state.unshipped.push(body);
        }
        state = inner.wait_written(state, seq)?;
        match durability {
            Durability::Written => {
                // The flusher is woken only from idle: while it gathers a window it will see
                // this record anyway, and waking it per record would cost a switch each.
                let wake = state.durable < seq && !state.flusher_busy;
                if wake {
                    state.flusher_busy = true;
                }
                drop(state);
                if wake {
                    self.wake_flusher();
                }
            }
            Durability::Synced => {
                drop(inner.wait_durable(state, seq)?);
            }
        }
        Ok(seq)
    }

    /// Runs `hook` before every `fdatasync` of this log, and fails that sync (poisoning the log)
    /// when it fails. The session uses it to make artifacts published without waiting for the
    /// device durable before any record naming them is. Only the first hook set is kept.
    pub fn set_before_sync(&self, hook: impl Fn() -> std::io::Result<()> + Send + Sync + 'static) {
        let _ = self.inner.before_sync.set(BeforeSync(Box::new(hook)));
    }

    /// Makes the log durable in `replica` as well as in its file: from now on a record is
    /// durable (and a synced append acknowledged) only once the replica holds it too, shipped
    /// by the same group commit that syncs the file. Only the first replica set is kept; set
    /// it before the first append, on a log whose records the replica already holds.
    pub fn replicate_to(&self, replica: Arc<dyn LogReplica>) {
        let state = self.inner.lock_state();
        if self.inner.replica.set(replica).is_ok() {
            debug_assert!(state.unshipped.is_empty() && state.unshipped_first == state.next_seq);
        }
        drop(state);
    }

    /// Waits until every record written so far is durable.
    pub fn sync(&self) -> Result<(), EventLogError> {
        let inner = &*self.inner;
        let state = inner.lock_state();
        let target = state.written;
        inner.wait_durable(state, target).map(drop)
    }

    /// Tells the flusher there is work, starting it on first use.
    fn wake_flusher(&self) {
        let mut flusher = self
            .flusher
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        if flusher.is_none() {
            let inner = Arc::clone(&self.inner);
            let spawned = std::thread::Builder::new()
                .name("tackle-event-flush".into())
                .spawn(move || inner.flush_loop());
            match spawned {
                Ok(handle) => *flusher = Some(handle),
                // No thread to be had: make the record durable here instead (slower, still safe).
                Err(_) => {
                    drop(flusher);
                    // No flusher to go idle: the next written-only append must try again.
                    self.inner.lock_state().flusher_busy = false;
                    let _ = self.sync();
                    return;
                }
            }
        }
        drop(flusher);
        self.inner.flush_wanted.notify_one();
    }
}

impl Drop for EventLog {
    fn drop(&mut self) {
        let handle = self
            .flusher
            .get_mut()
            .unwrap_or_else(|poison| poison.into_inner())
            .take();
        if let Some(handle) = handle {
            self.inner.lock_state().closing = true;
            self.inner.flush_wanted.notify_all();
            // The flusher syncs what is left before it ends; a panic in it has nothing to hand back.
            let _ = handle.join();
        }
    }
}

impl Inner {
    fn lock_state(&self) -> MutexGuard<'_, CommitState> {
        // Every critical section leaves the state consistent before any call that could panic.
        self.state
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    fn wait<'a>(&self, mut state: MutexGuard<'a, CommitState>) -> MutexGuard<'a, CommitState> {
        state.waiting += 1;
        let mut state = self
            .progress
            .wait(state)
            .unwrap_or_else(|poison| poison.into_inner());
        state.waiting -= 1;
        state
    }

    /// Wakes the threads waiting on `progress`, if any. Called with the state locked, so a
    /// thread counted in `waiting` is inside its wait and cannot miss the signal.
    fn progressed(&self, state: &CommitState) {
        if state.waiting > 0 {
            self.progress.notify_all();
        }
    }

    fn poisoned(&self, state: &CommitState) -> EventLogError {
        EventLogError::Poisoned {
            path: self.path.clone(),
            why: state.poison_why.clone(),
        }
    }

    /// Returns once `seq` is in the file, writing every pending record when no one else is.
    fn wait_written<'a>(
        &'a self,
        mut state: MutexGuard<'a, CommitState>,
        seq: u64,
    ) -> Result<MutexGuard<'a, CommitState>, EventLogError> {
        loop {
            if state.poisoned {
                return Err(self.poisoned(&state));
            }
            if state.written >= seq {
                return Ok(state);
            }
            if state.writing {
                state = self.wait(state);
                continue;
            }
            // Write: take every pending record, ours included, in one `write`.
            state.writing = true;
            let batch = std::mem::take(&mut state.pending);
            let batch_last = state.pending_last;
            drop(state);
            let result = (&self.file)
                .write_all(&batch)
                .map_err(EventLogError::io("write", &self.path));
            state = self.lock_state();
            state.writing = false;
            if state.pending.is_empty() {
                // Hand the allocation back so the next batch does not grow a new buffer.
                let mut reuse = batch;
                reuse.clear();
                state.pending = reuse;
            }
            match result {
                Ok(()) => state.written = batch_last,
                Err(err) => {
                    state.poisoned = true;
                    self.progressed(&state);
                    return Err(err);
                }
            }
            self.progressed(&state);
        }
    }

    /// Returns once `seq` (already written) is durable, leading a sync when no one else is.
    fn wait_durable<'a>(
        &'a self,
        mut state: MutexGuard<'a, CommitState>,
        seq: u64,
    ) -> Result<MutexGuard<'a, CommitState>, EventLogError> {
        loop {
            if state.durable >= seq {
                return Ok(state);
            }
            if state.poisoned {
                return Err(self.poisoned(&state));
            }
            if state.syncing {
                state = self.wait(state);
                continue;
            }
            state = self.lead_sync(state)?;
        }
    }

    /// Syncs everything written so far; the caller found no sync in progress.
    fn lead_sync<'a>(
        &'a self,
        mut state: MutexGuard<'a, CommitState>,
    ) -> Result<MutexGuard<'a, CommitState>, EventLogError> {
        state.syncing = true;
        let target = state.written;
        // Everything written is shipped; what is appended meanwhile waits for the next sync.
        let ship_first = state.unshipped_first;
        let ship: Vec<Vec<u8>> = if self.replica.get().is_some() && target >= ship_first {
            let n = ((target + 1 - ship_first) as usize).min(state.unshipped.len());
            state.unshipped_first = target + 1;
            state.unshipped.drain(..n).collect()
        } else {
            Vec::new()
        };
        drop(state);
        let result = self
            .before_sync
            .get()
            .map_or(Ok(()), |hook| (hook.0)())
            .map_err(EventLogError::io("sync what the log names", &self.path))
            .and_then(|()| self.ship(ship_first, &ship))
            .and_then(|()| {
                self.file
                    .sync_data()
                    .map_err(EventLogError::io("fdatasync", &self.path))
            })
            .and_then(|()| self.sync_entry());
        let mut state = self.lock_state();
        state.syncing = false;
        let outcome = match result {
            Ok(()) => {
                state.durable = state.durable.max(target);
                Ok(())
            }
            Err(err) => {
                state.poisoned = true;
                if let EventLogError::Backend { source, .. } = &err {
                    state.poison_why = Some(source.to_string());
                }
                Err(err)
            }
        };
        self.progressed(&state);
        outcome.map(|()| state)
    }

    /// Makes the log's entry in its directory durable, once, if it was opened empty: until
    /// then a crash may lose the file, and with it only records nothing waited for.
    fn sync_entry(&self) -> Result<(), EventLogError> {
        if !self.entry_pending.load(Ordering::Acquire) {
            return Ok(());
        }
        if let Some(parent) = self.path.parent().filter(|p| !p.as_os_str().is_empty()) {
            sync_dir(parent).map_err(EventLogError::io("fsync its directory", &self.path))?;
        }
        self.entry_pending.store(false, Ordering::Release);
        Ok(())
    }

    /// Hands the records `first..` to the replica, if the log has one.
    fn ship(&self, first: u64, records: &[Vec<u8>]) -> Result<(), EventLogError> {
        let Some(replica) = self.replica.get() else {
            return Ok(());
        };
        if records.is_empty() {
            return Ok(());
        }
        let events: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
        replica
            .replicate(first, &events)
            .map_err(|source| EventLogError::Backend {
                path: self.path.clone(),
                source,
            })
    }

    /// The flusher thread: once written records are not yet durable, gather more for
    /// [`FLUSH_WINDOW`], then sync them all at once; end on close.
    fn flush_loop(&self) {
        let mut state = self.lock_state();
        loop {
            if state.poisoned {
                return;
            }
            if state.durable < state.written {
                let deadline = std::time::Instant::now() + FLUSH_WINDOW;
                while !state.closing && state.durable < state.written {
                    let left = deadline.saturating_duration_since(std::time::Instant::now());
                    if left.is_zero() {
                        break;
                    }
                    state = self
                        .flush_wanted
                        .wait_timeout(state, left)
                        .unwrap_or_else(|poison| poison.into_inner())
                        .0;
                }
                if state.durable >= state.written {
                    // A synced append covered the window meanwhile.
                    continue;
                }
                if state.syncing {
                    state = self.wait(state);
                    continue;
                }
                match self.lead_sync(state) {
                    Ok(s) => state = s,
                    // Appenders see the poison and report it; nothing more to do here.
                    Err(_) => return,
                }
                continue;
            }
            if state.closing {
                return;
            }
            state.flusher_busy = false;
            state = self
                .flush_wanted
                .wait(state)
                .unwrap_or_else(|poison| poison.into_inner());
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;
    use std::sync::Arc;

    use serde_json::json;

    use super::*;

    fn log_path(dir: &tempfile::TempDir) -> PathBuf {
        session_log_path(dir.path(), "session-1")
    }

    #[test]
    fn a_record_over_the_line_limit_is_refused_and_a_line_over_it_is_never_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = log_path(&dir);
        let (log, _) = EventLog::open(&path).unwrap();
        let huge = "x".repeat(crate::MAX_RECORD_BYTES as usize);
        let refused = log.append(&json!(huge)).unwrap_err();
        assert!(
            matches!(refused, EventLogError::RecordTooLarge { .. }),
            "{refused}"
        );
        assert_eq!(
            log.append(&json!("small")).unwrap(),
            1,
            "nothing was written"
        );
        drop(log);
        // A line past the limit (sparse: nothing is written) after a good record, and alone.
        let len = std::fs::metadata(&path).unwrap().len();
        let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        file.set_len(len + crate::MAX_RECORD_BYTES + 1).unwrap();
        let read = EventLog::read_records(&path).unwrap_err().to_string();
        assert!(read.contains("at line 2: a line runs past"), "{read}");
        let opened = EventLog::open(&path).unwrap_err().to_string();
        assert!(opened.contains("at line 2: a line runs past"), "{opened}");
        assert_eq!(
            std::fs::metadata(&path).unwrap().len(),
            len + crate::MAX_RECORD_BYTES + 1,
            "left as found"
        );
    }

    #[test]
    fn round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let path = log_path(&dir);
        let (log, recovery) = EventLog::open(&path).unwrap();
        assert_eq!(recovery.last_seq, 0);
        let events = [
            json!({"type":"call_started","id":"c1"}),
            json!("text\nwith newline"),
            json!(null),
        ];
        for (i, event) in events.iter().enumerate() {
            assert_eq!(log.append(event).unwrap(), i as u64 + 1);
        }
        let records = EventLog::read_records(&path).unwrap();
        let got: Vec<_> = records.iter().map(|r| (r.seq, r.event.clone())).collect();
        let want: Vec<_> = events
            .iter()
            .cloned()
            .enumerate()
            .map(|(i, e)| (i as u64 + 1, e))
            .collect();
        assert_eq!(got, want);
        let text = fs::read_to_string(&path).unwrap();
        let first = text.lines().next().unwrap();
        let cut = first.find(",\"crc\":").unwrap();
        let crc = crc32c::crc32c(&first.as_bytes()[..cut]);
        assert_eq!(&first[cut..], format!(",\"crc\":\"{crc:08x}\"}}"));
        assert!(first.starts_with("{\"seq\":1,\"event\":{"));
    }

    #[test]
    fn seq_continues_after_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let path = log_path(&dir);
        {
            let (log, _) = EventLog::open(&path).unwrap();
            log.append(&json!(1)).unwrap();
            log.append(&json!(2)).unwrap();
        }
        let (log, recovery) = EventLog::open(&path).unwrap();
        assert_eq!(recovery.last_seq, 2);
        assert_eq!(recovery.truncated_bytes, 0);
        assert_eq!(log.last_durable_seq(), 2);
        assert_eq!(log.append(&json!(3)).unwrap(), 3);
    }

    #[test]
    fn torn_partial_last_line_is_truncated() {
        let dir = tempfile::tempdir().unwrap();
        let path = log_path(&dir);
        {
            let (log, _) = EventLog::open(&path).unwrap();
            log.append(&json!({"n": 1})).unwrap();
            log.append(&json!({"n": 2})).unwrap();
        }
        let full = fs::read(&path).unwrap();
        let second_start = full.iter().position(|&b| b == b'\n').unwrap() + 1;
        // Cut the second record short, and separately drop only its newline.
        for cut in [second_start + 10, full.len() - 1] {
            fs::write(&path, &full[..cut]).unwrap();
            let (log, recovery) = EventLog::open(&path).unwrap();
            assert_eq!(recovery.last_seq, 1);
            assert_eq!(recovery.truncated_bytes, (cut - second_start) as u64);
            assert_eq!(fs::read(&path).unwrap(), &full[..second_start]);
            assert_eq!(log.append(&json!({"n": "again"})).unwrap(), 2);
            drop(log);
            assert_eq!(EventLog::read_records(&path).unwrap().len(), 2);
            fs::write(&path, &full).unwrap();
        }
    }

    #[test]
    fn a_nul_run_after_the_last_record_is_truncated_and_a_garbage_line_is_corruption() {
        let dir = tempfile::tempdir().unwrap();
        let path = log_path(&dir);
        {
            let (log, _) = EventLog::open(&path).unwrap();
            log.append(&json!({"n": 1})).unwrap();
        }
        let good = fs::read(&path).unwrap();
        let mut zeroed = good.clone();
        zeroed.extend_from_slice(b"{\"seq\":2,\"ev");
        zeroed.extend_from_slice(&[0; 4096]);
        fs::write(&path, &zeroed).unwrap();
        // Reading does not modify the file.
        assert_eq!(EventLog::read_records(&path).unwrap().len(), 1);
        assert_eq!(fs::read(&path).unwrap(), zeroed);
        let (_log, recovery) = EventLog::open(&path).unwrap();
        assert_eq!(recovery.truncated_bytes, (zeroed.len() - good.len()) as u64);
        assert_eq!(fs::read(&path).unwrap(), good);

        let mut garbage = good.clone();
        garbage.extend_from_slice(b"garbage line\n");
        fs::write(&path, &garbage).unwrap();
        assert!(matches!(
            EventLog::open(&path),
            Err(EventLogError::Corrupt { line: 2, .. })
        ));
        assert_eq!(
            fs::read(&path).unwrap(),
            garbage,
            "a corrupt log is left as found"
        );
    }

    #[test]
    fn bad_record_in_the_middle_is_corruption_naming_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = log_path(&dir);
        {
            let (log, _) = EventLog::open(&path).unwrap();
            for n in 0..4 {
                log.append(&json!({"n": n})).unwrap();
            }
        }
        let mut text = fs::read_to_string(&path).unwrap();
        let at = text.match_indices("\"n\":1").next().unwrap().0;
        text.replace_range(at..at + 5, "\"n\":7");
        fs::write(&path, &text).unwrap();
        for result in [
            EventLog::open(&path).map(|_| ()),
            EventLog::read_records(&path).map(|_| ()),
        ] {
            match result {
                Err(EventLogError::Corrupt {
                    path: p,
                    line,
                    reason,
                }) => {
                    assert_eq!(p, path);
                    assert_eq!(line, 2);
                    assert!(reason.contains("checksum"), "{reason}");
                }
                other => panic!("expected Corrupt, got {other:?}"),
            }
        }
        let message = EventLog::read_records(&path).unwrap_err().to_string();
        assert!(
            message.contains("line 2") && message.contains("events.jsonl"),
            "{message}"
        );
        // The file was left as found.
        assert_eq!(fs::read_to_string(&path).unwrap(), text);
    }

    #[test]
    fn valid_record_with_out_of_order_seq_is_corruption() {
        use crate::record::encode_record;
        let dir = tempfile::tempdir().unwrap();
        let path = log_path(&dir);
        let mut data = Vec::new();
        encode_record(&mut data, 1, b"{}", None);
        encode_record(&mut data, 3, b"{}", None);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, &data).unwrap();
        assert!(matches!(
            EventLog::open(&path),
            Err(EventLogError::Corrupt { line: 2, .. })
        ));
    }

    #[test]
    fn concurrent_appends_from_8_threads_get_unique_increasing_seqs() {
        let dir = tempfile::tempdir().unwrap();
        let path = log_path(&dir);
        let (log, _) = EventLog::open(&path).unwrap();
        let log = Arc::new(log);
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let log = Arc::clone(&log);
                std::thread::spawn(move || {
                    let mut seqs = Vec::new();
                    for i in 0..50 {
                        let seq = log.append(&json!({"thread": t, "i": i})).unwrap();
                        // Acknowledged means durable and in the file already.
                        assert!(log.last_durable_seq() >= seq);
                        seqs.push(seq);
                    }
                    seqs
                })
            })
            .collect();
        let mut all = HashSet::new();
        for handle in threads {
            let seqs = handle.join().unwrap();
            assert!(
                seqs.windows(2).all(|w| w[0] < w[1]),
                "per-thread seqs not increasing"
            );
            all.extend(seqs);
        }
        assert_eq!(all.len(), 400);
        let records = EventLog::read_records(&path).unwrap();
        assert_eq!(records.len(), 400);
        assert!(
            records
                .iter()
                .enumerate()
                .all(|(i, r)| r.seq == i as u64 + 1)
        );
        let mut per_thread = vec![Vec::new(); 8];
        for record in &records {
            let t = record.event["thread"].as_u64().unwrap() as usize;
            per_thread[t].push(record.event["i"].as_u64().unwrap());
        }
        for order in per_thread {
            assert_eq!(
                order,
                (0..50).collect::<Vec<_>>(),
                "a thread's events were reordered"
            );
        }
    }

    #[test]
    fn written_appends_are_in_the_file_at_once_and_durable_after_sync() {
        let dir = tempfile::tempdir().unwrap();
        let path = log_path(&dir);
        let (log, _) = EventLog::open(&path).unwrap();
        for n in 1..=3u64 {
            assert_eq!(
                log.append_with(&json!({"n": n}), Durability::Written)
                    .unwrap(),
                n
            );
        }
        assert_eq!(log.last_written_seq(), 3);
        assert_eq!(EventLog::read_records(&path).unwrap().len(), 3);
        log.sync().unwrap();
        assert_eq!(log.last_durable_seq(), 3);
    }

    #[test]
    fn a_synced_append_makes_earlier_written_ones_durable() {
        let dir = tempfile::tempdir().unwrap();
        let path = log_path(&dir);
        let (log, _) = EventLog::open(&path).unwrap();
        log.append_with(&json!(1), Durability::Written).unwrap();
        log.append_with(&json!(2), Durability::Written).unwrap();
        let seq = log.append(&json!(3)).unwrap();
        assert_eq!(seq, 3);
        assert!(log.last_durable_seq() >= 3);
    }

    #[test]
    fn dropping_the_log_ends_the_flusher_and_keeps_every_record() {
        let dir = tempfile::tempdir().unwrap();
        let path = log_path(&dir);
        {
            let (log, _) = EventLog::open(&path).unwrap();
            for n in 0..100 {
                log.append_with(&json!({"n": n}), Durability::Written)
                    .unwrap();
            }
        }
        let (log, recovery) = EventLog::open(&path).unwrap();
        assert_eq!(recovery.last_seq, 100);
        assert_eq!(recovery.truncated_bytes, 0);
        assert_eq!(log.last_durable_seq(), 100);
    }

    #[test]
    fn mixed_durability_from_8_threads_keeps_seq_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = log_path(&dir);
        let (log, _) = EventLog::open(&path).unwrap();
        let log = Arc::new(log);
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let log = Arc::clone(&log);
                std::thread::spawn(move || {
                    for i in 0..50 {
                        let durability = if (t + i) % 3 == 0 {
                            Durability::Synced
                        } else {
                            Durability::Written
                        };
                        let seq = log
                            .append_with(&json!({"thread": t, "i": i}), durability)
                            .unwrap();
                        assert!(log.last_written_seq() >= seq);
                        if durability == Durability::Synced {
                            assert!(log.last_durable_seq() >= seq);
                        }
                    }
                })
            })
            .collect();
        for handle in threads {
            handle.join().unwrap();
        }
        log.sync().unwrap();
        let records = EventLog::read_records(&path).unwrap();
        assert_eq!(records.len(), 400);
        assert!(
            records
                .iter()
                .enumerate()
                .all(|(i, r)| r.seq == i as u64 + 1)
        );
    }

    #[test]
    fn the_before_sync_hook_runs_before_every_sync_and_its_failure_poisons() {
        use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
        let dir = tempfile::tempdir().unwrap();
        let (log, _) = EventLog::open(&log_path(&dir)).unwrap();
        let runs = Arc::new(AtomicUsize::new(0));
        let fail = Arc::new(AtomicBool::new(false));
        let (r, f) = (Arc::clone(&runs), Arc::clone(&fail));
        log.set_before_sync(move || {
            r.fetch_add(1, Ordering::SeqCst);
            if f.load(Ordering::SeqCst) {
                Err(std::io::Error::other("device gone"))
            } else {
                Ok(())
            }
        });
        log.append(&json!(1)).unwrap();
        assert_eq!(runs.load(Ordering::SeqCst), 1);
        log.append_with(&json!(2), Durability::Written).unwrap();
        log.sync().unwrap();
        assert!(runs.load(Ordering::SeqCst) >= 2);
        fail.store(true, Ordering::SeqCst);
        let err = log.append(&json!(3)).unwrap_err().to_string();
        assert!(err.contains("device gone"), "{err}");
        assert!(matches!(
            log.append(&json!(4)),
            Err(EventLogError::Poisoned { .. })
        ));
    }

    #[test]
    fn event_log_is_send_and_sync() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<EventLog>();
    }
}
