//! The agentic wrappers end to end with scripted models for the parent and the small model
//! (`common::agentic`): the real read_file and grep run in the subtask's session through the
//! runtime, the small model reads the bulk (in parts: its window is 8k), and the parent's next
//! request holds only the answer and the raw output's reference. Also: a refusal by the gate
//! comes back as that refusal with no small model asked, a failing small model is an error
//! that still names the raw output, and a remote source's label reaches the answer.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use common::agentic::*;
use common::*;
use serde_json::json;
use tackle_agent::{AgentEvent, Bounds};
use tackle_protocol::{CallId, Label, RunOutcome, ToolCall, Trust};
use tackle_runtime::{AllowAll, CancellationToken};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_small_model_reads_the_whole_file_and_the_parent_only_the_answer() {
    let small = Scripted::new(small_model);
    let b = Bench::new(Arc::new(AllowAll), small.clone());
    let parent = parent_asking(
        "agentic_read_file",
        json!({"path": "big.txt", "question": QUESTION}),
    );
    let mut agent = b.parent(parent.clone(), Bounds::default());
    let end = guarded(agent.run(Some("find the needle"), CancellationToken::new())).await;
    assert_eq!(end.outcome, RunOutcome::Finished, "{end:?}");

    // The parent's next request holds the answer and where the raw text is, not the bulk.
    let seen = parent.requests.lock().unwrap()[1].clone();
    assert!(seen.contains("NEEDLE holds 4242, on line 3817"), "{seen}");
    assert!(seen.contains("big.txt lines 1–5000"), "{seen}");
    assert!(
        !seen.contains("filler line 2500"),
        "the bulk reached the parent"
    );

    // The small model read all of it, in parts, and one more exchange answered.
    let asked = small.requests.lock().unwrap().clone();
    assert!(asked.len() >= 3, "{} requests", asked.len());
    let all = asked.join("\n");
    assert!(all.contains("2500\\tfiller line 2500") && all.contains("3817\\tNEEDLE=4242"));
    assert!(all.contains("5000\\tfiller line 5000"));

    // read_file ran in the subtask's session, page by page, never in the parent's.
    let subtasks = b.sessions_of("agentic_read_file");
    assert_eq!(subtasks.len(), 1);
    assert_eq!(started_tools(&subtasks[0]), ["read_file"; 3]);
    assert_eq!(
        b.sessions_of("agentic_read_file part").len(),
        asked.len() - 1
    );
    assert_eq!(started_tools(&b.root_records()), ["agentic_read_file"]);

    // The wrapper's result is labelled as what the subtask read: a local file.
    let wrapper = b.finished(&b.root, "agentic_read_file");
    assert_eq!(wrapper.label, Label::LOCAL);

    // Its tokens are the run's: a usage event naming the subtask, counted in the total.
    let events = b.observer.events.lock().unwrap().clone();
    let (usage, total, cost, s) = events
        .iter()
        .find_map(|e| match e {
            AgentEvent::Usage {
                usage,
                total,
                cost_usd,
                subtask: Some(s),
                ..
            } => Some((*usage, *total, *cost_usd, s.clone())),
            _ => None,
        })
        .expect("no usage event for the subtask");
    assert_eq!(
        (s.tool.as_str(), s.model.as_str()),
        ("agentic_read_file", "small:scripted")
    );
    assert_eq!(usage.input_tokens, 1000 * asked.len() as u64);
    assert_eq!(total.input_tokens, usage.input_tokens);
    assert!(s.cost_usd.unwrap() > 0.0 && cost.unwrap() >= s.cost_usd.unwrap());
    // The parent's next turn (1000 tokens, scripted) counts on top of it.
    let last_total = events.iter().rev().find_map(|e| match e {
        AgentEvent::Usage { total, .. } => Some(*total),
        _ => None,
    });
    assert_eq!(last_total.unwrap().input_tokens, usage.input_tokens + 1000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_matches_reach_the_small_model_and_their_artifact_the_parent() {
    let small = Scripted::new(|seen: &str| {
        let sites = seen.matches("call_site(").count();
        text(&format!(
            "I read {sites} call sites; the first is src/m0.rs:1."
        ))
    });
    let b = Bench::new(Arc::new(AllowAll), small.clone());
    let parent = parent_asking(
        "agentic_grep",
        json!({"pattern": "call_site\\(", "path": "src", "question": "How many call sites?"}),
    );
    let end = guarded(
        b.parent(parent.clone(), Bounds::default())
            .run(Some("count"), CancellationToken::new()),
    )
    .await;
    assert_eq!(end.outcome, RunOutcome::Finished, "{end:?}");
    let asked = small.requests.lock().unwrap().clone();
    let read: usize = asked.iter().map(|a| a.matches("call_site(").count()).sum();
    assert!(read >= 1000, "the small model read {read} of 1000 matches");
    let seen = parent.requests.lock().unwrap()[1].clone();
    assert!(seen.contains("call sites"), "{seen}");
    assert!(seen.contains("raw output: artifact://"), "{seen}");
    assert!(
        seen.matches("call_site(").count() < 5,
        "the matches reached the parent"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_by_the_gate_comes_back_as_that_refusal_and_no_model_reads() {
    let small = Scripted::new(small_model);
    let b = Bench::new(Arc::new(DenySecret), small.clone());
    let parent = parent_asking(
        "agentic_read_file",
        json!({"path": "secret.txt", "question": QUESTION}),
    );
    let end = guarded(
        b.parent(parent.clone(), Bounds::default())
            .run(Some("go"), CancellationToken::new()),
    )
    .await;
    assert_eq!(end.outcome, RunOutcome::Finished, "{end:?}");
    let wrapper = b.finished(&b.root, "agentic_read_file");
    assert_eq!(wrapper.code.unwrap().as_str(), "permission_denied");
    let seen = parent.requests.lock().unwrap()[1].clone();
    assert!(seen.contains("denied by the test policy"), "{seen}");
    assert!(!seen.contains("NEEDLE=1"));
    assert!(small.requests.lock().unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_small_model_is_an_error_that_still_names_the_raw_output() {
    let small = Scripted::new(
        |_: &str| json!({"error": {"kind": "overloaded", "message": "the small model is busy"}}),
    );
    let b = Bench::new(Arc::new(AllowAll), small);
    let parent = parent_asking(
        "agentic_read_file",
        json!({"path": "src/m3.rs", "question": "What does it call?"}),
    );
    let end = guarded(
        b.parent(parent.clone(), Bounds::default())
            .run(Some("go"), CancellationToken::new()),
    )
    .await;
    assert_eq!(end.outcome, RunOutcome::Finished, "{end:?}");
    let wrapper = b.finished(&b.root, "agentic_read_file");
    assert_eq!(wrapper.code.unwrap().as_str(), "subtask_failed");
    let seen = parent.requests.lock().unwrap()[1].clone();
    assert!(seen.contains("the small model is busy"), "{seen}");
    assert!(seen.contains("src/m3.rs lines 1–20"), "{seen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_from_remote_text_is_as_untrusted_as_the_text() {
    let small = Scripted::new(small_model);
    let b = Bench::new(Arc::new(AllowAll), small);
    // A page from the network, retained by a call of the parent's session.
    let fetched = b
        .runtime
        .run_batch(
            &b.root,
            vec![ToolCall {
                id: CallId("web-1".into()),
                name: "web".into(),
                arguments: json!({}),
            }],
            CancellationToken::new(),
        )
        .await
        .unwrap();
    let internal = &fetched[0].retained_output[0].artifact;
    let uri = internal.replace("artifact://sha256/", "artifact://");
    let parent = parent_asking(
        "agentic_read_file",
        json!({"path": uri, "question": QUESTION}),
    );
    let end = guarded(
        b.parent(parent.clone(), Bounds::default())
            .run(Some("go"), CancellationToken::new()),
    )
    .await;
    assert_eq!(end.outcome, RunOutcome::Finished, "{end:?}");
    let seen = parent.requests.lock().unwrap()[1].clone();
    assert!(seen.contains("4242"), "{seen}");
    let wrapper = b.finished(&b.root, "agentic_read_file");
    assert_eq!(wrapper.label.trust, Trust::Untrusted);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_part_the_small_models_server_refuses_as_too_long_is_read_in_halves() {
    // The server's window is smaller than the catalog says: parts over 12 KB are refused.
    let small = Scripted::new(|seen: &str| {
        if seen.len() > 12_000 {
            json!({"error": {"kind": "context_too_long", "message": "prompt too long"}})
        } else {
            small_model(seen)
        }
    });
    let b = Bench::new(Arc::new(AllowAll), small.clone());
    let parent = parent_asking(
        "agentic_read_file",
        json!({"path": "big.txt", "question": QUESTION}),
    );
    let end = guarded(
        b.parent(parent.clone(), Bounds::default())
            .run(Some("go"), CancellationToken::new()),
    )
    .await;
    assert_eq!(end.outcome, RunOutcome::Finished, "{end:?}");
    let seen = parent.requests.lock().unwrap()[1].clone();
    assert!(seen.contains("NEEDLE holds 4242, on line 3817"), "{seen}");
    let asked = small.requests.lock().unwrap().clone();
    let answered = asked.iter().filter(|a| a.len() <= 12_000).count();
    assert!(
        answered > asked.len() / 2,
        "{answered} of {} answered",
        asked.len()
    );
}
