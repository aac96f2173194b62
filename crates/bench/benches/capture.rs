//! Output capture vs the SHA-256 floor: a tool writing 64 KiB chunks into a `Capture` (temp
//! file, incremental hash, counts, fsync, publish) against hashing the same bytes in memory.
//!
//! Run: `cargo bench -p tackle-bench --bench capture` (`CAPTURE_MIB` overrides the size).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Instant;

use sha2::{Digest, Sha256};
use tackle_store::ArtifactStore;

const CHUNK: usize = 64 * 1024;

fn main() {
    let mib: usize = std::env::var("CAPTURE_MIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1024);
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let store = ArtifactStore::open(dir.path()).unwrap();
    // Text-like content with newlines, varied so pages are not trivially compressible.
    let chunk: Vec<u8> = (0..CHUNK)
        .map(|i| {
            if i % 80 == 79 {
                b'\n'
            } else {
                b' ' + (i * 7 % 90) as u8
            }
        })
        .collect();
    let chunks = mib * 1024 * 1024 / CHUNK;
    let total = (chunks * CHUNK) as f64 / (1024.0 * 1024.0);

    let t = Instant::now();
    let mut hasher = Sha256::new();
    for i in 0..chunks {
        hasher.update(&chunk);
        hasher.update((i as u64).to_le_bytes());
    }
    std::hint::black_box(hasher.finalize());
    let floor = t.elapsed();

    // Device floor: the same bytes written to a plain file and fsynced, no hashing.
    let t = Instant::now();
    {
        use std::io::Write;
        let mut file = std::fs::File::create(dir.path().join("plain")).unwrap();
        for i in 0..chunks {
            file.write_all(&chunk).unwrap();
            file.write_all(&(i as u64).to_le_bytes()).unwrap();
        }
        file.sync_all().unwrap();
    }
    let device = t.elapsed();
    std::fs::remove_file(dir.path().join("plain")).unwrap();

    let t = Instant::now();
    let mut capture = store.begin_capture().unwrap();
    for i in 0..chunks {
        capture.write(&chunk).unwrap();
        capture.write(&(i as u64).to_le_bytes()).unwrap();
    }
    let written = t.elapsed();
    let info = capture.finish().unwrap();
    let captured = t.elapsed();

    let mibps = |d: std::time::Duration| total / d.as_secs_f64();
    println!(
        "capture: {mib} MiB in 64 KiB chunks, dir {}",
        dir.path().display()
    );
    println!(
        "sha256 in memory (hash floor)   {floor:>8.1?}  {:>6.0} MiB/s",
        mibps(floor)
    );
    println!(
        "plain write + fsync (device)    {device:>8.1?}  {:>6.0} MiB/s",
        mibps(device)
    );
    println!(
        "Capture write + finish          {captured:>8.1?}  {:>6.0} MiB/s",
        mibps(captured)
    );
    println!(
        "  of which writes {written:.1?} ({:.0} MiB/s), finish (fsync + publish) {:.1?}",
        mibps(written),
        captured - written
    );
    println!(
        "ratio capture / hash floor {:.2}x; capture / max(hash, device) {:.2}x",
        captured.as_secs_f64() / floor.as_secs_f64(),
        captured.as_secs_f64() / floor.max(device).as_secs_f64()
    );
    println!(
        "artifact {} ({} bytes, {} newlines)",
        info.id, info.bytes, info.newlines
    );
}
