//! `tackle sessions fork`: a new session holding another's conversation through one turn, to
//! go on from there with `tackle run --resume <new id>`.
//!
//! The records are copied as they were written, call records included (so the fork's
//! `retrieve_raw` and the labels of what it reads back stay those of the calls that ran); the
//! source's own `session_started` is replaced by the fork's. The copy ends with turn N's
//! `model_turn`, or, when that turn called tools, with its `tool_batch_finished`.

use std::ops::ControlFlow;
use std::path::Path;

use anyhow::{Context, anyhow, bail};
use serde_json::Value;
use tackle_runtime::{LogKey, Session, SessionOptions};
use tackle_store::{EventLog, LogSeal, Opening};

/// What a fork made.
#[derive(Debug, serde::Serialize)]
pub struct Forked {
    pub session: String,
    pub forked_from: String,
    pub turn: u32,
    /// Records copied (besides the fork's own `session_started`).
    pub records: usize,
}

/// Where a fork's records come from.
pub enum Source<'a> {
    /// The session's log in this project's files.
    File(&'a Path),
    /// Its records as a fleet database holds them (read, not taken: whoever runs it goes on).
    Records(Vec<Value>),
}

/// The records of `source` that make up its conversation through `turn`.
pub fn records_through(source: Source<'_>, turn: u32) -> anyhow::Result<Vec<Value>> {
    let mut kept = Vec::new();
    let mut last_turn = 0;
    let mut done = false;
    let mut wants_batch = false;
    let mut keep = |event: Value| {
        let kind = event["type"].as_str().unwrap_or("").to_owned();
        let this_turn = event["turn"].as_u64().unwrap_or(0) as u32;
        match kind.as_str() {
            "session_started" => return ControlFlow::Continue(()),
            "model_turn" => {
                last_turn = last_turn.max(this_turn);
                if this_turn == turn {
                    wants_batch = event["message"]["content"]
                        .as_array()
                        .is_some_and(|parts| parts.iter().any(|p| p["type"] == "tool_call"));
                    done = !wants_batch;
                }
            }
            "tool_batch_finished" if wants_batch && this_turn == turn => done = true,
            _ => {}
        }
        kept.push(event);
        if done {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    };
    match source {
        Source::File(log) => EventLog::visit_records(log, |record| keep(record.event))
            .with_context(|| format!("reading {}", log.display()))?,
        Source::Records(records) => {
            for event in records {
                if keep(event).is_break() {
                    break;
                }
            }
        }
    }
    if !done {
        if last_turn < turn {
            bail!(
                "the session has {last_turn} turn(s), so there is no turn {turn} to fork at; \
                 `tackle sessions show` lists them"
            );
        }
        bail!(
            "turn {turn}'s tool results were never recorded (the run stopped in it); fork at turn {} instead",
            turn - 1
        );
    }
    Ok(kept)
}

/// Forks session `id` under `root` at `turn`.
///
/// The fork's log is the user's own: `key` tags every line of it, copies included, so the
/// caller decides first whether the source is one to copy (its own, or trusted).
///
/// With a fleet's logs the fork is made there too: its records are written through the new
/// session's log, which replicates them.
pub fn fork(
    root: &Path,
    id: &str,
    source: Source<'_>,
    turn: u32,
    key: &LogKey,
) -> anyhow::Result<Forked> {
    if turn == 0 {
        bail!("--turn counts from 1");
    }
    let records = records_through(source, turn)?;
    let session = Session::open_sealed(root, SessionOptions::default(), key)
        .context("opening the new session")?;
    let new_id = session.id().0.clone();
    let path = session.event_log_path();
    drop(session);
    let (log, _) = tackle_store::open_session_log(
        &path,
        &new_id,
        Some(LogSeal::new(key, &new_id)),
        Opening::Existing,
    )
    .map_err(|e| anyhow!("reopening {}: {e}", path.display()))?;
    for event in &records {
        log.append_with(event, tackle_store::Durability::Written)
            .map_err(|e| anyhow!("writing {}: {e}", path.display()))?;
    }
    log.sync()
        .map_err(|e| anyhow!("syncing {}: {e}", path.display()))?;
    Ok(Forked {
        session: new_id,
        forked_from: id.to_owned(),
        turn,
        records: records.len(),
    })
}
