//! The loop through its ordinary paths, driven by scripted turns: parallel calls, denials and
//! asks, invalid model output, a provider failure, steering, and the record rebuilding the
//! exact conversation.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::sync::atomic::Ordering;

use common::{TestGate, World, guarded};
use serde_json::json;
use tackle_agent::rebuild;
use tackle_protocol::{ContentBlock, Part, RunOutcome};
use tokio_util::sync::CancellationToken;

fn results(world: &World) -> Vec<(String, Option<String>, String)> {
    world
        .records()
        .into_iter()
        .filter_map(|e| match e {
            tackle_protocol::Event::ToolBatchFinished(b) => Some(b.results),
            _ => None,
        })
        .flatten()
        .map(|r| {
            let text = r
                .result
                .content
                .iter()
                .map(|b| match b {
                    ContentBlock::Text { text } => text.clone(),
                    ContentBlock::Attachment { artifact, .. } => artifact.clone(),
                })
                .collect();
            (r.tool, r.code.map(|c| c.0.into_owned()), text)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallel_calls_run_together_and_their_results_reach_the_next_turn() {
    let world = World::new();
    let mut agent = world.agent(&[
        json!({"turn": {"text": "Taking notes.", "tool_calls": [
            {"name": "note", "arguments": {"text": "a", "meet": true}},
            {"name": "note", "arguments": {"text": "b", "meet": true}}
        ]}}),
        json!({"turn": {"text": "Both noted."}}),
    ]);
    let end = guarded(agent.run(Some("take two notes"), CancellationToken::new())).await;
    assert_eq!(end.outcome, RunOutcome::Finished, "{}", end.reason);
    assert_eq!(end.last_message.as_deref(), Some("Both noted."));
    assert_eq!(
        world.lab.notes.load(Ordering::SeqCst),
        2,
        "both ran, once each"
    );
    let types = world.observer.types();
    for want in [
        "turn_started",
        "text_delta",
        "tool_call_started",
        "tool_call_finished",
        "usage",
        "turn_finished",
    ] {
        assert!(types.iter().any(|t| t == want), "{want} missing: {types:?}");
    }
    assert_eq!(types.last().unwrap(), "run_finished");
    let messages = &agent.conversation().messages;
    assert_eq!(messages.len(), 4, "task, calls, results, answer");
    let texts: Vec<String> = messages[2]
        .content
        .iter()
        .filter_map(|p| match p {
            Part::ToolResult(r) => Some(r.content.clone()),
            _ => None,
        })
        .map(|c| format!("{c:?}"))
        .collect();
    assert!(
        texts[0].contains("noted a") && texts[1].contains("noted b"),
        "{texts:?}"
    );
    let rebuilt = rebuild(&world.session.event_log_path()).unwrap();
    assert_eq!(
        &rebuilt.conversation,
        agent.conversation(),
        "the record is the conversation"
    );
    assert_eq!(rebuilt.interrupted, None);
}

#[tokio::test]
async fn denials_and_refused_asks_come_back_to_the_model_as_results() {
    let world = World::gated(Arc::new(TestGate {
        deny: "hang",
        ask: "steer",
    }));
    let mut agent = world.agent(&[
        json!({"turn": {"tool_calls": [
            {"name": "hang", "arguments": {}},
            {"name": "steer", "arguments": {"text": "x"}}
        ]}}),
        json!({"turn": {"text": "Neither was allowed."}}),
    ]);
    let end = guarded(agent.run(Some("try"), CancellationToken::new())).await;
    assert_eq!(end.outcome, RunOutcome::Finished, "{}", end.reason);
    let got = results(&world);
    assert_eq!(got[0].1.as_deref(), Some("permission_denied"), "{got:?}");
    assert!(got[0].2.contains("denied by the test policy"), "{got:?}");
    assert_eq!(got[1].1.as_deref(), Some("permission_denied"), "{got:?}");
    assert!(
        got[1].2.contains("not today"),
        "the refusal's message: {got:?}"
    );
    assert_eq!(world.lab.hangs.load(Ordering::SeqCst), 0);
    let approvals: Vec<_> = world
        .observer
        .json()
        .into_iter()
        .filter(|e| e["type"] == "approval_requested")
        .collect();
    assert_eq!(approvals.len(), 1, "{approvals:?}");
    assert_eq!(approvals[0]["tool"], "steer");
}

#[tokio::test]
async fn invalid_tool_calls_are_answered_by_the_runtime_and_the_run_goes_on() {
    let world = World::new();
    let mut agent = world.agent(&[
        json!({"turn": {"tool_calls": [
            {"name": "note", "arguments_raw": "{\"text\": \"a"},
            {"name": "no_such_tool", "arguments": {}},
            {"name": "note", "arguments": {"text": 5}}
        ]}}),
        json!({"turn": {"text": "I will fix my calls."}}),
    ]);
    let end = guarded(agent.run(Some("go"), CancellationToken::new())).await;
    assert_eq!(end.outcome, RunOutcome::Finished, "{}", end.reason);
    let codes: Vec<Option<String>> = results(&world).into_iter().map(|r| r.1).collect();
    assert_eq!(
        codes,
        [
            Some("invalid_arguments".to_owned()),
            Some("unknown_tool".to_owned()),
            Some("invalid_arguments".to_owned())
        ]
    );
    assert_eq!(world.lab.notes.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_provider_error_ends_the_run_with_the_providers_message() {
    let world = World::new();
    let mut agent = world.agent(&[json!({"error": {
        "kind": "auth", "status": 401, "message": "invalid x-api-key"
    }})]);
    let end = guarded(agent.run(Some("go"), CancellationToken::new())).await;
    assert_eq!(end.outcome, RunOutcome::ProviderFailed);
    assert!(end.reason.contains("invalid x-api-key"), "{}", end.reason);
    let last = world.records().pop().unwrap();
    assert!(
        matches!(&last, tackle_protocol::Event::RunFinished(f) if f.outcome == RunOutcome::ProviderFailed),
        "{last:?}"
    );
}

#[tokio::test]
async fn a_stream_cut_is_asked_again_once() {
    let world = World::new();
    let mut agent = world.agent(&[
        json!({"events": [{"started": {"model": "m"}}, {"text": "Hal"}],
               "error": {"kind": "stream_cut", "message": "connection reset"}}),
        json!({"turn": {"text": "Hello."}}),
    ]);
    let end = guarded(agent.run(Some("hi"), CancellationToken::new())).await;
    assert_eq!(end.outcome, RunOutcome::Finished, "{}", end.reason);
    assert_eq!(end.last_message.as_deref(), Some("Hello."));
}

#[tokio::test]
async fn input_sent_while_a_turn_runs_joins_at_the_next_boundary() {
    let world = World::new();
    let mut agent = world.agent(&[
        json!({"turn": {"tool_calls": [{"name": "steer", "arguments": {"text": "also check b"}}]}}),
        json!({"turn": {"text": "Checked b too."}}),
    ]);
    let end = guarded(agent.run(Some("check a"), CancellationToken::new())).await;
    assert_eq!(end.outcome, RunOutcome::Finished, "{}", end.reason);
    let results_message = &agent.conversation().messages[2];
    assert!(matches!(results_message.content[0], Part::ToolResult(_)));
    assert_eq!(
        results_message.content[1],
        Part::Text {
            text: "also check b".into()
        },
        "queued behind the results, in the same user message"
    );
    let rebuilt = rebuild(&world.session.event_log_path()).unwrap();
    assert_eq!(&rebuilt.conversation, agent.conversation());
}

#[tokio::test]
async fn a_directory_a_call_enters_sends_its_instructions_once() {
    let world = World::new();
    std::fs::create_dir_all(world.dir.path().join("sub")).unwrap();
    std::fs::write(world.dir.path().join("sub/AGENTS.md"), "use tabs in sub").unwrap();
    let mut agent = world.agent(&[
        json!({"turn": {"tool_calls": [{"name": "note", "arguments": {"text": "x", "path": "sub/x.txt"}}]}}),
        json!({"turn": {"tool_calls": [{"name": "note", "arguments": {"text": "y", "path": "sub"}}]}}),
        json!({"turn": {"text": "ok"}}),
    ]);
    let end = guarded(agent.run(Some("go"), CancellationToken::new())).await;
    assert_eq!(end.outcome, RunOutcome::Finished, "{}", end.reason);
    let messages = &agent.conversation().messages;
    assert_eq!(
        messages[2].content[1],
        Part::Text {
            text: "Project instructions from sub/AGENTS.md:\nuse tabs in sub".into()
        }
    );
    assert_eq!(messages[4].content.len(), 1, "sent once: {:?}", messages[4]);
    let rebuilt = rebuild(&world.session.event_log_path()).unwrap();
    assert_eq!(rebuilt.conversation.instructions_sent, ["sub/AGENTS.md"]);
}
