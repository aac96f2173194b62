//! The late-binding slot on its own: empty until an agent is built with it, and one agent's
//! only; a subtask that runs out of turns is unanswered, naming its session. (A tool running a
//! subtask through it is `examples.rs`'s
//! `a_late_bound_tool_runs_a_child_subtask_whose_answer_reaches_the_parent`.)

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use tackle::agent::{
    Agent, AgentBuildError, LateAgent, ModelSetup, NotBound, Subtask, SubtaskError,
};
use tackle::llm::{DeliveryFamily, Modality, ModelEntry, ReplayProvider};
use tackle::protocol::RunOutcome;
use tackle::runtime::{AllowAll, CancellationToken, Runtime, Session};

const HELLO: &str = "{\"tackle_replay\":1}\n{\"turn\": {\"text\": \"hi\"}}\n";

fn builder(dir: &std::path::Path, slot: &LateAgent) -> tackle::agent::AgentBuilder {
    scripted(dir, slot, HELLO)
}

/// An agent on `dir` whose model plays `turns`, bound to `slot`.
fn scripted(dir: &std::path::Path, slot: &LateAgent, turns: &str) -> tackle::agent::AgentBuilder {
    let script = dir.join("script.jsonl");
    std::fs::write(&script, turns).unwrap();
    let entry = ModelEntry {
        id: "replay:scripted".parse().unwrap(),
        context_window: 200_000,
        max_output: 8192,
        input: vec![Modality::Text],
        media: Vec::new(),
        prices: None,
    };
    Agent::builder()
        .runtime(Runtime::builder().gate(Arc::new(AllowAll)).build().unwrap())
        .session(Session::open(dir).unwrap())
        .provider(Arc::new(
            ReplayProvider::from_file("replay", &script).unwrap(),
        ))
        .model(ModelSetup::new(entry, DeliveryFamily::Anthropic))
        .system("You answer.")
        .bind(slot)
}

#[test]
fn an_empty_slot_says_how_to_fill_it() {
    let slot = LateAgent::new();
    let err = slot.get().err();
    assert_eq!(err, Some(NotBound));
    let text = err.map(|e| e.to_string()).unwrap_or_default();
    assert!(text.contains("Agent::builder().bind(&slot)"), "{text}");
}

#[test]
fn a_slot_holds_the_agent_built_with_it_and_refuses_a_second() {
    let dir = tempfile::tempdir().unwrap();
    let slot = LateAgent::new();
    let held = slot.clone();
    let agent = builder(dir.path(), &slot).build().unwrap();
    // Clones share the slot: the tool's copy now reaches the agent's session.
    assert_eq!(held.get().unwrap().session().id(), agent.session().id());
    let second = builder(dir.path(), &slot).build().err();
    assert_eq!(second, Some(AgentBuildError::AlreadyBound));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subtask_that_runs_out_of_turns_is_unanswered_naming_its_session() {
    // The child's only turn asks for a tool; with one turn allowed it never answers.
    let turns = "{\"tackle_replay\":1}\n{\"turn\": {\"text\": \"Let me look.\", \"tool_calls\": \
                 [{\"id\": \"r1\", \"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}]}}\n";
    let dir = tempfile::tempdir().unwrap();
    let slot = LateAgent::new();
    let _agent = scripted(dir.path(), &slot, turns).build().unwrap();
    let subtask = Subtask::new("side", "What is in a?").max_turns(1);
    let ended = slot
        .get()
        .unwrap()
        .run_subtask(subtask, CancellationToken::new())
        .await;
    let Err(SubtaskError::Unanswered { session, end }) = ended else {
        panic!("expected no answer: {ended:?}");
    };
    assert_eq!(end.outcome, RunOutcome::BoundHit, "{}", end.reason);
    let text = SubtaskError::Unanswered {
        session: session.clone(),
        end,
    }
    .to_string();
    assert!(text.contains(&session.0), "{text}");
}
