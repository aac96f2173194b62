//! Resume: a loop dropped mid-batch (its process gone, in effect) is rebuilt from the record;
//! the call without a `call_finished` goes to the model as interrupted and is never run again.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::sync::atomic::Ordering;

use common::{World, guarded, script};
use serde_json::json;
use tackle_agent::{Agent, INTERRUPTED, rebuild};
use tackle_llm::replay::ReplayProvider;
use tackle_protocol::{Event, Part, RunOutcome};
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn a_batch_stopped_midway_resumes_with_its_calls_interrupted_not_rerun() {
    let world = World::new();
    let exchanges = vec![
        json!({"turn": {"tool_calls": [
            {"name": "note", "arguments": {"text": "kept"}},
            {"name": "hang"}
        ]}}),
        json!({"turn": {"text": "The hang was interrupted; the note stands."}}),
    ];
    {
        let mut agent = world.agent(&exchanges);
        let run = agent.run(Some("note and hang"), CancellationToken::new());
        // Dropped as soon as the hang runs: no result, no record of the batch's end.
        tokio::select! {
            _ = run => panic!("the run cannot finish while hang runs"),
            () = world.lab.hang_started.notified() => {}
        }
    }
    let before = rebuild(&world.session.event_log_path()).unwrap();
    let owed = before
        .interrupted
        .clone()
        .expect("the batch is owed results");
    assert_eq!(owed.results.len(), 2);
    assert_eq!(owed.results[1].code, Some(INTERRUPTED));

    let provider =
        ReplayProvider::new("replay", script(&exchanges)).starting_at(before.conversation.answered);
    let mut agent = Agent::resume(world.setup(Arc::new(provider))).unwrap();
    let end = guarded(agent.run(None, CancellationToken::new())).await;
    assert_eq!(end.outcome, RunOutcome::Finished, "{}", end.reason);
    assert_eq!(
        world.lab.hangs.load(Ordering::SeqCst),
        1,
        "hang never ran again"
    );
    assert_eq!(
        world.lab.notes.load(Ordering::SeqCst),
        1,
        "note never ran again"
    );
    let results = &agent.conversation().messages[2];
    let texts: Vec<String> = results
        .content
        .iter()
        .filter_map(|p| match p {
            Part::ToolResult(r) => Some(format!("{:?}", r.content)),
            _ => None,
        })
        .collect();
    assert!(texts[1].contains("interrupted"), "{texts:?}");
    let after = rebuild(&world.session.event_log_path()).unwrap();
    assert_eq!(
        &after.conversation,
        agent.conversation(),
        "the record is the conversation"
    );
    assert_eq!(after.interrupted, None, "the owed results are recorded now");
    let interrupted_batches = world
        .records()
        .into_iter()
        .filter(|e| matches!(e, Event::ToolBatchFinished(b) if b.interrupted))
        .count();
    assert_eq!(interrupted_batches, 1);
}
