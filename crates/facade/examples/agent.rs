//! An agent over the runtime, with a scripted model: the script (a replay file, written here)
//! has the model call a custom tool, then answer. No network, no key.
//!
//! `cargo run -p tackle --example agent`
//!
//! With a real model, `provider` is `tackle::llm::connect(&spec, transport)?` for a
//! `ProviderSpec`, and the `ModelEntry` describes that model.

use std::error::Error;
use std::path::Path;
use std::sync::Arc;

use tackle::agent::{Agent, ModelSetup, RunEnd};
use tackle::llm::{DeliveryFamily, Modality, ModelEntry, ReplayProvider};
use tackle::runtime::{AllowAll, CancellationToken, Runtime, Session};
use tackle::tool::{ExecuteContext, FnTool, PermissionResource, ToolCompletion, ToolError};

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct WordCountArgs {
    /// The file whose words are counted, relative to the project root.
    path: String,
}

/// The model's turns: call word_count, then answer from its result.
const SCRIPT: &str = r#"{"tackle_replay":1}
{"turn": {"text": "Let me count.", "tool_calls": [{"id": "wc-1", "name": "word_count", "arguments": {"path": "notes.txt"}}]}}
{"turn": {"text": "notes.txt has 5 words."}}
"#;

/// Runs the agent on `project`, its script written to `script`; returns how the run ended and
/// the session it ran in.
pub async fn run(project: &Path, script: &Path) -> Result<(RunEnd, Session), Box<dyn Error>> {
    std::fs::write(project.join("notes.txt"), "the quick brown fox jumps\n")?;
    std::fs::write(script, SCRIPT)?;

    let word_count = FnTool::new(
        "word_count",
        "Counts the words of a text file of the project.",
        |args: WordCountArgs, cx: ExecuteContext| async move {
            let text = std::fs::read_to_string(cx.root.join(&args.path))
                .map_err(|e| ToolError::io(&args.path, &e))?;
            Ok(ToolCompletion::single(
                text.split_whitespace().count().to_string(),
            ))
        },
    )
    .read_only(true)
    .permission(|args: &WordCountArgs| vec![PermissionResource::read(args.path.clone())]);

    // The agent, in about twenty lines.
    let runtime = Runtime::builder()
        .tool(word_count)
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
        .system("You answer questions about the files of a project.")
        .build()?;
    let question = "How many words are in notes.txt?";
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
