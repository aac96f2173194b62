//! Content-addressed artifacts against a real S3-compatible server (moto, started by
//! scripts/start-fleet-services) and their collection against a real PostgreSQL. Each test
//! has a key prefix and a schema of its own.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bytes::Bytes;
use futures::TryStreamExt;
use object_store::ObjectStoreExt;
use object_store::path::Path;
use tackle_fleet::{
    ArtifactGc, FleetError, MULTIPART_THRESHOLD, S3Artifacts, S3Credentials, S3Settings,
    record_reference,
};
use tackle_store::ArtifactId;

fn artifacts(prefix: &str) -> S3Artifacts {
    let services = common::services();
    S3Artifacts::connect(&S3Settings {
        endpoint: Some(services.s3_endpoint.clone()),
        bucket: services.s3_bucket.clone(),
        region: "us-east-1".to_owned(),
        prefix: prefix.to_owned(),
        allow_http: true,
        credentials: S3Credentials::Static {
            access_key_id: "test".to_owned(),
            secret_access_key: "test".to_owned(),
        },
    })
    .unwrap()
}

/// Deterministic bytes that do not compress or repeat.
fn noise(len: usize, seed: u64) -> Vec<u8> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect()
}

async fn keys_under(store: &S3Artifacts, prefix: &str) -> Vec<String> {
    store
        .store()
        .list(Some(&Path::from(prefix)))
        .map_ok(|meta| meta.location.to_string())
        .try_collect()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_create_only_put_racing_itself_writes_once_and_every_racer_succeeds() {
    let store = artifacts(&common::unique("race"));
    let bytes = Bytes::from(noise(64 * 1024, 1));
    let barrier = Arc::new(tokio::sync::Barrier::new(8));
    let racers: Vec<_> = (0..8)
        .map(|_| {
            let (store, bytes, barrier) = (store.clone(), bytes.clone(), Arc::clone(&barrier));
            tokio::spawn(async move {
                barrier.wait().await;
                store.put(bytes).await.unwrap()
            })
        })
        .collect();
    let mut puts = Vec::new();
    for racer in racers {
        puts.push(racer.await.unwrap());
    }
    let id = ArtifactId::of(&bytes);
    assert!(
        puts.iter()
            .all(|p| p.id == id && p.bytes == bytes.len() as u64)
    );
    // S3 lets exactly one conditional PUT win; moto checks and stores in two steps, so under
    // load two racers have both been told they wrote (seen once in this test). Either way
    // every racer succeeded with the same content under the same key.
    assert!(puts.iter().any(|p| p.created), "{puts:?}");
    assert_eq!(store.get(id).await.unwrap(), bytes);
    let again = store.put(bytes.clone()).await.unwrap();
    assert!(
        !again.created,
        "already there is success, not a second write"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_multipart_upload_round_trips_through_a_staging_key_it_removes() {
    let prefix = common::unique("multipart");
    let store = artifacts(&prefix);
    let data = noise(2 * MULTIPART_THRESHOLD + 12_345, 2);
    let id = ArtifactId::of(&data);
    let put = store.put_stream(&mut data.as_slice()).await.unwrap();
    assert_eq!(
        (put.id, put.bytes, put.created),
        (id, data.len() as u64, true)
    );
    assert_eq!(store.get(id).await.unwrap().as_ref(), data.as_slice());
    assert_eq!(
        keys_under(&store, &prefix).await,
        [store.key(id).to_string()],
        "the staging object is gone"
    );
    // The same output again: uploaded, found on the copy, staging removed again.
    let again = store.put(Bytes::from(data.clone())).await.unwrap();
    assert_eq!((again.id, again.created), (id, false));
    assert_eq!(keys_under(&store, &prefix).await.len(), 1);
    // Below the threshold a stream is one request.
    let small = noise(1000, 3);
    let put = store.put_stream(&mut small.as_slice()).await.unwrap();
    assert_eq!(put.id, ArtifactId::of(&small));
    assert_eq!(store.get(put.id).await.unwrap().as_ref(), small.as_slice());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_object_under_an_artifact_key_is_refused_naming_the_key() {
    let prefix = common::unique("digest");
    let store = artifacts(&prefix);
    let right = b"the right bytes".to_vec();
    let id = ArtifactId::of(&right);
    let key = store.key(id);
    store
        .store()
        .put(&key, Bytes::from_static(b"the wrong bytes").into())
        .await
        .unwrap();
    for reader in [store.clone(), artifacts(&prefix)] {
        match reader.get(id).await {
            Err(e @ FleetError::DigestMismatch { .. }) => {
                let text = e.to_string();
                assert!(
                    text.contains(key.as_ref()) && text.contains("delete it"),
                    "{text}"
                );
            }
            other => panic!("returned bytes that do not match their digest: {other:?}"),
        }
    }
    // Create-only: a put cannot repair it, and says it wrote nothing.
    assert!(!store.put(Bytes::from(right.clone())).await.unwrap().created);
    assert!(store.get(id).await.is_err(), "reported again on every read");
    // Deleted, the next put writes the right bytes.
    store.store().delete(&key).await.unwrap();
    match store.get(id).await {
        Err(FleetError::ArtifactMissing { id: missing, .. }) => assert_eq!(missing, id),
        other => panic!("{other:?}"),
    }
    assert!(store.put(Bytes::from(right.clone())).await.unwrap().created);
    assert_eq!(store.get(id).await.unwrap().as_ref(), right.as_slice());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_is_collected_on_the_pass_that_finds_it_and_a_re_reference_saves_it() {
    let (db, _) = common::fresh_db(4).await;
    let store = artifacts(&common::unique("gc-phases"));
    let orphan = store.put(Bytes::from_static(b"orphan")).await.unwrap().id;
    let saved = store
        .put(Bytes::from_static(b"saved later"))
        .await
        .unwrap()
        .id;
    let kept = store
        .publish(&db, Bytes::from_static(b"referenced"), "s1", 1)
        .await
        .unwrap()
        .id;

    // A grace of an hour: everything is too young to mark.
    let patient = ArtifactGc::new(&store, &db, Duration::from_secs(3600));
    let report = patient.collect().await.unwrap();
    assert_eq!(
        (report.listed, report.marked, report.deleted.len()),
        (3, 0, 0)
    );

    // No grace (an explicit clock: every object and mark is old enough at once).
    let gc = ArtifactGc::new(&store, &db, Duration::ZERO);
    let first = gc.collect().await.unwrap();
    assert_eq!(first.marked, 2, "{first:?}");
    assert!(
        first.deleted.is_empty(),
        "deleted on the pass that found it: {first:?}"
    );
    assert!(store.exists(orphan).await.unwrap());

    // A writer references `saved` between the passes: its candidate is cleared.
    record_reference(&db, saved, "s2", 7).await.unwrap();
    let second = gc.collect().await.unwrap();
    assert_eq!(second.deleted, vec![orphan], "{second:?}");
    assert!(!store.exists(orphan).await.unwrap());
    for id in [saved, kept] {
        assert!(store.exists(id).await.unwrap());
    }
    let third = gc.collect().await.unwrap();
    assert!(third.deleted.is_empty() && third.marked == 0, "{third:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_collector_does_nothing_while_one_runs() {
    let (db, url) = common::fresh_db(2).await;
    let store = artifacts(&common::unique("gc-lock"));
    store.put(Bytes::from_static(b"orphan")).await.unwrap();
    let raw = common::raw_client_at(&url).await;
    raw.execute(
        "SELECT pg_advisory_lock(hashtext('tackle-fleet-gc:' || current_schema()))",
        &[],
    )
    .await
    .unwrap();
    let gc = ArtifactGc::new(&store, &db, Duration::ZERO);
    let report = gc.collect().await.unwrap();
    assert!(report.skipped_collector_running, "{report:?}");
    assert_eq!(report.marked, 0);
    drop(raw);
    // The lock died with its connection; wait for the server to let go of it.
    let probe = common::raw_client_at(&url).await;
    probe
        .execute(
            "SELECT pg_advisory_lock(hashtext('tackle-fleet-gc:' || current_schema()))",
            &[],
        )
        .await
        .unwrap();
    probe
        .execute(
            "SELECT pg_advisory_unlock(hashtext('tackle-fleet-gc:' || current_schema()))",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(gc.collect().await.unwrap().marked, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_collector_never_removes_a_referenced_artifact_with_concurrent_publishers() {
    const PUBLISHERS: usize = 4;
    const PUBLICATIONS: u64 = 15;
    let (db, _) = common::fresh_db(12).await;
    let prefix = common::unique("gc-race");
    let store = artifacts(&prefix);
    // Unreferenced objects from before: the collector has work while publishers run, and
    // some publishers deduplicate against them.
    let contents: Vec<Bytes> = (0..10u64)
        .map(|i| Bytes::from(noise(4096, 100 + i)))
        .collect();
    for content in &contents[..5] {
        store.put(content.clone()).await.unwrap();
    }
    let orphans: Vec<ArtifactId> = (0..3u64)
        .map(|i| ArtifactId::of(&noise(512, 900 + i)))
        .collect();
    for i in 0..3u64 {
        store.put(Bytes::from(noise(512, 900 + i))).await.unwrap();
    }

    let done = Arc::new(AtomicBool::new(false));
    let gc = ArtifactGc::new(&store, &db, Duration::ZERO);
    let collector = {
        let (gc, done) = (gc.clone(), Arc::clone(&done));
        tokio::spawn(async move {
            let mut passes = 0;
            while !done.load(Ordering::SeqCst) || passes < 2 {
                gc.collect().await.unwrap();
                passes += 1;
            }
            passes
        })
    };
    let publishers: Vec<_> = (0..PUBLISHERS)
        .map(|p| {
            let (store, db, contents) = (store.clone(), db.clone(), contents.clone());
            tokio::spawn(async move {
                let mut referenced = Vec::new();
                for seq in 1..=PUBLICATIONS {
                    let content = contents[(p + seq as usize * 3) % contents.len()].clone();
                    let put = store
                        .publish(&db, content, &format!("s{p}"), seq)
                        .await
                        .unwrap();
                    referenced.push(put.id);
                }
                referenced
            })
        })
        .collect();
    let mut referenced = HashSet::new();
    for publisher in publishers {
        referenced.extend(publisher.await.unwrap());
    }
    done.store(true, Ordering::SeqCst);
    let passes = collector.await.unwrap();
    assert!(passes >= 2);
    // Two more passes after the publishers: whatever is unreferenced is gone by then.
    gc.collect().await.unwrap();
    gc.collect().await.unwrap();

    assert!(referenced.len() > 5, "{}", referenced.len());
    let fresh_reader = artifacts(&prefix);
    for id in &referenced {
        let bytes = fresh_reader.get(*id).await.unwrap_or_else(|e| {
            panic!("referenced artifact {id} lost: {e}");
        });
        assert_eq!(ArtifactId::of(&bytes), *id);
    }
    for orphan in orphans {
        assert!(!store.exists(orphan).await.unwrap(), "orphan {orphan} kept");
    }
}
