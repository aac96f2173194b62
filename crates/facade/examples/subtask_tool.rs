//! A custom tool that needs the agent (late binding, seed 003 "Custom tools"): `ask_aside`
//! is registered in the runtime before the agent exists, holding an empty [`LateAgent`];
//! `Agent::builder().bind(&slot)` fills it, and each call runs the question as a child run of
//! the agent's session, on the agent's model, in a session and log of its own. The parent's
//! model gets the child's answer as the tool's result.
//!
//! The scripted model (one replay file for both, since the parent waits on the child): the
//! parent calls `ask_aside`, the child answers, the parent finishes.
//!
//! `cargo run -p tackle --example subtask_tool` (no network, no key: it works in a temp dir).

use std::error::Error;
use std::path::Path;
use std::sync::Arc;

use tackle::agent::{Agent, LateAgent, ModelSetup, RunEnd, Subtask};
use tackle::llm::{DeliveryFamily, Modality, ModelEntry, ReplayProvider};
use tackle::protocol::ErrorCode;
use tackle::runtime::{AllowAll, CancellationToken, Runtime, Session};
use tackle::tool::{DynTool, ExecuteContext, FnTool, ToolCompletion, ToolError};

/// The tool's arguments.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AskAsideArgs {
    /// A question to answer on the side, without the conversation so far.
    pub question: String,
}

/// The model's turns: the parent's call, the child's answer, the parent's last word.
const SCRIPT: &str = r#"{"tackle_replay":1}
{"turn": {"text": "I will ask on the side.", "tool_calls": [{"id": "aside-1", "name": "ask_aside", "arguments": {"question": "Which word of 'the quick brown fox' is a colour?"}}]}}
{"turn": {"text": "brown"}}
{"turn": {"text": "The colour is brown."}}
"#;

/// `ask_aside`: runs its question as a subtask of the agent `slot` is bound to.
pub fn ask_aside(slot: LateAgent) -> Arc<dyn DynTool> {
    let tool = FnTool::new(
        "ask_aside",
        "Answers a self-contained question in a separate run, without the conversation so far. \
         Use it for a side question whose working should not fill this conversation.",
        move |args: AskAsideArgs, cx: ExecuteContext| {
            let slot = slot.clone();
            async move {
                let agent = slot
                    .get()
                    .map_err(|e| ToolError::new(ErrorCode::INTERNAL, e.to_string()))?;
                let subtask = Subtask::new("ask_aside", args.question).max_turns(2);
                let answered = agent
                    .run_subtask(subtask, cx.cancel.clone())
                    .await
                    .map_err(|e| ToolError::new(ErrorCode::INTERNAL, e.to_string()))?;
                Ok(ToolCompletion::single(answered.answer))
            }
        },
    )
    .read_only(true);
    Arc::new(tool)
}

/// Runs the agent on `project`, its script written to `script`; returns how the run ended and
/// the agent's session.
pub async fn run(project: &Path, script: &Path) -> Result<(RunEnd, Session), Box<dyn Error>> {
    std::fs::write(script, SCRIPT)?;
    let slot = LateAgent::new();
    let runtime = Runtime::builder()
        .tools([ask_aside(slot.clone())])
        .gate(Arc::new(AllowAll))
        .build()?;
    let entry = ModelEntry {
        id: "replay:scripted".parse()?,
        context_window: 200_000,
        max_output: 8192,
        input: vec![Modality::Text],
        media: Vec::new(),
        prices: None,
    };
    let session = Session::open(project)?;
    let mut agent = Agent::builder()
        .runtime(runtime)
        .session(session.clone())
        .provider(Arc::new(ReplayProvider::from_file("replay", script)?))
        .model(ModelSetup::new(entry, DeliveryFamily::Anthropic))
        .system("You answer questions.")
        .bind(&slot)
        .build()?;
    let question = "Which word of 'the quick brown fox' is a colour?";
    let end = agent.run(Some(question), CancellationToken::new()).await;
    Ok((end, session))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let dir = tempfile::tempdir()?;
    let project = dir.path().join("project");
    std::fs::create_dir(&project)?;
    let (end, _) = run(&project, &dir.path().join("script.jsonl")).await?;
    println!(
        "{:?} ({}): {}",
        end.outcome,
        end.reason,
        end.last_message.unwrap_or_default()
    );
    Ok(())
}
