//! The mailbox against a real PostgreSQL (scripts/start-fleet-services): a post is one
//! statement under the sender's lease, delivery is the recipient's `message_accepted` batch,
//! exactly once through holders killed and fenced mid-delivery, and the doorbell with its
//! floors.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use serde_json::{Value, json};
use tackle_fleet::{
    Claim, FleetDb, FleetError, Lease, Leases, Mailbox, MailboxWatch, PgEventLog, Sent,
    WAITING_PER_READ, Wake,
};

const MINUTE: Duration = Duration::from_secs(60);
const HOUR: Duration = Duration::from_secs(3600);
/// Only to fail a test that would otherwise hang; no test measures time.
const HANG_GUARD: Duration = Duration::from_secs(60);
const ANY: usize = usize::MAX;

async fn leased(db: &FleetDb, session: &str, owner: &str) -> Lease {
    PgEventLog::new(db).create_session(session).await.unwrap();
    claim(db, session, owner).await
}

async fn claim(db: &FleetDb, session: &str, owner: &str) -> Lease {
    match Leases::new(db).claim(session, owner, MINUTE).await.unwrap() {
        Claim::Granted(lease) => lease,
        held => panic!("expected a grant, got {held:?}"),
    }
}

fn accepted(message_id: &str) -> Value {
    json!({"type": "message_accepted", "message_id": message_id})
}

/// `message_accepted` records per message id in `session`'s log.
async fn accepted_in(db: &FleetDb, session: &str) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for record in PgEventLog::new(db)
        .read_from(session, 1, 100_000)
        .await
        .unwrap()
    {
        if record.event["type"] == "message_accepted" {
            *counts
                .entry(record.event["message_id"].as_str().unwrap().to_owned())
                .or_default() += 1;
        }
    }
    counts
}

fn ids(waiting: &[tackle_fleet::Message]) -> Vec<&str> {
    waiting.iter().map(|m| m.message_id.as_str()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_post_is_checked_in_one_statement_and_delivered_by_the_recipients_batch() {
    let (db, _) = common::fresh_db(4).await;
    let alice = leased(&db, "alice", "daemon-a").await;
    let bob = leased(&db, "bob", "daemon-b").await;
    let mailbox = Mailbox::new(&db);
    let log = PgEventLog::new(&db);
    let hello = json!({"text": "hello"});
    assert_eq!(
        mailbox
            .post(&alice, "bob", "m1", &hello, ANY)
            .await
            .unwrap(),
        Sent::Posted
    );
    assert_eq!(
        mailbox
            .post(&alice, "bob", "m1", &hello, ANY)
            .await
            .unwrap(),
        Sent::Duplicate,
        "a retried post is a no-op"
    );
    assert_eq!(
        log.last_seq("alice").await.unwrap(),
        0,
        "the sender's log is its own"
    );

    // The same id on another pair names another message.
    match mailbox.post(&bob, "alice", "m1", &json!({}), ANY).await {
        Err(FleetError::MessageIdTaken { message_id }) => assert_eq!(message_id, "m1"),
        other => panic!("{other:?}"),
    }
    // A recipient the database does not know is named.
    match mailbox.post(&alice, "nobody", "m2", &json!({}), ANY).await {
        Err(FleetError::UnknownSession { session }) => assert_eq!(session, "nobody"),
        other => panic!("{other:?}"),
    }
    // A full mailbox refuses, and leaves nothing.
    assert_eq!(
        mailbox
            .post(&alice, "bob", "m3", &json!({}), 1)
            .await
            .unwrap(),
        Sent::Full
    );
    let waiting = mailbox.waiting("bob").await.unwrap();
    assert_eq!(ids(&waiting), ["m1"]);
    assert_eq!(
        (waiting[0].sender.as_str(), &waiting[0].body),
        ("alice", &hello)
    );

    // A sender whose lease was taken over cannot post in its name.
    Leases::new(&db)
        .renew(&alice, Duration::ZERO)
        .await
        .unwrap();
    let alice2 = claim(&db, "alice", "daemon-c").await;
    match mailbox.post(&alice, "bob", "m4", &json!({}), ANY).await {
        Err(FleetError::Fenced { owner, .. }) => assert_eq!(owner, "daemon-c"),
        other => panic!("{other:?}"),
    }
    mailbox
        .post(&alice2, "bob", "m4", &json!({}), ANY)
        .await
        .unwrap();

    // Bob's batch that accepts m1 marks it delivered in the same statement; a record of a
    // message that was never posted (accepted within one process) marks nothing.
    log.append_batch(
        &bob,
        1,
        &[json!({"type": "other"}), accepted("m1"), accepted("local")],
    )
    .await
    .unwrap();
    assert_eq!(ids(&mailbox.waiting("bob").await.unwrap()), ["m4"]);
    // The same batch again (a retry whose commit was not acknowledged) changes nothing.
    log.append_batch(
        &bob,
        1,
        &[json!({"type": "other"}), accepted("m1"), accepted("local")],
    )
    .await
    .unwrap();
    assert_eq!(log.last_seq("bob").await.unwrap(), 3);

    // A stale holder of bob's session cannot deliver: its batch is fenced, m4 still waits.
    Leases::new(&db).renew(&bob, Duration::ZERO).await.unwrap();
    let bob2 = claim(&db, "bob", "daemon-d").await;
    assert!(matches!(
        log.append_batch(&bob, 4, &[accepted("m4")]).await,
        Err(FleetError::Fenced { .. })
    ));
    assert_eq!(ids(&mailbox.waiting("bob").await.unwrap()), ["m4"]);
    log.append_batch(&bob2, 4, &[accepted("m4")]).await.unwrap();
    assert!(mailbox.waiting("bob").await.unwrap().is_empty());
    assert_eq!(
        accepted_in(&db, "bob").await,
        HashMap::from([
            ("m1".to_owned(), 1),
            ("local".to_owned(), 1),
            ("m4".to_owned(), 1)
        ])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scan_reads_the_oldest_waiting_messages_up_to_its_bound_and_the_next_reads_on() {
    let (db, _) = common::fresh_db(4).await;
    let alice = leased(&db, "alice", "daemon-a").await;
    let bob = leased(&db, "bob", "daemon-b").await;
    let mailbox = Mailbox::new(&db);
    let posted = usize::try_from(WAITING_PER_READ).unwrap() + 3;
    let id = |n: usize| format!("m{n:04}");
    for n in 0..posted {
        let sent = mailbox
            .post(&alice, "bob", &id(n), &json!({"n": n}), ANY)
            .await
            .unwrap();
        assert_eq!(sent, Sent::Posted);
    }
    let first = mailbox.waiting("bob").await.unwrap();
    let oldest: Vec<String> = (0..first.len()).map(id).collect();
    assert_eq!(
        ids(&first),
        oldest,
        "the oldest, in order, and no more than the bound"
    );
    assert_eq!(first.len(), posted - 3);
    // Delivered, they leave room for the rest.
    let batch: Vec<Value> = first.iter().map(|m| accepted(&m.message_id)).collect();
    PgEventLog::new(&db)
        .append_batch(&bob, 1, &batch)
        .await
        .unwrap();
    let rest = mailbox.waiting("bob").await.unwrap();
    assert_eq!(ids(&rest), [id(posted - 3), id(posted - 2), id(posted - 1)]);
}

/// Holders of bob's session come and go, a third of them killed after delivering part of
/// what waits, while posts keep arriving and the previous holder, fenced, keeps trying: every
/// message is accepted once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn holders_killed_and_fenced_mid_delivery_accept_every_message_exactly_once() {
    const MESSAGES: usize = 90;
    let (db, _) = common::fresh_db(6).await;
    let alice = leased(&db, "alice", "daemon-a").await;
    let first = leased(&db, "bob", "holder-0").await;
    let mailbox = Mailbox::new(&db);
    let log = PgEventLog::new(&db);
    let leases = Leases::new(&db);
    let mut posted = 0;
    let mut previous = first;
    let mut fenced_refusals = 0;
    for holder in 1.. {
        // Posts keep arriving between holders.
        while posted < MESSAGES && posted < holder * 12 {
            mailbox
                .post(
                    &alice,
                    "bob",
                    &format!("m{posted}"),
                    &json!({"i": posted}),
                    ANY,
                )
                .await
                .unwrap();
            posted += 1;
        }
        // The previous holder's lease expires; a new one takes the log from the database
        // and so knows what it accepted.
        leases.renew(&previous, Duration::ZERO).await.unwrap();
        let lease = claim(&db, "bob", &format!("holder-{holder}")).await;
        let known: HashSet<String> = accepted_in(&db, "bob").await.into_keys().collect();
        let mut next = log.last_seq("bob").await.unwrap() + 1;
        // The fenced holder, unaware, delivers the same messages: refused.
        let waiting = mailbox.waiting("bob").await.unwrap();
        if let Some(m) = waiting.first() {
            assert!(matches!(
                log.append_batch(&previous, next, &[accepted(&m.message_id)])
                    .await,
                Err(FleetError::Fenced { .. })
            ));
            fenced_refusals += 1;
        }
        let waiting = mailbox.waiting("bob").await.unwrap();
        let fresh: Vec<&str> = ids(&waiting)
            .into_iter()
            .filter(|id| !known.contains(*id))
            .collect();
        // Killed after delivering some: a third of the holders deliver one batch only.
        let batches: Vec<&[&str]> = fresh.chunks(5).collect();
        let keep = if holder % 3 == 0 {
            batches.len().min(1)
        } else {
            batches.len()
        };
        for batch in &batches[..keep] {
            let events: Vec<Value> = batch.iter().map(|id| accepted(id)).collect();
            log.append_batch(&lease, next, &events).await.unwrap();
            next += events.len() as u64;
        }
        previous = lease;
        if posted == MESSAGES && mailbox.waiting("bob").await.unwrap().is_empty() {
            break;
        }
        assert!(holder < 100, "delivery made no progress");
    }
    assert!(fenced_refusals > 0, "no fenced holder tried");
    let counts = accepted_in(&db, "bob").await;
    assert_eq!(counts.len(), MESSAGES);
    assert!(counts.values().all(|&n| n == 1), "{counts:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_doorbell_names_the_recipient_whose_poll_is_an_hour_away() {
    let (db, _) = common::fresh_db(4).await;
    let alice = leased(&db, "alice", "daemon-a").await;
    leased(&db, "bob", "daemon-b").await;
    let mailbox = Mailbox::new(&db);
    let mut watch = MailboxWatch::open(&db, HOUR).await.unwrap();
    let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
    let waiter = tokio::spawn(async move {
        let _ = ready_tx.send(());
        let wake = watch.wait().await.unwrap();
        (wake, watch)
    });
    ready_rx.await.unwrap();
    mailbox
        .post(&alice, "bob", "m1", &json!({"n": 1}), ANY)
        .await
        .unwrap();
    let (wake, mut watch) = tokio::time::timeout(HANG_GUARD, waiter)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(wake, Wake::Doorbell("bob".to_owned()));
    // A repeated post rings nobody: the next ring is the next new message.
    mailbox
        .post(&alice, "bob", "m1", &json!({"n": 1}), ANY)
        .await
        .unwrap();
    mailbox
        .post(&alice, "alice", "m2", &json!({}), ANY)
        .await
        .unwrap();
    let wake = tokio::time::timeout(HANG_GUARD, watch.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(wake, Wake::Doorbell("alice".to_owned()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_whose_doorbell_was_lost_is_found_after_the_poll() {
    let (db, url) = common::fresh_db(4).await;
    leased(&db, "alice", "daemon-a").await;
    leased(&db, "bob", "daemon-b").await;
    let mailbox = Mailbox::new(&db);
    let mut watch = MailboxWatch::open(&db, Duration::from_millis(20))
        .await
        .unwrap();
    // A mailbox row written with no NOTIFY, as when a doorbell is lost.
    let raw = common::raw_client_at(&url).await;
    raw.execute(
        "INSERT INTO messages (message_id, sender, recipient, body)
         VALUES ('m1', 'alice', 'bob', '{}')",
        &[],
    )
    .await
    .unwrap();
    let wake = tokio::time::timeout(HANG_GUARD, watch.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(wake, Wake::Poll);
    assert_eq!(ids(&mailbox.waiting("bob").await.unwrap()), ["m1"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_listen_connection_is_reopened_and_says_so() {
    let (db, url) = common::fresh_db(4).await;
    let alice = leased(&db, "alice", "daemon-a").await;
    leased(&db, "bob", "daemon-b").await;
    let mailbox = Mailbox::new(&db);
    let mut watch = MailboxWatch::open(&db, HOUR).await.unwrap();
    let first_pid = watch.backend_pid().unwrap();
    let raw = common::raw_client_at(&url).await;
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
    assert_eq!(
        wake,
        Wake::Reconnected,
        "the owner is told to scan everything"
    );
    assert_ne!(watch.backend_pid(), Some(first_pid));

    // The reopened connection hears the doorbell again.
    mailbox
        .post(&alice, "bob", "m2", &json!({}), ANY)
        .await
        .unwrap();
    let wake = tokio::time::timeout(HANG_GUARD, watch.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(wake, Wake::Doorbell("bob".to_owned()));
}

/// A message that can never be delivered is taken out by the recipient's holder: it leaves
/// every later read and the recipient's count of waiting messages, so no number of them stalls
/// the mailbox; a fenced holder cannot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_discarded_message_leaves_the_reads_and_the_count_and_only_the_holder_discards() {
    let (db, url) = common::fresh_db(4).await;
    let alice = leased(&db, "alice", "daemon-a").await;
    let bob = leased(&db, "bob", "daemon-b").await;
    let mailbox = Mailbox::new(&db);
    let bound = usize::try_from(WAITING_PER_READ).unwrap();
    let id = |n: usize| format!("m{n:04}");
    for n in 0..=bound {
        let body = if n < bound {
            json!("not a message")
        } else {
            json!({"n": n})
        };
        let sent = mailbox
            .post(&alice, "bob", &id(n), &body, ANY)
            .await
            .unwrap();
        assert_eq!(sent, Sent::Posted);
    }
    // A full read of malformed rows: the good message is past the bound.
    let first = mailbox.waiting("bob").await.unwrap();
    assert!(!ids(&first).contains(&id(bound).as_str()));
    for m in &first {
        mailbox.discard(&bob, &m.message_id).await.unwrap();
    }
    // Discarding twice changes nothing.
    mailbox.discard(&bob, &id(0)).await.unwrap();
    assert_eq!(ids(&mailbox.waiting("bob").await.unwrap()), [id(bound)]);
    // The count of waiting messages is one: a post that allows two goes in.
    let sent = mailbox
        .post(&alice, "bob", "next", &json!({"n": "next"}), 2)
        .await
        .unwrap();
    assert_eq!(sent, Sent::Posted);
    // No record of bob's log accepted a discarded message.
    let unnumbered: i64 = common::raw_client_at(&url)
        .await
        .query_one(
            "SELECT count(*) FROM messages WHERE consumed_at IS NOT NULL AND consumed_seq IS NULL",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(unnumbered, WAITING_PER_READ);
    // Bob's lease expires and another holder claims it: the old holder's discard is refused
    // and changes nothing.
    Leases::new(&db).renew(&bob, Duration::ZERO).await.unwrap();
    let taken = claim(&db, "bob", "daemon-c").await;
    let refused = mailbox.discard(&bob, "next").await.unwrap_err();
    assert!(matches!(refused, FleetError::Fenced { .. }), "{refused:?}");
    let still: Vec<String> = mailbox
        .waiting("bob")
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.message_id)
        .collect();
    assert_eq!(still, [id(bound), "next".to_owned()]);
    mailbox.discard(&taken, "next").await.unwrap();
    assert_eq!(ids(&mailbox.waiting("bob").await.unwrap()), [id(bound)]);
}

/// A process's periodic scan is one statement: the sessions it holds that have mail waiting,
/// each once, and no other's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_scan_names_each_held_session_with_mail_waiting_once() {
    let (db, _) = common::fresh_db(4).await;
    let alice = leased(&db, "alice", "daemon-a").await;
    let _bob = leased(&db, "bob", "daemon-b").await;
    let _carol = leased(&db, "carol", "daemon-b").await;
    let _dave = leased(&db, "dave", "daemon-b").await;
    let erin = leased(&db, "erin", "daemon-c").await;
    let mailbox = Mailbox::new(&db);
    for (n, to) in ["bob", "bob", "carol", "erin"].into_iter().enumerate() {
        let sent = mailbox
            .post(&alice, to, &format!("m{n}"), &json!({"n": n}), ANY)
            .await
            .unwrap();
        assert_eq!(sent, Sent::Posted);
    }
    let mut held = mailbox.recipients_waiting("daemon-b").await.unwrap();
    held.sort();
    assert_eq!(held, ["bob", "carol"]);
    assert_eq!(
        mailbox.recipients_waiting("daemon-c").await.unwrap(),
        ["erin"]
    );
    // Delivered, a session is no longer named.
    PgEventLog::new(&db)
        .append_batch(&erin, 1, &[accepted("m3")])
        .await
        .unwrap();
    assert!(
        mailbox
            .recipients_waiting("daemon-c")
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        mailbox
            .recipients_waiting("nobody")
            .await
            .unwrap()
            .is_empty()
    );
}
