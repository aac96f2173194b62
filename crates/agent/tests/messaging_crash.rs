//! Messages survive SIGKILL: a worker process (this test binary, entered through the
//! `worker` test with `TACKLE_MSG_CRASH_DIR` set) sends numbered messages from a child to its
//! parent and consumes them as the parent's loop does, retrying after each restart every send
//! it did not see acknowledged; the driver kills it with SIGKILL at points chosen over the
//! progress it prints (never over time), then lets a last run finish. In the end every
//! message was accepted once (one `message_accepted` per call key), consumed exactly once,
//! and every retry of a call got the id its first acceptance gave.
//!
//! `TACKLE_MSG_CRASH_SEED` picks another seed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::BufRead as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;

use tackle_agent::Unobserved;
use tackle_agent::delegate::{Limits, Tree};
use tackle_agent::messaging::tree_side::{Outgoing, Peer};
use tackle_agent::messaging::{MessagingSettings, Mode};
use tackle_protocol::{Event, MessageConsumed};
use tackle_runtime::{ChildOptions, ForeignLogs, LogKey, Session, SessionOptions};

const MESSAGES: usize = 24;
const DIR: &str = "TACKLE_MSG_CRASH_DIR";

fn key() -> LogKey {
    LogKey::from_bytes(&[7; 32])
}

fn settings() -> MessagingSettings {
    MessagingSettings {
        max_pending_per_session: 1000,
        max_inflight_per_pair: 0,
        ..MessagingSettings::DEFAULT
    }
}

/// The root and child sessions of `dir`, made on the first run and resumed after.
fn sessions(dir: &Path) -> (Session, Session) {
    let ids = dir.join("ids");
    if let Ok(text) = std::fs::read_to_string(&ids) {
        let (root, child) = text.split_once(' ').unwrap();
        let open = |id: &str| {
            Session::resume(dir, id, &key(), ForeignLogs::Refuse)
                .unwrap()
                .session
        };
        return (open(root), open(child));
    }
    let root = Session::open_sealed(dir, SessionOptions::default(), &key()).unwrap();
    let child = root
        .open_subagent(ChildOptions {
            agent: Some("general".into()),
            handle: Some("general_00000001".into()),
            ..ChildOptions::default()
        })
        .unwrap();
    std::fs::write(&ids, format!("{} {}", root.id().0, child.id().0)).unwrap();
    (root, child)
}

/// The worker: rebuild the tree from the logs, send every message from `from` on (a retry of
/// the ones a kill left unacknowledged), consuming as a parent's loop does, then consume the
/// rest.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn worker() {
    let Ok(dir) = std::env::var(DIR) else {
        return;
    };
    let dir = Path::new(&dir);
    let from: usize = std::env::var("TACKLE_MSG_CRASH_FROM")
        .unwrap()
        .parse()
        .unwrap();
    let (root, child) = sessions(dir);
    let tree = Tree::new(Limits::default(), Vec::new(), Arc::new(Unobserved));
    tree.add_root(root.clone());
    tackle_agent::delegate::rebuild::restore(&tree, &root).unwrap();
    let consume = |tree: Arc<Tree>, root: Session| async move {
        for m in tree.take_messages(root.id(), true) {
            root.append_event(&Event::MessageConsumed(MessageConsumed {
                message_id: m.id.clone(),
                text: m.body.clone(),
                at_ms: 1,
            }))
            .await
            .unwrap();
            println!("consumed {}", m.id);
        }
    };
    for n in from..MESSAGES {
        let sent = tree
            .send(
                child.id(),
                Outgoing {
                    to: Peer {
                        id: root.id().clone(),
                        relation: "parent",
                    },
                    body: format!("message {n}"),
                    mode: Mode::Queue,
                    key: format!("{}/1/call-{n}", child.id().0),
                },
                &settings(),
            )
            .await
            .unwrap();
        println!("sent {n} {}", sent.message_id);
        if n % 3 == 2 {
            consume(tree.clone(), root.clone()).await;
        }
    }
    consume(tree.clone(), root.clone()).await;
    println!("done");
}

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// Runs the worker from message `from`; kills it once it has printed `kill_after` lines (never
/// when `None`). Returns its lines.
fn run_worker(dir: &Path, from: usize, kill_after: Option<usize>) -> Vec<String> {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "worker", "--nocapture", "--test-threads", "1"])
        .env(DIR, dir)
        .env("TACKLE_MSG_CRASH_FROM", from.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = Vec::new();
    for line in std::io::BufReader::new(stdout).lines() {
        let line = line.unwrap();
        if line.starts_with("sent ") || line.starts_with("consumed ") || line == "done" {
            lines.push(line);
        }
        if kill_after.is_some_and(|k| lines.len() >= k) {
            // SAFETY: kill(2) on a child this test spawned and has not reaped.
            unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGKILL) };
            break;
        }
    }
    let _ = child.wait();
    lines
}

#[test]
fn every_accepted_message_is_delivered_exactly_once_across_sigkills() {
    if std::env::var(DIR).is_ok() {
        return;
    }
    let seed = std::env::var("TACKLE_MSG_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(41);
    eprintln!("messaging crash seed: {seed} (TACKLE_MSG_CRASH_SEED)");
    let mut rng = Rng(seed);
    let dir = tempfile::tempdir().unwrap();
    let mut ids: BTreeMap<usize, HashSet<String>> = BTreeMap::new();
    let mut from = 0;
    let mut kills = 0;
    let mut finished = false;
    for _ in 0..12 {
        let kill_after = 1 + rng.below(6) as usize;
        let lines = run_worker(dir.path(), from, Some(kill_after));
        for line in &lines {
            if let Some(rest) = line.strip_prefix("sent ") {
                let (n, id) = rest.split_once(' ').unwrap();
                let n: usize = n.parse().unwrap();
                ids.entry(n).or_default().insert(id.to_owned());
                // An acknowledged send is not sent again; the next run starts after it.
                from = from.max(n + 1);
            }
        }
        if lines.iter().any(|l| l == "done") {
            finished = true;
            break;
        }
        kills += 1;
    }
    if !finished {
        // A last run to the end; it retries from the last acknowledged send on.
        let lines = run_worker(dir.path(), from.saturating_sub(1), None);
        assert!(lines.iter().any(|l| l == "done"), "{lines:?}");
        for line in &lines {
            if let Some(rest) = line.strip_prefix("sent ") {
                let (n, id) = rest.split_once(' ').unwrap();
                ids.entry(n.parse().unwrap())
                    .or_default()
                    .insert(id.to_owned());
            }
        }
    }
    assert!(kills > 0, "the worker was never killed");
    // Every retry of a call got the id of its first acceptance.
    for (n, got) in &ids {
        assert_eq!(got.len(), 1, "message {n} got ids {got:?}");
    }
    // The root's log: one acceptance per key, one consumption per accepted message.
    let root_id = std::fs::read_to_string(dir.path().join("ids"))
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .to_owned();
    let log = tackle_store::session_log_path(&dir.path().join(".agents/store"), &root_id);
    let mut accepted: HashMap<String, String> = HashMap::new();
    let mut consumed: HashMap<String, usize> = HashMap::new();
    for record in tackle_store::EventLog::read_records(&log).unwrap() {
        match serde_json::from_value::<Event>(record.event) {
            Ok(Event::MessageAccepted(m)) => {
                assert!(
                    accepted.insert(m.key.clone(), m.message_id).is_none(),
                    "key {} accepted twice",
                    m.key
                );
            }
            Ok(Event::MessageConsumed(m)) => *consumed.entry(m.message_id).or_default() += 1,
            _ => {}
        }
    }
    assert_eq!(accepted.len(), MESSAGES, "{accepted:?}");
    for id in accepted.values() {
        assert_eq!(
            consumed.get(id),
            Some(&1),
            "message {id} consumed {consumed:?}"
        );
    }
    assert_eq!(consumed.len(), MESSAGES);
    eprintln!("{kills} kill(s), {MESSAGES} messages each delivered once");
}
