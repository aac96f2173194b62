//! How a run stops early: cancellation mid-stream and mid-batch (the record says which), and
//! each bound (turns, tokens, cost, wall clock) with its reason.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use common::{World, guarded};
use futures::stream;
use serde_json::json;
use tackle_llm::{LlmError, Provider, StreamEvent, TurnRequest, TurnStream};
use tackle_protocol::{CallStatus, Event, RunOutcome};
use tokio_util::sync::CancellationToken;

/// Starts a turn, streams a little text, then never sends another event.
struct Stalls;

#[async_trait::async_trait]
impl Provider for Stalls {
    fn name(&self) -> &str {
        "stalls"
    }
    async fn stream(&self, _: &TurnRequest) -> Result<TurnStream, LlmError> {
        let start = stream::iter(vec![
            Ok(StreamEvent::Started {
                model: "m".into(),
                response_id: None,
            }),
            Ok(StreamEvent::TextDelta {
                text: "Let me th".into(),
            }),
        ]);
        Ok(Box::pin(futures::StreamExt::chain(
            start,
            stream::pending(),
        )))
    }
}

#[tokio::test]
async fn cancelling_mid_stream_records_the_cancelled_turn() {
    let world = World::new();
    let mut agent = tackle_agent::Agent::new(world.setup(Arc::new(Stalls)));
    let cancel = CancellationToken::new();
    let run = agent.run(Some("think"), cancel.clone());
    let canceller = async {
        world.observer.text_seen.notified().await;
        cancel.cancel();
    };
    let (end, ()) = guarded(async { tokio::join!(run, canceller) }).await;
    assert_eq!(end.outcome, RunOutcome::Cancelled);
    assert!(end.reason.contains("the model's turn"), "{}", end.reason);
    let cancelled = world.records().into_iter().find_map(|e| match e {
        Event::ModelTurnCancelled(c) => Some(c),
        _ => None,
    });
    assert_eq!(cancelled.unwrap().partial_text, "Let me th");
}

#[tokio::test]
async fn cancelling_mid_batch_stops_the_calls_and_records_the_cancelled_batch() {
    let world = World::new();
    let mut agent = world.agent(&[json!({"turn": {"tool_calls": [{"name": "hang"}]}})]);
    let cancel = CancellationToken::new();
    let run = agent.run(Some("wait"), cancel.clone());
    let canceller = async {
        world.lab.hang_started.notified().await;
        cancel.cancel();
    };
    let (end, ()) = guarded(async { tokio::join!(run, canceller) }).await;
    assert_eq!(end.outcome, RunOutcome::Cancelled);
    assert!(end.reason.contains("tool calls"), "{}", end.reason);
    let batch = world
        .records()
        .into_iter()
        .find_map(|e| match e {
            Event::ToolBatchFinished(b) => Some(b),
            _ => None,
        })
        .unwrap();
    assert!(batch.cancelled);
    assert_eq!(batch.results[0].status, CallStatus::Cancelled);
}

fn two_note_turns() -> Vec<serde_json::Value> {
    let usage = json!({"input_tokens": 600, "output_tokens": 500});
    vec![
        json!({"turn": {"tool_calls": [{"name": "note", "arguments": {"text": "1"}}], "usage": usage}}),
        json!({"turn": {"tool_calls": [{"name": "note", "arguments": {"text": "2"}}], "usage": usage}}),
        json!({"turn": {"text": "done", "usage": usage}}),
    ]
}

#[tokio::test]
async fn each_bound_ends_the_run_with_its_reason() {
    let cases: Vec<(tackle_agent::Bounds, &str)> = vec![
        (
            tackle_agent::Bounds {
                max_turns: Some(1),
                ..Default::default()
            },
            "--max-turns",
        ),
        (
            tackle_agent::Bounds {
                max_tokens: Some(2000),
                ..Default::default()
            },
            "--max-tokens",
        ),
        (
            // 600 input at $1/M and 500 output at $2/M: $0.0016 a turn.
            tackle_agent::Bounds {
                max_cost_usd: Some(0.003),
                ..Default::default()
            },
            "--max-cost",
        ),
        (
            tackle_agent::Bounds {
                max_duration: Some(Duration::ZERO),
                ..Default::default()
            },
            "--max-duration",
        ),
    ];
    for (bounds, flag) in cases {
        let mut world = World::new();
        world.bounds = bounds;
        let mut agent = world.agent(&two_note_turns());
        let end = guarded(agent.run(Some("go"), CancellationToken::new())).await;
        assert_eq!(end.outcome, RunOutcome::BoundHit, "{flag}: {}", end.reason);
        assert!(end.reason.contains(flag), "{flag}: {}", end.reason);
    }
}

#[tokio::test]
async fn the_wall_clock_stops_a_turn_in_flight() {
    let mut world = World::new();
    world.bounds.max_duration = Some(Duration::from_millis(50));
    let mut agent = tackle_agent::Agent::new(world.setup(Arc::new(Stalls)));
    let end = guarded(agent.run(Some("think"), CancellationToken::new())).await;
    assert_eq!(end.outcome, RunOutcome::BoundHit, "{}", end.reason);
    assert!(end.reason.contains("--max-duration") && end.reason.contains("stopped"));
    assert_eq!(world.lab.notes.load(Ordering::SeqCst), 0);
}
