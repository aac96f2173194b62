//! One pass over a session's log: what `tackle sessions ls` shows of it.

use std::ops::ControlFlow;
use std::path::Path;

use serde::Serialize;
use tackle_protocol::{Event, RunOutcome, Usage};
use tackle_store::EventLog;

/// A session as listed.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Summary {
    pub id: String,
    /// Unix milliseconds of `session_started`.
    pub started_at_ms: u64,
    /// The session a subagent works for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// A subagent's handle in its tree (`explore_1a2b3c4d`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub handle: Option<String>,
    /// What a child session works as: a subagent's type, or the agentic wrapper whose subtask
    /// it holds (which has no handle).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_type: Option<String>,
    /// The first input, as the user wrote it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    /// The model of the latest run (`provider:model`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    pub turns: u32,
    /// Tool calls the runtime recorded (an agent's and `tackle call`'s alike).
    pub calls: u64,
    pub usage: Usage,
    /// List price of the turns whose model's prices the catalog knows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// How the latest run ended; `None` while it runs or after it was killed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<RunOutcome>,
    /// Whether any run of the agent loop wrote to it (a `tackle call` or `serve` session has
    /// only calls).
    pub agent: bool,
    /// Records that could not be read as events this version knows (newer kinds, damage).
    #[serde(skip_serializing_if = "is_zero")]
    pub unreadable: u64,
    /// Whether the log was not written (whole) by this user's tackle: it may have come with the
    /// repository, and is never resumed or forked without `--trust-log`.
    pub foreign: bool,
    /// Why it is foreign: the first line without the user's tag.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub foreign_reason: Option<String>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Reads the log at `path`. `price` gives a model's cost for a usage, when known.
pub fn summarize(
    id: &str,
    path: &Path,
    price: &dyn Fn(&str, &Usage) -> Option<f64>,
) -> Result<Summary, tackle_store::EventLogError> {
    let mut s = Summary {
        id: id.to_owned(),
        ..Summary::default()
    };
    EventLog::visit_records(path, |record| {
        let Ok(event) = serde_json::from_value::<Event>(record.event) else {
            s.unreadable += 1;
            return ControlFlow::Continue(());
        };
        match event {
            Event::SessionStarted(e) => {
                s.started_at_ms = e.at_ms;
                s.parent = e.parent.map(|p| p.0);
                s.handle = e.handle;
                s.agent_type = e.agent;
            }
            Event::CallFinished(_) => s.calls += 1,
            Event::UserInput(e) => {
                s.agent = true;
                s.task.get_or_insert(e.text);
            }
            Event::RunStarted(e) => {
                s.agent = true;
                s.model = Some(e.model);
                s.outcome = None;
            }
            Event::ModelTurn(e) => {
                s.turns = s.turns.max(e.turn);
                add(&mut s.usage, &e.usage);
                if let Some(cost) = s.model.as_deref().and_then(|m| price(m, &e.usage)) {
                    *s.cost_usd.get_or_insert(0.0) += cost;
                }
            }
            Event::Checkpoint(e) => add(&mut s.usage, &e.usage),
            Event::RunFinished(e) => s.outcome = Some(e.outcome),
            _ => {}
        }
        ControlFlow::Continue(())
    })?;
    Ok(s)
}

fn add(total: &mut Usage, u: &Usage) {
    total.input_tokens += u.input_tokens;
    total.output_tokens += u.output_tokens;
    total.cache_read_tokens += u.cache_read_tokens;
    total.cache_write_tokens += u.cache_write_tokens;
    if let Some(r) = u.reasoning_tokens {
        *total.reasoning_tokens.get_or_insert(0) += r;
    }
}
