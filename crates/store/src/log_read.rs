//! Reading an event log: the whole history on demand, or only its tail when it is opened.
//!
//! **Key decision:** opening a log costs its tail, not its history. What an append needs is
//! the last seq and a sound end of file, so [`check_tail`] reads backwards from the end until
//! it holds at least the last complete line (and every line starting in the last
//! [`TAIL_CHECK_BYTES`]), checks those lines and the fragment after them, and stops. A damaged
//! line further back is found by whatever reads history ([`scan_all`]: `retrieve_raw`, the
//! crash tests), which applies the same rules to every line. Rejected: checking every line at
//! every open, which made each `tackle call --session` re-read and re-parse everything the
//! session ever wrote.

use std::fs::File;
use std::io::{BufRead, BufReader, Read as _};
use std::ops::ControlFlow;
use std::os::unix::fs::FileExt;
use std::path::Path;

use crate::EventLogError;
use crate::record::{Record, check_torn_fragment, decode_record};

/// At open, every complete line that starts in this many bytes before the end is checked (and
/// always the last complete line, up to [`MAX_RECORD_BYTES`]).
pub(crate) const TAIL_CHECK_BYTES: u64 = 64 * 1024;

/// The longest line a record may be (without its newline). Appends over it are refused, and a
/// reader meets a longer line as corruption after reading at most this much of it: a log a
/// repository ships (a gigabyte of zeros compresses to almost nothing) is never read whole into
/// memory. A call's record is bounded far below (arguments over 64 KiB go to the store, a
/// result's text to 2 MiB), so only a batch of many large results comes near it.
pub const MAX_RECORD_BYTES: u64 = 64 * 1024 * 1024;

fn too_long() -> String {
    format!("a line runs past {MAX_RECORD_BYTES} bytes, the most a record may be")
}

/// What the tail of a log says about the whole of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Tail {
    /// The seq of the last complete record (0 for a log without one).
    pub last_seq: u64,
    /// Length of the file up to and including the last complete record's newline; anything
    /// after it is a torn write to cut off.
    pub valid_len: u64,
}

fn corrupt(path: &Path, line: usize, reason: String) -> EventLogError {
    EventLogError::Corrupt {
        path: path.to_path_buf(),
        line,
        reason,
    }
}

/// The seq a record must have after `prev` (0: none yet), or why it does not.
fn check_follows(prev: u64, seq: u64) -> Result<(), String> {
    match (prev, seq) {
        (0, 1) => Ok(()),
        (0, seq) => Err(format!("the first record has seq {seq}, not 1")),
        (prev, seq) if seq == prev + 1 => Ok(()),
        (prev, seq) => Err(format!("seq {seq} does not follow seq {prev}")),
    }
}

/// Reads every record of `file` in order, handing each to `visit` until it breaks. Every
/// complete line must be a valid record following the one before; a final line without its
/// newline must be a torn write of the next record (and is skipped). Memory holds one line.
pub(crate) fn scan_all(
    path: &Path,
    file: File,
    mut visit: impl FnMut(Record) -> ControlFlow<()>,
) -> Result<(), EventLogError> {
    let mut reader = BufReader::with_capacity(256 * 1024, file);
    let mut line = Vec::new();
    let mut line_no = 0;
    let mut prev = 0;
    loop {
        line.clear();
        // At most one byte past the longest record and its newline is held.
        let read = (&mut reader)
            .take(MAX_RECORD_BYTES + 1)
            .read_until(b'\n', &mut line)
            .map_err(EventLogError::io("read", path))?;
        if read == 0 {
            return Ok(());
        }
        line_no += 1;
        if line.len() as u64 > MAX_RECORD_BYTES && !line.ends_with(b"\n") {
            return Err(corrupt(path, line_no, too_long()));
        }
        let Some(complete) = line.strip_suffix(b"\n") else {
            return check_torn_fragment(&line, prev + 1).map_err(|r| corrupt(path, line_no, r));
        };
        let record = decode_record(complete).map_err(|r| corrupt(path, line_no, r))?;
        check_follows(prev, record.seq).map_err(|r| corrupt(path, line_no, r))?;
        prev = record.seq;
        if visit(record).is_break() {
            return Ok(());
        }
    }
}

/// Checks the end of a log of `len` bytes (see the module docs) without reading the rest.
pub(crate) fn check_tail(path: &Path, file: &File, len: u64) -> Result<Tail, EventLogError> {
    // Enough for the longest last line and a torn fragment of the next as long; a window that
    // size without them is a line over the limit, never a reason to read further.
    let limit = 2 * (MAX_RECORD_BYTES + 1);
    let mut window = TAIL_CHECK_BYTES.min(len);
    loop {
        let start = len - window;
        let buf = read_at(path, file, start, window)?;
        // Whether `start` is the first byte of a line, so the window's first line is whole.
        let starts_line = start == 0 || read_at(path, file, start - 1, 1)? == b"\n";
        let complete_end = memchr::memrchr(b'\n', &buf).map(|i| i + 1);
        let first_start = if starts_line {
            Some(0)
        } else {
            memchr::memchr(b'\n', &buf).map(|i| i + 1)
        };
        let ready = match complete_end {
            // No newline at all: the whole file is one unterminated line.
            None => start == 0,
            Some(end) => first_start.is_some_and(|first| first < end),
        };
        if !ready {
            if window >= limit {
                return Err(corrupt_at(path, file, start, too_long()));
            }
            window = (window * 2).min(len).min(limit);
            continue;
        }
        let complete_end = complete_end.unwrap_or(0);
        let first_start = first_start.unwrap_or(0);
        let mut prev = None;
        let mut at = first_start;
        while at < complete_end {
            let end = at + memchr::memchr(b'\n', &buf[at..complete_end]).unwrap_or(0);
            let offset = start + at as u64;
            if (end - at) as u64 > MAX_RECORD_BYTES {
                return Err(corrupt_at(path, file, offset, too_long()));
            }
            let record =
                decode_record(&buf[at..end]).map_err(|r| corrupt_at(path, file, offset, r))?;
            let follows = match prev {
                Some(prev) => check_follows(prev, record.seq),
                None if start == 0 => check_follows(0, record.seq),
                None => Ok(()),
            };
            follows.map_err(|r| corrupt_at(path, file, offset, r))?;
            prev = Some(record.seq);
            at = end + 1;
        }
        let last_seq = prev.unwrap_or(0);
        let fragment = &buf[complete_end..];
        if fragment.len() as u64 > MAX_RECORD_BYTES {
            return Err(corrupt_at(
                path,
                file,
                start + complete_end as u64,
                too_long(),
            ));
        }
        check_torn_fragment(fragment, last_seq + 1)
            .map_err(|r| corrupt_at(path, file, start + complete_end as u64, r))?;
        return Ok(Tail {
            last_seq,
            valid_len: start + complete_end as u64,
        });
    }
}

fn read_at(path: &Path, file: &File, offset: u64, len: u64) -> Result<Vec<u8>, EventLogError> {
    let len = usize::try_from(len).map_err(|_| {
        EventLogError::io("read", path)(std::io::Error::other(
            "its last line is larger than this machine can address",
        ))
    })?;
    let mut buf = vec![0; len];
    file.read_exact_at(&mut buf, offset)
        .map_err(EventLogError::io("read", path))?;
    Ok(buf)
}

/// The corruption error for the line starting at byte `offset`, numbered by counting the
/// newlines before it. Only a damaged log pays for that count.
fn corrupt_at(path: &Path, file: &File, offset: u64, reason: String) -> EventLogError {
    match newlines_before(file, offset) {
        Ok(before) => corrupt(path, before + 1, reason),
        Err(e) => EventLogError::io("read", path)(e),
    }
}

fn newlines_before(file: &File, offset: u64) -> std::io::Result<usize> {
    let mut buf = vec![0; 256 * 1024];
    let (mut at, mut count) = (0, 0);
    while at < offset {
        let want = buf
            .len()
            .min(usize::try_from(offset - at).unwrap_or(usize::MAX));
        let read = file.read_at(&mut buf[..want], at)?;
        if read == 0 {
            break;
        }
        count += bytecount::count(&buf[..read], b'\n');
        at += read as u64;
    }
    Ok(count)
}
