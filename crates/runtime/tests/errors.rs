//! Failures are tool results with stable codes, never errors that end the batch (DESIGN.md §2,
//! §3): unknown tools, bad arguments, panics, timeouts and cancellation.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use serde_json::json;
use tackle_protocol::{CallStatus, Concurrency};
use tackle_runtime::CancellationToken;
use tackle_tool::{
    DynTool, ExecuteContext, PrepareContext, Prepared, Tool, ToolCompletion, ToolError,
};

fn step_harness(lab: &Arc<Lab>, extra: Vec<Arc<dyn DynTool>>) -> Harness {
    let mut tools = vec![
        Step::parallel(lab),
        Step::exclusive(lab),
        Arc::new(BadPrepare) as Arc<dyn DynTool>,
    ];
    tools.extend(extra);
    Harness::new(tools, WIDE, LONG_TIMEOUT)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn unknown_tool_names_the_closest_registered_tools() {
    let lab = Lab::new(None);
    let h = step_harness(&lab, vec![]);
    let results = h
        .run(vec![
            call("typo", "stpe", json!({})),
            call("far", "zzzzzzzz", json!({})),
            call("fine", "step", json!({"id": "fine"})),
        ])
        .await;

    let typo = &results[0];
    assert_eq!(
        (typo.status, code(typo), typo.is_error),
        (CallStatus::Error, Some("unknown_tool"), true)
    );
    let closest: Vec<&str> = typo.metadata["closest"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(closest.first(), Some(&"step"), "{closest:?}");
    assert!(
        closest.len() <= 3
            && closest
                .iter()
                .all(|c| ["step", "step_exclusive", "bad_prepare"].contains(c))
    );
    assert!(typo.text().contains("did you mean step"), "{}", typo.text());

    // Nothing close: no suggestions, but the text lists what exists.
    let far = &results[1];
    assert_eq!(code(far), Some("unknown_tool"));
    assert_eq!(far.metadata["closest"], json!([]));
    assert!(
        far.text()
            .contains("available tools: step, step_exclusive, bad_prepare"),
        "{}",
        far.text()
    );

    assert_eq!(
        results[2].status,
        CallStatus::Ok,
        "one bad call does not fail the batch"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn invalid_arguments_name_the_json_path_and_never_run_the_tool() {
    let lab = Lab::new(None);
    let h = step_harness(&lab, vec![]);
    let cases = [
        (json!({"id": "a", "bogus": 1}), "$.bogus"),
        (json!({}), "$.id"),
        (json!({"id": 3}), "$.id"),
        (json!({"id": "a", "work_ms": "10"}), "$.work_ms"),
        (json!({"id": "a", "work_ms": -1}), "$.work_ms"),
        (json!({"id": "a", "wait_for": ["ok", 7]}), "$.wait_for[1]"),
        (json!(["id"]), "$"),
        (json!(null), "$"),
    ];
    let calls = cases
        .iter()
        .enumerate()
        .map(|(i, (args, _))| call(&format!("c{i}"), "step", args.clone()))
        .collect();
    let results = h.run(calls).await;
    for ((args, path), r) in cases.iter().zip(&results) {
        assert_eq!(
            (r.status, code(r)),
            (CallStatus::Error, Some("invalid_arguments")),
            "{args}"
        );
        assert_eq!(r.metadata["path"], json!(path), "{args}: {}", r.text());
        assert!(
            r.text().contains(path),
            "the message names the path: {}",
            r.text()
        );
    }
    assert!(
        !lab.ran("a"),
        "a call with invalid arguments never executes"
    );
}

/// Panics in `prepare`.
struct PanicsInPrepare;

impl Tool for PanicsInPrepare {
    type Args = NoArgs;
    type Plan = ();
    fn name(&self) -> &str {
        "panics_in_prepare"
    }
    fn description(&self) -> Cow<'static, str> {
        Cow::Borrowed("Panics in prepare.")
    }
    fn concurrency(&self) -> Concurrency {
        Concurrency::Parallel
    }
    fn read_only(&self) -> bool {
        true
    }
    fn prepare(&self, _: NoArgs, _: &PrepareContext<'_>) -> Result<Prepared<()>, ToolError> {
        panic!("deliberate test panic in prepare")
    }
    async fn execute(&self, _: (), _: ExecuteContext) -> Result<ToolCompletion, ToolError> {
        unreachable!("prepare always panics")
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_panicking_tool_is_a_result_and_its_siblings_still_succeed() {
    let lab = Lab::new(None);
    let h = step_harness(&lab, vec![Arc::new(Panics), Arc::new(PanicsInPrepare)]);
    let results = h
        .run(vec![
            call("before", "step", json!({"id": "before"})),
            call("boom", "panics", json!({})),
            call("boom_prepare", "panics_in_prepare", json!({})),
            call("after", "step", json!({"id": "after"})),
            call("exclusive", "step_exclusive", json!({"id": "exclusive"})),
        ])
        .await;
    for (i, phase) in [(1, "execute"), (2, "prepare")] {
        let r = &results[i];
        assert_eq!(
            (r.status, code(r), r.is_error),
            (CallStatus::Error, Some("tool_panicked"), true)
        );
        assert!(
            r.text().contains(&format!("during {phase}")),
            "{}",
            r.text()
        );
        assert!(r.text().contains("deliberate test panic"), "{}", r.text());
    }
    for i in [0, 3, 4] {
        assert_eq!(results[i].status, CallStatus::Ok, "{}", results[i].text());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_timeout_keeps_the_output_streamed_before_it() {
    let lab = Lab::new(None);
    let h = Harness::new(
        vec![Arc::new(Hang { lab: lab.clone() }), Step::parallel(&lab)],
        WIDE,
        Duration::from_millis(300),
    );
    let before = "line one\nline two\n";
    let results = h
        .run(vec![
            call("slow", "hang", json!({"id": "slow", "before": before})),
            call("quick", "step", json!({"id": "quick"})),
        ])
        .await;
    let r = &results[0];
    assert_eq!(
        (r.status, code(r), r.is_error, r.incomplete),
        (CallStatus::TimedOut, Some("timeout"), true, true)
    );
    let text = r.text();
    assert!(text.starts_with("error [timeout]:"), "{text}");
    assert!(
        text.contains(before),
        "the streamed output is shown: {text}"
    );
    assert_eq!(r.retained_output.len(), 1);
    assert_eq!(
        h.read_artifact(&r.retained_output[0].artifact),
        before.as_bytes()
    );
    assert_eq!(results[1].status, CallStatus::Ok);

    let finished = h.finished_events();
    let slow = finished.iter().find(|e| e["call_id"] == "slow").unwrap();
    assert_eq!(slow["status"], "timed_out");
    assert_eq!(slow["incomplete"], true);
    assert_eq!(
        slow["retained_output"][0]["artifact"],
        json!(r.retained_output[0].artifact)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn cancellation_ends_running_and_not_yet_started_calls() {
    let lab = Lab::new(None);
    let h = Harness::new(
        vec![
            Arc::new(Hang { lab: lab.clone() }),
            Step::parallel(&lab),
            Step::exclusive(&lab),
        ],
        WIDE,
        LONG_TIMEOUT,
    );
    let cancel = CancellationToken::new();
    let calls = vec![
        call(
            "running",
            "hang",
            json!({"id": "running", "key": "k", "before": "partial output\n"}),
        ),
        call("queued", "step", json!({"id": "queued", "key": "k"})),
        call("later", "step_exclusive", json!({"id": "later"})),
    ];
    let (results, ()) = tokio::join!(h.run_with(calls, cancel.clone()), async {
        lab.wait("start:running").await;
        cancel.cancel();
    });

    let running = &results[0];
    assert_eq!(
        (running.status, code(running)),
        (CallStatus::Cancelled, Some("cancelled"))
    );
    assert!(
        running.incomplete && running.text().contains("partial output\n"),
        "{}",
        running.text()
    );
    assert_eq!(
        h.read_artifact(&running.retained_output[0].artifact),
        b"partial output\n"
    );

    for r in &results[1..] {
        assert_eq!(
            (r.status, code(r), r.incomplete),
            (CallStatus::Cancelled, Some("cancelled"), false)
        );
        assert!(r.retained_output.is_empty());
    }
    assert!(!lab.ran("queued") && !lab.ran("later"));
}
