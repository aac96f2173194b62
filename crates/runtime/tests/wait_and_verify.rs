//! wait_and_verify through the runtime (seed 003, "wait_and_verify (v2.9+) — bounded
//! poll-until-condition"): every poll is a call of its own, gated and recorded like a direct
//! call; the wait verifies, times out or runs out of attempts; a malformed filter, a request
//! past a ceiling and a mutating target are refused before anything is polled.
//!
//! The polled tool is `Flip`: its result is `{"poll": n, "ready": n >= ready_at}`, so the state
//! changes are driven by the poll count alone, never by a clock.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use common::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tackle_protocol::{CallStatus, Concurrency};
use tackle_runtime::{
    CancellationToken, Catalog, GateHook, GateRequest, GateVerdict, Runtime, RuntimeConfig,
};
use tackle_tool::{
    DynTool, ExecuteContext, PrepareContext, Prepared, Routing, Tool, ToolCompletion, ToolError,
};
use tackle_tools::{WaitAndVerify, WaitSettings, WriteFile};
use tokio::sync::watch;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct FlipArgs {}

/// Turns ready on poll `ready_at`; fails on the polls listed in `fail_on`.
struct Flip {
    polls: AtomicU32,
    ready_at: u32,
    fail_on: Vec<u32>,
    /// Told the count after every poll.
    seen: watch::Sender<u32>,
    label: tackle_protocol::Label,
}

impl Flip {
    fn new(ready_at: u32) -> Arc<Self> {
        Self::failing(ready_at, Vec::new())
    }

    fn failing(ready_at: u32, fail_on: Vec<u32>) -> Arc<Self> {
        Self::labelled(ready_at, fail_on, tackle_protocol::Label::LOCAL)
    }

    fn labelled(ready_at: u32, fail_on: Vec<u32>, label: tackle_protocol::Label) -> Arc<Self> {
        Arc::new(Self {
            polls: AtomicU32::new(0),
            ready_at,
            fail_on,
            seen: watch::channel(0).0,
            label,
        })
    }
}

impl Tool for Flip {
    type Args = FlipArgs;
    type Plan = ();
    fn name(&self) -> &str {
        "flip"
    }
    fn description(&self) -> Cow<'static, str> {
        Cow::Borrowed("Report whether the thing is ready.")
    }
    fn concurrency(&self) -> Concurrency {
        Concurrency::Parallel
    }
    fn read_only(&self) -> bool {
        true
    }
    fn label(&self) -> tackle_protocol::Label {
        self.label
    }
    fn prepare(&self, _: FlipArgs, _: &PrepareContext<'_>) -> Result<Prepared<()>, ToolError> {
        Ok(Prepared::new(Routing::default(), ()))
    }
    async fn execute(&self, _: (), _: ExecuteContext) -> Result<ToolCompletion, ToolError> {
        let n = self.polls.fetch_add(1, Ordering::SeqCst) + 1;
        self.seen.send_replace(n);
        if self.fail_on.contains(&n) {
            return Err(ToolError::new(
                tackle_protocol::ErrorCode::new("flaky"),
                "flip: not reachable right now",
            ));
        }
        Ok(ToolCompletion::single(
            json!({"poll": n, "ready": n >= self.ready_at}).to_string(),
        ))
    }
}

/// Counts the gate's requests for `flip`, denying them when told to.
struct CountingGate {
    flip_checks: AtomicU32,
    deny_flip: bool,
}

impl GateHook for CountingGate {
    fn check(&self, request: &GateRequest<'_>) -> GateVerdict {
        if request.tool != "flip" {
            return GateVerdict::Allow;
        }
        self.flip_checks.fetch_add(1, Ordering::SeqCst);
        if self.deny_flip {
            return GateVerdict::Deny {
                key: "tool.flip".into(),
                rule: "--deny tool.flip".into(),
                message: "tool.flip is denied by --deny tool.flip".into(),
            };
        }
        GateVerdict::Allow
    }
}

const CEILINGS: WaitSettings = WaitSettings {
    max_timeout_seconds: 30.0,
    max_attempts: 8,
    poll_allow: Vec::new(),
};

fn harness(flip: Arc<Flip>, gate: Arc<CountingGate>) -> Harness {
    let tools: Vec<Arc<dyn DynTool>> = vec![
        flip,
        Arc::new(WaitAndVerify::new(CEILINGS)),
        Arc::new(WriteFile),
    ];
    let mut h = Harness::new(Vec::new(), WIDE, LONG_TIMEOUT);
    h.runtime = Runtime::new(
        Catalog::new(tools).unwrap(),
        gate,
        RuntimeConfig {
            preview: WIDE,
            call_timeout: LONG_TIMEOUT,
            ..RuntimeConfig::default()
        },
    );
    h
}

fn gate(deny_flip: bool) -> Arc<CountingGate> {
    Arc::new(CountingGate {
        flip_checks: AtomicU32::new(0),
        deny_flip,
    })
}

fn report(result: &tackle_protocol::ToolResult) -> Value {
    assert!(!result.is_error, "{}", result.text());
    serde_json::from_str(&result.text()).expect("the result is the report's JSON")
}

fn wait(arguments: Value) -> tackle_protocol::ToolCall {
    call("w1", "wait_and_verify", arguments)
}

/// Every call in the log has one start and one end, polls included; returns the polls' ends.
fn poll_ends(h: &Harness) -> Vec<Value> {
    let events = h.events();
    let started: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "call_started")
        .collect();
    let finished = h.finished_events();
    assert_eq!(started.len(), finished.len(), "{events:#?}");
    finished
        .into_iter()
        .filter(|e| e["call_id"].as_str().unwrap().starts_with("w1.poll-"))
        .collect()
}

/// What the polls returned comes out with the wait: polling a remote tool never yields a
/// trusted report.
#[tokio::test]
async fn the_report_carries_the_label_of_what_it_polled() {
    use tackle_protocol::Label;
    for label in [Label::LOCAL, Label::REMOTE] {
        let h = harness(Flip::labelled(2, Vec::new(), label), gate(false));
        let r = h
            .run(vec![wait(json!({
                "tool": "flip",
                "expect_jq": ".ready",
                "interval_seconds": 0.01,
                "timeout_seconds": 30,
            }))])
            .await;
        assert_eq!(report(&r[0])["verified"], true);
        assert_eq!(r[0].label, label, "polling a {label:?} tool");
        let ends = h.finished_events();
        assert_eq!(
            ends.last().unwrap()["label"],
            serde_json::to_value(label).unwrap()
        );
    }
}

#[tokio::test]
async fn verifies_on_the_poll_that_turns_true_and_records_every_poll() {
    let (flip, g) = (Flip::new(3), gate(false));
    let h = harness(flip.clone(), g.clone());
    let r = h
        .run(vec![wait(json!({
            "tool": "flip",
            "expect_jq": ".ready",
            "interval_seconds": 0.01,
            "timeout_seconds": 30,
        }))])
        .await;
    let rep = report(&r[0]);
    assert_eq!(rep["verified"], true);
    assert_eq!(rep["outcome"], "verified");
    assert_eq!(rep["attempts"], 3);
    assert_eq!(rep["interval_seconds"], 0.01);
    assert_eq!(rep["condition"], "expect_jq=.ready");
    let matched: Vec<bool> = rep["observations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["matched"].as_bool().unwrap())
        .collect();
    assert_eq!(matched, [false, false, true]);
    assert!(rep["elapsed_seconds"].as_f64().unwrap() >= 0.02);
    // Each poll passed the gate and was recorded as a call of its own.
    assert_eq!(g.flip_checks.load(Ordering::SeqCst), 3);
    let ends = poll_ends(&h);
    let ids: Vec<&str> = ends
        .iter()
        .map(|e| e["call_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["w1.poll-1", "w1.poll-2", "w1.poll-3"]);
    assert!(
        ends.iter()
            .all(|e| e["tool"] == "flip" && e["status"] == "ok")
    );
    let trail_ids: Vec<&str> = rep["observations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["call_id"].as_str().unwrap())
        .collect();
    assert_eq!(trail_ids, ids);
}

#[tokio::test]
async fn a_condition_that_never_holds_exhausts_the_attempts_without_an_error() {
    let (flip, g) = (Flip::new(u32::MAX), gate(false));
    let h = harness(flip.clone(), g);
    let r = h
        .run(vec![wait(json!({
            "tool": "flip",
            "expect_contains": "\"ready\":true",
            "interval_seconds": 0.01,
            "max_attempts": 4,
        }))])
        .await;
    let rep = report(&r[0]);
    assert_eq!(rep["verified"], false);
    assert_eq!(rep["outcome"], "attempts_exhausted");
    assert_eq!(rep["attempts"], 4);
    assert_eq!(flip.polls.load(Ordering::SeqCst), 4);
    assert_eq!(poll_ends(&h).len(), 4);
}

#[tokio::test]
async fn a_wall_clock_that_fits_no_more_polls_ends_as_a_timeout() {
    let (flip, g) = (Flip::new(u32::MAX), gate(false));
    let h = harness(flip.clone(), g);
    // Polls start at 0, 0.02 and 0.04 s; the next would start past the 0.05 s budget.
    let r = h
        .run(vec![wait(json!({
            "tool": "flip",
            "expect_not_contains": "\"ready\":false",
            "interval_seconds": 0.02,
            "timeout_seconds": 0.05,
        }))])
        .await;
    let rep = report(&r[0]);
    assert_eq!(rep["verified"], false);
    assert_eq!(rep["outcome"], "timeout");
    let attempts = rep["attempts"].as_u64().unwrap();
    assert!((1..=3).contains(&attempts), "{rep}");
    assert_eq!(u64::from(flip.polls.load(Ordering::SeqCst)), attempts);
}

#[tokio::test]
async fn a_failing_poll_is_retried_as_transient() {
    let (flip, g) = (Flip::failing(2, vec![1]), gate(false));
    let h = harness(flip, g);
    let r = h
        .run(vec![wait(json!({
            "tool": "flip",
            "expect_jq": ".ready",
            "interval_seconds": 0.01,
        }))])
        .await;
    let rep = report(&r[0]);
    assert_eq!(rep["outcome"], "verified");
    assert_eq!(rep["attempts"], 2);
    assert_eq!(rep["observations"][0]["error"], "flaky");
    assert_eq!(rep["observations"][0]["matched"], false);
}

/// One row per request refused before any poll: the code, and that nothing was polled.
#[tokio::test]
async fn refused_requests_poll_nothing() {
    let rows: &[(Value, &str)] = &[
        (
            json!({"tool": "flip", "expect_jq": ".ready | (", "interval_seconds": 0.01}),
            "invalid_filter",
        ),
        (
            json!({"tool": "flip", "expect_jq": ".ready", "timeout_seconds": 31}),
            "past_ceiling",
        ),
        (
            json!({"tool": "flip", "expect_jq": ".ready", "max_attempts": 9}),
            "past_ceiling",
        ),
        (
            json!({"tool": "write_file", "args_json": "{\"path\": \"x\", \"content\": \"y\"}", "expect_contains": "ok"}),
            "not_pollable",
        ),
        (
            json!({"tool": "wait_and_verify", "expect_contains": "ok"}),
            "not_pollable",
        ),
        (
            json!({"tool": "no_such_tool", "expect_contains": "ok"}),
            "unknown_tool",
        ),
    ];
    for (arguments, want) in rows {
        let (flip, g) = (Flip::new(1), gate(false));
        let h = harness(flip.clone(), g);
        let r = h.run(vec![wait(arguments.clone())]).await;
        assert!(r[0].is_error, "{arguments}");
        assert_eq!(code(&r[0]), Some(*want), "{arguments}: {}", r[0].text());
        assert_eq!(flip.polls.load(Ordering::SeqCst), 0, "{arguments}");
        assert!(poll_ends(&h).is_empty(), "{arguments}");
        assert!(!h.root().join("x").exists(), "{arguments}");
    }
}

#[tokio::test]
async fn a_denied_poll_ends_the_wait_after_one_attempt() {
    let (flip, g) = (Flip::new(1), gate(true));
    let h = harness(flip.clone(), g.clone());
    let r = h
        .run(vec![wait(json!({
            "tool": "flip",
            "expect_jq": ".ready",
            "interval_seconds": 0.01,
        }))])
        .await;
    assert_eq!(code(&r[0]), Some("wait_aborted"), "{}", r[0].text());
    assert!(r[0].text().contains("denied"), "{}", r[0].text());
    assert_eq!(g.flip_checks.load(Ordering::SeqCst), 1);
    assert_eq!(flip.polls.load(Ordering::SeqCst), 0);
    let ends = poll_ends(&h);
    assert_eq!(ends.len(), 1);
    assert_eq!(ends[0]["status"], "denied");
    assert_eq!(
        r[0].metadata["observations"][0]["error"],
        "permission_denied"
    );
}

#[tokio::test]
async fn cancelling_the_batch_mid_wait_leaves_every_poll_recorded() {
    let (flip, g) = (Flip::new(u32::MAX), gate(false));
    let mut seen = flip.seen.subscribe();
    let h = harness(flip.clone(), g);
    let cancel = CancellationToken::new();
    let waiting = h.run_with(
        vec![wait(json!({
            "tool": "flip",
            "expect_jq": ".ready",
            "interval_seconds": 20,
            "timeout_seconds": 30,
        }))],
        cancel.clone(),
    );
    let canceller = async {
        seen.wait_for(|n| *n >= 1).await.unwrap();
        cancel.cancel();
    };
    let (r, ()) = tokio::join!(waiting, canceller);
    assert_eq!(r[0].status, CallStatus::Cancelled, "{}", r[0].text());
    // The one poll that ran has its end in the log, as the wait itself does.
    let ends = poll_ends(&h);
    assert_eq!(ends.len(), 1);
    assert_eq!(ends[0]["status"], "ok");
}
