//! Arguments too large for the event log: a `write_file` of hundreds of KiB leaves a short
//! `call_started` naming an artifact, the arguments read back whole (also from a resumed
//! session), and the janitor keeps that artifact as it keeps any a log line names.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use common::*;
use serde_json::json;
use tackle_protocol::CallStarted;
use tackle_runtime::{ARGUMENTS_INLINE_LIMIT, Session};
use tackle_store::{ArtifactId, Janitor};
use tackle_tools::WriteFile;

fn started(h: &Harness, call_id: &str) -> CallStarted {
    let event = h
        .events()
        .into_iter()
        .find(|e| e["type"] == "call_started" && e["call_id"] == call_id)
        .unwrap();
    serde_json::from_value(event).unwrap()
}

#[tokio::test]
async fn large_arguments_are_stored_read_back_whole_and_kept_by_the_janitor() {
    let h = Harness::new(vec![Arc::new(WriteFile)], WIDE, LONG_TIMEOUT);
    let content: String = (0..40_000).map(|i| format!("{i:07}\n")).collect();
    let big = json!({"path": "big.txt", "content": content});
    let small = json!({"path": "small.txt", "content": "hi\n"});
    let results = h
        .run(vec![
            call("big", "write_file", big.clone()),
            call("small", "write_file", small.clone()),
        ])
        .await;
    assert!(results.iter().all(|r| !r.is_error), "{results:?}");
    assert_eq!(
        std::fs::read_to_string(h.root().join("big.txt")).unwrap(),
        content
    );

    let stored = started(&h, "big");
    assert_eq!(stored.arguments, serde_json::Value::Null);
    let reference = stored.stored_arguments.clone().expect("stored arguments");
    assert!(reference.bytes > ARGUMENTS_INLINE_LIMIT as u64);
    assert_eq!(h.session.recorded_arguments(&stored).unwrap(), big);
    let inline = started(&h, "small");
    assert!(inline.stored_arguments.is_none());
    assert_eq!(inline.arguments, small);
    assert_eq!(h.session.recorded_arguments(&inline).unwrap(), small);
    let log_len = std::fs::metadata(h.session.event_log_path()).unwrap().len();
    assert!(log_len < 8 * 1024, "the log holds {log_len} bytes");

    // A resumed session reads them back as well.
    let id = h.session.id().0.clone();
    // The harness's session writes an untagged log: accepted as foreign, as --trust-log does.
    let key = tackle_runtime::LogKey::from_bytes(&[1; 32]);
    let resumed = Session::resume(h.root(), &id, &key, tackle_runtime::ForeignLogs::Accept)
        .unwrap()
        .session;
    assert_eq!(resumed.recorded_arguments(&stored).unwrap(), big);

    // With no grace at all, the janitor removes what nothing names and keeps the arguments.
    let orphan = h.session.store.put(b"named by nothing").unwrap();
    let report = Janitor::new(&h.session.store, Duration::ZERO)
        .collect(SystemTime::now() + Duration::from_secs(1), false)
        .unwrap();
    assert!(!report.skipped_guard_held, "{report:?}");
    assert!(report.removed.contains(&orphan.id), "{report:?}");
    let id = ArtifactId::from_internal_uri(&reference.artifact).unwrap();
    assert!(h.session.store.contains(id), "{report:?}");
    assert_eq!(resumed.recorded_arguments(&stored).unwrap(), big);
}
