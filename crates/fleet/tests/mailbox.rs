//! The mailbox against a real PostgreSQL (scripts/start-fleet-services): exactly-once
//! delivery through killed and concurrent consumers, and the doorbell with its floors.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::json;
use tackle_fleet::{
    Claim, FleetDb, FleetError, Lease, Leases, Mailbox, MailboxWatch, PgEventLog, Wake,
};

const MINUTE: Duration = Duration::from_secs(60);
const HOUR: Duration = Duration::from_secs(3600);
/// Only to fail a test that would otherwise hang; no test measures time.
const HANG_GUARD: Duration = Duration::from_secs(60);

async fn leased(db: &FleetDb, session: &str, owner: &str) -> Lease {
    PgEventLog::new(db).create_session(session).await.unwrap();
    match Leases::new(db).claim(session, owner, MINUTE).await.unwrap() {
        Claim::Granted(lease) => lease,
        held => panic!("expected a grant, got {held:?}"),
    }
}

/// `message_received` events per message id in `session`'s log, checking it is gapless.
async fn received(db: &FleetDb, session: &str) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for record in PgEventLog::new(db)
        .read_from(session, 1, 100_000)
        .await
        .unwrap()
    {
        if record.event["type"] == "message_received" {
            *counts
                .entry(record.event["message_id"].as_str().unwrap().to_owned())
                .or_default() += 1;
        }
    }
    counts
}

/// Waits until the transaction holding `message_id`'s row ends: the lock is the barrier.
async fn until_unlocked(url: &str, message_id: &str) {
    let raw = common::raw_client_at(url).await;
    raw.batch_execute("BEGIN").await.unwrap();
    raw.query(
        "SELECT 1 FROM messages WHERE message_id = $1 FOR UPDATE",
        &[&message_id],
    )
    .await
    .unwrap();
    raw.batch_execute("ROLLBACK").await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_send_is_one_transaction_and_a_retried_send_is_a_no_op() {
    let (db, _) = common::fresh_db(4).await;
    let alice = leased(&db, "alice", "daemon-a").await;
    let bob = leased(&db, "bob", "daemon-b").await;
    let mailbox = Mailbox::new(&db);
    let sent = mailbox
        .send(&alice, "bob", "m1", &json!({"text": "hello"}))
        .await
        .unwrap();
    assert_eq!((sent.sender_seq, sent.duplicate), (1, false));
    let retry = mailbox
        .send(&alice, "bob", "m1", &json!({"text": "hello"}))
        .await
        .unwrap();
    assert_eq!((retry.sender_seq, retry.duplicate), (1, true));
    let log = PgEventLog::new(&db);
    let events = log.read_from("alice", 1, 10).await.unwrap();
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0].event["type"], "message_sent");
    assert_eq!(events[0].event["message_id"], "m1");

    // The same id from another sender names another message.
    match mailbox.send(&bob, "alice", "m1", &json!({})).await {
        Err(FleetError::MessageIdTaken { message_id }) => assert_eq!(message_id, "m1"),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        log.last_seq("bob").await.unwrap(),
        0,
        "the refused send left nothing"
    );

    // A recipient the database does not know is named, and the send leaves nothing.
    match mailbox.send(&alice, "nobody", "m2", &json!({})).await {
        Err(FleetError::UnknownSession { session }) => assert_eq!(session, "nobody"),
        other => panic!("{other:?}"),
    }
    assert_eq!(log.last_seq("alice").await.unwrap(), 1, "no message_sent");

    let delivery = mailbox.receive(&bob).await.unwrap().unwrap();
    assert_eq!(delivery.message().message_id, "m1");
    assert_eq!(delivery.message().sender, "alice");
    assert_eq!(delivery.message().body, json!({"text": "hello"}));
    assert_eq!(delivery.commit().await.unwrap(), 1);
    assert!(mailbox.receive(&bob).await.unwrap().is_none());
    assert_eq!(
        received(&db, "bob").await,
        HashMap::from([("m1".to_owned(), 1)])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_consumer_killed_between_read_and_commit_gets_the_message_again_once() {
    let (db, url) = common::fresh_db(4).await;
    let alice = leased(&db, "alice", "daemon-a").await;
    let bob = leased(&db, "bob", "daemon-b").await;
    let mailbox = Mailbox::new(&db);
    mailbox
        .send(&alice, "bob", "m1", &json!({"n": 1}))
        .await
        .unwrap();

    // Killed: read, then gone without committing.
    let first = mailbox.receive(&bob).await.unwrap().unwrap();
    assert_eq!(first.message().message_id, "m1");
    drop(first);
    until_unlocked(&url, "m1").await;
    assert_eq!(PgEventLog::new(&db).last_seq("bob").await.unwrap(), 0);

    let again = mailbox.receive(&bob).await.unwrap().unwrap();
    assert_eq!(again.message().message_id, "m1", "redelivered");
    let seq = again.commit().await.unwrap();
    assert_eq!(seq, 1);
    assert!(mailbox.receive(&bob).await.unwrap().is_none());
    assert_eq!(
        received(&db, "bob").await,
        HashMap::from([("m1".to_owned(), 1)])
    );

    // A consumer whose lease was taken over meanwhile records nothing; the new owner
    // receives the message.
    mailbox
        .send(&alice, "bob", "m2", &json!({"n": 2}))
        .await
        .unwrap();
    let stale = mailbox.receive(&bob).await.unwrap().unwrap();
    let leases = Leases::new(&db);
    leases.renew(&bob, Duration::ZERO).await.unwrap();
    let bob2 = match leases.claim("bob", "daemon-c", MINUTE).await.unwrap() {
        Claim::Granted(lease) => lease,
        other => panic!("{other:?}"),
    };
    match stale.commit().await {
        Err(FleetError::Fenced {
            held: 1,
            current: 2,
            ..
        }) => {}
        other => panic!("{other:?}"),
    }
    until_unlocked(&url, "m2").await;
    let taken_over = mailbox.receive(&bob2).await.unwrap().unwrap();
    assert_eq!(taken_over.message().message_id, "m2");
    taken_over.commit().await.unwrap();
    assert_eq!(
        received(&db, "bob").await,
        HashMap::from([("m1".to_owned(), 1), ("m2".to_owned(), 1)])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_consumers_some_killed_consume_every_message_exactly_once() {
    const MESSAGES: usize = 120;
    let (db, _) = common::fresh_db(12).await;
    let alice = leased(&db, "alice", "daemon-a").await;
    let bob = leased(&db, "bob", "daemon-b").await;
    let mailbox = Mailbox::new(&db);
    for i in 0..MESSAGES {
        mailbox
            .send(&alice, "bob", &format!("m{i}"), &json!({"i": i}))
            .await
            .unwrap();
    }
    let consumed = Arc::new(AtomicUsize::new(0));
    let killed = Arc::new(AtomicUsize::new(0));
    let consumers: Vec<_> = (0..6)
        .map(|c| {
            let (mailbox, bob) = (mailbox.clone(), bob.clone());
            let (consumed, killed) = (Arc::clone(&consumed), Arc::clone(&killed));
            tokio::spawn(async move {
                let mut turn = 0usize;
                while consumed.load(Ordering::SeqCst) < MESSAGES {
                    let Some(delivery) = mailbox.receive(&bob).await.unwrap() else {
                        // The rest are held by others (or by a killed one until its server
                        // process notices): look again.
                        tokio::task::yield_now().await;
                        continue;
                    };
                    turn += 1;
                    if (turn + c).is_multiple_of(4) {
                        killed.fetch_add(1, Ordering::SeqCst);
                        drop(delivery);
                        continue;
                    }
                    match delivery.commit().await {
                        Ok(_) => {
                            consumed.fetch_add(1, Ordering::SeqCst);
                        }
                        Err(e) => panic!("consumer {c}: {e}"),
                    }
                }
            })
        })
        .collect();
    for consumer in consumers {
        tokio::time::timeout(HANG_GUARD, consumer)
            .await
            .unwrap()
            .unwrap();
    }
    assert!(killed.load(Ordering::SeqCst) > 0, "no consumer was killed");
    let counts = received(&db, "bob").await;
    assert_eq!(counts.len(), MESSAGES);
    assert!(counts.values().all(|&n| n == 1), "{counts:?}");
    assert_eq!(
        PgEventLog::new(&db).last_seq("bob").await.unwrap(),
        MESSAGES as u64,
        "killed consumers left no seq behind"
    );
    assert!(mailbox.receive(&bob).await.unwrap().is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_doorbell_wakes_a_recipient_whose_poll_is_an_hour_away() {
    let (db, _) = common::fresh_db(4).await;
    let alice = leased(&db, "alice", "daemon-a").await;
    let bob = leased(&db, "bob", "daemon-b").await;
    let mailbox = Mailbox::new(&db);
    let mut watch = MailboxWatch::open(&db, "bob", HOUR).await.unwrap();
    assert!(mailbox.receive(&bob).await.unwrap().is_none());
    let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
    let waiter = tokio::spawn(async move {
        let _ = ready_tx.send(());
        let wake = watch.wait().await.unwrap();
        (wake, watch)
    });
    ready_rx.await.unwrap();
    mailbox
        .send(&alice, "bob", "m1", &json!({"n": 1}))
        .await
        .unwrap();
    let (wake, _watch) = tokio::time::timeout(HANG_GUARD, waiter)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(wake, Wake::Doorbell);
    let delivery = mailbox.receive(&bob).await.unwrap().unwrap();
    assert_eq!(delivery.message().message_id, "m1");
    delivery.commit().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_whose_doorbell_was_lost_is_delivered_by_the_poll() {
    let (db, url) = common::fresh_db(4).await;
    leased(&db, "alice", "daemon-a").await;
    let bob = leased(&db, "bob", "daemon-b").await;
    let mailbox = Mailbox::new(&db);
    let mut watch = MailboxWatch::open(&db, "bob", Duration::from_millis(20))
        .await
        .unwrap();
    // A mailbox row written with no NOTIFY, as when a doorbell is lost.
    let raw = common::raw_client_at(&url).await;
    raw.execute(
        "INSERT INTO messages (message_id, sender, sender_seq, recipient, body)
         VALUES ('m1', 'alice', 1, 'bob', '{}')",
        &[],
    )
    .await
    .unwrap();
    let mut wakes = Vec::new();
    let delivery = tokio::time::timeout(HANG_GUARD, async {
        loop {
            wakes.push(watch.wait().await.unwrap());
            if let Some(delivery) = mailbox.receive(&bob).await.unwrap() {
                return delivery;
            }
        }
    })
    .await
    .unwrap();
    assert_eq!(delivery.message().message_id, "m1");
    assert!(wakes.iter().all(|w| *w == Wake::Poll), "{wakes:?}");
    delivery.commit().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_listen_connection_is_reopened_and_the_mailbox_rescanned() {
    let (db, url) = common::fresh_db(4).await;
    let alice = leased(&db, "alice", "daemon-a").await;
    let bob = leased(&db, "bob", "daemon-b").await;
    let mailbox = Mailbox::new(&db);
    let mut watch = MailboxWatch::open(&db, "bob", HOUR).await.unwrap();
    let first_pid = watch.backend_pid().unwrap();
    let raw = common::raw_client_at(&url).await;
    // Lost while the connection was down: no doorbell will ever come for it.
    raw.execute(
        "INSERT INTO messages (message_id, sender, sender_seq, recipient, body)
         VALUES ('m1', 'alice', 1, 'bob', '{}')",
        &[],
    )
    .await
    .unwrap();
    let terminated: bool = raw
        .query_one("SELECT pg_terminate_backend($1, 30000)", &[&first_pid])
        .await
        .unwrap()
        .get(0);
    assert!(terminated);
    let wake = tokio::time::timeout(HANG_GUARD, watch.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(wake, Wake::Reconnected);
    assert_ne!(watch.backend_pid(), Some(first_pid));
    let delivery = mailbox.receive(&bob).await.unwrap().unwrap();
    assert_eq!(delivery.message().message_id, "m1");
    delivery.commit().await.unwrap();

    // The reopened connection hears the doorbell again.
    mailbox.send(&alice, "bob", "m2", &json!({})).await.unwrap();
    let wake = tokio::time::timeout(HANG_GUARD, watch.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(wake, Wake::Doorbell);
    let delivery = mailbox.receive(&bob).await.unwrap().unwrap();
    assert_eq!(delivery.message().message_id, "m2");
    delivery.commit().await.unwrap();
}
