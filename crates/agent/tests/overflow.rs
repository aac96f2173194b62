//! A request too long for the model's window ends cleanly. A server's overflow answer leads to
//! at most one compaction between two answers of the model; when the request after it is
//! refused again, or the part no compaction removes (system prompt, catalog, last message) is
//! larger than the window, the run ends as a provider failure whose reason gives both sizes
//! and the fixes, instead of sending the same request again without end. A window the answer
//! names is remembered, and a small one gets the compact catalog.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::{Arc, Mutex};

use common::{World, entry, guarded, script};
use serde_json::json;
use tackle_agent::{Agent, DescriptionsSetting};
use tackle_llm::replay::ReplayProvider;
use tackle_llm::{ErrorContext, ErrorKind, LlmError, Provider, TurnRequest, TurnStream};
use tackle_protocol::RunOutcome;
use tokio_util::sync::CancellationToken;

/// What the mock does with a request: refuse it as too long, or pass it to the script.
type Plan = Box<dyn Fn(usize, &TurnRequest) -> Option<String> + Send + Sync>;

/// A server that refuses some requests as too long (with the message `plan` gives) and
/// answers the rest from a script, keeping every request it was sent.
struct Overflowing {
    script: ReplayProvider,
    plan: Plan,
    sent: Mutex<Vec<TurnRequest>>,
}

impl Overflowing {
    fn new(exchanges: &[serde_json::Value], plan: Plan) -> Arc<Self> {
        Arc::new(Self {
            script: ReplayProvider::new("replay", script(exchanges)),
            plan,
            sent: Mutex::new(Vec::new()),
        })
    }

    fn sent(&self) -> Vec<TurnRequest> {
        self.sent.lock().unwrap().clone()
    }
}

#[async_trait::async_trait]
impl Provider for Overflowing {
    fn name(&self) -> &str {
        "local"
    }

    async fn stream(&self, request: &TurnRequest) -> Result<TurnStream, LlmError> {
        let n = {
            let mut sent = self.sent.lock().unwrap();
            sent.push(request.clone());
            sent.len()
        };
        if let Some(message) = (self.plan)(n, request) {
            let ctx = ErrorContext {
                provider: "local".into(),
                model: request.model.clone(),
            };
            let mut e = ctx.error(ErrorKind::ContextTooLong, message);
            e.status = Some(400);
            return Err(e);
        }
        self.script.stream(request).await
    }
}

const LLAMA: &str =
    "request (4811 tokens) exceeds the available context size (4096 tokens), try increasing it";

fn agent(world: &World, provider: Arc<Overflowing>) -> Agent {
    Agent::new(world.setup(provider))
}

/// A server that refuses everything: the first refusal teaches the window, the one compaction
/// that follows is refused too, and the run ends after two requests with both sizes named.
#[tokio::test]
async fn a_server_that_always_overflows_is_asked_twice_then_the_run_ends() {
    let world = World::new();
    let provider = Overflowing::new(&[], Box::new(|_, _| Some(LLAMA.to_owned())));
    let mut agent = agent(&world, provider.clone());
    let end = guarded(agent.run(Some("read notes.txt"), CancellationToken::new())).await;
    assert_eq!(end.outcome, RunOutcome::ProviderFailed, "{}", end.reason);
    let sent = provider.sent();
    assert_eq!(
        sent.len(),
        2,
        "one request, one summary request: {}",
        end.reason
    );
    assert!(
        sent[1].tools.is_empty(),
        "the second is the summary request"
    );
    for part in [
        "4,811 tokens against its 4,096",
        "the window is 4,096 tokens",
        "the server's answer",
        "llama-server -c 16384",
        "descriptions = \"compact\"",
    ] {
        assert!(
            end.reason.contains(part),
            "{part:?} missing: {}",
            end.reason
        );
    }
}

/// A refusal that names no sizes: one compaction (its summary answered), the request after it
/// refused again, and the run ends: three requests, never a fourth.
#[tokio::test]
async fn a_refusal_after_the_one_compaction_ends_the_run() {
    let world = World::new();
    let summary = "## Task\nt\n## Done so far\nn\n## Current state\ns\n## Open questions\nq\n\
                   ## Next steps\nx";
    let provider = Overflowing::new(
        &[json!({"turn": {"text": summary}})],
        Box::new(|_, r| {
            (!r.tools.is_empty()).then(|| "Input is too long for requested model.".into())
        }),
    );
    let mut agent = agent(&world, provider.clone());
    let end = guarded(agent.run(Some("read notes.txt"), CancellationToken::new())).await;
    assert_eq!(end.outcome, RunOutcome::ProviderFailed, "{}", end.reason);
    let sent = provider.sent();
    assert_eq!(sent.len(), 3, "request, summary, request: {}", end.reason);
    assert!(
        end.reason
            .contains("refused the request as too long again after the conversation was compacted"),
        "{}",
        end.reason
    );
}

/// An overflow, a compaction, then answers: the bound is per stretch without an answer, so a
/// later overflow may compact again.
#[tokio::test]
async fn after_an_answer_a_later_overflow_may_compact_again() {
    let world = World::new();
    let summary = "## Task\nt\n## Done so far\nn\n## Current state\ns\n## Open questions\nq\n\
                   ## Next steps\nx";
    let note = json!({"turn": {"tool_calls": [{"name": "note", "arguments": {"text": "n"}}]}});
    // Requests: 1 refused, 2 summary, 3 note, 4 refused, 5 summary, 6 done.
    let provider = Overflowing::new(
        &[
            json!({"turn": {"text": summary}}),
            note,
            json!({"turn": {"text": summary}}),
            json!({"turn": {"text": "done"}}),
        ],
        Box::new(|n, _| matches!(n, 1 | 4).then(|| "maximum context length exceeded".into())),
    );
    let mut agent = agent(&world, provider.clone());
    let end = guarded(agent.run(Some("take a note"), CancellationToken::new())).await;
    assert_eq!(end.outcome, RunOutcome::Finished, "{}", end.reason);
    assert_eq!(provider.sent().len(), 6);
    let checkpoints = world
        .observer
        .json()
        .iter()
        .filter(|e| e["type"] == "checkpoint")
        .count();
    assert_eq!(checkpoints, 2);
}

/// A system prompt, catalog and task larger than the window: nothing is sent at all.
#[tokio::test]
async fn what_no_compaction_removes_is_checked_before_sending() {
    let mut world = World::new();
    world.entry = entry(1000);
    let provider = Overflowing::new(&[], Box::new(|_, _| None));
    let mut agent = agent(&world, provider.clone());
    let task = "word ".repeat(2000);
    let end = guarded(agent.run(Some(&task), CancellationToken::new())).await;
    assert_eq!(end.outcome, RunOutcome::ProviderFailed, "{}", end.reason);
    assert!(provider.sent().is_empty());
    assert!(
        end.reason
            .contains("even with nothing of the conversation but the last message")
            && end.reason.contains("last message 2,50"),
        "{}",
        end.reason
    );
}

/// A window the server names switches `auto` to the compact catalog: the request after the
/// refusal carries one-sentence descriptions and a smaller output limit.
#[tokio::test]
async fn a_learned_small_window_gets_the_compact_catalog() {
    let mut world = World::new();
    world.descriptions = DescriptionsSetting::Auto;
    let summary = "## Task\nt\n## Done so far\nn\n## Current state\ns\n## Open questions\nq\n\
                   ## Next steps\nx";
    let provider = Overflowing::new(
        &[
            json!({"turn": {"text": summary}}),
            json!({"turn": {"text": "done"}}),
        ],
        Box::new(|n, _| (n == 1).then(|| LLAMA.to_owned())),
    );
    let mut agent = agent(&world, provider.clone());
    let end = guarded(agent.run(Some("go"), CancellationToken::new())).await;
    assert_eq!(end.outcome, RunOutcome::Finished, "{}", end.reason);
    let sent = provider.sent();
    assert_eq!(sent.len(), 3);
    let described = |r: &TurnRequest, name: &str| {
        r.tools
            .iter()
            .find(|t| t.name == name)
            .map(|t| t.description.clone())
            .unwrap()
    };
    let before = described(&sent[0], "mark_task_done");
    let after = described(&sent[2], "mark_task_done");
    assert!(after.len() < before.len(), "{after:?} vs {before:?}");
    assert_eq!(after, tackle_tool::first_sentence(&before));
    let windows: Vec<_> = world
        .observer
        .json()
        .into_iter()
        .filter(|e| e["type"] == "window")
        .collect();
    assert_eq!(windows.len(), 2, "{windows:?}");
    assert_eq!(windows[0]["descriptions"], "full");
    assert_eq!(windows[1]["context"], 4096);
    assert_eq!(windows[1]["descriptions"], "compact");
}
