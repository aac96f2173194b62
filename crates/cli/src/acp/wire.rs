//! The Agent Client Protocol's messages (stable version 1) and the only file that knows them:
//! requests become calls on the [`Host`], its [`Update`]s become `session/update`
//! notifications, its asks become `session/request_permission` requests.
//!
//! Written on [`super::rpc`] rather than the protocol's Rust SDK: the SDK turns on
//! `serde_json`'s `preserve_order` for every crate it is built with, which would change the
//! key order of every JSON object tackle writes (the tool schemas models see, results, logs).
//! The messages are few; `tests/acp.rs` holds them to the protocol with its published Python
//! client.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use serde::Deserialize;
use serde_json::{Value, json};

use super::approve::{Answer, AnswerFuture, Ask, Asker};
use super::host::{Host, HostOptions, Opened, Stop};
use super::rpc::{self, Incoming, Peer, RpcError};
use super::update::{Ended, Kind, PlanState, Sink, Update};

/// The protocol version tackle speaks.
const PROTOCOL_VERSION: u64 = 1;

/// The connection to the editor, once the first message has come.
#[derive(Default)]
struct Line(OnceLock<Peer>);

struct Notifier(Arc<Line>);

impl Sink for Notifier {
    fn send(&self, session: &str, update: Update) {
        if let Some(peer) = self.0.0.get() {
            peer.send(update_notification(session, update));
        }
    }
}

struct PermissionAsker(Arc<Line>);

impl Asker for PermissionAsker {
    fn ask(&self, ask: Ask) -> AnswerFuture {
        let Some(peer) = self.0.0.get().cloned() else {
            return Box::pin(std::future::ready(Answer::Unanswered(
                "the editor has not connected".to_owned(),
            )));
        };
        Box::pin(async move {
            let params = permission_request(Value::Null, &ask)["params"].take();
            permission_answer(peer.request("session/request_permission", params).await)
        })
    }
}

/// `update` about `session` as the protocol's `session/update` notification.
pub(crate) fn update_notification(session: &str, update: Update) -> Value {
    json!({
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": session, "update": wire_update(update)},
    })
}

/// `ask` as the protocol's `session/request_permission` request with `id`.
pub(crate) fn permission_request(id: Value, ask: &Ask) -> Value {
    let mut options = vec![option("allow_once", "Allow once", "allow_once")];
    if ask.session_grant {
        options.push(option(
            "allow_session",
            "Allow for this session",
            "allow_always",
        ));
    }
    options.push(option("reject", "Reject", "reject_once"));
    let mut text = ask.message.clone();
    if let Some(effect) = &ask.effect {
        text.push_str("\n\n");
        text.push_str(effect);
    }
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": "session/request_permission",
        "params": {
            "sessionId": ask.session,
            "toolCall": {
                "toolCallId": ask.call_id,
                "title": super::observe::title(&ask.tool, &ask.arguments),
                "kind": kind(Kind::of(&ask.tool)),
                "rawInput": ask.arguments,
                "content": [text_content(text)],
            },
            "options": options,
            // For tackle's own clients (`tackle attach`), which show what the terminal's
            // approval shows; editors ignore `_meta`.
            "_meta": {"tackle": {
                "tool": ask.tool,
                "keys": ask.keys,
                "why": ask.message,
                "effect": ask.effect,
            }},
        },
    })
}

/// A client's answer to a permission request.
pub(crate) fn permission_answer(answer: Result<Value, RpcError>) -> Answer {
    match answer {
        Ok(answer) => match (
            answer.pointer("/outcome/outcome").and_then(Value::as_str),
            answer.pointer("/outcome/optionId").and_then(Value::as_str),
        ) {
            (Some("selected"), Some("allow_once")) => Answer::Once,
            (Some("selected"), Some("allow_session")) => Answer::Session,
            (Some("selected"), Some("reject")) => Answer::Reject(
                answer
                    .pointer("/outcome/_meta/tackle/message")
                    .and_then(Value::as_str)
                    .map(str::trim)
                    .filter(|m| !m.is_empty())
                    .map(str::to_owned),
            ),
            (Some("cancelled"), _) => {
                Answer::Unanswered("the editor cancelled the permission request".to_owned())
            }
            _ => Answer::Reject(None),
        },
        Err(e) => Answer::Unanswered(format!("the editor did not answer: {}", e.message)),
    }
}

fn option(id: &str, name: &str, kind: &str) -> Value {
    json!({"optionId": id, "name": name, "kind": kind})
}

/// Serves the protocol on standard input and output until the editor closes them.
pub async fn serve_stdio(options: HostOptions) {
    let line = Arc::new(Line::default());
    let host = Arc::new(Host::new(
        options,
        Arc::new(Notifier(line.clone())),
        Arc::new(PermissionAsker(line.clone())),
    ));
    rpc::serve(
        tokio::io::stdin(),
        rpc::BlockingStdout(std::io::stdout()),
        {
            let host = host.clone();
            move |peer: Peer, incoming| {
                let _ = line.0.set(peer.clone());
                dispatch(&host, peer, incoming);
            }
        },
        // The editor has gone: running prompts end, and their processes with them.
        async { host.wind_down().await },
    )
    .await;
}

fn dispatch(host: &Arc<Host>, peer: Peer, incoming: Incoming) {
    match incoming {
        Incoming::Notification { method, params } => {
            if method == "session/cancel"
                && let Some(session) = params.get("sessionId").and_then(Value::as_str)
            {
                host.cancel(session);
            }
            // Other notifications (and extensions) are not tackle's to act on.
        }
        Incoming::Request { id, method, params } => {
            let host = host.clone();
            // Off the reader: a prompt waits on the editor's answers to permission requests.
            tokio::spawn(async move {
                let mut after = Vec::new();
                let result = handle(&host, &method, params, &mut after).await;
                peer.respond(id, result);
                // Updates about a session the editor learns of only from this answer.
                for (session, update) in after {
                    host.tell(&session, update);
                }
            });
        }
    }
}

/// Answers one request; `after` receives updates to send once the answer is out.
pub(crate) async fn handle(
    host: &Host,
    method: &str,
    params: Value,
    after: &mut Vec<(String, Update)>,
) -> Result<Value, RpcError> {
    match method {
        "initialize" => Ok(initialize()),
        "authenticate" => Ok(json!({})),
        "session/new" => {
            let p: NewSession = parse(params)?;
            // Loading the configuration starts the project's MCP servers: blocking work.
            let (servers, refused) = editor_servers(&p.mcp_servers);
            let mut opened = tokio::task::block_in_place(|| host.open(&p.cwd, None, servers))
                .map_err(|e| RpcError::internal(format!("{e:#}")))?;
            opened.notes.extend(refused);
            after.extend(notes(&opened));
            Ok(json!({"sessionId": opened.id, "modes": modes(&opened)}))
        }
        "session/load" => {
            let p: LoadSession = parse(params)?;
            let (servers, refused) = editor_servers(&p.mcp_servers);
            let mut opened =
                tokio::task::block_in_place(|| host.open(&p.cwd, Some(&p.session_id), servers))
                    .map_err(|e| RpcError::internal(format!("{e:#}")))?;
            opened.notes.extend(refused);
            host.replay(&opened.id)
                .await
                .map_err(|e| RpcError::internal(format!("{e:#}")))?;
            Ok(json!({"modes": modes(&opened)}))
        }
        "session/prompt" => {
            let p: Prompt = parse(params)?;
            let (stop, _) = host
                .prompt(&p.session_id, prompt_text(&p.prompt))
                .await
                .map_err(|e| RpcError::invalid(format!("{e:#}")))?;
            Ok(json!({"stopReason": stop_reason(stop)}))
        }
        "session/list" => {
            let p: ListSessions = parse(params)?;
            let cwd = p.cwd.ok_or_else(|| {
                RpcError::invalid(
                    "session/list needs `cwd`: tackle's sessions are kept per project",
                )
            })?;
            let listed = tokio::task::block_in_place(|| host.list(&cwd))
                .map_err(|e| RpcError::internal(format!("{e:#}")))?;
            let sessions: Vec<Value> = listed
                .into_iter()
                .map(|l| {
                    let mut info = json!({"sessionId": l.id, "cwd": l.root});
                    if let Some(title) = l.title {
                        info["title"] = json!(title);
                    }
                    if let Some(updated) = l.updated {
                        info["updatedAt"] = json!(updated);
                    }
                    info
                })
                .collect();
            Ok(json!({ "sessions": sessions }))
        }
        "session/close" => {
            let id = params
                .get("sessionId")
                .and_then(Value::as_str)
                .ok_or_else(|| RpcError::invalid("`sessionId` is missing"))?;
            if host.close(id).await {
                Ok(json!({}))
            } else {
                Err(RpcError::invalid(format!("no session {id} is open")))
            }
        }
        "session/set_mode" => {
            let p: SetMode = parse(params)?;
            host.set_mode(&p.session_id, &p.mode_id)
                .map_err(|e| RpcError::invalid(format!("{e:#}")))?;
            Ok(json!({}))
        }
        other => Err(RpcError {
            code: rpc::METHOD_NOT_FOUND,
            message: format!(
                "tackle does not implement `{other}`; it serves initialize, session/new, session/load, session/list, session/prompt, session/set_mode, session/close and session/cancel"
            ),
        }),
    }
}

fn initialize() -> Value {
    json!({
        "protocolVersion": PROTOCOL_VERSION,
        "agentCapabilities": {
            "loadSession": true,
            "sessionCapabilities": {"list": {}},
            "promptCapabilities": {"image": false, "audio": false, "embeddedContext": true},
            "mcpCapabilities": {"http": false, "sse": false},
        },
        "agentInfo": {"name": "tackle", "version": env!("CARGO_PKG_VERSION")},
        "authMethods": [],
    })
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct NewSession {
    cwd: PathBuf,
    #[serde(default)]
    mcp_servers: Vec<Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct LoadSession {
    session_id: String,
    cwd: PathBuf,
    #[serde(default)]
    mcp_servers: Vec<Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Prompt {
    session_id: String,
    prompt: Vec<Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ListSessions {
    #[serde(default)]
    cwd: Option<PathBuf>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SetMode {
    session_id: String,
    mode_id: String,
}

fn parse<T: for<'de> Deserialize<'de>>(params: Value) -> Result<T, RpcError> {
    serde_json::from_value(params).map_err(|e| RpcError::invalid(format!("bad parameters: {e}")))
}

/// What folder trust and the model choice noted, told as the session's first message.
fn notes(opened: &Opened) -> Vec<(String, Update)> {
    opened
        .notes
        .iter()
        .map(|note| {
            let text = format!("[tackle: {}]\n", crate::safe_text::safe_line(note));
            (opened.id.clone(), Update::AgentText(text))
        })
        .collect()
}

/// The editor's MCP servers (`mcpServers`), as tackle's server entries, and what could not be
/// taken. Only stdio servers are taken (the capabilities declare neither HTTP nor SSE); an
/// `env` value written `${NAME}` is refused, since tackle reads that as a reference to its own
/// environment, which the editor did not mean.
fn editor_servers(servers: &[Value]) -> (Vec<tackle_mcp::client::ServerConfig>, Vec<String>) {
    use tackle_mcp::client::config::{DEFAULT_CALL_TIMEOUT, DEFAULT_STARTUP_TIMEOUT};
    let mut taken = Vec::new();
    let mut refused = Vec::new();
    for server in servers {
        let name = server.get("name").and_then(Value::as_str).unwrap_or("");
        let shown = crate::safe_text::safe_line(name);
        if name.is_empty()
            || name.len() > 64
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
        {
            refused.push(format!(
                "the editor's MCP server `{shown}` is not started: a name is letters, digits, `_` and `-`"
            ));
            continue;
        }
        if server
            .get("type")
            .and_then(Value::as_str)
            .is_some_and(|t| t != "stdio")
        {
            refused.push(format!(
                "the editor's MCP server `{shown}` is not started: tackle takes stdio servers from editors; add it with `tackle mcp add --transport http`"
            ));
            continue;
        }
        let Some(command) = server.get("command").and_then(Value::as_str) else {
            refused.push(format!(
                "the editor's MCP server `{shown}` is not started: it names no command"
            ));
            continue;
        };
        let args: Vec<String> = server
            .get("args")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|a| a.as_str().map(str::to_owned))
            .collect();
        let mut env = std::collections::BTreeMap::new();
        let mut referenced = false;
        for pair in server
            .get("env")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let (Some(k), Some(v)) = (
                pair.get("name").and_then(Value::as_str),
                pair.get("value").and_then(Value::as_str),
            ) else {
                continue;
            };
            referenced |= tackle_mcp::client::config::env_reference(v).is_some();
            env.insert(k.to_owned(), v.to_owned());
        }
        if referenced {
            refused.push(format!(
                "the editor's MCP server `{shown}` is not started: an env value of the form ${{NAME}} would read tackle's own environment; give the value itself"
            ));
            continue;
        }
        taken.push(tackle_mcp::client::ServerConfig {
            name: name.to_owned(),
            transport: tackle_mcp::client::Transport::Stdio {
                command: command.to_owned(),
                args,
                env,
            },
            read_only: false,
            poll_allow: Vec::new(),
            call_timeout: DEFAULT_CALL_TIMEOUT,
            startup_timeout: DEFAULT_STARTUP_TIMEOUT,
        });
    }
    (taken, refused)
}

fn modes(opened: &Opened) -> Value {
    json!({
        "currentModeId": opened.mode.as_str(),
        "availableModes": opened.modes.iter().map(|m| json!({
            "id": m.as_str(),
            "name": m.as_str(),
            "description": super::modes::describe(*m),
        })).collect::<Vec<_>>(),
    })
}

/// The prompt's text: its text blocks, and each resource it links or embeds by name (an
/// embedded text resource with its text).
pub(crate) fn prompt_text(blocks: &[Value]) -> String {
    let mut out = String::new();
    let field = |v: &Value, p: &str| v.pointer(p).and_then(Value::as_str).map(str::to_owned);
    for block in blocks {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => out.push_str(&field(block, "/text").unwrap_or_default()),
            Some("resource_link") => {
                out.push_str(&format!(
                    "\n[file: {}]\n",
                    field(block, "/uri").unwrap_or_default()
                ));
            }
            Some("resource") => {
                let uri = field(block, "/resource/uri").unwrap_or_default();
                match field(block, "/resource/text") {
                    Some(text) => {
                        out.push_str(&format!("\n<file uri=\"{uri}\">\n{text}\n</file>\n"));
                    }
                    None => out.push_str(&format!("\n[file: {uri}]\n")),
                }
            }
            _ => {}
        }
    }
    out
}

pub(crate) fn stop_reason(stop: Stop) -> &'static str {
    match stop {
        Stop::EndTurn | Stop::Failed => "end_turn",
        Stop::MaxTurns => "max_turn_requests",
        Stop::Cancelled => "cancelled",
    }
}

fn kind(kind: Kind) -> &'static str {
    match kind {
        Kind::Read => "read",
        Kind::Edit => "edit",
        Kind::Delete => "delete",
        Kind::Search => "search",
        Kind::Execute => "execute",
        Kind::Fetch => "fetch",
        Kind::Think => "think",
        Kind::Other => "other",
    }
}

fn text_block(text: String) -> Value {
    json!({"type": "text", "text": text})
}

fn text_content(text: String) -> Value {
    json!({"type": "content", "content": text_block(text)})
}

fn wire_update(update: Update) -> Value {
    match update {
        Update::UserText(t) => {
            json!({"sessionUpdate": "user_message_chunk", "content": text_block(t)})
        }
        Update::AgentText(t) => {
            json!({"sessionUpdate": "agent_message_chunk", "content": text_block(t)})
        }
        Update::Thought(t) => {
            json!({"sessionUpdate": "agent_thought_chunk", "content": text_block(t)})
        }
        Update::CallStarted {
            id,
            tool,
            title,
            kind: k,
            input,
            locations,
            change,
        } => {
            let content: Vec<Value> = change
                .map(|c| {
                    let mut diff = json!({"type": "diff", "path": c.path, "newText": c.new});
                    if let Some(old) = c.old {
                        diff["oldText"] = json!(old);
                    }
                    diff
                })
                .into_iter()
                .collect();
            json!({
                "sessionUpdate": "tool_call",
                "toolCallId": id,
                "title": title,
                "kind": kind(k),
                "status": "pending",
                "rawInput": input,
                "locations": locations.iter().map(|p| json!({"path": p})).collect::<Vec<_>>(),
                "content": content,
                "_meta": {"tackle": {"tool": tool}},
            })
        }
        Update::CallEnded { id, ended, output } => {
            let mut update = json!({
                "sessionUpdate": "tool_call_update",
                "toolCallId": id,
                "status": match ended {
                    Ended::Completed => "completed",
                    Ended::Failed => "failed",
                },
            });
            if let Some(output) = output {
                update["content"] = json!([text_content(output)]);
            }
            update
        }
        Update::Plan(items) => json!({
            "sessionUpdate": "plan",
            "entries": items.into_iter().map(|i| json!({
                "content": i.text,
                "priority": "medium",
                "status": match i.state {
                    PlanState::Pending => "pending",
                    PlanState::InProgress => "in_progress",
                    PlanState::Done => "completed",
                },
            })).collect::<Vec<_>>(),
        }),
        Update::Mode(mode) => {
            json!({"sessionUpdate": "current_mode_update", "currentModeId": mode})
        }
    }
}
