//! The fleet backends against the clients they are built on, side by side in one run, on the
//! servers `scripts/start-fleet-services` starts (a local PostgreSQL with `synchronous_commit`
//! on, and moto's S3 server):
//!
//! - event append: `PgEventLog::append` (lease-checked seq, insert, commit) and
//!   `PgEventLog::append_batch` of one event (what a session's working copy ships for a lone
//!   synced append: lease, seq, insert, references) against a bare `BEGIN; INSERT …; COMMIT`
//!   of the same row through a tokio-postgres client (target ≤ 1.2×);
//! - throughput with 16 sessions appending at once (group commit) against one session alone;
//! - artifact put and get: `S3Artifacts` (hash, create-only put; hash on first read) against the
//!   object_store client alone writing and reading the same bytes (target ≤ 1.1×).
//!
//! Rounds alternate so a drift in the machine falls on both sides.
//!
//! Run: `cargo bench -p tackle-bench --bench fleet` (`FLEET_BENCH_N` overrides N, default 1000
//! appends per side; artifact operations are N/5 per side and size).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use object_store::ObjectStoreExt;
use object_store::path::Path;
use serde_json::{Value, json};
use tackle_bench::{Stats, ratio};
use tackle_fleet::{
    Claim, DatabaseUrl, FleetDb, Lease, Leases, PgEventLog, S3Artifacts, S3Credentials, S3Settings,
};
use tackle_store::ArtifactId;

#[path = "../../fleet/tests/common/services.rs"]
mod services;

const ROUNDS: usize = 10;
const SESSIONS: usize = 16;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let n: usize = std::env::var("FLEET_BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let servers = services::services();
    let pg_url = &servers.pg_url;
    let schema = services::unique("bench");
    let admin = services::raw_client_at(pg_url).await;
    admin
        .batch_execute(&format!("CREATE SCHEMA {schema}"))
        .await
        .unwrap();
    let url = format!("{pg_url}?options=-c%20search_path%3D{schema}");
    let db = FleetDb::connect_url(DatabaseUrl::new(url.clone()), SESSIONS + 2)
        .await
        .unwrap();
    let log = PgEventLog::new(&db);
    let event = typical_event();
    println!(
        "fleet: N={n}, event {} bytes of JSON, PostgreSQL schema {schema}",
        serde_json::to_vec(&event).unwrap().len()
    );

    // --- one appender -------------------------------------------------------------------
    let lease = leased(&db, "bench").await;
    log.create_session("bare").await.unwrap();
    let bare = services::raw_client_at(&url).await;
    let insert = bare
        .prepare(
            "INSERT INTO events (session_id, seq, idem_key, payload, crc)
             VALUES ($1, $2, NULL, $3, $4)",
        )
        .await
        .unwrap();
    let mut bare_seq = 0i64;
    let mut bare_insert = async |bare: &tokio_postgres::Client| {
        bare_seq += 1;
        bare.batch_execute("BEGIN").await.unwrap();
        bare.execute(&insert, &[&"bare", &bare_seq, &event, &0i64])
            .await
            .unwrap();
        bare.batch_execute("COMMIT").await.unwrap();
    };
    // The batch a working copy ships (one event: a lone synced append), on its own session.
    let batch_lease = leased(&db, "batch").await;
    let mut batch_seq = 0u64;
    let one = [event.clone()];
    for _ in 0..50 {
        log.append(&lease, &event, None).await.unwrap();
        batch_seq += 1;
        log.append_batch(&batch_lease, batch_seq, &one)
            .await
            .unwrap();
        bare_insert(&bare).await;
    }
    let (mut fleet, mut batch, mut plain) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    for _ in 0..ROUNDS {
        for _ in 0..n / ROUNDS {
            let t = Instant::now();
            log.append(&lease, &event, None).await.unwrap();
            fleet.push(t.elapsed());
        }
        for _ in 0..n / ROUNDS {
            batch_seq += 1;
            let t = Instant::now();
            log.append_batch(&batch_lease, batch_seq, &one)
                .await
                .unwrap();
            batch.push(t.elapsed());
        }
        for _ in 0..n / ROUNDS {
            let t = Instant::now();
            bare_insert(&bare).await;
            plain.push(t.elapsed());
        }
    }
    let fleet = Stats::of(&mut fleet);
    let batch = Stats::of(&mut batch);
    let plain = Stats::of(&mut plain);
    println!("{:<40} {}", "PgEventLog::append (1 session)", fleet);
    println!("{:<40} {}", "PgEventLog::append_batch (1 event)", batch);
    println!("{:<40} {}", "BEGIN; INSERT; COMMIT (same row)", plain);
    println!(
        "ratio append / bare insert+commit:       median {:.3}x   mean {:.3}x   (target <= 1.2x)",
        ratio(fleet.median, plain.median),
        ratio(fleet.mean, plain.mean)
    );
    println!(
        "ratio append_batch / bare insert+commit: median {:.3}x   mean {:.3}x   (target <= 1.2x)",
        ratio(batch.median, plain.median),
        ratio(batch.mean, plain.mean)
    );

    // --- 16 sessions at once ------------------------------------------------------------
    let mut leases = Vec::new();
    for s in 0..SESSIONS {
        leases.push(leased(&db, &format!("group-{s}")).await);
    }
    let per_session = n / SESSIONS;
    let started = Instant::now();
    let tasks: Vec<_> = leases
        .into_iter()
        .map(|lease| {
            let (log, event) = (log.clone(), event.clone());
            tokio::spawn(async move {
                for _ in 0..per_session {
                    log.append(&lease, &event, None).await.unwrap();
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    let wall = started.elapsed();
    let total = per_session * SESSIONS;
    let group_rate = total as f64 / wall.as_secs_f64();
    let single_rate = 1.0 / fleet.mean.as_secs_f64();
    println!(
        "throughput: {SESSIONS} sessions {group_rate:.0} appends/s, one session {single_rate:.0}/s; {SESSIONS} / one {:.2}x",
        group_rate / single_rate
    );

    // --- artifacts ----------------------------------------------------------------------
    let artifacts = S3Artifacts::connect(&S3Settings {
        endpoint: Some(servers.s3_endpoint.clone()),
        bucket: servers.s3_bucket.clone(),
        region: "us-east-1".to_owned(),
        prefix: schema.clone(),
        allow_http: true,
        credentials: S3Credentials::Static {
            access_key_id: "bench".to_owned(),
            secret_access_key: "bench".to_owned(),
        },
    })
    .unwrap();
    let store = Arc::clone(artifacts.store());
    let ops = (n / 5).max(ROUNDS);
    for size in [4 * 1024, 1024 * 1024] {
        let base = noise(size);
        // Distinct contents, so every put is a real write and every get a first read.
        let content = |i: usize, side: u8| {
            let mut bytes = base.clone();
            bytes[..8].copy_from_slice(&(i as u64).to_le_bytes());
            bytes[8] = side;
            Bytes::from(bytes)
        };
        for i in 0..5 {
            artifacts.put(content(i, 2)).await.unwrap();
            store
                .put(
                    &Path::from(format!("{schema}/plain/warm-{i}")),
                    content(i, 3).into(),
                )
                .await
                .unwrap();
        }
        let (mut put_fleet, mut put_plain) = (Vec::new(), Vec::new());
        let (mut ids, mut keys) = (Vec::new(), Vec::new());
        for round in 0..ROUNDS {
            for j in 0..ops / ROUNDS {
                let i = round * ops + j;
                let bytes = content(i, 0);
                let t = Instant::now();
                let put = artifacts.put(bytes).await.unwrap();
                put_fleet.push(t.elapsed());
                ids.push(put.id);
            }
            for j in 0..ops / ROUNDS {
                let i = round * ops + j;
                let bytes = content(i, 1);
                let key = Path::from(format!("{schema}/plain/{i}"));
                let t = Instant::now();
                store.put(&key, bytes.into()).await.unwrap();
                put_plain.push(t.elapsed());
                keys.push(key);
            }
        }
        let (mut get_fleet, mut get_plain) = (Vec::new(), Vec::new());
        let per_round = ops / ROUNDS;
        for round in 0..ROUNDS {
            for id in &ids[round * per_round..(round + 1) * per_round] {
                let t = Instant::now();
                let bytes = artifacts.get(*id).await.unwrap();
                get_fleet.push(t.elapsed());
                assert_eq!(ArtifactId::of(&bytes), *id);
            }
            for key in &keys[round * per_round..(round + 1) * per_round] {
                let t = Instant::now();
                let bytes = store.get(key).await.unwrap().bytes().await.unwrap();
                get_plain.push(t.elapsed());
                assert_eq!(bytes.len(), size);
            }
        }
        let label = if size >= 1024 * 1024 {
            format!("{} MiB", size / (1024 * 1024))
        } else {
            format!("{} KiB", size / 1024)
        };
        let (pf, pp) = (Stats::of(&mut put_fleet), Stats::of(&mut put_plain));
        let (gf, gp) = (Stats::of(&mut get_fleet), Stats::of(&mut get_plain));
        println!("{:<40} {}", format!("S3Artifacts::put {label}"), pf);
        println!("{:<40} {}", format!("object_store put {label}"), pp);
        println!(
            "ratio put {label}:                        median {:.3}x   mean {:.3}x   (target <= 1.1x)",
            ratio(pf.median, pp.median),
            ratio(pf.mean, pp.mean)
        );
        println!(
            "{:<40} {}",
            format!("S3Artifacts::get {label} (first read)"),
            gf
        );
        println!("{:<40} {}", format!("object_store get {label}"), gp);
        println!(
            "ratio get {label}:                        median {:.3}x   mean {:.3}x   (target <= 1.1x)",
            ratio(gf.median, gp.median),
            ratio(gf.mean, gp.mean)
        );
    }
    admin
        .batch_execute(&format!("DROP SCHEMA {schema} CASCADE"))
        .await
        .unwrap();
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

async fn leased(db: &FleetDb, session: &str) -> Lease {
    PgEventLog::new(db).create_session(session).await.unwrap();
    match Leases::new(db)
        .claim(session, "bench", Duration::from_secs(3600))
        .await
        .unwrap()
    {
        Claim::Granted(lease) => lease,
        held => panic!("{held:?}"),
    }
}

/// Deterministic bytes that do not compress.
fn noise(len: usize) -> Vec<u8> {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect()
}
