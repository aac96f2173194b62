//! What a subtask read, from its session's log: the label and `read:` keys of every call it
//! made, which the wrapper's own result takes on (`ArtifactSource::derived_from`), and the
//! calls themselves, which agentic_research reports as the raw outputs behind its answer.
//!
//! Key decision: read from the log, not collected as the calls run. The log is where the
//! runtime recorded each call's label and sources (`call_finished`), for the direct calls and
//! for the research loop's alike, so there is one account of what the subtask read and it is
//! the durable one. A log that cannot be read gives [`Label::UNKNOWN`]: what the subtask read is
//! then assumed the least trusted it could be, never the most.

use std::collections::{BTreeSet, HashMap};
use std::ops::ControlFlow;

use tackle_protocol::{CallStatus, Event, Label};
use tackle_runtime::Session;
use tackle_store::{ArtifactId, EventLog};

/// One call of the subtask.
#[derive(Clone, Debug, PartialEq)]
pub struct ChildCall {
    pub tool: String,
    pub status: CallStatus,
    /// Its `path` or `url` argument, when it had one.
    pub target: Option<String>,
    /// Its retained output, as `artifact://<hex>`.
    pub artifacts: Vec<String>,
}

/// Everything the subtask's calls read.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChildReads {
    /// The combination of its calls' labels; `None` when it made none.
    pub label: Option<Label>,
    pub read_keys: Vec<String>,
    pub calls: Vec<ChildCall>,
}

/// The reads recorded in `session`'s log.
pub fn of(session: &Session) -> ChildReads {
    let mut reads = ChildReads::default();
    let mut keys = BTreeSet::new();
    let mut targets: HashMap<String, Option<String>> = HashMap::new();
    let visited = EventLog::visit_records(&session.event_log_path(), |record| {
        match serde_json::from_value::<Event>(record.event) {
            Ok(Event::CallStarted(started)) => {
                let target = ["path", "url"]
                    .iter()
                    .find_map(|k| started.arguments[*k].as_str())
                    .map(str::to_owned);
                targets.insert(started.call_id.0, target);
            }
            Ok(Event::CallFinished(finished)) => {
                reads.label = Some(
                    reads
                        .label
                        .map_or(finished.label, |l| l.combine(finished.label)),
                );
                keys.extend(finished.read_keys);
                reads.calls.push(ChildCall {
                    target: targets.remove(&finished.call_id.0).flatten(),
                    tool: finished.tool,
                    status: finished.status,
                    artifacts: finished
                        .retained_output
                        .iter()
                        .filter(|r| r.stream.is_none())
                        .filter_map(|r| ArtifactId::from_internal_uri(&r.artifact))
                        .map(|id| id.public_uri())
                        .collect(),
                });
            }
            _ => {}
        }
        ControlFlow::Continue(())
    });
    if visited.is_err() {
        reads.label = Some(Label::UNKNOWN);
    }
    reads.read_keys = keys.into_iter().collect();
    reads
}
