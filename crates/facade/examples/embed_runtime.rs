//! Embed the runtime: open a session on a project directory, run one batch of a built-in
//! (read_file) and print its result as a model would see it.
//!
//! `cargo run -p tackle --example embed_runtime` (no network, no key: it works in a temp dir).

use std::error::Error;
use std::path::Path;
use std::sync::Arc;

use tackle::protocol::{CallId, ToolCall, ToolResult};
use tackle::runtime::{AllowAll, CancellationToken, Runtime, Session};
use tackle::tools::{BUILTIN_TOOL_NAMES, builtins_except};

/// Writes `hello.txt` into `project`, reads it back through the runtime and returns the result.
pub async fn run(project: &Path) -> Result<ToolResult, Box<dyn Error>> {
    std::fs::write(
        project.join("hello.txt"),
        "hello from tackle\nsecond line\n",
    )?;

    // The built-ins without bash, each description cut to the tools that are there; every
    // call allowed (a program with rules passes `.policy(policy)` instead).
    let runtime = Runtime::builder()
        .tools(builtins_except(&["bash"])?)
        .known_builtins(BUILTIN_TOOL_NAMES)
        .gate(Arc::new(AllowAll))
        .build()?;
    let session = Session::open(project)?;

    let call = ToolCall {
        id: CallId("read-1".into()),
        name: "read_file".into(),
        arguments: tackle::serde_json::json!({ "path": "hello.txt" }),
    };
    let mut results = runtime
        .run_batch(&session, vec![call], CancellationToken::new())
        .await?;
    Ok(results.remove(0))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let project = tempfile::tempdir()?;
    let result = run(project.path()).await?;
    println!("{} {:?}:\n{}", result.tool, result.status, result.text());
    Ok(())
}
