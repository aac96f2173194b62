//! A daemon's messages about one session, folded into the chat's state: what `tackle attach`
//! shows is the same transcript, approvals and status line as `tackle chat`, built from the
//! session's stream (`session/update`, `session/request_permission` and the daemon's `_tackle/`
//! notifications) instead of from an agent in this process. Pure: the caller hands in the
//! instant each message arrived, and carries out what [`Fed`] asks (an approval's answer
//! channel, a cancel, attaching again).

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::Value;
use tackle_agent::AgentEvent;
use tackle_protocol::{CallId, CallStatus};

use super::app::App;
use super::view::NoticeKind;
use crate::approval_view::{ApprovalView, ShownKey};
use crate::diff::{self, Diff};
use crate::safe_text::one_line;

/// What a message asks of the loop beyond the state it changed.
#[derive(Debug, PartialEq)]
pub enum Fed {
    Nothing,
    /// A permission request to show: answered through the daemon under `id`.
    Ask {
        id: String,
        view: Box<ApprovalView>,
    },
    /// A turn began (here or elsewhere): Ctrl-C now cancels it on the daemon.
    TurnStarted,
    /// The stream fell behind and was closed: attach again from the cursor.
    Lagged,
}

/// What the chat knows of the followed session beyond its state.
pub struct Feed {
    /// The last event id received: where attaching again starts.
    pub cursor: Option<String>,
    /// The session's directory, to show a diff's path relative to it.
    cwd: Option<PathBuf>,
    /// Numbers the model's replies, so each turn's text is an entry of its own.
    turn: u32,
    /// Whether a stream was attached before (this one is a reconnection).
    attached: bool,
}

impl Feed {
    pub fn new(cwd: Option<PathBuf>) -> Feed {
        Feed {
            cursor: None,
            cwd,
            turn: 0,
            attached: false,
        }
    }

    /// Folds `message` (with its event id) into `app`.
    pub fn apply(
        &mut self,
        app: &mut App,
        message: &Value,
        event_id: Option<&str>,
        now: Instant,
    ) -> Fed {
        if let Some(id) = event_id {
            self.cursor = Some(id.to_owned());
        }
        let params = &message["params"];
        match message["method"].as_str().unwrap_or("") {
            "session/update" => {
                self.update(app, &params["update"], now);
                Fed::Nothing
            }
            "session/request_permission" => match message["id"].as_str() {
                Some(id) => Fed::Ask {
                    id: id.to_owned(),
                    view: Box::new(self.approval_view(app, params)),
                },
                None => Fed::Nothing,
            },
            "_tackle/approval_resolved" => {
                let id = params["requestId"].as_str().unwrap_or("");
                if app.withdraw(id) {
                    let outcome = params["outcome"].as_str().unwrap_or("answered");
                    app.view.notice(
                        NoticeKind::Info,
                        format!(
                            "approval {} decided elsewhere: {}",
                            one_line(id, 40),
                            one_line(outcome, 40)
                        ),
                    );
                }
                Fed::Nothing
            }
            "_tackle/attached" => {
                let state = params["state"].as_str().unwrap_or("idle");
                let session = params["sessionId"].as_str().unwrap_or("?");
                let again = std::mem::replace(&mut self.attached, true);
                if again && params["retold"] == true {
                    // The daemon could not continue from this chat's cursor (it restarted): what
                    // follows is the whole conversation from the session's log, told anew.
                    app.view.entries.clear();
                    app.approval = None;
                    app.waiting.clear();
                    app.running = None;
                    app.cancelling = false;
                }
                let verb = if params["retold"] == true {
                    "its conversation so far, then live"
                } else {
                    "what followed your last event, then live"
                };
                app.view.notice(
                    NoticeKind::Info,
                    format!(
                        "attached to session {} ({state}): {verb}",
                        one_line(session, 80)
                    ),
                );
                if matches!(state, "running" | "waiting") {
                    self.turn += 1;
                    return Fed::TurnStarted;
                }
                Fed::Nothing
            }
            "_tackle/turn_started" => {
                self.turn += 1;
                Fed::TurnStarted
            }
            "_tackle/turn_ended" => {
                let (kind, text) = match params["stopReason"].as_str().unwrap_or("") {
                    "cancelled" => (NoticeKind::Warning, "the turn was cancelled"),
                    "max_turn_requests" => (NoticeKind::Warning, "the turn reached a bound"),
                    _ => (NoticeKind::Info, "the model ended its turn"),
                };
                app.view.notice(kind, text);
                app.run_ended();
                Fed::Nothing
            }
            "_tackle/lagged" => Fed::Lagged,
            _ => Fed::Nothing,
        }
    }

    fn update(&mut self, app: &mut App, update: &Value, now: Instant) {
        let text = || update.pointer("/content/text").and_then(Value::as_str);
        match update["sessionUpdate"].as_str().unwrap_or("") {
            "agent_message_chunk" => {
                if let Some(t) = text() {
                    let event = AgentEvent::TextDelta {
                        turn: self.turn,
                        text: t.to_owned(),
                    };
                    app.view.apply(&event, None, now);
                }
            }
            "user_message_chunk" => {
                if let Some(t) = text() {
                    // Whoever typed it (this chat's lines come back this way too).
                    app.view.user(t.trim_end(), app.running.is_some());
                    self.turn += 1;
                }
            }
            "tool_call" => {
                let Some(id) = update["toolCallId"].as_str() else {
                    return;
                };
                let tool = update
                    .pointer("/_meta/tackle/tool")
                    .or_else(|| update.get("title"))
                    .and_then(Value::as_str)
                    .unwrap_or("tool");
                let event = AgentEvent::ToolCallStarted {
                    call_id: CallId(id.to_owned()),
                    tool: tool.to_owned(),
                    arguments: update.get("rawInput").cloned().unwrap_or(Value::Null),
                };
                let diff = self.diff_of(update);
                app.view.apply(&event, diff, now);
                self.turn += 1;
            }
            "tool_call_update" => {
                let status = match update["status"].as_str() {
                    Some("completed") => CallStatus::Ok,
                    Some("failed") => CallStatus::Error,
                    _ => return,
                };
                let Some(id) = update["toolCallId"].as_str() else {
                    return;
                };
                let event = AgentEvent::ToolCallFinished {
                    call_id: CallId(id.to_owned()),
                    tool: String::new(),
                    status,
                    code: None,
                    display: None,
                };
                app.view.apply(&event, None, now);
            }
            "plan" => {
                let items: Vec<String> = update["entries"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|e| {
                        let mark = match e["status"].as_str() {
                            Some("completed") => "[x]",
                            Some("in_progress") => "[~]",
                            _ => "[ ]",
                        };
                        format!(
                            "{mark} {}",
                            one_line(e["content"].as_str().unwrap_or(""), 120)
                        )
                    })
                    .collect();
                app.view
                    .notice(NoticeKind::Info, format!("todo: {}", items.join(" · ")));
            }
            "current_mode_update" => {
                if let Some(mode) = update["currentModeId"].as_str() {
                    app.view
                        .notice(NoticeKind::Info, format!("mode: {}", one_line(mode, 40)));
                }
            }
            _ => {}
        }
    }

    /// The change a starting call applies, from the diff the daemon sent with it.
    fn diff_of(&self, update: &Value) -> Option<Diff> {
        let content = update["content"].as_array()?;
        let change = content.iter().find(|c| c["type"] == "diff")?;
        let path = change["path"].as_str()?;
        let shown = self.relative(Path::new(path));
        Some(diff::between(
            &shown,
            change["oldText"].as_str(),
            change["newText"].as_str()?,
        ))
    }

    fn relative(&self, path: &Path) -> String {
        let inside = self
            .cwd
            .as_deref()
            .and_then(|cwd| path.strip_prefix(cwd).ok())
            .unwrap_or(path);
        inside.to_string_lossy().into_owned()
    }

    /// What the approval widget shows for a permission request: the tool, the keys, the diff
    /// the call's start sent (or what the call will do, or its arguments) and the gate's
    /// reason, each made safe to show.
    fn approval_view(&self, app: &App, params: &Value) -> ApprovalView {
        let meta = &params["_meta"]["tackle"];
        let call = &params["toolCall"];
        let text = |v: &Value| v.as_str().unwrap_or("").to_owned();
        let tool = meta["tool"]
            .as_str()
            .or_else(|| call["title"].as_str())
            .unwrap_or("a call");
        let why = meta["why"]
            .as_str()
            .map(str::to_owned)
            .unwrap_or_else(|| text(&call["content"][0]["content"]["text"]));
        let call_id = call["toolCallId"].as_str().unwrap_or("");
        ApprovalView {
            tool: shown(tool),
            call: tackle_runtime::visible::visible_json(&call["rawInput"]),
            keys: meta["keys"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(ShownKey::of)
                .collect(),
            why: shown(&why),
            session_grant: params["options"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|o| o["optionId"] == "allow_session"),
            diff: app.view.diff_of(&CallId(call_id.to_owned())),
            effect: meta["effect"]
                .as_str()
                .map(|e| e.lines().map(shown).collect())
                .unwrap_or_default(),
        }
    }
}

fn shown(text: &str) -> String {
    tackle_runtime::visible::visible(text).into_owned()
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use tokio::sync::oneshot;

    use super::*;
    use crate::chat::approval::Ask;
    use crate::chat::view::{Entry, ToolState};

    fn app() -> App {
        let mut app = App::new(String::new(), 0, "", "s1".into());
        app.remote = Some("attached to http://127.0.0.1:7420/".into());
        app
    }

    fn update(update: Value) -> Value {
        json!({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s1", "update": update}})
    }

    fn note(method: &str, params: Value) -> Value {
        json!({"jsonrpc": "2.0", "method": method, "params": params})
    }

    fn feed_all(feed: &mut Feed, app: &mut App, messages: &[Value]) -> Vec<Fed> {
        messages
            .iter()
            .enumerate()
            .map(|(i, m)| feed.apply(app, m, Some(&format!("e.{}", i + 1)), Instant::now()))
            .collect()
    }

    #[test]
    fn a_turn_from_the_stream_is_the_chat_s_transcript() {
        let mut app = app();
        let mut feed = Feed::new(Some(PathBuf::from("/p")));
        let fed = feed_all(
            &mut feed,
            &mut app,
            &[
                note(
                    "_tackle/attached",
                    json!({"sessionId": "s1", "lastEventId": "e.0", "retold": true, "state": "idle"}),
                ),
                update(
                    json!({"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "fix it\n"}}),
                ),
                note(
                    "_tackle/turn_started",
                    json!({"sessionId": "s1", "input": "fix it"}),
                ),
                update(
                    json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "I will "}}),
                ),
                update(
                    json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "edit."}}),
                ),
                update(json!({
                    "sessionUpdate": "tool_call", "toolCallId": "c1", "title": "edit_file a.txt",
                    "kind": "edit", "status": "pending",
                    "rawInput": {"path": "a.txt", "old_string": "one", "new_string": "two"},
                    "content": [{"type": "diff", "path": "/p/a.txt", "oldText": "one\n", "newText": "two\n"}],
                    "_meta": {"tackle": {"tool": "edit_file"}},
                })),
                update(
                    json!({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed"}),
                ),
                update(
                    json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Done."}}),
                ),
                note(
                    "_tackle/turn_ended",
                    json!({"sessionId": "s1", "stopReason": "end_turn"}),
                ),
            ],
        );
        assert_eq!(fed[2], Fed::TurnStarted);
        assert_eq!(feed.cursor.as_deref(), Some("e.9"));
        let texts: Vec<String> = app
            .view
            .entries
            .iter()
            .map(|e| match e {
                Entry::User { text, .. } => format!("user {text}"),
                Entry::Assistant(a) => format!("model {}", a.text),
                Entry::Tool(t) => format!(
                    "tool {} {} {}",
                    t.tool,
                    t.summary,
                    matches!(
                        t.state,
                        ToolState::Finished {
                            status: CallStatus::Ok,
                            ..
                        }
                    )
                ),
                Entry::Notice(n) => format!("notice {}", n.text),
            })
            .collect();
        assert_eq!(
            texts,
            [
                "notice attached to session s1 (idle): its conversation so far, then live",
                "user fix it",
                "model I will edit.",
                "tool edit_file a.txt true",
                "model Done.",
                "notice the model ended its turn",
            ]
        );
        let Some(Entry::Tool(tool)) = app.view.entries.get(3) else {
            panic!("a tool entry")
        };
        let diff = tool.diff.as_ref().expect("the diff the daemon sent");
        assert_eq!(
            diff.path, "a.txt",
            "shown relative to the session's directory"
        );
        assert!(
            diff.lines.iter().any(|l| l.text.contains("two")),
            "{diff:?}"
        );
    }

    fn permission(id: &str, call: &str) -> Value {
        json!({
            "jsonrpc": "2.0", "id": id, "method": "session/request_permission",
            "params": {
                "sessionId": "s1",
                "toolCall": {"toolCallId": call, "title": "bash rm -rf build", "kind": "execute",
                    "rawInput": {"command": "rm -rf build"},
                    "content": [{"type": "content", "content": {"type": "text", "text": "bash asks"}}]},
                "options": [{"optionId": "allow_once"}, {"optionId": "allow_session"}, {"optionId": "reject"}],
                "_meta": {"tackle": {"tool": "bash", "keys": ["tool.bash.cmd:rm -rf build"], "why": "rule `bash:rm *` asks", "effect": null}},
            },
        })
    }

    #[test]
    fn a_permission_request_is_the_approval_widget_and_another_client_s_answer_takes_it_down() {
        let mut app = app();
        let mut feed = Feed::new(None);
        let Fed::Ask { id, view } = feed.apply(
            &mut app,
            &permission("perm-1", "c9"),
            Some("e.1"),
            Instant::now(),
        ) else {
            panic!("an ask")
        };
        assert_eq!(id, "perm-1");
        assert_eq!(view.tool, "bash");
        assert_eq!(view.keys, [ShownKey::Command("rm -rf build".into())]);
        assert_eq!(view.why, "rule `bash:rm *` asks");
        assert!(view.session_grant);
        let (reply, mut answer) = oneshot::channel();
        app.ask(Ask {
            view: *view,
            reply,
            remote: Some(id),
        });
        assert!(
            app.status().ends_with("waiting for approval"),
            "{}",
            app.status()
        );
        feed.apply(
            &mut app,
            &note(
                "_tackle/approval_resolved",
                json!({"sessionId": "s1", "requestId": "perm-1", "outcome": "allow_once"}),
            ),
            Some("e.2"),
            Instant::now(),
        );
        assert!(app.approval.is_none(), "taken down");
        assert!(
            answer.try_recv().is_err(),
            "no answer is sent for a request decided elsewhere"
        );
        let Some(Entry::Notice(n)) = app.view.entries.last() else {
            panic!("a notice")
        };
        assert_eq!(n.text, "approval perm-1 decided elsewhere: allow_once");
    }

    #[test]
    fn attaching_to_a_running_session_shows_it_working_and_a_lag_asks_to_attach_again() {
        let mut app = app();
        let mut feed = Feed::new(None);
        let fed = feed.apply(
            &mut app,
            &note("_tackle/attached", json!({"sessionId": "s1", "lastEventId": "e.4", "retold": false, "state": "running"})),
            Some("e.4"),
            Instant::now(),
        );
        assert_eq!(fed, Fed::TurnStarted);
        let lagged = note("_tackle/lagged", json!({"message": "fell behind"}));
        assert_eq!(
            feed.apply(&mut app, &lagged, None, Instant::now()),
            Fed::Lagged
        );
        assert_eq!(
            feed.cursor.as_deref(),
            Some("e.4"),
            "a message without an id keeps the cursor"
        );
    }

    #[test]
    fn a_conversation_retold_after_a_restart_replaces_the_one_on_screen() {
        let mut app = app();
        let mut feed = Feed::new(None);
        let attached = |retold: bool| {
            note(
                "_tackle/attached",
                json!({"sessionId": "s1", "lastEventId": "e.1", "retold": retold, "state": "idle"}),
            )
        };
        let said = update(
            json!({"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "hello"}}),
        );
        feed_all(&mut feed, &mut app, &[attached(true), said.clone()]);
        // Reattached from a cursor the daemon still knows: only what followed, added.
        feed_all(&mut feed, &mut app, &[attached(false)]);
        assert_eq!(app.view.entries.len(), 3);
        // Reattached after a restart: the retold conversation stands alone.
        feed_all(&mut feed, &mut app, &[attached(true), said]);
        let users = app
            .view
            .entries
            .iter()
            .filter(|e| matches!(e, Entry::User { .. }))
            .count();
        assert_eq!(users, 1, "the conversation is not shown twice");
    }

    #[test]
    fn hostile_text_from_the_stream_is_shown_escaped() {
        let mut app = app();
        let mut feed = Feed::new(None);
        let Fed::Ask { view, .. } = feed.apply(
            &mut app,
            &json!({"jsonrpc": "2.0", "id": "perm-2", "method": "session/request_permission", "params": {
                "toolCall": {"toolCallId": "c1", "rawInput": {}},
                "options": [],
                "_meta": {"tackle": {"tool": "ba\u{1b}[2Jsh", "keys": ["write:a\u{7}"], "why": "x\u{1b}]0;t\u{7}"}},
            }}),
            None,
            Instant::now(),
        ) else {
            panic!("an ask")
        };
        for text in [&view.tool, &view.why] {
            assert!(!text.contains('\u{1b}'), "{text:?}");
        }
        assert!(!format!("{:?}", view.keys).contains('\u{7}'));
        assert!(
            !view.session_grant,
            "offered only when the daemon offers it"
        );
    }
}
