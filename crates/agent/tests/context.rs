//! Context pressure, scripted: the oldest results are elided first (each leaving a marker
//! that names its artifact), then, when even that does not fit, the model writes a summary in
//! fixed sections that is recorded as a checkpoint and leads every later request.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{World, entry, guarded};
use serde_json::json;
use tackle_agent::{Compacted, rebuild};
use tackle_protocol::{ContentBlock, Event, Part, RunOutcome};
use tokio_util::sync::CancellationToken;

fn note(size: usize) -> serde_json::Value {
    json!({"turn": {"tool_calls": [{"name": "note", "arguments": {"text": "n", "size": size}}]}})
}

#[tokio::test]
async fn old_results_are_elided_then_a_checkpoint_summarizes() {
    let mut world = World::new();
    // 2500 prompt tokens: one 6000-byte result (1500 tokens) fits beside the rest, two do not,
    // and a 12000-byte one does not fit even alone beside the fixed part.
    world.entry = entry(3000);
    let summary = "## Task\nnotes\n## Done so far\nthree notes\n## Current state\nbig note\n\
                   ## Open questions\nnone\n## Next steps\nfinish";
    let mut agent = world.agent(&[
        note(6000),
        note(6000),
        note(12000),
        json!({"turn": {"text": summary}}),
        json!({"turn": {"text": "Finished from the summary."}}),
    ]);
    let end = guarded(agent.run(Some("take notes"), CancellationToken::new())).await;
    assert_eq!(end.outcome, RunOutcome::Finished, "{}", end.reason);
    let events = world.observer.json();
    let elided: Vec<_> = events
        .iter()
        .filter(|e| e["type"] == "context_elided")
        .collect();
    assert!(!elided.is_empty(), "{events:?}");
    assert_eq!(
        elided[0]["turn"], 3,
        "the third request is the first that does not fit"
    );
    let checkpoint = world
        .records()
        .into_iter()
        .find_map(|e| match e {
            Event::Checkpoint(c) => Some(c),
            _ => None,
        })
        .expect("a checkpoint was recorded");
    assert_eq!(checkpoint.summary, summary);
    assert!(tackle_agent::checkpoint::has_sections(&checkpoint.summary));
    assert_eq!(checkpoint.through, 5, "keeps the last turn and its results");
    assert!(events.iter().any(|e| e["type"] == "checkpoint"));

    // What the next request holds: the summary, then the model's last turn and its results.
    let conversation = agent.conversation();
    let mark = conversation.checkpoint.as_ref().unwrap();
    assert_eq!(mark.through, 5);
    let view = tackle_agent::context::view(
        conversation,
        0,
        u64::MAX,
        tackle_agent::context::Calibration::default(),
    );
    assert!(
        view.messages[0].text().contains("## Next steps"),
        "{:?}",
        view.messages[0]
    );
    assert_eq!(view.messages.len(), conversation.messages.len() - 5 + 1);

    // An elided result's marker names its retained output.
    let early = tackle_agent::context::view(
        &{
            let mut c = conversation.clone();
            c.checkpoint = None;
            c
        },
        0,
        3000,
        tackle_agent::context::Calibration::default(),
    );
    let Part::ToolResult(first) = &early.messages[2].content[0] else {
        panic!("{:?}", early.messages[2]);
    };
    let [ContentBlock::Text { text }] = first.content.as_slice() else {
        panic!("{first:?}");
    };
    assert!(
        text.starts_with("[elided to fit the context window:"),
        "{text}"
    );
    assert!(text.contains("artifact://sha256/"), "{text}");

    let rebuilt = rebuild(&world.session.event_log_path()).unwrap();
    assert_eq!(&rebuilt.conversation, conversation);
}

#[tokio::test]
async fn compacting_on_request_writes_a_checkpoint_that_later_requests_start_from() {
    let world = World::new();
    let summary = "## Task\nnote\n## Done so far\none note\n## Current state\nnoted\n\
                   ## Open questions\nnone\n## Next steps\nwait";
    let asked = world.dir.path().join("asked.jsonl");
    let replay = tackle_llm::replay::ReplayProvider::new(
        "replay",
        common::script(&[
            note(100),
            json!({"turn": {"text": "Noted."}}),
            json!({"turn": {"text": summary}}),
            json!({"turn": {"text": "Went on from the summary."}}),
        ]),
    );
    let recording =
        tackle_llm::replay::RecordingProvider::create(std::sync::Arc::new(replay), &asked).unwrap();
    let mut agent = tackle_agent::Agent::new(world.setup(std::sync::Arc::new(recording)));

    // Nothing to compact before the model has answered.
    assert_eq!(
        agent.compact(CancellationToken::new()).await,
        Compacted::Nothing
    );
    let end = guarded(agent.run(Some("take a note"), CancellationToken::new())).await;
    assert_eq!(end.outcome, RunOutcome::Finished, "{}", end.reason);

    // user, the call, its result, the answer: the summary stands for the first three.
    assert_eq!(
        guarded(agent.compact(CancellationToken::new())).await,
        Compacted::Written { through: 3 }
    );
    assert_eq!(
        agent.conversation().checkpoint.as_ref().unwrap().summary,
        summary
    );
    assert!(
        world
            .observer
            .json()
            .iter()
            .any(|e| e["type"] == "checkpoint")
    );
    // Asked again at once, nothing new is older than the last turn.
    assert_eq!(
        agent.compact(CancellationToken::new()).await,
        Compacted::Nothing
    );

    let end = guarded(agent.run(Some("go on"), CancellationToken::new())).await;
    assert_eq!(end.outcome, RunOutcome::Finished, "{}", end.reason);
    let requests: Vec<serde_json::Value> = std::fs::read_to_string(&asked)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(requests.len(), 4);
    let summary_request = requests[2]["request"].to_string();
    assert!(
        summary_request.contains("The user asked to compact the conversation"),
        "{summary_request}"
    );
    let offered = &requests[2]["request"]["tools"];
    assert!(
        offered.is_null() || offered.as_array().is_some_and(Vec::is_empty),
        "a summary request offers no tools: {offered}"
    );
    let after = requests[3]["request"]["messages"].as_array().unwrap();
    assert!(
        after[0].to_string().contains("## Next steps"),
        "the next request starts from the summary: {}",
        after[0]
    );
    assert_eq!(after.len(), 3, "summary, the last answer, the new input");

    let rebuilt = rebuild(&world.session.event_log_path()).unwrap();
    assert_eq!(&rebuilt.conversation, agent.conversation());
}
