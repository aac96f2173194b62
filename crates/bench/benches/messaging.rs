//! What accepting an agent message costs (`tackle_agent::messaging`, in process): a message
//! is accepted only once its `message_accepted` record is in the recipient's log and synced,
//! so the floor is one `fdatasync`.
//!
//! - **accept latency**: one child sending to its parent, one message at a time, against a
//!   bare 200-byte append + `fdatasync` on the same file system (median and p99 of each).
//! - **messages/s with many senders**: `SENDERS` children each sending `PER_SENDER` messages
//!   to the root at once, against the same number of bare appends + `fdatasync` one after
//!   another (what acceptance would cost with no batching at all).
//!
//! The guards are set so that none refuses (the point is the cost of acceptance, not of a
//! refusal). Run: `cargo bench -p tackle-bench --bench messaging`.

use std::io::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tackle_agent::Unobserved;
use tackle_agent::delegate::{Limits, RestoredNode, Status, Tree};
use tackle_agent::messaging::tree_side::{Outgoing, Peer};
use tackle_agent::messaging::{MessagingSettings, Mode};
use tackle_bench::Stats;
use tackle_protocol::{SessionId, Usage};
use tackle_runtime::{ChildOptions, Session};

type BenchResult<T> = Result<T, Box<dyn std::error::Error>>;

const SEQUENTIAL: usize = 300;
const SENDERS: usize = 16;
const PER_SENDER: usize = 25;
const BODY: &str = "The tests in crates/store pass again; the fix is in log_read.rs line 88.";

fn settings() -> MessagingSettings {
    MessagingSettings {
        enabled: true,
        max_body_bytes: 64 * 1024,
        max_pending_per_session: usize::MAX,
        max_hops: 0,
        max_inflight_per_pair: 0,
    }
}

/// A root with `children` children the tree knows of (as ended runs: they only send).
fn family(
    dir: &std::path::Path,
    children: usize,
) -> BenchResult<(Arc<Tree>, Session, Vec<SessionId>)> {
    let root = Session::open(dir)?;
    let tree = Tree::new(Limits::default(), Vec::new(), Arc::new(Unobserved));
    tree.add_root(root.clone());
    let mut ids = Vec::new();
    for n in 0..children {
        let handle = format!("general_{n:08x}");
        let child = root.open_subagent(ChildOptions {
            agent: Some("general".into()),
            handle: Some(handle.clone()),
            ..ChildOptions::default()
        })?;
        tree.restore(RestoredNode {
            handle,
            session: child.id().clone(),
            parent: root.id().clone(),
            agent_type: "general".into(),
            description: "sender".into(),
            depth: 1,
            status: Status::Completed,
            output: String::new(),
            usage: Usage::default(),
        });
        ids.push(child.id().clone());
    }
    Ok((tree, root, ids))
}

fn outgoing(root: &Session, sender: &SessionId, n: usize) -> Outgoing {
    Outgoing {
        to: Peer {
            id: root.id().clone(),
            relation: "parent",
        },
        body: BODY.to_owned(),
        mode: Mode::Queue,
        key: format!("{}/1/call-{n}", sender.0),
    }
}

/// `count` appends of a 200-byte line, each followed by `fdatasync`, timed one by one.
fn bare_syncs(dir: &std::path::Path, count: usize) -> BenchResult<Vec<Duration>> {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("bare.jsonl"))?;
    let line = [b'x'; 199];
    let mut out = Vec::with_capacity(count);
    for _ in 0..count {
        let t = Instant::now();
        file.write_all(&line)?;
        file.write_all(b"\n")?;
        file.sync_data()?;
        out.push(t.elapsed());
    }
    Ok(out)
}

fn main() -> BenchResult<()> {
    let dir = tempfile::tempdir()?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let settings = settings();

    // One sender, one message at a time, against a bare append + fdatasync.
    let (tree, root, children) = family(dir.path(), 1)?;
    let mut accepted = Vec::with_capacity(SEQUENTIAL);
    rt.block_on(async {
        for n in 0..SEQUENTIAL {
            let t = Instant::now();
            tree.send(&children[0], outgoing(&root, &children[0], n), &settings)
                .await
                .map_err(|e| e.message.clone())?;
            accepted.push(t.elapsed());
        }
        Ok::<(), String>(())
    })?;
    let mut bare = bare_syncs(dir.path(), SEQUENTIAL)?;
    let accept = Stats::of(&mut accepted);
    let sync = Stats::of(&mut bare);

    // Many senders at once, against as many bare syncs one after another.
    let many = tempfile::tempdir()?;
    let (tree, root, children) = family(many.path(), SENDERS)?;
    let total = SENDERS * PER_SENDER;
    let started = Instant::now();
    rt.block_on(async {
        let mut tasks = Vec::new();
        for sender in children.clone() {
            let (tree, root) = (tree.clone(), root.clone());
            tasks.push(tokio::spawn(async move {
                for n in 0..PER_SENDER {
                    tree.send(&sender, outgoing(&root, &sender, n), &settings)
                        .await
                        .map_err(|e| e.message.clone())?;
                }
                Ok::<(), String>(())
            }));
        }
        for task in tasks {
            task.await.map_err(|e| e.to_string())??;
        }
        Ok::<(), String>(())
    })?;
    let sends = started.elapsed();
    let started = Instant::now();
    bare_syncs(many.path(), total)?;
    let syncs = started.elapsed();

    println!("messaging, accepted = recorded in the recipient's log and synced:");
    println!(
        "  accept one message        median {:>9.1?}  p99 {:>9.1?}",
        accept.median, accept.p99
    );
    println!(
        "  bare append + fdatasync   median {:>9.1?}  p99 {:>9.1?}",
        sync.median, sync.p99
    );
    println!(
        "  ratio of medians: {:.2}x",
        accept.median.as_secs_f64() / sync.median.as_secs_f64()
    );
    let rate = |d: Duration| total as f64 / d.as_secs_f64();
    println!(
        "  {SENDERS} senders x {PER_SENDER} messages: {:.0} messages/s; {total} bare syncs in a row: {:.0}/s; ratio {:.2}x",
        rate(sends),
        rate(syncs),
        rate(sends) / rate(syncs)
    );
    Ok(())
}
