//! The view model: what the transcript holds, built from [`AgentEvent`]s as they arrive, and
//! the run's counters the status line and `/stats` show. Pure: no terminal, no clock reads
//! (the caller hands in the instant each event arrived).

use std::time::{Duration, Instant};

use ratatui::text::Line;
use tackle_agent::AgentEvent;
use tackle_protocol::{CallId, CallStatus, RunOutcome, Usage};

use super::markdown;
use crate::diff::Diff;
use crate::safe_text::one_line;

/// One thing in the transcript.
pub enum Entry {
    User { text: String, queued: bool },
    Assistant(Assistant),
    Tool(ToolEntry),
    Notice(Notice),
}

/// The model's text of one turn, with its rendering cached.
pub struct Assistant {
    pub turn: u32,
    pub text: String,
    pub lines: Vec<Line<'static>>,
}

pub struct ToolEntry {
    pub call_id: CallId,
    pub tool: String,
    /// The call in one line: a command, a path, or its arguments.
    pub summary: String,
    pub started: Instant,
    pub state: ToolState,
    pub diff: Option<Diff>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ToolState {
    Running,
    Finished {
        status: CallStatus,
        code: Option<String>,
        took: Duration,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoticeKind {
    Info,
    Warning,
    Error,
}

pub struct Notice {
    pub kind: NoticeKind,
    pub text: String,
}

/// Tokens and cost over every run of this chat.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Stats {
    pub total: Usage,
    /// Dollars of the runs that have finished, when prices are known.
    pub cost_before: Option<f64>,
    /// Dollars of the running run so far.
    pub cost_run: Option<f64>,
    pub turns: u32,
    /// The size of the last request plus its answer: the context in use.
    pub context: u64,
    /// The window the loop plans for, once it said (a server's answer may shrink it).
    pub window: Option<u64>,
    /// Whether the catalog goes with compact descriptions (a small window).
    pub compact: bool,
}

impl Stats {
    pub fn cost(&self) -> Option<f64> {
        match (self.cost_before, self.cost_run) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
        }
    }
}

#[derive(Default)]
pub struct View {
    pub entries: Vec<Entry>,
    pub stats: Stats,
}

/// The longest one-line summary of a call.
const SUMMARY: usize = 100;

impl View {
    pub fn notice(&mut self, kind: NoticeKind, text: impl Into<String>) {
        self.entries.push(Entry::Notice(Notice {
            kind,
            text: text.into(),
        }));
    }

    pub fn user(&mut self, text: &str, queued: bool) {
        self.entries.push(Entry::User {
            text: text.to_owned(),
            queued,
        });
    }

    /// Folds one event in; `diff` is the change a starting edit or write applies.
    pub fn apply(&mut self, event: &AgentEvent, diff: Option<Diff>, now: Instant) {
        match event {
            AgentEvent::SessionStarted { session, resumed } => {
                let verb = if *resumed { "resumed" } else { "started" };
                self.notice(NoticeKind::Info, format!("session {session} {verb}"));
            }
            AgentEvent::TurnStarted { .. } | AgentEvent::TurnFinished { .. } => {}
            AgentEvent::TextDelta { turn, text } => self.text(*turn, text),
            AgentEvent::ToolCallStarted {
                call_id,
                tool,
                arguments,
            } => self.entries.push(Entry::Tool(ToolEntry {
                call_id: call_id.clone(),
                tool: one_line(tool, 60),
                summary: summary(arguments),
                started: now,
                state: ToolState::Running,
                diff,
            })),
            AgentEvent::ToolCallFinished {
                call_id,
                status,
                code,
                ..
            } => {
                if let Some(entry) = self.tool_mut(call_id) {
                    entry.state = ToolState::Finished {
                        status: *status,
                        code: code.as_ref().map(|c| c.as_str().to_owned()),
                        took: now.saturating_duration_since(entry.started),
                    };
                }
            }
            AgentEvent::ApprovalRequested { .. }
            | AgentEvent::ToolResults { .. }
            | AgentEvent::ThinkingDelta { .. } => {}
            AgentEvent::Window {
                context,
                source,
                descriptions,
                ..
            } => {
                let compact = descriptions == "compact";
                if self.stats.window.is_some_and(|w| w != *context) {
                    self.notice(
                        NoticeKind::Warning,
                        format!("the window is {context} tokens, as {source} says"),
                    );
                }
                if compact && !self.stats.compact {
                    self.notice(
                        NoticeKind::Info,
                        format!(
                            "the window ({context} tokens) is small: tools go with one-sentence \
                             descriptions and the system prompt in its short form"
                        ),
                    );
                }
                self.stats.window = Some(*context);
                self.stats.compact = compact;
            }
            AgentEvent::Usage {
                usage,
                cost_usd,
                subtask,
                ..
            } => {
                let t = &mut self.stats.total;
                t.input_tokens += usage.input_tokens;
                t.output_tokens += usage.output_tokens;
                t.cache_read_tokens += usage.cache_read_tokens;
                t.cache_write_tokens += usage.cache_write_tokens;
                self.stats.cost_run = *cost_usd;
                // A subtask's tokens count toward the totals; it is no turn of the chat's, and
                // its request is not the chat's context.
                if subtask.is_none() {
                    self.stats.turns += 1;
                    self.stats.context = usage.prompt_tokens() + usage.output_tokens;
                }
            }
            AgentEvent::ContextElided { results, .. } => self.notice(
                NoticeKind::Info,
                format!("{results} older tool result(s) left out of the request to fit the window"),
            ),
            AgentEvent::Checkpoint {
                through, task_done, ..
            } => self.notice(
                NoticeKind::Info,
                match task_done {
                    Some(note) => format!(
                        "task done: {note} (a completion record stands for the first {through} message(s))"
                    ),
                    None => format!(
                        "the conversation was compacted: a summary stands for its first {through} message(s)"
                    ),
                },
            ),
            AgentEvent::Sleeping { wake, .. } => {
                self.notice(NoticeKind::Info, format!("waiting {wake}"))
            }
            AgentEvent::Woken { why } => self.notice(NoticeKind::Info, format!("woken: {why}")),
            AgentEvent::Subagent {
                handle,
                status,
                usage,
                ..
            } => {
                if status != "running" {
                    // A child's tokens count toward the conversation's totals.
                    let t = &mut self.stats.total;
                    t.input_tokens += usage.input_tokens;
                    t.output_tokens += usage.output_tokens;
                    t.cache_read_tokens += usage.cache_read_tokens;
                    t.cache_write_tokens += usage.cache_write_tokens;
                }
                self.notice(NoticeKind::Info, format!("subagent {handle} {status}"))
            }
            AgentEvent::Watchdog { message, cut, .. } => self.notice(
                NoticeKind::Warning,
                if *cut {
                    format!("watchdog ended the run: {message}")
                } else {
                    format!("watchdog: {message}")
                },
            ),
            AgentEvent::RunFinished { outcome, reason } => {
                self.fold_run_cost();
                let kind = match outcome {
                    RunOutcome::Finished => NoticeKind::Info,
                    RunOutcome::Cancelled | RunOutcome::BoundHit => NoticeKind::Warning,
                    RunOutcome::Error | RunOutcome::ProviderFailed => NoticeKind::Error,
                };
                self.notice(kind, one_line(reason, 400));
            }
        }
    }

    /// The running run's (or compaction's) cost joins the session's: the next run counts
    /// from zero.
    pub fn fold_run_cost(&mut self) {
        self.stats.cost_before = self.stats.cost();
        self.stats.cost_run = None;
    }

    fn text(&mut self, turn: u32, delta: &str) {
        if let Some(Entry::Assistant(a)) = self.entries.last_mut()
            && a.turn == turn
        {
            a.text.push_str(delta);
            a.lines = markdown::render(&a.text);
            return;
        }
        self.entries.push(Entry::Assistant(Assistant {
            turn,
            text: delta.to_owned(),
            lines: markdown::render(delta),
        }));
    }

    /// The diff shown with call `call_id`, if it changes a file.
    pub fn diff_of(&self, call_id: &CallId) -> Option<Diff> {
        self.entries.iter().rev().find_map(|e| match e {
            Entry::Tool(t) if &t.call_id == call_id => t.diff.clone(),
            _ => None,
        })
    }

    fn tool_mut(&mut self, call_id: &CallId) -> Option<&mut ToolEntry> {
        self.entries.iter_mut().rev().find_map(|e| match e {
            Entry::Tool(t) if &t.call_id == call_id => Some(t),
            _ => None,
        })
    }
}

/// A call in one line: bash's command, a file tool's path, else its JSON.
fn summary(arguments: &serde_json::Value) -> String {
    for key in ["command", "path", "pattern", "url"] {
        if let Some(s) = arguments.get(key).and_then(serde_json::Value::as_str) {
            return one_line(s, SUMMARY);
        }
    }
    one_line(&tackle_runtime::visible::visible_json(arguments), SUMMARY)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tackle_protocol::ErrorCode;

    fn id(s: &str) -> CallId {
        CallId(s.to_owned())
    }

    #[test]
    fn deltas_of_one_turn_join_and_render_as_markdown() {
        let mut v = View::default();
        let now = Instant::now();
        v.apply(
            &AgentEvent::TextDelta {
                turn: 1,
                text: "# He".into(),
            },
            None,
            now,
        );
        v.apply(
            &AgentEvent::TextDelta {
                turn: 1,
                text: "llo".into(),
            },
            None,
            now,
        );
        v.apply(
            &AgentEvent::TextDelta {
                turn: 2,
                text: "next".into(),
            },
            None,
            now,
        );
        assert_eq!(v.entries.len(), 2);
        let Entry::Assistant(a) = &v.entries[0] else {
            panic!("not text")
        };
        assert_eq!(a.text, "# Hello");
        assert_eq!(a.lines[0].to_string(), "# Hello");
    }

    #[test]
    fn a_call_runs_then_finishes_with_its_status_code_and_duration() {
        let mut v = View::default();
        let t0 = Instant::now();
        let start = AgentEvent::ToolCallStarted {
            call_id: id("c1"),
            tool: "bash".into(),
            arguments: json!({"command": "ls\u{1b}[2J"}),
        };
        v.apply(&start, None, t0);
        let Entry::Tool(t) = &v.entries[0] else {
            panic!("not a call")
        };
        assert_eq!(t.summary, "ls\\x1b[2J");
        assert_eq!(t.state, ToolState::Running);
        let done = AgentEvent::ToolCallFinished {
            call_id: id("c1"),
            tool: "bash".into(),
            status: CallStatus::Error,
            code: Some(ErrorCode::new("exit_status")),
            display: None,
        };
        v.apply(&done, None, t0 + Duration::from_millis(1500));
        let Entry::Tool(t) = &v.entries[0] else {
            panic!("not a call")
        };
        assert_eq!(
            t.state,
            ToolState::Finished {
                status: CallStatus::Error,
                code: Some("exit_status".into()),
                took: Duration::from_millis(1500)
            }
        );
    }

    #[test]
    fn usage_adds_up_across_runs_with_cost() {
        let mut v = View::default();
        let now = Instant::now();
        let usage = Usage {
            input_tokens: 100,
            output_tokens: 20,
            cache_read_tokens: 30,
            ..Usage::default()
        };
        let event = |cost| AgentEvent::Usage {
            turn: 1,
            usage,
            total: usage,
            cost_usd: Some(cost),
            subtask: None,
        };
        v.apply(&event(0.5), None, now);
        v.apply(
            &AgentEvent::RunFinished {
                outcome: RunOutcome::Finished,
                reason: "done".into(),
            },
            None,
            now,
        );
        v.apply(&event(0.25), None, now);
        assert_eq!(v.stats.total.input_tokens, 200);
        assert_eq!(v.stats.turns, 2);
        assert_eq!(v.stats.context, 150);
        assert_eq!(v.stats.cost(), Some(0.75));
        let Some(Entry::Notice(n)) = v.entries.last() else {
            panic!("no notice")
        };
        assert_eq!((n.kind, n.text.as_str()), (NoticeKind::Info, "done"));
    }

    #[test]
    fn a_subtasks_usage_counts_in_the_totals_and_is_no_turn() {
        let mut v = View::default();
        let now = Instant::now();
        let turn = Usage {
            input_tokens: 100,
            output_tokens: 20,
            ..Usage::default()
        };
        v.apply(
            &AgentEvent::Usage {
                turn: 1,
                usage: turn,
                total: turn,
                cost_usd: Some(0.5),
                subtask: None,
            },
            None,
            now,
        );
        let small = Usage {
            input_tokens: 5000,
            output_tokens: 80,
            ..Usage::default()
        };
        v.apply(
            &AgentEvent::Usage {
                turn: 1,
                usage: small,
                total: turn,
                cost_usd: Some(0.51),
                subtask: Some(tackle_agent::SubtaskUsage {
                    tool: "agentic_read_file".into(),
                    session: "child".into(),
                    model: "small:model".into(),
                    cost_usd: Some(0.01),
                }),
            },
            None,
            now,
        );
        assert_eq!(v.stats.total.input_tokens, 5100);
        assert_eq!(v.stats.turns, 1);
        assert_eq!(v.stats.context, 120);
        assert_eq!(v.stats.cost(), Some(0.51));
    }
}
