//! The late-binding slot on its own: empty until an agent is built with it, and one agent's
//! only. (A tool running a subtask through it is `examples.rs`'s
//! `a_late_bound_tool_runs_a_child_subtask_whose_answer_reaches_the_parent`.)

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use tackle::agent::{Agent, AgentBuildError, LateAgent, ModelSetup, NotBound};
use tackle::llm::{DeliveryFamily, Modality, ModelEntry, ReplayProvider};
use tackle::runtime::{AllowAll, Runtime, Session};

fn builder(dir: &std::path::Path, slot: &LateAgent) -> tackle::agent::AgentBuilder {
    let script = dir.join("script.jsonl");
    std::fs::write(
        &script,
        "{\"tackle_replay\":1}\n{\"turn\": {\"text\": \"hi\"}}\n",
    )
    .unwrap();
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
