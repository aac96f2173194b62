//! The daemon's JSON-RPC methods: the Agent Client Protocol's, answered by the same adapter as
//! `tackle acp` ([`crate::acp::wire::handle`]), and the `_tackle/` extensions for what the
//! protocol lacks:
//!
//! | method | params | result |
//! |---|---|---|
//! | `_tackle/health` | | `{ok, pid, version, epoch, sessions, peerHub, uptimeSeconds}` |
//! | `_tackle/sessions/list` | | `{sessions: [{sessionId, cwd, state, pendingApprovals, lastEventId}]}` (`state`: `running`, `waiting` (a permission request is open), `sleeping` (until a wake it asked for), `idle`) |
//! | `_tackle/session/attach` | `{sessionId, lastEventId?}` | an event stream: what followed the cursor (or the stored conversation), then live (see `http.rs`) |
//! | `_tackle/approval/answer` | `{sessionId, requestId, optionId}` | `{}`; `optionId` is one the request offered (`allow_once`, `allow_session`, `reject`) |
//! | `_tackle/session/send` | `{sessionId, text, mode?}` | `{delivered: "steered" \| "queued"}`: `steer` (default) reaches a running prompt at its next boundary, else it is queued; `queue` runs it as the next prompt |
//! | `_tackle/session/cancel` | `{sessionId}` | `{}` (as the `session/cancel` notification) |
//! | `_tackle/session/close` (and `session/close`) | `{sessionId}` | `{}`: the prompt cancelled, the session let go (its log stays, for `session/load`) |
//! | `_tackle/daemon/stop` | | `{stopping: true}` |

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Value, json};

use super::hosted::Daemon;
use super::journal::cursor;
use crate::acp::rpc::{self, RpcError};
use crate::acp::update::Update;

/// Answers one request.
pub async fn call(daemon: &Arc<Daemon>, method: &str, params: Value) -> Result<Value, RpcError> {
    match method {
        "session/new" => {
            let mut params = params;
            admit_one_more(daemon)?;
            if params.get("cwd").is_none_or(Value::is_null) {
                params["cwd"] = json!(daemon.default_root);
            }
            let answer = acp(daemon, method, params).await?;
            if let Some(id) = answer.get("sessionId").and_then(Value::as_str) {
                daemon.remember(id);
            }
            Ok(answer)
        }
        "session/load" => {
            let id = session_id(&params)?;
            if !daemon.host.is_open(&id) {
                admit_one_more(daemon)?;
            }
            let answer = acp(daemon, method, params).await?;
            daemon.remember(&id);
            Ok(answer)
        }
        "session/prompt" => {
            let id = session_id(&params)?;
            let blocks: Vec<Value> = params
                .get("prompt")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            // Every attached client sees what was asked, whoever asked it.
            if daemon.host.is_open(&id) {
                super::wakes::interrupt(daemon, &id, "a prompt arrived").await;
                daemon.host.tell(
                    &id,
                    Update::UserText(crate::acp::wire::prompt_text(&blocks)),
                );
            }
            let answer = acp(daemon, method, params).await;
            super::wakes::after_prompt(daemon, &id).await;
            answer
        }
        "_tackle/health" => Ok(health(daemon)),
        "_tackle/sessions/list" => Ok(list(daemon)),
        "_tackle/approval/answer" => {
            let p: AnswerParams = parse(params)?;
            let mut answer = json!({"outcome": {"outcome": "selected", "optionId": p.option_id}});
            if let Some(message) = &p.message {
                if p.option_id != "reject" {
                    return Err(RpcError::invalid(
                        "`message` goes with optionId `reject` only: it is what the model is told of the refusal",
                    ));
                }
                answer["outcome"]["_meta"] = json!({"tackle": {"message": message}});
            }
            daemon
                .approvals
                .answer(&p.request_id, Some(&p.session_id), Ok(answer))
                .map_err(|e| {
                    RpcError::invalid(match e {
                        super::approvals::NotTaken::Unknown => format!(
                            "no open permission request {} (answered already, or its prompt ended)",
                            p.request_id
                        ),
                        super::approvals::NotTaken::OtherSession => format!(
                            "the permission request {} is not session {}'s",
                            p.request_id, p.session_id
                        ),
                    })
                })?;
            Ok(json!({}))
        }
        "_tackle/session/send" => send(daemon, parse(params)?),
        "session/close" | "_tackle/session/close" => {
            let id = session_id(&params)?;
            super::wakes::interrupt(daemon, &id, "the session was closed").await;
            if !daemon.host.close(&id).await {
                return Err(RpcError::invalid(format!(
                    "the daemon hosts no session {id}; _tackle/sessions/list names those it does"
                )));
            }
            daemon.journals.remove(&id);
            if let Err(e) = daemon.state.remove_hosted(&id) {
                eprintln!("tackle daemon: {e:#}; a restart would open session {id} again");
            }
            Ok(json!({}))
        }
        "_tackle/session/cancel" => {
            let id = session_id(&params)?;
            daemon.host.cancel(&id);
            Ok(json!({}))
        }
        "_tackle/daemon/stop" => {
            daemon.stop.cancel();
            Ok(json!({"stopping": true}))
        }
        other if other.starts_with("_tackle/") => Err(RpcError {
            code: rpc::METHOD_NOT_FOUND,
            message: format!(
                "the daemon has no method `{other}`; its extensions are _tackle/health, _tackle/sessions/list, _tackle/session/attach, _tackle/approval/answer, _tackle/session/send, _tackle/session/cancel, _tackle/session/close and _tackle/daemon/stop"
            ),
        }),
        _ => acp(daemon, method, params).await,
    }
}

/// A protocol method, answered as `tackle acp` answers it; the updates it leaves for after the
/// answer go to the session's journal.
async fn acp(daemon: &Arc<Daemon>, method: &str, params: Value) -> Result<Value, RpcError> {
    let mut after = Vec::new();
    let answer = crate::acp::wire::handle(&daemon.host, method, params, &mut after).await;
    for (session, update) in after {
        daemon.host.tell(&session, update);
    }
    answer
}

fn admit_one_more(daemon: &Daemon) -> Result<(), RpcError> {
    let open = daemon.host.states().len();
    if open >= daemon.max_sessions {
        return Err(RpcError::invalid(format!(
            "the daemon hosts {open} sessions, its most (--max-sessions {}); restart it with a higher limit",
            daemon.max_sessions
        )));
    }
    Ok(())
}

fn health(daemon: &Daemon) -> Value {
    json!({
        "ok": true,
        "pid": std::process::id(),
        "version": env!("CARGO_PKG_VERSION"),
        "epoch": daemon.epoch,
        "sessions": daemon.host.states().len(),
        "peerHub": daemon.peers.is_some(),
        "uptimeSeconds": daemon.started.elapsed().as_secs(),
    })
}

fn list(daemon: &Daemon) -> Value {
    let mut states = daemon.host.states();
    states.sort_by(|a, b| a.id.cmp(&b.id));
    let sessions: Vec<Value> = states
        .into_iter()
        .map(|s| {
            let waiting = daemon.approvals.waiting(&s.id);
            let state = state_of(daemon, &s.id, s.running);
            json!({
                "sessionId": s.id,
                "cwd": s.root,
                "state": state,
                "pendingApprovals": waiting,
                "lastEventId": cursor(&daemon.epoch, daemon.journals.of(&s.id).last()),
            })
        })
        .collect();
    json!({ "sessions": sessions })
}

/// What session `id` is doing, as `_tackle/sessions/list` and `_tackle/attached` say it:
/// `waiting` (on a permission request), `running`, `sleeping` (until a wake) or `idle`.
pub fn state_of(daemon: &Daemon, id: &str, running: bool) -> &'static str {
    match (running, daemon.approvals.waiting(id)) {
        (_, n) if n > 0 => "waiting",
        (true, _) => "running",
        _ if daemon.sleepers.is_sleeping(id) => "sleeping",
        _ => "idle",
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct AnswerParams {
    session_id: String,
    request_id: String,
    option_id: String,
    /// With `reject`: the person's words, which reach the model with the refusal.
    #[serde(default)]
    message: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct SendParams {
    session_id: String,
    text: String,
    #[serde(default)]
    mode: SendMode,
}

#[derive(Deserialize, Default, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum SendMode {
    #[default]
    Steer,
    Queue,
}

/// Input for a session: steered into the running prompt, or run as the next one.
fn send(daemon: &Arc<Daemon>, p: SendParams) -> Result<Value, RpcError> {
    if p.text.trim().is_empty() {
        return Err(RpcError::invalid("the text to send is empty"));
    }
    if !daemon.host.is_open(&p.session_id) {
        return Err(RpcError::invalid(format!(
            "the daemon hosts no session {}; _tackle/sessions/list names those it does",
            p.session_id
        )));
    }
    if matches!(p.mode, SendMode::Steer)
        && daemon
            .host
            .steer(&p.session_id, &p.text)
            .map_err(|e| RpcError::invalid(format!("{e:#}")))?
    {
        daemon
            .host
            .tell(&p.session_id, Update::UserText(p.text.clone()));
        return Ok(json!({"delivered": "steered"}));
    }
    daemon
        .host
        .tell(&p.session_id, Update::UserText(p.text.clone()));
    let daemon = daemon.clone();
    tokio::spawn(async move {
        super::wakes::interrupt(&daemon, &p.session_id, "a prompt arrived").await;
        if let Err(e) = daemon.host.prompt(&p.session_id, p.text).await {
            let text = format!(
                "[tackle: {}]\n",
                crate::safe_text::safe_line(&e.to_string())
            );
            daemon.host.tell(&p.session_id, Update::AgentText(text));
        }
        super::wakes::after_prompt(&daemon, &p.session_id).await;
    });
    Ok(json!({"delivered": "queued"}))
}

fn session_id(params: &Value) -> Result<String, RpcError> {
    params
        .get("sessionId")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| RpcError::invalid("`sessionId` is missing"))
}

fn parse<T: for<'de> Deserialize<'de>>(params: Value) -> Result<T, RpcError> {
    serde_json::from_value(params).map_err(|e| RpcError::invalid(format!("bad parameters: {e}")))
}
