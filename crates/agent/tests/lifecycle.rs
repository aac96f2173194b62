//! The loop's lifecycle tools and its watchdog, scripted: mark_task_done writes a completion
//! record between turns (once, however often it is called; also after a crash, on resume), the
//! user's `/done` writes the same, and the watchdog cuts a run of calls that change nothing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use common::{World, guarded};
use serde_json::{Value, json};
use tackle_agent::{Agent, Compacted, WatchdogMode, WatchdogSettings, rebuild};
use tackle_llm::replay::{RecordingProvider, ReplayProvider};
use tackle_protocol::{Event, RunOutcome};
use tokio_util::sync::CancellationToken;

const COMPLETION: &str = "## Completed task\nnotes taken\n## Task\nnotes\n## Done so far\none \
                          note\n## Current state\nnoted\n## Open questions\nnone\n## Next steps\nnone";

fn done(id: &str, task: &str) -> Value {
    json!({"id": id, "name": "mark_task_done", "arguments": {"task": task}})
}

/// An agent answered by `exchanges`, recording every request it makes in `asked.jsonl`.
fn recorded_agent(world: &World, exchanges: &[Value]) -> (Agent, std::path::PathBuf) {
    let asked = world.dir.path().join("asked.jsonl");
    let _ = std::fs::remove_file(&asked);
    let replay = ReplayProvider::new("replay", common::script(exchanges));
    let recording = RecordingProvider::create(Arc::new(replay), &asked).unwrap();
    (Agent::new(world.setup(Arc::new(recording))), asked)
}

fn requests(asked: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(asked)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn checkpoints(world: &World) -> Vec<tackle_protocol::Checkpoint> {
    world
        .records()
        .into_iter()
        .filter_map(|e| match e {
            Event::Checkpoint(c) => Some(c),
            _ => None,
        })
        .collect()
}

fn results(world: &World) -> Vec<tackle_protocol::BatchResult> {
    world
        .records()
        .into_iter()
        .filter_map(|e| match e {
            Event::ToolBatchFinished(b) => Some(b.results),
            _ => None,
        })
        .flatten()
        .collect()
}

#[tokio::test]
async fn a_task_marked_done_twice_in_a_turn_gets_one_completion_record_that_later_turns_start_from()
{
    let world = World::new();
    let (mut agent, asked) = recorded_agent(
        &world,
        &[
            json!({"turn": {"tool_calls": [
                {"id": "n1", "name": "note", "arguments": {"text": "a"}},
                done("d1", "first wording"),
                done("d2", "notes taken"),
            ]}}),
            json!({"turn": {"text": COMPLETION}}),
            json!({"turn": {"text": "All done."}}),
        ],
    );
    let end = guarded(agent.run(Some("take a note"), CancellationToken::new())).await;
    assert_eq!(end.outcome, RunOutcome::Finished, "{}", end.reason);

    let results = results(&world);
    let first = results[1].result.content[0].clone();
    let second = results[2].result.content[0].clone();
    assert!(!results[1].no_op, "{first:?}");
    assert!(format!("{first:?}").contains("recorded"), "{first:?}");
    assert!(results[2].no_op, "the repeat is a no-op: {second:?}");
    assert!(
        format!("{second:?}").contains("already recorded"),
        "{second:?}"
    );
    assert_eq!(results[2].status, tackle_protocol::CallStatus::Ok);

    // One record, with the newest note, written between the turns.
    let written = checkpoints(&world);
    assert_eq!(written.len(), 1, "{written:?}");
    assert_eq!(written[0].task_done.as_deref(), Some("notes taken"));
    assert_eq!(written[0].summary, COMPLETION);
    let requests = requests(&asked);
    assert_eq!(requests.len(), 3);
    let summary_request = requests[1]["request"].to_string();
    assert!(
        summary_request.contains("A task was declared finished: notes taken"),
        "{summary_request}"
    );
    assert!(
        summary_request.contains("## Completed task"),
        "{summary_request}"
    );
    let after = requests[2]["request"]["messages"].as_array().unwrap();
    assert!(
        after[0].to_string().contains("## Completed task"),
        "the next request starts from the record: {}",
        after[0]
    );
    assert_eq!(after.len(), 3, "the record, the marking turn, its results");
    let seen = world.observer.json();
    assert!(
        seen.iter()
            .any(|e| e["type"] == "checkpoint" && e["task_done"] == "notes taken"),
        "{seen:?}"
    );

    let rebuilt = rebuild(&world.session.event_log_path()).unwrap();
    assert_eq!(&rebuilt.conversation, agent.conversation());
    assert_eq!(rebuilt.task_done, None, "the boundary was written");
}

#[tokio::test]
async fn a_boundary_the_last_process_did_not_write_is_written_on_resume() {
    let world = World::new();
    // The script ends before the completion record: the run ends on the provider's error.
    let (mut agent, _) = recorded_agent(
        &world,
        &[json!({"turn": {"tool_calls": [done("d1", "parser fixed")]}})],
    );
    let end = guarded(agent.run(Some("fix the parser"), CancellationToken::new())).await;
    assert_eq!(end.outcome, RunOutcome::ProviderFailed, "{}", end.reason);
    assert!(checkpoints(&world).is_empty());
    drop(agent);
    // Nothing is pending in memory now; the log alone says what is owed.
    assert_eq!(world.boundaries.take(world.session.id()), None);
    let rebuilt = rebuild(&world.session.event_log_path()).unwrap();
    assert_eq!(rebuilt.task_done.as_deref(), Some("parser fixed"));

    let replay = ReplayProvider::new(
        "replay",
        common::script(&[
            json!({"turn": {"text": COMPLETION}}),
            json!({"turn": {"text": "Resumed."}}),
        ]),
    );
    let mut agent = Agent::resume(world.setup(Arc::new(replay))).unwrap();
    let end = guarded(agent.run(None, CancellationToken::new())).await;
    assert_eq!(end.outcome, RunOutcome::Finished, "{}", end.reason);
    let written = checkpoints(&world);
    assert_eq!(written.len(), 1);
    assert_eq!(written[0].task_done.as_deref(), Some("parser fixed"));
}

#[tokio::test]
async fn the_users_done_writes_the_completion_record_between_runs() {
    let world = World::new();
    let (mut agent, asked) = recorded_agent(
        &world,
        &[
            json!({"turn": {"tool_calls": [{"id": "n1", "name": "note", "arguments": {"text": "a"}}]}}),
            json!({"turn": {"text": "Noted."}}),
            json!({"turn": {"text": COMPLETION}}),
        ],
    );
    assert_eq!(
        agent
            .mark_done("nothing yet", CancellationToken::new())
            .await,
        Compacted::Nothing
    );
    let end = guarded(agent.run(Some("take a note"), CancellationToken::new())).await;
    assert_eq!(end.outcome, RunOutcome::Finished, "{}", end.reason);
    assert_eq!(
        guarded(agent.mark_done("the note is taken", CancellationToken::new())).await,
        Compacted::Written { through: 3 }
    );
    let written = checkpoints(&world);
    assert_eq!(written[0].task_done.as_deref(), Some("the note is taken"));
    let summary_request = requests(&asked)[2]["request"].to_string();
    assert!(
        summary_request.contains("A task was declared finished: the note is taken"),
        "{summary_request}"
    );
}

#[tokio::test]
async fn enforce_cuts_the_run_carrying_the_third_no_op_and_warn_lets_it_finish() {
    for (mode, outcome) in [
        (WatchdogMode::Enforce, RunOutcome::BoundHit),
        (WatchdogMode::Warn, RunOutcome::Finished),
    ] {
        let mut world = World::new();
        world.watchdog = WatchdogSettings {
            mode,
            repeat_limit: 3,
        };
        // One boundary and three repeats: the repeats change nothing.
        let (mut agent, _) = recorded_agent(
            &world,
            &[
                json!({"turn": {"tool_calls": [
                    done("d1", "one"), done("d2", "two"), done("d3", "three"), done("d4", "four"),
                ]}}),
                json!({"turn": {"text": COMPLETION}}),
                json!({"turn": {"text": "Finished."}}),
            ],
        );
        let end = guarded(agent.run(Some("work"), CancellationToken::new())).await;
        assert_eq!(end.outcome, outcome, "{mode:?}: {}", end.reason);
        let seen = world.observer.json();
        let trips: Vec<&Value> = seen.iter().filter(|e| e["type"] == "watchdog").collect();
        assert_eq!(trips.len(), 1, "{mode:?}: {seen:?}");
        assert_eq!(trips[0]["cut"], mode == WatchdogMode::Enforce);
        let message = trips[0]["message"].as_str().unwrap();
        assert!(
            message.contains("3 results in a row changed nothing"),
            "{message}"
        );
        if mode == WatchdogMode::Enforce {
            assert!(end.reason.starts_with("watchdog: "), "{}", end.reason);
            // Every call of the cut turn has its result on record: the conversation can go on.
            assert_eq!(results(&world).len(), 4);
        }
    }
}
