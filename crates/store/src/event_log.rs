//! The durable JSONL event log with CRC-32C per record and group commit.
//!
//! One record per line: `{"seq":N,"event":<json>,"crc":"<8 hex>"}\n`, where `crc` is CRC-32C
//! over the exact bytes of the line before `,"crc":`.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex, MutexGuard};

use serde::Deserialize;
use serde_json::Value;

use crate::EventLogError;
use crate::fsutil::{create_private_dir, sync_dir};

/// `,"crc":"` + 8 hex + `"}`.
const CRC_SUFFIX_LEN: usize = 18;
const CRC_PREFIX: &[u8] = b",\"crc\":\"";

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

/// One acknowledged event.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// Its sequence number; consecutive within a log.
    pub seq: u64,
    /// The event exactly as appended.
    pub event: Value,
}

/// What [`EventLog::open`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct Recovery {
    /// Every valid record, in order.
    pub records: Vec<Record>,
    /// Bytes of torn tail removed from the end of the file (0 after a clean shutdown).
    pub truncated_bytes: u64,
}

/// An append-only, fsynced JSONL log. `Send + Sync`: share it through an `Arc`.
///
/// Appends from many threads are group-committed: whoever finds no sync in progress becomes
/// the leader and writes every pending record in one `write` followed by one `fdatasync`;
/// the others wait until the batch holding their record is durable.
#[derive(Debug)]
pub struct EventLog {
    path: PathBuf,
    file: File,
    state: Mutex<CommitState>,
    committed: Condvar,
}

#[derive(Debug)]
struct CommitState {
    /// The seq the next append receives.
    next_seq: u64,
    /// Encoded records not yet handed to a leader, in seq order.
    pending: Vec<u8>,
    /// The highest seq in `pending`.
    pending_last: u64,
    /// Every seq up to this one is durable.
    durable: u64,
    /// A leader is writing and syncing a batch right now.
    syncing: bool,
    /// A write or sync failed; the file's tail is unknown until it is reopened.
    poisoned: bool,
}

impl EventLog {
    /// Opens (creating if needed) the log at `path`, truncating a torn tail.
    ///
    /// Invalid records only at the end — including a last line without its newline — are the
    /// remains of an unacknowledged write and are cut off (and the cut fsynced). An invalid
    /// record followed by a valid one is [`EventLogError::Corrupt`].
    pub fn open(path: &Path) -> Result<(Self, Recovery), EventLogError> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            create_private_dir(parent).map_err(EventLogError::io("create its directory", path))?;
        }
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .mode(0o600)
            .open(path)
            .map_err(EventLogError::io("open", path))?;
        let data = fs::read(path).map_err(EventLogError::io("read", path))?;
        let scan = scan(path, &data)?;
        let truncated_bytes = (data.len() - scan.valid_len) as u64;
        if truncated_bytes > 0 {
            file.set_len(scan.valid_len as u64)
                .map_err(EventLogError::io("truncate torn tail", path))?;
            file.sync_all()
                .map_err(EventLogError::io("fsync after truncation", path))?;
        } else if data.is_empty() {
            // A freshly created log must survive a crash as an entry of its directory.
            if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                sync_dir(parent).map_err(EventLogError::io("fsync its directory", path))?;
            }
        }
        let last = scan.records.last().map_or(0, |r| r.seq);
        let log = Self {
            path: path.to_path_buf(),
            file,
            state: Mutex::new(CommitState {
                next_seq: last + 1,
                pending: Vec::new(),
                pending_last: last,
                durable: last,
                syncing: false,
                poisoned: false,
            }),
            committed: Condvar::new(),
        };
        Ok((
            log,
            Recovery {
                records: scan.records,
                truncated_bytes,
            },
        ))
    }

    /// Reads and validates a log without modifying it; a torn tail is ignored.
    pub fn read_records(path: &Path) -> Result<Vec<Record>, EventLogError> {
        let data = fs::read(path).map_err(EventLogError::io("read", path))?;
        Ok(scan(path, &data)?.records)
    }

    /// The log file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The seq of the last acknowledged record (0 for an empty log).
    pub fn last_durable_seq(&self) -> u64 {
        self.lock_state().durable
    }

    /// Appends `event` and returns its seq once the record has been written with `O_APPEND`
    /// and `fdatasync`ed — only then is the event acknowledged.
    pub fn append(&self, event: &Value) -> Result<u64, EventLogError> {
        let body = serde_json::to_vec(event).map_err(|source| EventLogError::Encode { source })?;
        let mut state = self.lock_state();
        if state.poisoned {
            return Err(self.poisoned());
        }
        let seq = state.next_seq;
        state.next_seq += 1;
        encode_record(&mut state.pending, seq, &body);
        state.pending_last = seq;
        loop {
            if state.durable >= seq {
                return Ok(seq);
            }
            if state.poisoned {
                return Err(self.poisoned());
            }
            if state.syncing {
                state = self
                    .committed
                    .wait(state)
                    .unwrap_or_else(|poison| poison.into_inner());
                continue;
            }
            // Lead: take every pending record, ours included, and make the batch durable.
            state.syncing = true;
            let batch = std::mem::take(&mut state.pending);
            let batch_last = state.pending_last;
            drop(state);
            let result = (&self.file)
                .write_all(&batch)
                .map_err(EventLogError::io("write", &self.path))
                .and_then(|()| {
                    self.file
                        .sync_data()
                        .map_err(EventLogError::io("fdatasync", &self.path))
                });
            state = self.lock_state();
            state.syncing = false;
            if state.pending.is_empty() {
                // Hand the allocation back so the next batch does not grow a new buffer.
                let mut reuse = batch;
                reuse.clear();
                state.pending = reuse;
            }
            match result {
                Ok(()) => state.durable = batch_last,
                Err(err) => {
                    state.poisoned = true;
                    self.committed.notify_all();
                    return Err(err);
                }
            }
            self.committed.notify_all();
        }
    }

    fn lock_state(&self) -> MutexGuard<'_, CommitState> {
        // Every critical section leaves the state consistent before any call that could panic.
        self.state
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    fn poisoned(&self) -> EventLogError {
        EventLogError::Poisoned {
            path: self.path.clone(),
        }
    }
}

fn encode_record(out: &mut Vec<u8>, seq: u64, event: &[u8]) {
    let start = out.len();
    out.extend_from_slice(b"{\"seq\":");
    out.extend_from_slice(seq.to_string().as_bytes());
    out.extend_from_slice(b",\"event\":");
    out.extend_from_slice(event);
    let crc = crc32c::crc32c(&out[start..]);
    out.extend_from_slice(CRC_PREFIX);
    out.extend_from_slice(format!("{crc:08x}\"}}\n").as_bytes());
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RecordWire {
    seq: u64,
    event: Value,
    #[allow(dead_code)]
    crc: String,
}

/// Checks one line (without its newline) and decodes it.
fn decode_record(line: &[u8]) -> Result<Record, String> {
    if line.len() < CRC_SUFFIX_LEN {
        return Err("record too short to hold a checksum".into());
    }
    let (covered, suffix) = line.split_at(line.len() - CRC_SUFFIX_LEN);
    if !suffix.starts_with(CRC_PREFIX) || !suffix.ends_with(b"\"}") {
        return Err("record does not end with a \"crc\" field".into());
    }
    let hex = &suffix[CRC_PREFIX.len()..CRC_PREFIX.len() + 8];
    if !hex.iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return Err("checksum is not 8 lowercase hex digits".into());
    }
    let stored = std::str::from_utf8(hex)
        .ok()
        .and_then(|h| u32::from_str_radix(h, 16).ok())
        .ok_or("checksum is not 8 lowercase hex digits")?;
    let actual = crc32c::crc32c(covered);
    if stored != actual {
        return Err(format!(
            "checksum mismatch: stored {stored:08x}, computed {actual:08x}"
        ));
    }
    let wire: RecordWire =
        serde_json::from_slice(line).map_err(|err| format!("record is not valid JSON: {err}"))?;
    Ok(Record {
        seq: wire.seq,
        event: wire.event,
    })
}

struct Scan {
    records: Vec<Record>,
    /// Length of the prefix made of valid, newline-terminated records.
    valid_len: usize,
}

fn scan(path: &Path, data: &[u8]) -> Result<Scan, EventLogError> {
    let mut records: Vec<Record> = Vec::new();
    let mut valid_len = 0;
    let mut first_invalid: Option<(usize, String)> = None;
    let mut offset = 0;
    let mut line_no = 0;
    while offset < data.len() {
        line_no += 1;
        let (line, next, terminated) = match memchr_newline(&data[offset..]) {
            Some(i) => (&data[offset..offset + i], offset + i + 1, true),
            None => (&data[offset..], data.len(), false),
        };
        let decoded = if terminated {
            decode_record(line)
        } else {
            Err("last line has no newline".to_owned())
        };
        let corrupt = |line: usize, reason: String| EventLogError::Corrupt {
            path: path.to_path_buf(),
            line,
            reason,
        };
        match (decoded, &first_invalid) {
            (Ok(record), None) => {
                if let Some(prev) = records.last()
                    && record.seq != prev.seq + 1
                {
                    let reason = format!("seq {} does not follow seq {}", record.seq, prev.seq);
                    return Err(corrupt(line_no, reason));
                }
                records.push(record);
                valid_len = next;
            }
            (Ok(_), Some((bad_line, reason))) => return Err(corrupt(*bad_line, reason.clone())),
            (Err(reason), None) => first_invalid = Some((line_no, reason)),
            (Err(_), Some(_)) => {}
        }
        offset = next;
    }
    Ok(Scan { records, valid_len })
}

fn memchr_newline(data: &[u8]) -> Option<usize> {
    data.iter().position(|&b| b == b'\n')
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
    fn round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let path = log_path(&dir);
        let (log, recovery) = EventLog::open(&path).unwrap();
        assert!(recovery.records.is_empty());
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
        assert_eq!(recovery.records.len(), 2);
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
            assert_eq!(recovery.records.len(), 1);
            assert_eq!(recovery.truncated_bytes, (cut - second_start) as u64);
            assert_eq!(fs::read(&path).unwrap(), &full[..second_start]);
            assert_eq!(log.append(&json!({"n": "again"})).unwrap(), 2);
            drop(log);
            assert_eq!(EventLog::read_records(&path).unwrap().len(), 2);
            fs::write(&path, &full).unwrap();
        }
    }

    #[test]
    fn garbage_tail_is_truncated() {
        let dir = tempfile::tempdir().unwrap();
        let path = log_path(&dir);
        {
            let (log, _) = EventLog::open(&path).unwrap();
            log.append(&json!({"n": 1})).unwrap();
        }
        let good = fs::read(&path).unwrap();
        let mut damaged = good.clone();
        damaged.extend_from_slice(
            b"garbage line\n\0\0\0\0\n{\"seq\":2,\"event\":1,\"crc\":\"00000000\"}\n\0\0",
        );
        fs::write(&path, &damaged).unwrap();
        // Reading does not modify the file.
        assert_eq!(EventLog::read_records(&path).unwrap().len(), 1);
        assert_eq!(fs::read(&path).unwrap(), damaged);
        let (_log, recovery) = EventLog::open(&path).unwrap();
        assert_eq!(
            recovery.truncated_bytes,
            (damaged.len() - good.len()) as u64
        );
        assert_eq!(fs::read(&path).unwrap(), good);
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
        let dir = tempfile::tempdir().unwrap();
        let path = log_path(&dir);
        let mut data = Vec::new();
        encode_record(&mut data, 1, b"{}");
        encode_record(&mut data, 3, b"{}");
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
    fn event_log_is_send_and_sync() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<EventLog>();
    }
}
