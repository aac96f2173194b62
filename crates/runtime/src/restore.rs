//! Durable state rebuilt on resume (DESIGN.md §9): the state a tool keeps per session (the todo
//! list) is what that session's successful calls of the tool made it, so a resumed session's
//! log is replayed into every tool that says [`tackle_tool::Tool::session_state`] before its
//! first batch runs.
//!
//! Key decision: the record is the calls already in the log, not an event of its own: nothing
//! new is written, every log ever written rebuilds, and the state cannot drift from what the
//! model was told (each replayed call is one whose `call_finished` says `ok`). A call that
//! started but never finished is not replayed: its effect was never reported. Rejected: a
//! `todo_changed` event, which would add an `Event` variant per stateful tool.

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::Arc;

use serde_json::Value;
use tackle_protocol::{CallId, CallStarted, CallStatus, Event};
use tackle_store::EventLog;
use tackle_tool::DynTool;

use crate::catalog::Catalog;
use crate::error::RuntimeError;
use crate::session::Session;

/// Replay `session`'s log into the catalog's stateful tools. Blocking (reads the log and any
/// stored arguments).
pub(crate) fn restore(catalog: &Catalog, session: &Session) -> Result<(), RuntimeError> {
    let stateful: Vec<&Arc<dyn DynTool>> = catalog
        .names()
        .filter_map(|name| catalog.get(name))
        .filter(|tool| tool.session_state())
        .collect();
    if stateful.is_empty() {
        return Ok(());
    }
    let keeps = |tool: &str| stateful.iter().any(|t| t.name() == tool);
    // The latest start of each call id still open: a model may reuse ids across turns.
    let mut open: HashMap<CallId, CallStarted> = HashMap::new();
    let mut finished: Vec<CallStarted> = Vec::new();
    EventLog::visit_records(&session.event_log_path(), |record| {
        match serde_json::from_value::<Event>(record.event) {
            Ok(Event::CallStarted(started)) if keeps(&started.tool) => {
                open.insert(started.call_id.clone(), started);
            }
            Ok(Event::CallFinished(end)) => {
                if let Some(started) = open.remove(&end.call_id)
                    && end.status == CallStatus::Ok
                {
                    finished.push(started);
                }
            }
            _ => {}
        }
        ControlFlow::Continue(())
    })?;
    let mut calls: HashMap<&str, Vec<Value>> = HashMap::new();
    for started in &finished {
        let arguments = session.recorded_arguments(started)?;
        calls
            .entry(started.tool.as_str())
            .or_default()
            .push(arguments);
    }
    for tool in stateful {
        let recorded = calls.remove(tool.name()).unwrap_or_default();
        tool.restore_json(session.id(), recorded);
    }
    Ok(())
}
