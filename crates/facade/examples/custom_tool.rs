//! A custom tool from a typed async function ([`FnTool`]), in a catalog, called through
//! `run_batch` under a policy; then its `call_started` and `call_finished` read back from the
//! session's event log, with the `read:` key it declared.
//!
//! `cargo run -p tackle --example custom_tool` (no network, no key: it works in a temp dir).

use std::error::Error;
use std::path::{Component, Path};
use std::sync::Arc;

use tackle::gate::{Effect, Mode, PathScope, Pattern, Policy, Rule, RuleSource, UrlScope};
use tackle::protocol::{CallId, ErrorCode, Event, ToolCall, ToolResult};
use tackle::runtime::{CancellationToken, EventLog, Runtime, Session};
use tackle::tool::{
    DynTool, ExecuteContext, FnTool, PermissionResource, ToolCompletion, ToolError,
};

/// The tool's arguments: parsed strictly (an unknown field is `invalid_arguments`), and the
/// schema the model sees is generated from them, doc comments included.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WordCountArgs {
    /// The file whose words are counted, relative to the project root.
    pub path: String,
}

/// `word_count`: reads a file of the project and counts its words.
pub fn word_count() -> Arc<dyn DynTool> {
    let tool = FnTool::new(
        "word_count",
        "Counts the words of a text file of the project. Use it when you need a file's length \
         in words; read the file instead when you need what it says.",
        |args: WordCountArgs, cx: ExecuteContext| async move {
            if Path::new(&args.path)
                .components()
                .any(|c| !matches!(c, Component::Normal(_)))
            {
                return Err(ToolError::new(
                    ErrorCode::INVALID_ARGUMENTS,
                    format!(
                        "word_count: `{}` is not a path inside the project",
                        args.path
                    ),
                ));
            }
            let text = std::fs::read_to_string(cx.root.join(&args.path))
                .map_err(|e| ToolError::io(&args.path, &e))?;
            let words = text.split_whitespace().count();
            Ok(ToolCompletion::single(format!(
                "{}: {words} words",
                args.path
            )))
        },
    )
    .read_only(true)
    .parallel()
    // The call lands on the file it reads: the gate is asked about `read:<path>`.
    .permission(|args: &WordCountArgs| vec![PermissionResource::read(args.path.clone())]);
    Arc::new(tool)
}

/// What the example shows: the two results and the session's records of the first call.
pub struct Outcome {
    /// `word_count` of `notes.txt`.
    pub counted: ToolResult,
    /// `word_count` of `secrets/key.txt`, which the policy denies.
    pub denied: ToolResult,
    /// Every record of the session's log that is about the counted call.
    pub records: Vec<Event>,
}

/// Runs both calls as one batch in `project` and reads back the log.
pub async fn run(project: &Path) -> Result<Outcome, Box<dyn Error>> {
    std::fs::write(project.join("notes.txt"), "the quick brown fox jumps\n")?;
    std::fs::create_dir_all(project.join("secrets"))?;
    std::fs::write(project.join("secrets/key.txt"), "hunter2\n")?;

    // The same gate the built-ins pass: every ask allowed (yolo), but no read under secrets/.
    let policy = Policy::new(
        vec![Rule::new(
            Effect::Deny,
            Pattern::parse("read:secrets/**")?,
            // The rule is this program's, not a config file's: a refusal names the program.
            RuleSource::Embedder {
                by: "the custom_tool example".into(),
            },
        )],
        Mode::Yolo,
        PathScope::default(),
        UrlScope::default(),
    )?;
    let runtime = Runtime::builder()
        .tools([word_count()])
        .policy(policy)
        .build()?;
    let session = Session::open(project)?;

    let call = |id: &str, path: &str| ToolCall {
        id: CallId(id.into()),
        name: "word_count".into(),
        arguments: tackle::serde_json::json!({ "path": path }),
    };
    let mut results = runtime
        .run_batch(
            &session,
            vec![call("wc-1", "notes.txt"), call("wc-2", "secrets/key.txt")],
            CancellationToken::new(),
        )
        .await?;
    let denied = results.remove(1);
    let counted = results.remove(0);

    // Every call is recorded, whatever became of it; here are the counted call's records.
    let records = EventLog::read_records(&session.event_log_path())?
        .into_iter()
        .filter_map(|r| tackle::serde_json::from_value::<Event>(r.event).ok())
        .filter(|e| match e {
            Event::CallStarted(s) => s.call_id.0 == "wc-1",
            Event::CallFinished(f) => f.call_id.0 == "wc-1",
            _ => false,
        })
        .collect();
    Ok(Outcome {
        counted,
        denied,
        records,
    })
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let project = tempfile::tempdir()?;
    let outcome = run(project.path()).await?;
    println!(
        "word_count notes.txt → {}",
        outcome.counted.text().trim_end()
    );
    println!(
        "word_count secrets/key.txt → {}",
        outcome.denied.text().trim_end()
    );
    for record in &outcome.records {
        match record {
            Event::CallStarted(s) => {
                println!("call_started  {} {} {}", s.call_id, s.tool, s.arguments)
            }
            Event::CallFinished(f) => println!(
                "call_finished {} {} {:?} read_keys={:?}",
                f.call_id, f.tool, f.status, f.read_keys
            ),
            _ => {}
        }
    }
    Ok(())
}
