//! The event log's corruption corpus: one case per row, each a damaged copy of a real log and
//! the outcome both readers must reach — [`EventLog::open`] (which checks the tail) and
//! [`EventLog::read_records`] (which checks every line).
//!
//! The rows are generated from a small grammar of damage over a log the real encoder wrote:
//! a truncation at every byte of the last line (alone, and followed by the NUL run a crash
//! leaves in unwritten blocks), a flipped byte at every position of the last line and of a
//! middle line under three masks (named by position class: record header, seq, payload,
//! checksum field, checksum digits, closing brace, newline), duplicated, deleted and swapped
//! lines, and what may be appended (garbage with and without a newline, NUL runs, an earlier
//! record, the start of the next one). The rule they pin down: only a final line without its
//! newline that could begin the next record is a torn write; every complete line that fails its
//! check is corruption, reported with its line number.

// A test panics on any failure; unwrap is how it reports one.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::Path;

use serde_json::json;
use tackle_store::{EventLog, EventLogError, session_log_path};

/// What opening and reading a damaged log must give.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// A torn tail (possibly empty) is cut: `kept` records remain, `truncated` bytes go.
    Recovered { kept: u64, truncated: u64 },
    /// The log is corrupt at this 1-based line; opening leaves the file as found.
    Corrupt { line: usize },
}

/// One row of the corpus.
struct Case {
    name: String,
    bytes: Vec<u8>,
    outcome: Outcome,
}

/// The undamaged log the corpus damages, as the encoder wrote it.
struct Base {
    bytes: Vec<u8>,
    /// Byte offset where each line starts; one more entry for the end of the file.
    starts: Vec<usize>,
}

impl Base {
    fn write(dir: &Path) -> Self {
        let path = session_log_path(dir, "base");
        let (log, _) = EventLog::open(&path).unwrap();
        let events = [
            json!({"type": "session_started", "root": "/p"}),
            json!({"type": "call_started", "arguments": {"content": "a\nb \u{0} c"}}),
            // A key named like the checksum field, inside the event.
            json!({"type": "call_finished", "crc": "00000000", "status": "ok"}),
            json!({"type": "call_started", "arguments": {"path": "ü/ß", "n": 12345}}),
        ];
        for event in &events {
            log.append(event).unwrap();
        }
        drop(log);
        let bytes = fs::read(&path).unwrap();
        let mut starts = vec![0];
        starts.extend(
            bytes
                .iter()
                .enumerate()
                .filter(|(_, b)| **b == b'\n')
                .map(|(i, _)| i + 1),
        );
        Self { bytes, starts }
    }

    fn lines(&self) -> usize {
        self.starts.len() - 1
    }

    /// Line `n` (1-based), newline included.
    fn line(&self, n: usize) -> &[u8] {
        &self.bytes[self.starts[n - 1]..self.starts[n]]
    }

    fn with_lines(&self, order: &[usize]) -> Vec<u8> {
        order.iter().flat_map(|&n| self.line(n).to_vec()).collect()
    }
}

/// The position class of byte `at` within `line` (newline included), for the row's name.
fn position_class(line: &[u8], at: usize) -> &'static str {
    let header = b"{\"seq\":".len();
    let seq_end = header + line[header..].iter().position(|b| *b == b',').unwrap();
    let len = line.len();
    match at {
        _ if at == len - 1 => "newline",
        _ if at == len - 2 => "closing brace",
        _ if at >= len - 11 && at < len - 3 => "checksum digit",
        _ if at >= len - 19 && at < len - 11 => "checksum field",
        _ if at < header => "record header",
        _ if at < seq_end => "seq",
        _ => "payload",
    }
}

fn corpus(base: &Base) -> Vec<Case> {
    let n = base.lines();
    let last_start = base.starts[n - 1];
    let len = base.bytes.len();
    let mut cases = Vec::new();
    let mut case = |name: String, bytes: Vec<u8>, outcome: Outcome| {
        cases.push(Case {
            name,
            bytes,
            outcome,
        })
    };

    case(
        "undamaged".into(),
        base.bytes.clone(),
        Outcome::Recovered {
            kept: n as u64,
            truncated: 0,
        },
    );
    case(
        "empty file".into(),
        Vec::new(),
        Outcome::Recovered {
            kept: 0,
            truncated: 0,
        },
    );

    // Truncation at every byte of the last line, bare and followed by a crash's NUL run.
    for cut in last_start..len {
        let torn = (cut - last_start) as u64;
        let kept = n as u64 - 1;
        case(
            format!("truncated at byte {} of the last line", cut - last_start),
            base.bytes[..cut].to_vec(),
            Outcome::Recovered {
                kept,
                truncated: torn,
            },
        );
        let mut zeroed = base.bytes[..cut].to_vec();
        zeroed.extend_from_slice(&[0; 1000]);
        case(
            format!(
                "truncated at byte {} of the last line, then NULs",
                cut - last_start
            ),
            zeroed,
            Outcome::Recovered {
                kept,
                truncated: torn + 1000,
            },
        );
    }
    // A file of only a partial first line.
    for cut in 1..base.line(1).len() {
        case(
            format!("only the first {cut} bytes of the first line"),
            base.bytes[..cut].to_vec(),
            Outcome::Recovered {
                kept: 0,
                truncated: cut as u64,
            },
        );
    }
    case(
        "only a NUL run".into(),
        vec![0; 4096],
        Outcome::Recovered {
            kept: 0,
            truncated: 4096,
        },
    );
    case(
        "only the start of record 2".into(),
        base.line(2)[..12].to_vec(),
        Outcome::Corrupt { line: 1 },
    );

    // A flipped byte anywhere in a complete line is corruption of that line.
    for (line, label) in [(n, "last"), (2, "second")] {
        let start = base.starts[line - 1];
        let text = base.line(line);
        for at in 0..text.len() {
            for mask in [0x01u8, 0x20, 0x80] {
                let mut bytes = base.bytes.clone();
                bytes[start + at] ^= mask;
                case(
                    format!(
                        "{label} line, byte {at} ({}) xor {mask:#04x}",
                        position_class(text, at)
                    ),
                    bytes,
                    Outcome::Corrupt { line },
                );
            }
        }
    }

    // Lines duplicated, deleted (a seq gap) and swapped.
    let all: Vec<usize> = (1..=n).collect();
    let mut dup_last = all.clone();
    dup_last.push(n);
    case(
        "last line duplicated".into(),
        base.with_lines(&dup_last),
        Outcome::Corrupt { line: n + 1 },
    );
    case(
        "first line duplicated".into(),
        base.with_lines(&[&[1][..], &all].concat()),
        Outcome::Corrupt { line: 2 },
    );
    case(
        "second line deleted: seq gap".into(),
        base.with_lines(&[1, 3, 4]),
        Outcome::Corrupt { line: 2 },
    );
    case(
        "first line deleted: starts at seq 2".into(),
        base.with_lines(&[2, 3, 4]),
        Outcome::Corrupt { line: 1 },
    );
    case(
        "third line deleted: seq gap before the last line".into(),
        base.with_lines(&[1, 2, 4]),
        Outcome::Corrupt { line: 3 },
    );
    case(
        "second and third lines swapped".into(),
        base.with_lines(&[1, 3, 2, 4]),
        Outcome::Corrupt { line: 2 },
    );

    // What may follow the last complete line.
    let next_header = format!("{{\"seq\":{},\"event\":{{\"ty", n + 1).into_bytes();
    let mut earlier_record = base.line(n - 1).to_vec();
    earlier_record.pop();
    let appended: [(&str, Vec<u8>, Outcome); 9] = [
        (
            "garbage line",
            b"garbage\n".to_vec(),
            Outcome::Corrupt { line: n + 1 },
        ),
        (
            "garbage without a newline",
            b"garbage".to_vec(),
            Outcome::Corrupt { line: n + 1 },
        ),
        (
            "an empty line",
            b"\n".to_vec(),
            Outcome::Corrupt { line: n + 1 },
        ),
        (
            "an earlier record without its newline",
            earlier_record,
            Outcome::Corrupt { line: n + 1 },
        ),
        (
            "the start of the next record",
            next_header.clone(),
            Outcome::Recovered {
                kept: n as u64,
                truncated: next_header.len() as u64,
            },
        ),
        (
            "a NUL run",
            vec![0; 4096],
            Outcome::Recovered {
                kept: n as u64,
                truncated: 4096,
            },
        ),
        (
            "a NUL run ending in a newline",
            [&[0u8; 512][..], b"\n"].concat(),
            Outcome::Corrupt { line: n + 1 },
        ),
        (
            "a NUL run followed by the next record",
            [&[0u8; 512][..], &next_header].concat(),
            Outcome::Corrupt { line: n + 1 },
        ),
        (
            "the next record's start, a NUL run, then more bytes",
            [&next_header[..], &[0u8; 512], b"pe\":1"].concat(),
            Outcome::Corrupt { line: n + 1 },
        ),
    ];
    for (name, tail, outcome) in appended {
        case(
            format!("appended: {name}"),
            [&base.bytes[..], &tail].concat(),
            outcome,
        );
    }
    cases
}

/// Runs one case through both readers and says how they disagreed with the row, if they did.
fn check(dir: &Path, index: usize, case: &Case) -> Result<(), String> {
    let path = session_log_path(dir, &format!("case-{index}"));
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(&path, &case.bytes).unwrap();
    let read = EventLog::read_records(&path);
    match (case.outcome, read) {
        (Outcome::Recovered { kept, .. }, Ok(records)) if records.len() as u64 == kept => {}
        (Outcome::Corrupt { line }, Err(EventLogError::Corrupt { line: got, .. }))
            if got == line => {}
        (_, other) => return Err(format!("read_records gave {other:?}")),
    }
    if fs::read(&path).unwrap() != case.bytes {
        return Err("read_records changed the file".into());
    }
    match (case.outcome, EventLog::open(&path)) {
        (Outcome::Recovered { kept, truncated }, Ok((log, recovery))) => {
            if recovery.last_seq != kept || recovery.truncated_bytes != truncated {
                return Err(format!("open recovered {recovery:?}"));
            }
            // What is left is a sound log that the next append continues.
            let seq = log.append(&json!({"after": "recovery"})).unwrap();
            drop(log);
            let records = EventLog::read_records(&path).map_err(|e| e.to_string())?;
            if seq != kept + 1 || records.len() as u64 != kept + 1 {
                return Err(format!("append after recovery got seq {seq}"));
            }
        }
        (Outcome::Corrupt { line }, Err(EventLogError::Corrupt { line: got, .. }))
            if got == line =>
        {
            if fs::read(&path).unwrap() != case.bytes {
                return Err("open changed a corrupt file".into());
            }
        }
        (_, Err(other)) => return Err(format!("open gave {other:?}")),
        (_, Ok((_, recovery))) => return Err(format!("open recovered {recovery:?}")),
    }
    Ok(())
}

#[test]
fn every_damaged_log_is_recovered_or_reported_as_the_corpus_says() {
    let dir = tempfile::tempdir().unwrap();
    let base = Base::write(dir.path());
    let cases = corpus(&base);
    let failures: Vec<String> = cases
        .iter()
        .enumerate()
        .filter_map(|(i, case)| {
            check(dir.path(), i, case)
                .err()
                .map(|why| format!("{}: expected {:?}: {why}", case.name, case.outcome))
        })
        .collect();
    let recovered = cases
        .iter()
        .filter(|c| matches!(c.outcome, Outcome::Recovered { .. }))
        .count();
    eprintln!(
        "log corpus: {} cases ({recovered} recovered, {} corrupt)",
        cases.len(),
        cases.len() - recovered
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_message_names_the_file_the_line_and_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let base = Base::write(dir.path());
    let path = session_log_path(dir.path(), "base");
    let mut bytes = base.bytes.clone();
    let last = base.starts[base.lines() - 1];
    bytes[last + 20] ^= 1;
    fs::write(&path, &bytes).unwrap();
    let message = EventLog::open(&path).unwrap_err().to_string();
    for part in ["events.jsonl", "line 4", "checksum", "move it aside"] {
        assert!(message.contains(part), "{part:?} missing from: {message}");
    }
}

/// Opening reads the tail only: damage far before it is left to readers of the history, while
/// a last line larger than the checked window is still checked whole.
#[test]
fn open_checks_the_tail_and_reading_history_checks_every_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = session_log_path(dir.path(), "long");
    {
        let (log, _) = EventLog::open(&path).unwrap();
        for n in 0..12 {
            log.append(&json!({"n": n, "pad": "x".repeat(20_000)}))
                .unwrap();
        }
        log.append(&json!({"last": "y".repeat(200_000)})).unwrap();
    }
    let good = fs::read(&path).unwrap();
    let second = good.iter().position(|b| *b == b'\n').unwrap() + 1;

    let mut early = good.clone();
    early[second + 30] ^= 1;
    fs::write(&path, &early).unwrap();
    let (_, recovery) = EventLog::open(&path).unwrap();
    assert_eq!(recovery.last_seq, 13);
    assert!(matches!(
        EventLog::read_records(&path),
        Err(EventLogError::Corrupt { line: 2, .. })
    ));

    let mut late = good.clone();
    let last_line = good.len() - 100_000;
    late[last_line] ^= 1;
    fs::write(&path, &late).unwrap();
    assert!(matches!(
        EventLog::open(&path),
        Err(EventLogError::Corrupt { line: 13, .. })
    ));
}
