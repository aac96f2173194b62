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

/// Denies every `step_exclusive` call; allows the rest.
struct DenyForbidden;

impl tackle_runtime::GateHook for DenyForbidden {
    fn check(&self, request: &tackle_runtime::GateRequest<'_>) -> tackle_runtime::GateVerdict {
        if request.tool == "step_exclusive" {
            tackle_runtime::GateVerdict::Deny {
                key: request.keys[0].clone(),
                rule: "deny tool.step_exclusive".into(),
                message: "step_exclusive is denied by policy; use step".into(),
            }
        } else {
            tackle_runtime::GateVerdict::Allow
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_denied_call_is_a_result_and_is_recorded_once() {
    let lab = Lab::new(None);
    let h = step_harness(&lab, vec![]);
    let runtime = tackle_runtime::Runtime::new(
        tackle_runtime::Catalog::new(vec![Step::parallel(&lab), Step::exclusive(&lab)]).unwrap(),
        Arc::new(DenyForbidden),
        tackle_runtime::RuntimeConfig {
            preview: WIDE,
            call_timeout: LONG_TIMEOUT,
            ..tackle_runtime::RuntimeConfig::default()
        },
    );
    let calls = vec![
        call("denied", "step_exclusive", json!({"id": "denied"})),
        call("allowed", "step", json!({"id": "allowed"})),
    ];
    let results = guarded(runtime.run_batch(&h.session, calls, CancellationToken::new()))
        .await
        .unwrap();
    let denied = &results[0];
    assert_eq!(
        (denied.status, code(denied)),
        (CallStatus::Denied, Some("permission_denied"))
    );
    assert_eq!(denied.metadata["tool_denied"]["key"], "tool.step_exclusive");
    assert_eq!(
        denied.metadata["tool_denied"]["rule"],
        "deny tool.step_exclusive"
    );
    assert!(!lab.ran("denied"));
    assert_eq!(results[1].status, CallStatus::Ok);
    let kinds: Vec<(String, String)> = h
        .events()
        .iter()
        .filter(|e| e["call_id"] == "denied")
        .map(|e| {
            (
                e["type"].as_str().unwrap().to_owned(),
                e["status"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("call_started".into(), "".into()),
            ("call_finished".into(), "denied".into())
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_batch_cancelled_before_it_starts_runs_nothing_and_records_everything() {
    let lab = Lab::new(None);
    let h = step_harness(&lab, vec![]);
    let cancel = CancellationToken::new();
    cancel.cancel();
    let calls = vec![
        call("p", "step", json!({"id": "p"})),
        call("e", "step_exclusive", json!({"id": "e"})),
        call("u", "nope", json!({})),
    ];
    let results = h.run_with(calls, cancel).await;
    let got: Vec<(CallStatus, Option<&str>)> =
        results.iter().map(|r| (r.status, code(r))).collect();
    assert_eq!(
        got,
        [
            (CallStatus::Cancelled, Some("cancelled")),
            (CallStatus::Cancelled, Some("cancelled")),
            (CallStatus::Error, Some("unknown_tool")),
        ]
    );
    assert!(!lab.ran("p") && !lab.ran("e"));
    let events = h.events();
    for id in ["p", "e", "u"] {
        let n = |kind: &str| {
            events
                .iter()
                .filter(|e| e["call_id"] == id && e["type"] == kind)
                .count()
        };
        assert_eq!((n("call_started"), n("call_finished")), (1, 1), "{id}");
    }
}

/// A batch of one call that runs as a task (as every MCP request does) is polled in place
/// rather than spawned: a panic, a timeout and a cancellation must end it exactly as they end a
/// call in a larger batch.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_alone_in_its_batch_fails_the_same_ways() {
    let lab = Lab::new(None);
    let h = Arc::new(Harness::new(
        vec![
            Arc::new(Panics) as Arc<dyn DynTool>,
            Arc::new(Hang { lab: lab.clone() }),
        ],
        WIDE,
        Duration::from_millis(300),
    ));
    let as_task = |calls: Vec<tackle_protocol::ToolCall>, cancel: CancellationToken| {
        let h = Arc::clone(&h);
        tokio::spawn(async move { h.run_with(calls, cancel).await })
    };
    let r = &as_task(
        vec![call("boom", "panics", json!({}))],
        CancellationToken::new(),
    )
    .await
    .unwrap()[0];
    assert_eq!(
        (r.status, code(r)),
        (CallStatus::Error, Some("tool_panicked"))
    );
    assert!(r.text().contains("during execute"), "{}", r.text());

    let before = "partial\n";
    let r = &as_task(
        vec![call(
            "slow",
            "hang",
            json!({"id": "slow", "before": before}),
        )],
        CancellationToken::new(),
    )
    .await
    .unwrap()[0];
    assert_eq!(
        (r.status, code(r), r.incomplete),
        (CallStatus::TimedOut, Some("timeout"), true)
    );
    assert_eq!(
        h.read_artifact(&r.retained_output[0].artifact),
        before.as_bytes()
    );

    let cancel = CancellationToken::new();
    let run = as_task(
        vec![call("stopped", "hang", json!({"id": "stopped"}))],
        cancel.clone(),
    );
    lab.wait("start:stopped").await;
    cancel.cancel();
    let results = run.await.unwrap();
    assert_eq!(results[0].status, CallStatus::Cancelled);
    let finished = h.finished_events();
    assert_eq!(finished.len(), 3, "one call_finished per call");
}
