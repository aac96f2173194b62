//! Serve a runtime over MCP: the built-ins (without bash) and a custom tool, to a client that
//! speaks JSON-RPC lines over an in-memory pipe here (over stdin and stdout it would be
//! `serve_stdio`, which `claude mcp add` and the like launch).
//!
//! `cargo run -p tackle --features mcp --example mcp_server` (no network, no key).

use std::error::Error;
use std::path::Path;
use std::sync::Arc;

use tackle::mcp::{McpServer, ServerOptions, serve_io};
use tackle::runtime::{AllowAll, Runtime, Session};
use tackle::serde_json::{Value, json};
use tackle::tool::{ExecuteContext, FnTool, PermissionResource, ToolCompletion, ToolError};
use tackle::tools::{BUILTIN_TOOL_NAMES, builtins_except};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct WordCountArgs {
    /// The file whose words are counted, relative to the project root.
    path: String,
}

/// Serves `project` and, as the client, lists the tools and calls `word_count`; returns the
/// names listed and the call's result.
pub async fn run(project: &Path) -> Result<(Vec<String>, Value), Box<dyn Error>> {
    std::fs::write(project.join("notes.txt"), "the quick brown fox jumps\n")?;
    let word_count = FnTool::new(
        "word_count",
        "Counts the words of a text file of the project.",
        |args: WordCountArgs, cx: ExecuteContext| async move {
            let text = std::fs::read_to_string(cx.root.join(&args.path))
                .map_err(|e| ToolError::io(&args.path, &e))?;
            Ok(ToolCompletion::single(format!(
                "{} words",
                text.split_whitespace().count()
            )))
        },
    )
    .read_only(true)
    .permission(|args: &WordCountArgs| vec![PermissionResource::read(args.path.clone())]);

    let runtime = Runtime::builder()
        .tools(builtins_except(&["bash"])?)
        .tool(word_count)
        .known_builtins(BUILTIN_TOOL_NAMES)
        .gate(Arc::new(AllowAll))
        .build()?;
    let options = ServerOptions {
        elicitation: true,
        client_confirms: false,
    };
    let server = McpServer::new(runtime, Session::open(project)?, options);

    let (client, server_end) = tokio::io::duplex(1 << 20);
    let (read, write) = tokio::io::split(server_end);
    tokio::spawn(serve_io(server, read, write));

    let (client_read, mut client_write) = tokio::io::split(client);
    let mut lines = BufReader::new(client_read).lines();
    let requests = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "example", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "word_count", "arguments": {"path": "notes.txt"}}}),
    ];
    let mut names = Vec::new();
    for request in requests {
        client_write
            .write_all(format!("{request}\n").as_bytes())
            .await?;
        let Some(id) = request.get("id") else {
            continue; // a notification has no answer
        };
        // Read up to this request's answer (the server may send notifications between).
        let answer = loop {
            let line = lines
                .next_line()
                .await?
                .ok_or("the server closed the pipe")?;
            let message: Value = tackle::serde_json::from_str(&line)?;
            if message.get("id") == Some(id) {
                break message;
            }
        };
        match id.as_u64() {
            Some(2) => {
                names = answer["result"]["tools"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|t| t["name"].as_str().map(str::to_owned))
                    .collect();
            }
            Some(3) => return Ok((names, answer["result"].clone())),
            _ => {}
        }
    }
    Err("no answer to tools/call".into())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let project = tempfile::tempdir()?;
    let (names, result) = run(project.path()).await?;
    println!("tools/list: {}", names.join(", "));
    println!("tools/call word_count: {result}");
    Ok(())
}
