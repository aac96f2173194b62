//! Calls the gate wants approved go to the approver before anything is scheduled: once,
//! for the session, refused with a message the model sees, or refused because nobody can be
//! asked. Every path still records exactly one `call_started` and one `call_finished`.

#![allow(clippy::unwrap_used)] // test gate and approver: a poisoned lock should panic

mod common;

use std::sync::{Arc, Mutex};

use common::*;
use serde_json::json;
use tackle_protocol::CallStatus;
use tackle_runtime::{
    Approval, ApprovalFuture, ApprovalRequest, Approver, CancellationToken, Catalog, GateHook,
    GateRequest, GateVerdict, HeadlessApprover, Runtime, RuntimeConfig,
};

/// Asks about every call unless its keys were granted for the session.
#[derive(Default)]
struct AskAlways {
    granted: Mutex<Vec<String>>,
}

impl GateHook for AskAlways {
    fn check(&self, request: &GateRequest<'_>) -> GateVerdict {
        let granted = self.granted.lock().unwrap();
        let asking: Vec<String> = request
            .keys
            .iter()
            .filter(|k| !granted.contains(k))
            .cloned()
            .collect();
        if asking.is_empty() {
            GateVerdict::Allow
        } else {
            GateVerdict::Ask {
                message: format!("{} needs approval", asking[0]),
                keys: asking,
            }
        }
    }

    fn grant_session(&self, _session: &tackle_runtime::SessionContext, keys: &[String]) {
        self.granted.lock().unwrap().extend(keys.iter().cloned());
    }
}

/// Answers from a script, recording what it was shown.
struct Scripted {
    answers: Mutex<Vec<Approval>>,
    shown: Mutex<Vec<(String, Vec<String>, String)>>,
}

impl Scripted {
    fn new(answers: Vec<Approval>) -> Arc<Self> {
        Arc::new(Self {
            answers: Mutex::new(answers),
            shown: Mutex::new(Vec::new()),
        })
    }
}

impl Approver for Scripted {
    fn approve<'a>(&'a self, request: ApprovalRequest<'a>) -> ApprovalFuture<'a> {
        self.shown.lock().unwrap().push((
            request.call_id.to_string(),
            request.keys.to_vec(),
            request.message.to_owned(),
        ));
        let answer = self.answers.lock().unwrap().remove(0);
        Box::pin(std::future::ready(answer))
    }
}

fn runtime(lab: &Arc<Lab>, approver: Arc<dyn Approver>) -> (Runtime, Arc<AskAlways>) {
    let gate = Arc::new(AskAlways::default());
    let rt = Runtime::new(
        Catalog::new(vec![Step::parallel(lab)]).unwrap(),
        gate.clone(),
        RuntimeConfig {
            preview: WIDE,
            call_timeout: LONG_TIMEOUT,
            ..RuntimeConfig::default()
        },
    )
    .with_approver(approver);
    (rt, gate)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn each_answer_has_its_effect_and_every_call_is_recorded() {
    let lab = Lab::new(None);
    let h = Harness::new(vec![Step::parallel(&lab)], WIDE, LONG_TIMEOUT);
    let approver = Scripted::new(vec![
        Approval::Once,
        Approval::Deny {
            message: Some("not on a Friday".into()),
        },
        Approval::Unavailable {
            reason: "the terminal is closed".into(),
        },
        Approval::Session,
    ]);
    let (rt, _gate) = runtime(&lab, approver.clone());
    let calls = vec![
        call("once", "step", json!({"id": "once"})),
        call("refused", "step", json!({"id": "refused"})),
        call("nobody", "step", json!({"id": "nobody"})),
        call("session", "step", json!({"id": "session"})),
    ];
    let results = guarded(rt.run_batch(&h.session, calls, CancellationToken::new()))
        .await
        .unwrap();
    assert_eq!(results[0].status, CallStatus::Ok);
    assert_eq!(
        (results[1].status, code(&results[1])),
        (CallStatus::Denied, Some("permission_denied"))
    );
    assert!(
        results[1].text().contains("not on a Friday"),
        "{}",
        results[1].text()
    );
    assert_eq!(results[1].metadata["tool_denied"]["key"], "tool.step");
    assert_eq!(
        (results[2].status, code(&results[2])),
        (CallStatus::Denied, Some("approval_unavailable"))
    );
    assert!(
        results[2].text().contains("the terminal is closed"),
        "{}",
        results[2].text()
    );
    assert_eq!(results[3].status, CallStatus::Ok);
    assert!(lab.ran("once") && lab.ran("session"));
    assert!(
        !lab.ran("refused") && !lab.ran("nobody"),
        "refused calls never execute"
    );

    // The approver saw the exact keys and the gate's message.
    let shown = approver.shown.lock().unwrap().clone();
    assert_eq!(shown.len(), 4);
    assert_eq!(shown[0].1, vec!["tool.step".to_owned()]);
    assert_eq!(shown[0].2, "tool.step needs approval");

    let events = h.events();
    for id in ["once", "refused", "nobody", "session"] {
        let count = |ty: &str| {
            events
                .iter()
                .filter(|e| e["type"] == ty && e["call_id"] == id)
                .count()
        };
        assert_eq!(
            (count("call_started"), count("call_finished")),
            (1, 1),
            "{id}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_session_grant_stops_later_asks_for_the_same_keys() {
    let lab = Lab::new(None);
    let h = Harness::new(vec![Step::parallel(&lab)], WIDE, LONG_TIMEOUT);
    // One answer only: a second ask would panic on the empty script.
    let approver = Scripted::new(vec![Approval::Session]);
    let (rt, gate) = runtime(&lab, approver.clone());
    let first = vec![call("a", "step", json!({"id": "a"}))];
    let second = vec![
        call("b", "step", json!({"id": "b"})),
        call("c", "step", json!({"id": "c"})),
    ];
    for batch in [first, second] {
        let results = guarded(rt.run_batch(&h.session, batch, CancellationToken::new()))
            .await
            .unwrap();
        assert!(results.iter().all(|r| r.status == CallStatus::Ok));
    }
    assert_eq!(approver.shown.lock().unwrap().len(), 1);
    assert_eq!(*gate.granted.lock().unwrap(), vec!["tool.step".to_owned()]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn headless_refuses_with_approval_unavailable() {
    let lab = Lab::new(None);
    let h = Harness::new(vec![Step::parallel(&lab)], WIDE, LONG_TIMEOUT);
    let (rt, _) = runtime(&lab, Arc::new(HeadlessApprover));
    let results = guarded(rt.run_batch(
        &h.session,
        vec![call("x", "step", json!({"id": "x"}))],
        CancellationToken::new(),
    ))
    .await
    .unwrap();
    assert_eq!(code(&results[0]), Some("approval_unavailable"));
    assert!(!lab.ran("x"));
}
