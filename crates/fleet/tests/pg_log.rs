//! The event log, leases, schema and peers against a real PostgreSQL
//! (scripts/start-fleet-services), each test in a schema of its own.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tackle_fleet::{
    Claim, DatabaseUrl, FleetDb, FleetDbSettings, FleetError, Lease, Leases, Peers, PgEventLog,
    SCHEMA_VERSION,
};

const MINUTE: Duration = Duration::from_secs(60);

async fn leased(db: &FleetDb, session: &str, owner: &str) -> Lease {
    PgEventLog::new(db).create_session(session).await.unwrap();
    match Leases::new(db).claim(session, owner, MINUTE).await.unwrap() {
        Claim::Granted(lease) => lease,
        held => panic!("expected a grant, got {held:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixteen_concurrent_appenders_to_one_session_get_gapless_seqs_in_commit_order() {
    let (db, _) = common::fresh_db(16).await;
    let lease = leased(&db, "s1", "daemon-a").await;
    let log = PgEventLog::new(&db);
    let barrier = Arc::new(tokio::sync::Barrier::new(16));
    let tasks: Vec<_> = (0..16)
        .map(|t| {
            let (log, lease, barrier) = (log.clone(), lease.clone(), Arc::clone(&barrier));
            tokio::spawn(async move {
                barrier.wait().await;
                let mut seqs = Vec::new();
                for i in 0..25 {
                    let appended = log
                        .append(&lease, &json!({"task": t, "i": i}), None)
                        .await
                        .unwrap();
                    assert!(!appended.duplicate);
                    seqs.push(appended.seq);
                }
                seqs
            })
        })
        .collect();
    let mut all = HashSet::new();
    for task in tasks {
        let seqs = task.await.unwrap();
        assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");
        all.extend(seqs);
    }
    assert_eq!(all, (1..=400).collect::<HashSet<u64>>());
    assert_eq!(log.last_seq("s1").await.unwrap(), 400);
    let records = log.read_from("s1", 1, 1000).await.unwrap();
    assert_eq!(records.len(), 400);
    let mut per_task: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for (i, record) in records.iter().enumerate() {
        assert_eq!(record.seq, i as u64 + 1);
        per_task
            .entry(record.event["task"].as_u64().unwrap())
            .or_default()
            .push(record.event["i"].as_u64().unwrap());
    }
    for (task, order) in per_task {
        assert_eq!(order, (0..25).collect::<Vec<_>>(), "task {task} reordered");
    }
    // Reading from the middle starts there.
    let tail = log.read_from("s1", 391, 100).await.unwrap();
    assert_eq!(
        tail.iter().map(|r| r.seq).collect::<Vec<_>>(),
        (391..=400).collect::<Vec<_>>()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixteen_sessions_appending_at_once_each_keep_their_own_gapless_log() {
    let (db, _) = common::fresh_db(16).await;
    let mut leases = Vec::new();
    for s in 0..16 {
        leases.push(leased(&db, &format!("s{s}"), "daemon-a").await);
    }
    let log = PgEventLog::new(&db);
    let tasks: Vec<_> = leases
        .into_iter()
        .map(|lease| {
            let log = log.clone();
            tokio::spawn(async move {
                for i in 0..20u64 {
                    let appended = log.append(&lease, &json!({"i": i}), None).await.unwrap();
                    assert_eq!(appended.seq, i + 1);
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    for s in 0..16 {
        let records = log.read_from(&format!("s{s}"), 1, 100).await.unwrap();
        let seqs: Vec<u64> = records.iter().map(|r| r.seq).collect();
        assert_eq!(seqs, (1..=20).collect::<Vec<_>>());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retried_append_answers_the_first_seq_and_leaves_no_gap() {
    let (db, _) = common::fresh_db(8).await;
    let lease = leased(&db, "s1", "daemon-a").await;
    let log = PgEventLog::new(&db);
    let first = log
        .append(&lease, &json!({"n": 1}), Some("k1"))
        .await
        .unwrap();
    assert_eq!((first.seq, first.duplicate), (1, false));
    let second = log
        .append(&lease, &json!({"n": 2}), Some("k2"))
        .await
        .unwrap();
    assert_eq!(second.seq, 2);
    let retry = log
        .append(&lease, &json!({"n": 1}), Some("k1"))
        .await
        .unwrap();
    assert_eq!((retry.seq, retry.duplicate), (1, true));
    let third = log.append(&lease, &json!({"n": 3}), None).await.unwrap();
    assert_eq!(third.seq, 3, "the retry gave its seq back");
    assert_eq!(log.read_from("s1", 1, 10).await.unwrap().len(), 3);

    // Eight retries of one key racing each other: one write, one seq.
    let barrier = Arc::new(tokio::sync::Barrier::new(8));
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let (log, lease, barrier) = (log.clone(), lease.clone(), Arc::clone(&barrier));
            tokio::spawn(async move {
                barrier.wait().await;
                log.append(&lease, &json!({"n": 4}), Some("k4"))
                    .await
                    .unwrap()
            })
        })
        .collect();
    let mut outcomes = Vec::new();
    for task in tasks {
        outcomes.push(task.await.unwrap());
    }
    assert_eq!(
        outcomes.iter().filter(|a| !a.duplicate).count(),
        1,
        "{outcomes:?}"
    );
    assert!(outcomes.iter().all(|a| a.seq == 4), "{outcomes:?}");
    assert_eq!(log.last_seq("s1").await.unwrap(), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_is_taken_over_after_expiry_and_the_first_owner_is_fenced() {
    let (db, _) = common::fresh_db(4).await;
    let log = PgEventLog::new(&db);
    let leases = Leases::new(&db);
    log.create_session("s1").await.unwrap();

    // A live lease makes a second claimant wait for its expiry.
    let live = match leases.claim("s1", "daemon-a", MINUTE).await.unwrap() {
        Claim::Granted(lease) => lease,
        other => panic!("{other:?}"),
    };
    assert_eq!(live.epoch(), 1);
    match leases.claim("s1", "daemon-b", MINUTE).await.unwrap() {
        Claim::Held { owner, until } => {
            assert_eq!(owner, "daemon-a");
            assert_eq!(until, live.until());
        }
        other => panic!("a live lease was taken: {other:?}"),
    }
    log.append(&live, &json!({"by": "a"}), None).await.unwrap();

    // Daemon A renews with no time left (as a daemon that stops renewing ends up): expired.
    let expired = leases.renew(&live, Duration::ZERO).await.unwrap();
    assert_eq!(expired.epoch(), 1);
    let taken = match leases.claim("s1", "daemon-b", MINUTE).await.unwrap() {
        Claim::Granted(lease) => lease,
        other => panic!("an expired lease was not taken over: {other:?}"),
    };
    assert_eq!(taken.epoch(), 2, "every takeover increments the epoch");

    // A comes back: every write under its old epoch is refused, by type.
    for (what, result) in [
        (
            "append",
            log.append(&expired, &json!({"by": "a, stale"}), None)
                .await
                .map(|_| ()),
        ),
        ("renew", leases.renew(&expired, MINUTE).await.map(|_| ())),
        ("release", leases.release(expired.clone()).await),
    ] {
        match result {
            Err(FleetError::Fenced {
                session,
                held,
                current,
                owner,
            }) => {
                assert_eq!(
                    (session.as_str(), held, current, owner.as_str()),
                    ("s1", 1, 2, "daemon-b"),
                    "{what}"
                );
            }
            other => panic!("{what} under a fenced lease: {other:?}"),
        }
    }
    let appended = log.append(&taken, &json!({"by": "b"}), None).await.unwrap();
    assert_eq!(appended.seq, 2, "the refused append took no seq");
    let by: Vec<_> = log
        .read_from("s1", 1, 10)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.event["by"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(by, ["a", "b"]);

    // A release lets the next claim in at once, again under a new epoch.
    leases.release(taken).await.unwrap();
    match leases.claim("s1", "daemon-c", MINUTE).await.unwrap() {
        Claim::Granted(lease) => assert_eq!(lease.epoch(), 3),
        other => panic!("{other:?}"),
    }
    match leases.claim("nobody", "daemon-c", MINUTE).await {
        Err(FleetError::UnknownSession { session }) => assert_eq!(session, "nobody"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_claimants_racing_for_one_expired_session_get_one_grant() {
    let (db, _) = common::fresh_db(8).await;
    PgEventLog::new(&db).create_session("s1").await.unwrap();
    let barrier = Arc::new(tokio::sync::Barrier::new(8));
    let tasks: Vec<_> = (0..8)
        .map(|i| {
            let (leases, barrier) = (Leases::new(&db), Arc::clone(&barrier));
            tokio::spawn(async move {
                barrier.wait().await;
                leases
                    .claim("s1", &format!("daemon-{i}"), MINUTE)
                    .await
                    .unwrap()
            })
        })
        .collect();
    let mut granted = 0;
    for task in tasks {
        if let Claim::Granted(lease) = task.await.unwrap() {
            assert_eq!(lease.epoch(), 1);
            granted += 1;
        }
    }
    assert_eq!(granted, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_row_is_reported_corrupt_naming_its_session_and_seq() {
    let (db, url) = common::fresh_db(2).await;
    let lease = leased(&db, "s1", "daemon-a").await;
    let log = PgEventLog::new(&db);
    for n in 0..3 {
        log.append(&lease, &json!({"n": n, "text": "kept"}), None)
            .await
            .unwrap();
    }
    let raw = common::raw_client_at(&url).await;
    raw.execute(
        "UPDATE events SET payload = jsonb_set(payload, '{text}', '\"changed\"') WHERE seq = 2",
        &[],
    )
    .await
    .unwrap();
    match log.read_from("s1", 1, 10).await {
        Err(e @ FleetError::Corrupt { .. }) => {
            let text = e.to_string();
            assert!(text.contains("event 2 of session s1"), "{text}");
        }
        other => panic!("{other:?}"),
    }
    // A missing row is a gap, not a short read.
    raw.execute("DELETE FROM events WHERE seq = 2", &[])
        .await
        .unwrap();
    match log.read_from("s1", 1, 10).await {
        Err(FleetError::Gap {
            expected: 2,
            found: 3,
            ..
        }) => {}
        other => panic!("{other:?}"),
    }
    // An event jsonb cannot hold is refused before it is sent, with the fix.
    match log.append(&lease, &json!({"text": "nul\0"}), None).await {
        Err(FleetError::EventRefused { reason }) => assert!(reason.contains("U+0000"), "{reason}"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrations_apply_once_and_a_newer_schema_is_refused_naming_both_versions() {
    let url = common::fresh_schema_url().await;
    let first = FleetDb::connect_url(DatabaseUrl::new(url.clone()), 2)
        .await
        .unwrap();
    assert_eq!(first.schema().found, 0);
    assert_eq!(
        first.schema().applied,
        (1..=SCHEMA_VERSION).collect::<Vec<_>>()
    );

    // Daemons starting together: one migrates, the others find it done.
    let starts: Vec<_> = (0..4)
        .map(|_| {
            let url = url.clone();
            tokio::spawn(async move {
                FleetDb::connect_url(DatabaseUrl::new(url), 1)
                    .await
                    .unwrap()
            })
        })
        .collect();
    for start in starts {
        let db = start.await.unwrap();
        assert_eq!(db.schema().found, SCHEMA_VERSION);
        assert!(db.schema().applied.is_empty());
    }

    let raw = common::raw_client_at(&url).await;
    let newer = SCHEMA_VERSION + 1;
    raw.execute(
        "INSERT INTO tackle_fleet_schema (version, name) VALUES ($1, 'from a newer tackle')",
        &[&newer],
    )
    .await
    .unwrap();
    match FleetDb::connect_url(DatabaseUrl::new(url), 1).await {
        Err(e @ FleetError::SchemaTooNew { .. }) => {
            let text = e.to_string();
            assert!(
                text.contains(&format!("version {newer}"))
                    && text.contains(&format!("version {SCHEMA_VERSION}")),
                "{text}"
            );
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_password_never_appears_in_errors_or_debug_output() {
    const SECRET: &str = "hunter2-never-shown";
    let base = &common::services().pg_url;
    // The test cluster trusts every local user, so a password is accepted and ignored.
    let with_password = base.replacen(
        "postgres://postgres@",
        &format!("postgres://postgres:{SECRET}@"),
        1,
    );
    assert_ne!(&with_password, base);
    let db = FleetDb::connect_url(DatabaseUrl::new(with_password.clone()), 1)
        .await
        .unwrap();
    let shown = format!("{db:?} {} {:?}", db.url(), db.url());
    assert!(!shown.contains(SECRET), "{shown}");
    assert!(shown.contains("postgres:***@"), "{shown}");

    // Nothing listens on port 1: the connection error names the redacted URL only.
    let unreachable =
        format!("postgres://postgres:{SECRET}@127.0.0.1:1/postgres?connect_timeout=5");
    let err = FleetDb::connect_url(DatabaseUrl::new(unreachable), 1)
        .await
        .unwrap_err();
    let shown = format!("{err} {err:?}");
    assert!(!shown.contains(SECRET), "{shown}");
    assert!(
        shown.contains("cannot connect") && shown.contains("postgres:***@127.0.0.1:1"),
        "{shown}"
    );

    // The URL comes from the environment only; an unset variable is named with the fix.
    let settings = FleetDbSettings {
        database_url_env: "TACKLE_FLEET_TEST_URL_NEVER_SET".to_owned(),
        pool_size: 1,
    };
    match FleetDb::connect(&settings).await {
        Err(e @ FleetError::DatabaseUrlMissing { .. }) => {
            let text = e.to_string();
            assert!(
                text.contains("TACKLE_FLEET_TEST_URL_NEVER_SET is not set"),
                "{text}"
            );
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn peers_are_live_while_their_heartbeat_lasts() {
    let (db, _) = common::fresh_db(2).await;
    let peers = Peers::new(&db);
    peers
        .heartbeat("daemon-a", "10.0.0.1:7000", Some("A_TOKEN"), MINUTE)
        .await
        .unwrap();
    peers
        .heartbeat("daemon-b", "10.0.0.2:7000", None, MINUTE)
        .await
        .unwrap();
    // B stops beating: its last beat had no time left.
    peers
        .heartbeat("daemon-b", "10.0.0.2:7000", None, Duration::ZERO)
        .await
        .unwrap();
    let live = peers.live().await.unwrap();
    let names: Vec<_> = live.iter().map(|p| p.peer_id.as_str()).collect();
    assert_eq!(names, ["daemon-a"]);
    assert_eq!(live[0].token_env.as_deref(), Some("A_TOKEN"));
    // A moves: the beat updates its address and its token's variable.
    let moved = peers
        .heartbeat("daemon-a", "10.0.0.9:7000", None, MINUTE)
        .await
        .unwrap();
    assert!(moved.expires_at > moved.last_heartbeat);
    assert_eq!(peers.live().await.unwrap()[0].address, "10.0.0.9:7000");
    assert_eq!(peers.live().await.unwrap()[0].token_env, None);
    assert_eq!(peers.forget_expired().await.unwrap(), 1);
    assert!(peers.leave("daemon-a").await.unwrap());
    assert!(!peers.leave("daemon-a").await.unwrap());
    assert!(peers.live().await.unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_working_copys_batches_are_gapless_idempotent_fenced_and_record_their_artifacts() {
    let (db, url) = common::fresh_db(4).await;
    let lease = leased(&db, "s1", "daemon-a").await;
    let log = PgEventLog::new(&db);
    let named = tackle_store::ArtifactId::of(b"output");
    let first = [
        json!({"n": 1}),
        json!({"n": 2, "out": named.internal_uri()}),
    ];
    log.append_batch(&lease, 1, &first).await.unwrap();
    // A retry of the same batch (its commit unacknowledged) changes nothing.
    log.append_batch(&lease, 1, &first).await.unwrap();
    log.append_batch(&lease, 3, &[json!({"n": 3})])
        .await
        .unwrap();
    let stored: Vec<_> = log
        .read_from("s1", 1, 10)
        .await
        .unwrap()
        .into_iter()
        .map(|r| (r.seq, r.event["n"].as_u64().unwrap()))
        .collect();
    assert_eq!(stored, vec![(1, 1), (2, 2), (3, 3)]);
    // A U+0000 (a command's output may carry one) is kept as U+FFFD, and its retry matches.
    log.append_batch(&lease, 4, &[json!({"out": "a\0b"})])
        .await
        .unwrap();
    log.append_batch(&lease, 4, &[json!({"out": "a\0b"})])
        .await
        .unwrap();
    let back = log.read_from("s1", 4, 1).await.unwrap();
    assert_eq!(back[0].event, json!({"out": "a\u{FFFD}b"}));
    // Different events under stored seqs, and a gap, are refused.
    let diverged = log
        .append_batch(&lease, 2, &[json!({"n": "other"})])
        .await
        .unwrap_err();
    assert!(
        matches!(diverged, FleetError::Diverged { .. }),
        "{diverged}"
    );
    let gap = log
        .append_batch(&lease, 9, &[json!({"n": 9})])
        .await
        .unwrap_err();
    assert!(matches!(gap, FleetError::Diverged { next: 5, .. }), "{gap}");
    // The artifact named is referenced by the event that names it.
    let raw = common::raw_client_at(&url).await;
    let refs = raw
        .query(
            "SELECT sha256, seq FROM artifact_refs WHERE session_id = 's1'",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(refs.len(), 1);
    assert_eq!(refs[0].get::<_, String>(0), named.to_hex());
    assert_eq!(refs[0].get::<_, i64>(1), 2);
    // Once another owner took the session, a batch under the old lease is fenced.
    raw.execute(
        "UPDATE sessions SET lease_until = clock_timestamp() - interval '1 second' WHERE id = 's1'",
        &[],
    )
    .await
    .unwrap();
    let Claim::Granted(_) = Leases::new(&db)
        .claim("s1", "daemon-b", MINUTE)
        .await
        .unwrap()
    else {
        panic!("the expired lease is claimable");
    };
    let fenced = log
        .append_batch(&lease, 5, &[json!({"n": 5})])
        .await
        .unwrap_err();
    assert!(matches!(fenced, FleetError::Fenced { .. }), "{fenced}");
    assert_eq!(log.last_seq("s1").await.unwrap(), 4);
}
