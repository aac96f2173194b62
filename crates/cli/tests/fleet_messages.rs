//! Messages between sessions on different daemons of a fleet (the real servers of
//! `scripts/start-fleet-services`), exactly once under a kill loop.
//!
//! Daemon A runs a session whose subagent, once A is killed, is opened on daemon B (another
//! project, another machine as far as the fleet knows). The subagent sends its parent one
//! message per prompt; A, which holds the parent, is killed with SIGKILL after every other
//! send (before, during or after its delivery) and restarted, one message is sent while A is
//! down, and B is killed and its session reopened every third. Every send acknowledged is accepted into the parent's log exactly
//! once, from the subagent under its handle, and the parent's next turn reads them all; a
//! third machine that takes the parent reaches the subagent's result by its handle.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use std::time::{Duration, Instant};

use harness::Project;
use harness::daemon::{Daemon, PATIENCE};
use harness::fleet::{self, call, prompt, say};
use harness::replay::recorded_requests;
use serde_json::{Value, json};

/// Sends from the subagent to its parent.
const SENDS: usize = 6;

/// Polls `check` until it holds (the database is the state being waited on); fails after
/// [`PATIENCE`].
fn eventually(what: &str, check: impl Fn() -> bool) {
    let deadline = Instant::now() + PATIENCE;
    while !check() {
        assert!(Instant::now() < deadline, "waited too long for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn one(url: &str, sql: &str) -> String {
    fleet::query(url, sql).pop().unwrap_or_default()
}

struct Fleet {
    url: String,
    a: Project,
    b: Project,
    a_turns: Vec<Value>,
    b_turns: Vec<Value>,
    restarts: usize,
}

impl Fleet {
    /// Daemon A (again: a restart resumes the sessions it hosted), recording its model's
    /// requests in a file of this incarnation's own.
    fn start_a(&mut self) -> Daemon {
        self.restarts += 1;
        let record = self
            .a
            .outside(format!("a-requests-{}.jsonl", self.restarts));
        fleet::daemon(
            &self.a,
            &self.url,
            &self.a_turns,
            &record,
            &["--allow", "message:*"],
        )
    }

    /// Daemon B with the subagent's session `child` opened on it.
    fn start_b(&self, child: &str) -> Daemon {
        let record = self.b.outside("b-requests.jsonl");
        let b = fleet::daemon(
            &self.b,
            &self.url,
            &self.b_turns,
            &record,
            &["--allow", "message:*"],
        );
        let loaded = b.call(
            "session/load",
            json!({"sessionId": child, "cwd": self.b.path(), "mcpServers": []}),
        );
        assert!(loaded.get("error").is_none(), "{loaded}");
        b
    }
}

#[test]
fn messages_between_sessions_on_two_daemons_are_delivered_exactly_once_through_a_kill_loop() {
    let url = fleet::fresh_schema_url();
    let config = fleet::user_config(&fleet::unique("e2e"), 2.0);
    let a = Project::new();
    a.user_config(&config);
    let b = Project::new();
    b.user_config(&config);
    // A: the parent delegates; parent and child then draw plain answers in any order, and so
    // does every later turn of the parent's.
    let mut a_turns = vec![call(
        "delegate_subagent",
        json!({"agent_type": "general", "prompt": "stand by for orders", "description": "worker"}),
    )];
    a_turns.extend((0..12).map(|_| say("noted")));
    // B: the child's conversation, whose first turn was played on A.
    let mut b_turns = vec![say("(played on A)")];
    for i in 0..SENDS {
        b_turns.push(call(
            "send_message",
            json!({"to": "parent", "body": format!("order number {i}")}),
        ));
        b_turns.push(say(&format!("sent order {i}")));
    }
    let mut fleet = Fleet {
        url: url.clone(),
        a,
        b,
        a_turns,
        b_turns,
        restarts: 0,
    };

    let first = fleet.start_a();
    let parent = first.new_session(fleet.a.path());
    prompt(&first, &parent, "start a worker");
    let child = one(
        &url,
        &format!("SELECT id FROM sessions WHERE id <> '{parent}'"),
    );
    assert!(
        !child.is_empty(),
        "the subagent's session is in the database"
    );
    eventually("the subagent's run to end", || {
        one(
            &url,
            &format!(
                "SELECT count(*) FROM events WHERE session_id = '{child}' AND payload->>'type' = 'run_finished'"
            ),
        ) == "1"
    });
    // Rows no tackle sender posts, more than one read of the mailbox holds, wait ahead of
    // every order: each holder of the parent discards what it reads of them, so they stall
    // nothing.
    let junk = fleet::query(
        &url,
        &format!(
            "INSERT INTO messages (message_id, sender, recipient, body)
             SELECT 'junk' || g, '{parent}', '{parent}', '\"not a message\"'::jsonb
               FROM generate_series(1, 300) g RETURNING message_id"
        ),
    );
    assert_eq!(junk.len(), 300);
    // A is killed; B opens the subagent (once A's lease on it ends), A comes back with the
    // parent.
    first.kill();
    let mut daemon_b = fleet.start_b(&child);
    let mut daemon_a = Some(fleet.start_a());
    eventually("the parent's holder to discard the junk", || {
        one(
            &url,
            "SELECT count(*) FROM messages WHERE message_id LIKE 'junk%' AND consumed_at IS NULL",
        ) == "0"
    });
    for i in 0..SENDS {
        // One order is sent while A is down: it waits for A's return.
        let down = i == 3;
        if down {
            daemon_a.take().unwrap().kill();
        }
        prompt(&daemon_b, &child, &format!("send order {i}"));
        if i % 2 == 0 {
            daemon_a.take().unwrap().kill();
        }
        if daemon_a.is_none() {
            daemon_a = Some(fleet.start_a());
        }
        if i % 3 == 2 {
            daemon_b.kill();
            daemon_b = fleet.start_b(&child);
        }
    }
    let daemon_a = daemon_a.unwrap();
    drop(daemon_b);

    let posted = fleet::query(
        &url,
        &format!(
            "SELECT message_id FROM messages WHERE sender = '{child}' AND recipient = '{parent}' ORDER BY message_id"
        ),
    );
    assert_eq!(
        posted.len(),
        SENDS,
        "one posted message per send: {posted:?}"
    );
    eventually("every message delivered", || {
        one(
            &url,
            "SELECT count(*) FROM messages WHERE consumed_at IS NULL",
        ) == "0"
    });
    let accepted_where = format!(
        "FROM events WHERE session_id = '{parent}' AND payload->>'type' = 'message_accepted'"
    );
    let mut accepted = fleet::query(
        &url,
        &format!("SELECT payload->>'message_id' {accepted_where}"),
    );
    accepted.sort();
    assert_eq!(accepted, posted, "each message accepted exactly once");
    let bodies = fleet::query(&url, &format!("SELECT payload->>'body' {accepted_where}"));
    for i in 0..SENDS {
        assert!(bodies.contains(&format!("order number {i}")), "{bodies:?}");
    }
    let senders = fleet::query(
        &url,
        &format!("SELECT DISTINCT payload->>'sender' {accepted_where}"),
    );
    assert_eq!(senders.len(), 1, "{senders:?}");
    assert!(
        senders[0].starts_with("general_"),
        "named by its handle: {senders:?}"
    );
    // The junk was taken out undelivered: consumed, no record of the parent's accepting it.
    assert_eq!(
        one(
            &url,
            "SELECT count(*) FROM messages WHERE message_id LIKE 'junk%' AND consumed_at IS NOT NULL AND consumed_seq IS NULL"
        ),
        "300"
    );
    // Each delivery is the record that marked it: the same seq.
    let marked = one(
        &url,
        &format!(
            "SELECT count(*) FROM messages m JOIN events e ON e.session_id = m.recipient AND e.seq = m.consumed_seq
              WHERE e.payload->>'message_id' = m.message_id AND m.recipient = '{parent}'"
        ),
    );
    assert_eq!(marked, SENDS.to_string());

    // The parent's next turn reads every order.
    prompt(&daemon_a, &parent, "what came in?");
    let requests = recorded_requests(
        &fleet
            .a
            .outside(format!("a-requests-{}.jsonl", fleet.restarts)),
    );
    let last = requests.last().expect("A's model was asked").to_string();
    for i in 0..SENDS {
        assert!(
            last.contains(&format!("order number {i}")),
            "order {i} missing: {last}"
        );
    }
    let consumed = one(
        &url,
        &format!(
            "SELECT count(*) FROM events WHERE session_id = '{parent}' AND payload->>'type' = 'message_consumed'"
        ),
    );
    assert!(consumed.parse::<usize>().unwrap() >= SENDS, "{consumed}");

    // A third machine, with no copy of either log, takes the parent and still reaches its
    // subagent by handle.
    daemon_a.kill();
    let d = Project::new();
    d.user_config(&config);
    let played: usize = one(
        &url,
        &format!(
            "SELECT count(*) FROM events WHERE session_id = '{parent}' AND payload->>'type' = 'model_turn'"
        ),
    )
    .parse()
    .unwrap();
    let mut d_turns: Vec<Value> = (0..played).map(|_| say("(played on A)")).collect();
    d_turns.push(call(
        "get_subagent_result",
        json!({"session_id": senders[0]}),
    ));
    d_turns.push(say("read it"));
    let record = d.outside("d-requests.jsonl");
    let daemon_d = fleet::daemon(&d, &url, &d_turns, &record, &["--allow", "message:*"]);
    let loaded = daemon_d.call(
        "session/load",
        json!({"sessionId": parent, "cwd": d.path(), "mcpServers": []}),
    );
    assert!(loaded.get("error").is_none(), "{loaded}");
    assert!(
        d.join(format!(".agents/store/sessions/{child}/events.jsonl"))
            .is_file(),
        "the subagent's log copied from the fleet"
    );
    prompt(&daemon_d, &parent, "what did the worker say last?");
    let last = recorded_requests(&record).last().unwrap().to_string();
    assert!(
        last.contains(&format!("sent order {}", SENDS - 1)),
        "{last}"
    );
}
