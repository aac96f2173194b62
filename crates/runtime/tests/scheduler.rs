//! Scheduling through `Runtime::run_batch` (seed 000, "Execution concurrency"): parallel calls
//! overlap, equal serialization keys run in turn order, exclusive calls run alone after the
//! parallel phase, terminal events land in completion order, and every call that reaches the
//! dispatcher is recorded exactly once at each end.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use serde_json::json;
use tackle_protocol::{CallStatus, ToolCall};
use tackle_runtime::{AllowAll, CancellationToken, Catalog, Runtime, RuntimeConfig};
use tackle_tool::DynTool;

fn ids(results: &[tackle_protocol::ToolResult]) -> Vec<&str> {
    results.iter().map(|r| r.call_id.0.as_str()).collect()
}

fn assert_all_ok(results: &[tackle_protocol::ToolResult]) {
    for r in results {
        assert_eq!(r.status, CallStatus::Ok, "{}: {}", r.call_id, r.text());
    }
}

/// Four parallel calls each wait at a 4-party barrier before finishing: they can only all
/// finish if they all run at the same time. Serialized, the first would wait forever and the
/// guard fails the test.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn parallel_calls_all_run_at_once() {
    let lab = Lab::new(Some(4));
    let h = Harness::new(vec![Step::parallel(&lab)], WIDE, LONG_TIMEOUT);
    let calls: Vec<ToolCall> = (0..4)
        .map(|i| {
            call(
                &format!("p{i}"),
                "step",
                json!({"id": format!("p{i}"), "barrier": true}),
            )
        })
        .collect();
    let results = h.run(calls).await;
    assert_all_ok(&results);
    assert_eq!(ids(&results), ["p0", "p1", "p2", "p3"]);
    for a in 0..4 {
        for b in 0..4 {
            let (a, b) = (lab.span(&format!("p{a}")), lab.span(&format!("p{b}")));
            assert!(
                a.start < b.end,
                "every call started before every other ended"
            );
        }
    }
    assert_eq!(lab.max_in_flight(), 4);
}

/// Calls sharing a key run one after another in turn order; a call with another key runs beside
/// all of them. `k1` cannot finish until `other` has started, and `other` cannot finish until
/// `k3` has started, so `other` provably overlaps the whole keyed lane.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn equal_keys_serialize_in_turn_order_beside_other_keys() {
    let lab = Lab::new(None);
    let h = Harness::new(vec![Step::parallel(&lab)], WIDE, LONG_TIMEOUT);
    let calls = vec![
        call(
            "k1",
            "step",
            json!({"id": "k1", "key": "file:a", "wait_for": ["start:other"], "work_ms": 10}),
        ),
        call(
            "other",
            "step",
            json!({"id": "other", "key": "file:b", "wait_for": ["start:k3"]}),
        ),
        call(
            "k2",
            "step",
            json!({"id": "k2", "key": "file:a", "work_ms": 10}),
        ),
        call(
            "k3",
            "step",
            json!({"id": "k3", "key": "file:a", "work_ms": 10}),
        ),
    ];
    let results = h.run(calls).await;
    assert_all_ok(&results);
    assert_eq!(ids(&results), ["k1", "other", "k2", "k3"]);

    let (k1, k2, k3, other) = (
        lab.span("k1"),
        lab.span("k2"),
        lab.span("k3"),
        lab.span("other"),
    );
    assert!(
        k1.end < k2.start,
        "k2 started before k1 ended: {k1:?} {k2:?}"
    );
    assert!(
        k2.end < k3.start,
        "k3 started before k2 ended: {k2:?} {k3:?}"
    );
    assert!(
        other.start < k1.end && k3.start < other.end,
        "other overlaps the keyed lane"
    );
}

/// Exclusive calls wait for every parallel call, then run one at a time in turn order, however
/// they are interleaved with parallel calls in the batch.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn exclusive_calls_run_alone_after_the_parallel_phase() {
    let lab = Lab::new(None);
    let h = Harness::new(
        vec![Step::parallel(&lab), Step::exclusive(&lab)],
        WIDE,
        LONG_TIMEOUT,
    );
    let calls = vec![
        call("e1", "step_exclusive", json!({"id": "e1", "work_ms": 5})),
        call(
            "p1",
            "step",
            json!({"id": "p1", "wait_for": ["start:p2"], "work_ms": 20}),
        ),
        call("e2", "step_exclusive", json!({"id": "e2", "work_ms": 5})),
        call(
            "p2",
            "step",
            json!({"id": "p2", "wait_for": ["start:p1"], "work_ms": 20}),
        ),
        call(
            "e3",
            "step_exclusive",
            json!({"id": "e3", "key": "same-key-does-not-matter"}),
        ),
    ];
    let results = h.run(calls).await;
    assert_all_ok(&results);
    assert_eq!(ids(&results), ["e1", "p1", "e2", "p2", "e3"]);

    let (p1, p2) = (lab.span("p1"), lab.span("p2"));
    assert!(
        p1.start < p2.end && p2.start < p1.end,
        "the parallel calls overlap"
    );
    let last_parallel_end = p1.end.max(p2.end);
    let ex: Vec<Span> = ["e1", "e2", "e3"].iter().map(|id| lab.span(id)).collect();
    for e in &ex {
        assert!(
            e.start > last_parallel_end,
            "exclusive call {e:?} started before the parallel phase ended"
        );
    }
    for w in ex.windows(2) {
        assert!(
            w[0].end < w[1].start,
            "exclusive calls overlap or run out of turn order: {w:?}"
        );
    }
    assert_eq!(lab.max_in_flight(), 2);
}

/// Calls complete in the reverse of their turn order (each waits until the next one's
/// `call_finished` is durable). The log's `call_finished` events follow completion order; the
/// returned results follow call order.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn terminal_events_follow_completion_order_and_results_follow_call_order() {
    let lab = Lab::new(None);
    let mut h = Harness::new(vec![Step::parallel(&lab)], WIDE, LONG_TIMEOUT);
    h.runtime = h.runtime.with_event_observer(lab.observe_events());
    let calls = vec![
        call("c0", "step", json!({"id": "c0", "after_logged": "c1"})),
        call("c1", "step", json!({"id": "c1", "after_logged": "c2"})),
        call("c2", "step", json!({"id": "c2", "after_logged": "c3"})),
        call("c3", "step", json!({"id": "c3"})),
    ];
    let results = h.run(calls).await;
    assert_all_ok(&results);
    assert_eq!(ids(&results), ["c0", "c1", "c2", "c3"]);
    for r in &results {
        assert_eq!(
            r.text(),
            format!("done {}\n", r.call_id),
            "result keyed by its own call id"
        );
    }

    let logged: Vec<String> = h
        .finished_events()
        .iter()
        .map(|e| e["call_id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(lab.end_order(), ["c3", "c2", "c1", "c0"]);
    assert_eq!(logged, lab.end_order());

    // All four were dispatched together: each started before the last one ended.
    let c0 = lab.span("c0");
    for id in ["c1", "c2", "c3"] {
        assert!(lab.span(id).start < c0.end);
    }
}

/// Every call that reaches the dispatcher gets exactly one `call_started` and one
/// `call_finished`, in that order, whatever happens to it: success, unknown tool, bad
/// arguments, a failing prepare, a panic, a timeout, and a cancelled batch (running, queued in
/// a keyed lane, and exclusive-not-yet-started calls).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_call_is_recorded_exactly_once_at_each_end() {
    let lab = Lab::new(None);
    let tools = || -> Vec<Arc<dyn DynTool>> {
        vec![
            Step::parallel(&lab),
            Step::exclusive(&lab),
            Arc::new(BadPrepare),
            Arc::new(Panics),
            Arc::new(Hang { lab: lab.clone() }),
        ]
    };
    let h = Harness::new(tools(), WIDE, LONG_TIMEOUT);
    // A second engine on the same session with a short timeout, for the call that times out.
    let short = Runtime::new(
        Catalog::new(tools()).unwrap(),
        Arc::new(AllowAll),
        RuntimeConfig {
            preview: WIDE,
            call_timeout: Duration::from_millis(300),
            ..RuntimeConfig::default()
        },
    );

    let first = vec![
        call("ok", "step", json!({"id": "ok"})),
        call("unknown", "no_such_tool", json!({})),
        call("invalid", "step", json!({"id": 3})),
        call("prepare", "bad_prepare", json!({})),
        call("panic", "panics", json!({})),
    ];
    // Only the hanging call runs under the short timeout: a panic's backtrace printing must
    // never race a deadline.
    let timing_out = vec![call(
        "timeout",
        "hang",
        json!({"id": "timeout", "before": "partial\n"}),
    )];
    let first_ids: Vec<String> = first
        .iter()
        .chain(&timing_out)
        .map(|c| c.id.0.clone())
        .collect();
    let mut results = guarded(
        h.runtime
            .run_batch(&h.session, first, CancellationToken::new()),
    )
    .await
    .unwrap();
    results.extend(
        guarded(short.run_batch(&h.session, timing_out, CancellationToken::new()))
            .await
            .unwrap(),
    );
    let got: Vec<(&str, CallStatus, Option<&str>)> = results
        .iter()
        .map(|r| (r.call_id.0.as_str(), r.status, code(r)))
        .collect();
    assert_eq!(
        got,
        [
            ("ok", CallStatus::Ok, None),
            ("unknown", CallStatus::Error, Some("unknown_tool")),
            ("invalid", CallStatus::Error, Some("invalid_arguments")),
            ("prepare", CallStatus::Error, Some("not_found")),
            ("panic", CallStatus::Error, Some("tool_panicked")),
            ("timeout", CallStatus::TimedOut, Some("timeout")),
        ]
    );

    let cancel = CancellationToken::new();
    let second = vec![
        call(
            "running",
            "hang",
            json!({"id": "running", "key": "k", "before": "so far\n"}),
        ),
        call("queued", "step", json!({"id": "queued", "key": "k"})),
        call("exclusive", "step_exclusive", json!({"id": "exclusive"})),
    ];
    let second_ids: Vec<String> = second.iter().map(|c| c.id.0.clone()).collect();
    let (results, ()) = tokio::join!(h.run_with(second, cancel.clone()), async {
        lab.wait("start:running").await;
        cancel.cancel();
    });
    let got: Vec<(&str, CallStatus, Option<&str>)> = results
        .iter()
        .map(|r| (r.call_id.0.as_str(), r.status, code(r)))
        .collect();
    assert_eq!(
        got,
        [
            ("running", CallStatus::Cancelled, Some("cancelled")),
            ("queued", CallStatus::Cancelled, Some("cancelled")),
            ("exclusive", CallStatus::Cancelled, Some("cancelled")),
        ]
    );
    assert!(
        !lab.ran("queued") && !lab.ran("exclusive"),
        "cancelled calls never started"
    );

    let events = h.events();
    let mut seen: HashMap<String, Vec<&str>> = HashMap::new();
    for e in &events {
        let kind = e["type"].as_str().unwrap();
        if kind == "call_started" || kind == "call_finished" {
            seen.entry(e["call_id"].as_str().unwrap().to_owned())
                .or_default()
                .push(kind);
        }
    }
    for id in first_ids.iter().chain(&second_ids) {
        assert_eq!(
            seen.get(id).map(Vec::as_slice),
            Some(&["call_started", "call_finished"][..]),
            "events of {id}"
        );
    }
    assert_eq!(
        seen.len(),
        first_ids.len() + second_ids.len(),
        "no events for calls that were not made"
    );
}
