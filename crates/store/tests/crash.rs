//! Durability under SIGKILL: a writer process loops publishing artifacts and appending events
//! that reference them, printing each acknowledged seq; the parent kills it at a random instant
//! and checks, after reopening, that nothing acknowledged was lost and no partial artifact sits
//! under a final name.
//!
//! The writer is this test binary re-executed with `TACKLE_CRASH_WRITER_STORE` set, running
//! only the `crash_writer_child` test, so plain `cargo test` needs nothing else built.

// A test panics on any failure; unwrap is how it reports one.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::json;
use tackle_store::{ArtifactId, ArtifactStore, Durability, EventLog, hash_file, session_log_path};

const WRITER_ENV: &str = "TACKLE_CRASH_WRITER_STORE";
const ITERATIONS: usize = 200;
/// A fresh store every this many kills, so verification stays cheap as artifacts accumulate.
const KILLS_PER_STORE: usize = 20;

/// The writer process: this test binary re-run with `WRITER_ENV` set, looping until killed.
fn run_writer(store_dir: &Path) -> ! {
    let store = std::sync::Arc::new(ArtifactStore::open(store_dir).unwrap());
    let (log, _) = EventLog::open(&session_log_path(store_dir, "crash")).unwrap();
    let for_log = std::sync::Arc::clone(&store);
    log.set_before_sync(move || for_log.sync_written());
    let mut rng = seed();
    let mut stdout = std::io::stdout().lock();
    for n in 0u64.. {
        let guard = store.publication_guard().unwrap();
        // Half the calls are read-only: their artifacts and events are acknowledged once
        // written and synced later; a killed process loses neither kind.
        let durability = if n % 2 == 0 {
            Durability::Synced
        } else {
            Durability::Written
        };
        let mut capture = store.begin_capture_with(durability).unwrap();
        // Mostly small outputs (held in memory until publication), one in four large enough to
        // spill into a locked temp file.
        let len = if next(&mut rng).is_multiple_of(4) {
            (next(&mut rng) % 600_000) as usize
        } else {
            (next(&mut rng) % 16_000) as usize
        };
        let mut chunk = vec![0u8; 4096];
        let mut written = 0;
        while written < len {
            let take = chunk.len().min(len - written);
            for b in &mut chunk[..take] {
                *b = (next(&mut rng) % 96 + 32) as u8;
            }
            capture.write(&chunk[..take]).unwrap();
            written += take;
        }
        let info = capture.finish().unwrap();
        let seq = log
            .append_with(
                &json!({"type": "call_finished", "n": n, "retained_output": info.id.internal_uri()}),
                durability,
            )
            .unwrap();
        drop(guard);
        use std::io::Write;
        writeln!(stdout, "ACK {seq} {}", info.id).unwrap();
        stdout.flush().unwrap();
    }
    unreachable!("the writer loops until it is killed")
}

#[test]
fn acknowledged_events_and_artifacts_survive_sigkill() {
    if let Some(store_dir) = std::env::var_os(WRITER_ENV) {
        run_writer(Path::new(&store_dir));
    }
    let started = Instant::now();
    let exe = std::env::current_exe().unwrap();
    let mut rng = seed();
    let mut dir = tempfile::tempdir().unwrap();
    let mut acknowledged: BTreeMap<u64, ArtifactId> = BTreeMap::new();
    let mut total_acks = 0;
    let mut torn_tails = 0;
    for iteration in 0..ITERATIONS {
        if iteration % KILLS_PER_STORE == 0 {
            dir = tempfile::tempdir().unwrap();
            acknowledged.clear();
        }
        let mut child = Command::new(&exe)
            .args([
                "--exact",
                "acknowledged_events_and_artifacts_survive_sigkill",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(WRITER_ENV, dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        // Wait for the first acknowledgement so every kill lands inside the write loop, then a
        // random extra delay. This only picks the kill instant; nothing waits on it for order.
        let mut line = String::new();
        let mut first = Vec::new();
        loop {
            line.clear();
            if stdout.read_line(&mut line).unwrap() == 0 {
                panic!("writer exited before acknowledging anything");
            }
            if line.starts_with("ACK ") {
                first.push(line.clone());
                break;
            }
        }
        std::thread::sleep(Duration::from_micros(next(&mut rng) % 20_000));
        child.kill().unwrap(); // SIGKILL
        let mut rest = String::new();
        stdout.read_to_string(&mut rest).unwrap();
        child.wait().unwrap();

        for line in first.iter().map(String::as_str).chain(rest.lines()) {
            let Some(ack) = line.strip_prefix("ACK ") else {
                continue;
            };
            let (seq, id) = ack.trim().split_once(' ').unwrap();
            let id = ArtifactId::from_hex(id).unwrap();
            acknowledged.insert(seq.parse().unwrap(), id);
            total_acks += 1;
        }

        // The log opens, with any torn tail cut off, and holds every acknowledged event.
        let log_path = session_log_path(dir.path(), "crash");
        let (log, recovery) = EventLog::open(&log_path).unwrap();
        if recovery.truncated_bytes > 0 {
            torn_tails += 1;
        }
        // A SIGKILL leaves at most a torn final line: every complete line checks out.
        let records: BTreeMap<u64, _> = EventLog::read_records(&log_path)
            .unwrap()
            .into_iter()
            .map(|r| (r.seq, r.event))
            .collect();
        for (seq, id) in &acknowledged {
            let event = records.get(seq).unwrap_or_else(|| {
                panic!("iteration {iteration}: acknowledged seq {seq} missing after SIGKILL")
            });
            assert_eq!(event["retained_output"], id.internal_uri());
        }
        assert_eq!(recovery.last_seq, records.len() as u64);
        drop(log);

        // Every file under a final name hashes to that name.
        let store = ArtifactStore::open(dir.path()).unwrap();
        for artifact in store.list().unwrap() {
            let actual = hash_file(&store.artifact_path(artifact.id)).unwrap();
            assert_eq!(
                actual, artifact.id,
                "iteration {iteration}: partial artifact published"
            );
        }
        for id in acknowledged.values() {
            assert!(store.contains(*id), "acknowledged artifact {id} missing");
        }
    }
    eprintln!(
        "crash test: {ITERATIONS} kills, {total_acks} acknowledged appends, {torn_tails} torn tails, {:?}",
        started.elapsed()
    );
    assert!(total_acks >= ITERATIONS);
}

fn seed() -> u64 {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    (nanos ^ u64::from(std::process::id()).rotate_left(32)) | 1
}

/// xorshift64*: enough randomness to pick sizes and kill instants.
fn next(state: &mut u64) -> u64 {
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    state.wrapping_mul(0x2545_f491_4f6c_dd1d)
}
