//! The agentic wrappers and the parent's loop (`common::agentic`): agentic_research runs the
//! loop itself on the small model with the read-only tools, a subtask's tokens end a run
//! whose --max-tokens they pass, and cancelling the parent's batch cancels the subtask, whose
//! record ends before the parent's run does.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use common::agentic::*;
use common::*;
use serde_json::json;
use tackle_agent::Bounds;
use tackle_protocol::{CallStatus, Event, RunOutcome};
use tackle_runtime::{AllowAll, CancellationToken};
use tokio::sync::Notify;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn research_runs_the_loop_on_the_small_model_with_the_read_only_tools() {
    let small = Scripted::new(|seen: &str| {
        if has_result(seen) {
            text("NEEDLE is in big.txt at line 3817 and holds 4242.")
        } else {
            call("grep", json!({"pattern": "NEEDLE", "path": "big.txt"}))
        }
    });
    let b = Bench::new(Arc::new(AllowAll), small.clone());
    let parent = parent_asking(
        "agentic_research",
        json!({"question": "Where is the NEEDLE and what does it hold?"}),
    );
    let end = guarded(
        b.parent(parent.clone(), Bounds::default())
            .run(Some("go"), CancellationToken::new()),
    )
    .await;
    assert_eq!(end.outcome, RunOutcome::Finished, "{end:?}");

    // The small model was offered the read-only tools of the parent's catalog, nothing else.
    let asked = small.requests.lock().unwrap().clone();
    assert_eq!(asked.len(), 2);
    assert!(
        asked[0].ends_with("tools offered: read_file,grep"),
        "{}",
        asked[0]
    );
    assert!(asked[1].contains("big.txt:3817:NEEDLE=4242"));

    let seen = parent.requests.lock().unwrap()[1].clone();
    assert!(seen.contains("line 3817 and holds 4242"), "{seen}");
    assert!(
        seen.contains("raw outputs: grep big.txt → artifact://"),
        "{seen}"
    );
    let subtask = &b.sessions_of("agentic_research")[0];
    assert_eq!(started_tools(subtask), ["grep"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subtasks_tokens_count_against_the_runs_bound() {
    let small = Scripted::new(small_model);
    let b = Bench::new(Arc::new(AllowAll), small.clone());
    let parent = parent_asking(
        "agentic_read_file",
        json!({"path": "big.txt", "question": QUESTION}),
    );
    let bounds = Bounds {
        max_tokens: Some(5_000),
        ..Bounds::default()
    };
    let end = guarded(
        b.parent(parent.clone(), bounds)
            .run(Some("go"), CancellationToken::new()),
    )
    .await;
    assert_eq!(end.outcome, RunOutcome::BoundHit, "{end:?}");
    assert!(end.reason.contains("--max-tokens"), "{}", end.reason);
    // The parent's own turn used none: the subtask's tokens ended the run.
    assert_eq!(parent.requests.lock().unwrap().len(), 1);
    assert!(small.requests.lock().unwrap().len() > 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_the_parents_batch_cancels_the_subtask() {
    let asked = Arc::new(Notify::new());
    let b = Bench::new(Arc::new(AllowAll), Arc::new(Hanging(asked.clone())));
    let parent = parent_asking(
        "agentic_read_file",
        json!({"path": "src/m1.rs", "question": "What does it call?"}),
    );
    let mut agent = b.parent(parent, Bounds::default());
    let cancel = CancellationToken::new();
    let run = {
        let cancel = cancel.clone();
        tokio::spawn(async move { agent.run(Some("go"), cancel).await })
    };
    guarded(asked.notified()).await;
    cancel.cancel();
    let end = guarded(run).await.unwrap();
    assert_eq!(end.outcome, RunOutcome::Cancelled, "{end:?}");
    let wrapper = b.finished(&b.root, "agentic_read_file");
    assert_eq!(wrapper.status, CallStatus::Cancelled);
    // The run ended after its subtask had: the subtask's record is complete.
    let subtask = &b.sessions_of("agentic_read_file")[0];
    let last = subtask.last().unwrap();
    assert!(
        matches!(last, Event::RunFinished(f) if f.outcome == RunOutcome::Cancelled),
        "{last:?}"
    );
}
