//! A call a model wrote as text is made: the tool runs, the record holds a structured call,
//! and the next request shows the model its turn as that call.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::atomic::Ordering;

use common::{World, guarded};
use serde_json::json;
use tackle_protocol::{Event, Part, RunOutcome};
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn a_json_call_in_the_text_runs_the_tool() {
    let world = World::new();
    let mut agent = world.agent(&[
        json!({"turn": {"text": "```json\n{\"name\": \"note\", \"arguments\": {\"text\": \"hi\"}}\n```"}}),
        json!({"turn": {"text": "Noted."}}),
    ]);
    let end = guarded(agent.run(Some("take a note"), CancellationToken::new())).await;
    assert_eq!(end.outcome, RunOutcome::Finished, "{}", end.reason);
    assert_eq!(world.lab.notes.load(Ordering::SeqCst), 1);
    let first = world
        .records()
        .into_iter()
        .find_map(|e| match e {
            Event::ModelTurn(t) => Some(t),
            _ => None,
        })
        .unwrap();
    let calls: Vec<_> = first.message.tool_calls().collect();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].name, "note");
    assert!(
        !first
            .message
            .content
            .iter()
            .any(|p| matches!(p, Part::Text { .. })),
        "{:?}",
        first.message
    );
}

#[tokio::test]
async fn an_example_inside_an_explanation_is_left_as_text() {
    let world = World::new();
    let mut agent = world.agent(&[json!({"turn": {"text":
        "You would call it so:\n```json\n{\"name\": \"note\", \"arguments\": {\"text\": \"hi\"}}\n```"}})]);
    let end = guarded(agent.run(Some("how do I take a note?"), CancellationToken::new())).await;
    assert_eq!(end.outcome, RunOutcome::Finished, "{}", end.reason);
    assert_eq!(world.lab.notes.load(Ordering::SeqCst), 0);
}
