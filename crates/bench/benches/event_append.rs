//! Event append vs the floor it is built on: `write` of the same-size line plus `fdatasync` on
//! an `O_APPEND` file, measured side by side in one run on the same filesystem (the target
//! directory, not tmpfs), then the same with 8 threads to show group commit.
//!
//! Last, the cost of tagging: written-only appends (no `fdatasync`, where the tag's HMAC is the
//! largest share of the work) to a log opened with `EventLog::open_sealed` beside one opened
//! untagged.
//!
//! Run: `cargo bench -p tackle-bench --bench event_append` (`EVENT_APPEND_N` overrides N).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tackle_bench::{Stats, ratio};

use serde_json::{Value, json};
use tackle_store::{Durability, EventLog, LogKey, LogSeal};

const THREADS: usize = 8;
const ROUNDS: usize = 10;

fn main() {
    let n: usize = std::env::var("EVENT_APPEND_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000);
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let event = typical_event();
    let line = same_size_line(dir.path(), &event);
    println!(
        "event append: N={n}, record {} bytes, dir {}",
        line.len(),
        dir.path().display()
    );

    let (log, _) = EventLog::open(&dir.path().join("seq/events.jsonl")).unwrap();
    let raw = open_append(&dir.path().join("raw.jsonl"));
    // Warm up both paths (allocation of the first blocks, page cache).
    for _ in 0..50 {
        log.append(&event).unwrap();
        raw_append(&raw, &line);
    }

    // Alternate rounds so drift in the device affects both sides alike.
    let mut tackle = Vec::with_capacity(n);
    let mut bare = Vec::with_capacity(n);
    for _ in 0..ROUNDS {
        for _ in 0..n / ROUNDS {
            let t = Instant::now();
            log.append(&event).unwrap();
            tackle.push(t.elapsed());
        }
        for _ in 0..n / ROUNDS {
            let t = Instant::now();
            raw_append(&raw, &line);
            bare.push(t.elapsed());
        }
    }
    let tackle = Stats::of(&mut tackle);
    let bare = Stats::of(&mut bare);
    println!("{:<34} {}", "EventLog::append (1 thread)", tackle);
    println!("{:<34} {}", "write + fdatasync (1 thread)", bare);
    println!(
        "ratio append / write+fdatasync:    median {:.3}x   mean {:.3}x",
        ratio(tackle.median, bare.median),
        ratio(tackle.mean, bare.mean)
    );

    // 8 threads: group commit vs every thread paying its own fdatasync.
    let log = Arc::new(
        EventLog::open(&dir.path().join("group/events.jsonl"))
            .unwrap()
            .0,
    );
    let (group_wall, mut group) = threaded(n, {
        let log = Arc::clone(&log);
        let event = event.clone();
        move || {
            log.append(&event).unwrap();
        }
    });
    let raw = Arc::new(open_append(&dir.path().join("raw-threads.jsonl")));
    let (bare_wall, mut bare_threads) = threaded(n, {
        let raw = Arc::clone(&raw);
        move || raw_append(&raw, &line)
    });
    let group = Stats::of(&mut group);
    let bare_threads = Stats::of(&mut bare_threads);
    println!("{:<34} {}", "EventLog::append (8 threads)", group);
    println!("{:<34} {}", "write + fdatasync (8 threads)", bare_threads);
    let ops = |wall: Duration| n as f64 / wall.as_secs_f64();
    println!(
        "throughput: group commit {:.0} appends/s, bare 8 threads {:.0} writes/s, sequential append {:.0}/s; group / sequential {:.2}x",
        ops(group_wall),
        ops(bare_wall),
        1.0 / tackle.mean.as_secs_f64(),
        ops(group_wall) * tackle.mean.as_secs_f64()
    );

    // Tagged against untagged, written only, alternating rounds.
    let untagged = EventLog::open(&dir.path().join("untagged/events.jsonl"))
        .unwrap()
        .0;
    let seal = LogSeal::new(
        &LogKey::from_bytes(&[7; 32]),
        "20260102T030405Z-0123456789abcdef",
    );
    let tagged = EventLog::open_sealed(&dir.path().join("tagged/events.jsonl"), seal)
        .unwrap()
        .0;
    let written = n * 10;
    let (mut plain, mut sealed) = (Vec::with_capacity(written), Vec::with_capacity(written));
    for _ in 0..ROUNDS {
        for (log, into) in [(&untagged, &mut plain), (&tagged, &mut sealed)] {
            for _ in 0..written / ROUNDS {
                let t = Instant::now();
                log.append_with(&event, Durability::Written).unwrap();
                into.push(t.elapsed());
            }
        }
    }
    let plain = Stats::of(&mut plain);
    let sealed = Stats::of(&mut sealed);
    println!("{:<34} {}", "append, written only, untagged", plain);
    println!("{:<34} {}", "append, written only, tagged", sealed);
    println!(
        "ratio tagged / untagged:           median {:.3}x   mean {:.3}x",
        ratio(sealed.median, plain.median),
        ratio(sealed.mean, plain.mean)
    );
}

fn typical_event() -> Value {
    json!({
        "type": "call_finished",
        "call_id": "toolu_01A09q90qw90lq917835lq9",
        "tool": "bash",
        "status": "ok",
        "duration_ms": 412,
        "retained_output": [{
            "stream": "stdout",
            "artifact": "artifact://sha256/2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae",
            "bytes": 18234,
            "lines": 311
        }],
        "label": {"trust": "trusted", "privacy": "private"}
    })
}

/// A newline-terminated line as long as the record `EventLog` writes for `event`.
fn same_size_line(dir: &Path, event: &Value) -> Vec<u8> {
    let path = dir.join("probe/events.jsonl");
    let (log, _) = EventLog::open(&path).unwrap();
    log.append(event).unwrap();
    let len = std::fs::metadata(&path).unwrap().len() as usize;
    let mut line = vec![b'x'; len - 1];
    line.push(b'\n');
    line
}

fn open_append(path: &Path) -> File {
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap()
}

fn raw_append(file: &File, line: &[u8]) {
    let mut f = file;
    f.write_all(line).unwrap();
    file.sync_data().unwrap();
}

/// Runs `op` `n` times spread over `THREADS` threads; returns wall time and per-op latencies.
fn threaded(n: usize, op: impl Fn() + Send + Sync + Clone + 'static) -> (Duration, Vec<Duration>) {
    let start = Instant::now();
    let handles: Vec<_> = (0..THREADS)
        .map(|_| {
            let op = op.clone();
            std::thread::spawn(move || {
                (0..n / THREADS)
                    .map(|_| {
                        let t = Instant::now();
                        op();
                        t.elapsed()
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut all = Vec::with_capacity(n);
    for handle in handles {
        all.extend(handle.join().unwrap());
    }
    (start.elapsed(), all)
}
