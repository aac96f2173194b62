//! `tackle run --daemon URL TASK`: the run is the daemon's. A session is opened on this
//! directory's project (or `--resume ID` loaded), the task sent as its prompt, and every message
//! the daemon sends about it printed as it comes: text as text (tool calls and approvals on
//! standard error), or each message as a JSON line with `--json`. Ctrl-C cancels the prompt.
//! The session stays on the daemon afterwards: `tackle attach ID` follows it.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, anyhow};
use serde_json::{Value, json};

use super::client::Flow;
use crate::commands::Failure;
use crate::exit;
use crate::run::RunArgs;

pub fn run(root: Option<&Path>, args: RunArgs) -> Result<u8, Failure> {
    let url = args.daemon.clone().unwrap_or_default();
    let client = super::locate(&crate::args::DaemonAddress {
        daemon: Some(url.clone()),
        daemon_token_env: args.daemon_token_env.clone(),
        state_dir: args.daemon_state_dir.clone(),
    })
    .map_err(|e| Failure::Usage(anyhow!("--daemon: {e}")))?;
    let Some(task) = args.prompt.clone() else {
        return Err(Failure::Usage(anyhow!(
            "give a task: tackle run --daemon URL \"<task>\""
        )));
    };
    let cwd = std::env::current_dir().context("reading the working directory")?;
    let project = crate::root::find(root, &cwd).unwrap_or(cwd);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    rt.block_on(async move {
        let session = match &args.resume {
            Some(id) => {
                client
                    .call("session/load", json!({"sessionId": id, "cwd": project, "mcpServers": []}))
                    .await
                    .map_err(|e| Failure::Engine(anyhow!("loading session {id} on {url}: {e}")))?;
                id.clone()
            }
            None => client
                .call("session/new", json!({"cwd": project, "mcpServers": []}))
                .await
                .map_err(|e| Failure::Engine(anyhow!("opening a session on {url}: {e}")))?
                .get("sessionId")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| Failure::Engine(anyhow!("{url} opened a session without an id")))?,
        };
        eprintln!("tackle: session {session} on {url} (follow it with `tackle attach {session}`)");
        let params = json!({"sessionId": session, "prompt": [{"type": "text", "text": task}]});
        let print = |message: &Value, _: Option<&str>| {
            show(message, args.json, &session);
            Flow::Continue
        };
        let canceller = client.clone();
        let cancel_session = session.clone();
        let answer = tokio::select! {
            answer = client.stream("session/prompt", params.clone(), print) => answer,
            _ = tokio::signal::ctrl_c() => {
                let _ = canceller
                    .tell(&json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": cancel_session}}))
                    .await;
                return Ok(exit::CANCELLED);
            }
        };
        let answer = answer.map_err(|e| Failure::Engine(anyhow!("the prompt on {url}: {e}")))?;
        let stop = answer
            .as_ref()
            .and_then(|a| a.get("stopReason"))
            .and_then(Value::as_str)
            .unwrap_or("");
        if args.json {
            println!("{}", json!({"type": "prompt_ended", "sessionId": session, "stopReason": stop}));
        } else {
            println!();
        }
        Ok(match stop {
            "end_turn" => exit::OK,
            "cancelled" => exit::CANCELLED,
            "max_turn_requests" | "max_tokens" => exit::BOUND,
            _ => exit::RUN_ERROR,
        })
    })
}

/// One message from the daemon, as the person or the script reading wants it.
pub fn show(message: &Value, json: bool, session: &str) {
    if json {
        println!("{message}");
        return;
    }
    let method = message.get("method").and_then(Value::as_str).unwrap_or("");
    let params = message.get("params").cloned().unwrap_or(Value::Null);
    match method {
        "session/update" => {
            let update = &params["update"];
            let text = |u: &Value| {
                u.pointer("/content/text")
                    .and_then(Value::as_str)
                    .map(|t| crate::safe_text::safe_lines(t).join("\n"))
            };
            match update["sessionUpdate"].as_str().unwrap_or("") {
                "agent_message_chunk" => {
                    if let Some(t) = text(update) {
                        print!("{t}");
                        let _ = std::io::stdout().flush();
                    }
                }
                "user_message_chunk" => {
                    if let Some(t) = text(update) {
                        println!("\n> {}", t.trim_end());
                    }
                }
                "tool_call" => eprintln!(
                    "\n[{}] {}",
                    update["kind"].as_str().unwrap_or("tool"),
                    crate::safe_text::safe_line(update["title"].as_str().unwrap_or(""))
                ),
                "tool_call_update" if update["status"] == "failed" => {
                    eprintln!("[failed] {}", update["toolCallId"].as_str().unwrap_or(""));
                }
                _ => {}
            }
        }
        "session/request_permission" => {
            let id = message.get("id").and_then(Value::as_str).unwrap_or("?");
            let title = params
                .pointer("/toolCall/title")
                .and_then(Value::as_str)
                .unwrap_or("");
            let why = params
                .pointer("/toolCall/content/0/content/text")
                .and_then(Value::as_str)
                .unwrap_or("");
            eprintln!(
                "\n[approval {id}] {}\n  {}\n  answer it: tackle attach {session}, then /allow {id} or /reject {id}",
                crate::safe_text::safe_line(title),
                crate::safe_text::safe_line(why)
            );
        }
        "_tackle/approval_resolved" => eprintln!(
            "[approval {}] {}",
            params["requestId"].as_str().unwrap_or("?"),
            params["outcome"].as_str().unwrap_or("?")
        ),
        _ => {}
    }
}
