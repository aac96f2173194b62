//! When a call's events are acknowledged: a call with effects only once both its events are on
//! the device; a read-only call once they are in the file (synced in the background).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::borrow::Cow;
use std::sync::Arc;

use common::*;
use serde_json::json;
use tackle_protocol::Concurrency;
use tackle_tool::{
    DynTool, ExecuteContext, PrepareContext, Prepared, Routing, Tool, ToolCompletion, ToolError,
};

/// A tool that declares effects (it changes nothing, but the runtime must assume it does).
struct Effectful;

impl Tool for Effectful {
    type Args = NoArgs;
    type Plan = ();
    fn name(&self) -> &str {
        "effectful"
    }
    fn description(&self) -> Cow<'static, str> {
        Cow::Borrowed("Declares effects.")
    }
    fn concurrency(&self) -> Concurrency {
        Concurrency::Exclusive
    }
    fn read_only(&self) -> bool {
        false
    }
    fn prepare(&self, _: NoArgs, _: &PrepareContext<'_>) -> Result<Prepared<()>, ToolError> {
        Ok(Prepared::new(Routing::default(), ()))
    }
    async fn execute(&self, _: (), _: ExecuteContext) -> Result<ToolCompletion, ToolError> {
        Ok(ToolCompletion::single("done"))
    }
}

fn harness() -> Harness {
    let lab = Lab::new(None);
    let tools: Vec<Arc<dyn DynTool>> = vec![Step::parallel(&lab), Arc::new(Effectful)];
    Harness::new(tools, WIDE, LONG_TIMEOUT)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_with_effects_is_acknowledged_only_once_its_events_are_durable() {
    let h = harness();
    let results = h.run(vec![call("e", "effectful", json!({}))]).await;
    assert!(!results[0].is_error, "{}", results[0].text());
    let written = h.session.written_seq();
    // session_started, call_started, call_finished.
    assert_eq!(written, 3);
    assert_eq!(h.session.durable_seq(), written);
}

#[tokio::test(flavor = "current_thread")]
async fn a_read_only_call_is_acknowledged_once_written_and_synced_after() {
    let h = harness();
    let results = h.run(vec![call("r", "step", json!({"id": "r"}))]).await;
    assert!(!results[0].is_error, "{}", results[0].text());
    // Both events are in the file as soon as the result is back.
    assert_eq!(h.session.written_seq(), 3);
    let finished = h.finished_events();
    assert_eq!(finished.len(), 1);
    assert_eq!(finished[0]["call_id"], "r");
    h.session.sync().unwrap();
    assert_eq!(h.session.durable_seq(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_call_with_effects_is_only_written() {
    let h = harness();
    // Bad arguments: refused before anything ran.
    let results = h
        .run(vec![call("bad", "effectful", json!({"unexpected": 1}))])
        .await;
    assert!(results[0].is_error);
    assert_eq!(h.session.written_seq(), 3);
    h.session.sync().unwrap();
    assert_eq!(h.session.durable_seq(), 3);
}

#[test]
fn a_start_that_narrows_nothing_is_written_and_any_other_is_synced_before_the_session_is_handed_out()
 {
    use tackle_protocol::Posture;
    use tackle_runtime::{Session, SessionOptions, ToolFilter};
    let root = tempfile::tempdir().unwrap();
    // A log without its start resumes as a top-level standard session, so losing this start
    // changes nothing: it is in the file, and made durable with the next sync.
    let top = Session::open(root.path()).unwrap();
    assert_eq!(top.written_seq(), 1);
    top.sync().unwrap();
    assert_eq!(top.durable_seq(), 1);
    // Every start a resume could not infer is durable before the session exists.
    let narrowed = [
        SessionOptions {
            posture: Posture::Sealed,
            ..SessionOptions::default()
        },
        SessionOptions {
            posture: Posture::Gated,
            ..SessionOptions::default()
        },
        SessionOptions {
            tools: ToolFilter::only(["read_file".to_owned()]),
            ..SessionOptions::default()
        },
        SessionOptions {
            agent: Some("explore".to_owned()),
            ..SessionOptions::default()
        },
    ];
    for options in narrowed {
        let session = Session::open_with(root.path(), options.clone()).unwrap();
        assert_eq!(session.durable_seq(), 1, "{options:?}");
    }
    // A subagent's start names its parent, whose synced records may name it.
    let child = top.open_child(None, ToolFilter::default()).unwrap();
    assert_eq!(child.durable_seq(), 1);
}
