//! A resumed root's tree, rebuilt from the logs: every session of the store whose
//! `session_started` names a parent in the tree (and a handle) is a child. With a fleet's
//! logs, the children's logs this store lacks are copied from the fleet first. A child whose last
//! run ended keeps its status and final output; one whose log has a run that never ended (its
//! process was killed mid-turn) is reported `interrupted`, never re-run. Its parent can
//! continue it with `resume_session_id`. The messages each log holds accepted and not consumed
//! are pending again ([`crate::messaging::restore`]).

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::path::Path;

use tackle_protocol::{Event, RunOutcome, SessionId, Usage};
use tackle_runtime::Session;
use tackle_store::EventLog;

use crate::delegate::tree::{RestoredNode, Status, Tree};

/// What a child's first record says about it.
struct Started {
    id: SessionId,
    parent: SessionId,
    handle: String,
    agent: String,
}

/// Adds to `tree` every descendant of `root` the store's logs name. A log that cannot be
/// read is skipped (it is no child this process can account for); an error only when the
/// sessions directory itself cannot be listed.
pub fn restore(tree: &Tree, root: &Session) -> Result<(), String> {
    // A tree taken on another machine: its children's logs are in the fleet, not here.
    root.copy_descendants()
        .map_err(|e| format!("copying the subagents' logs from the fleet: {e}"))?;
    let log = root.event_log_path();
    let Some(sessions) = log.parent().and_then(Path::parent) else {
        return Ok(());
    };
    let entries =
        std::fs::read_dir(sessions).map_err(|e| format!("listing {}: {e}", sessions.display()))?;
    let mut by_parent: HashMap<SessionId, Vec<Started>> = HashMap::new();
    for entry in entries.flatten() {
        let path = entry.path().join("events.jsonl");
        if let Some(started) = first_record(&path) {
            by_parent
                .entry(started.parent.clone())
                .or_default()
                .push(started);
        }
    }
    let mut frontier = vec![(root.id().clone(), 0u32)];
    while let Some((parent, depth)) = frontier.pop() {
        let Some(mut children) = by_parent.remove(&parent) else {
            continue;
        };
        children.sort_by(|a, b| a.id.0.cmp(&b.id.0));
        for child in children {
            // A log the user's tackle did not write (one that came with the repository,
            // naming a session of this tree as its parent) is no child of it: its answer is
            // never read, nor anything below it.
            if !root.owns_log_of(&child.id.0) {
                continue;
            }
            let path = sessions.join(&child.id.0).join("events.jsonl");
            let (status, output, description, usage) = ending(&path);
            tree.restore(RestoredNode {
                handle: child.handle,
                session: child.id.clone(),
                parent: parent.clone(),
                agent_type: child.agent,
                description,
                depth: depth + 1,
                status,
                output,
                usage,
            });
            crate::messaging::restore::restore(tree, &child.id, &path);
            frontier.push((child.id, depth + 1));
        }
    }
    crate::messaging::restore::restore(tree, root.id(), &log);
    Ok(())
}

/// The session a log's `session_started` says it works for: `Some` for a subagent's log,
/// which is continued through its parent, never on its own (`tackle run --continue`).
pub fn parent_of(path: &Path) -> Option<SessionId> {
    match session_started(path)? {
        Event::SessionStarted(s) => s.parent,
        _ => None,
    }
}

/// The parent and handle a child's log names in its first record.
pub(crate) fn origin_of(path: &Path) -> Option<(SessionId, String)> {
    first_record(path).map(|s| (s.parent, s.handle))
}

/// A log's first record, as an event.
fn session_started(path: &Path) -> Option<Event> {
    let mut first = None;
    EventLog::visit_records(path, |record| {
        first = Some(record.event);
        ControlFlow::Break(())
    })
    .ok()?;
    serde_json::from_value(first?).ok()
}

fn first_record(path: &Path) -> Option<Started> {
    match session_started(path)? {
        Event::SessionStarted(s) => Some(Started {
            id: s.session,
            parent: s.parent?,
            handle: s.handle?,
            agent: s.agent.unwrap_or_default(),
        }),
        _ => None,
    }
}

/// How a child's log ends: its status, final output, first task line and tokens.
fn ending(path: &Path) -> (Status, String, String, Usage) {
    let mut status = Status::Interrupted;
    let mut open = false;
    let mut reason = String::new();
    let mut description = String::new();
    let mut usage = Usage::default();
    let _ = EventLog::visit_records(path, |record| {
        match serde_json::from_value::<Event>(record.event) {
            Ok(Event::RunStarted(_)) => open = true,
            Ok(Event::RunFinished(f)) => {
                open = false;
                status = match f.outcome {
                    RunOutcome::Finished => Status::Completed,
                    RunOutcome::BoundHit => Status::Bounded,
                    RunOutcome::Cancelled => Status::Cancelled,
                    RunOutcome::Error | RunOutcome::ProviderFailed => Status::Failed,
                };
                reason = f.reason;
            }
            Ok(Event::UserInput(u)) if description.is_empty() => {
                description = u
                    .text
                    .lines()
                    .next()
                    .unwrap_or("")
                    .chars()
                    .take(80)
                    .collect();
            }
            Ok(Event::ModelTurn(t)) => crate::conversation::add_usage(&mut usage, &t.usage),
            _ => {}
        }
        ControlFlow::Continue(())
    });
    if open {
        status = Status::Interrupted;
        reason = "its process stopped mid-turn; it was not re-run".to_owned();
    }
    let mut output = crate::rebuild::rebuild(path)
        .ok()
        .and_then(|r| r.conversation.last_assistant_text())
        .unwrap_or_default();
    if status != Status::Completed {
        if !output.is_empty() {
            output.push('\n');
        }
        output.push_str(&format!("[ended: {reason}]"));
    }
    (status, output, description, usage)
}
