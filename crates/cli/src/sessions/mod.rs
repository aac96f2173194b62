//! `tackle sessions ls|show|replay|fork`: the sessions under the root's store, read from their
//! logs (never from a separate index, which a crash could leave disagreeing with them).

mod fork;
mod replay;
mod show;
mod summary;

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, anyhow};
use tackle_llm::catalog::ModelId;
use tackle_runtime::Session;
use tackle_store::EventLog;

use crate::args::SessionsCommand;
use crate::commands::Failure;
use crate::config::Config;
use crate::exit;

pub use summary::Summary;

pub fn run(config: &Config, command: SessionsCommand) -> Result<u8, Failure> {
    let mut out = std::io::stdout().lock();
    match command {
        SessionsCommand::Ls { json, all } => {
            let mut list = summaries(config)?;
            list.retain(|s| all || s.agent);
            if json {
                for s in &list {
                    serde_json::to_writer(&mut out, s).context("writing the list")?;
                    writeln!(out).context("writing the list")?;
                }
            } else if list.is_empty() {
                writeln!(
                    out,
                    "no agent sessions under {} (tackle run starts one; --all lists tool-only sessions too)",
                    config.root.display()
                )
                .context("writing the list")?;
            } else {
                for (depth, s) in tree_order(&list) {
                    let indent = "  ".repeat(depth);
                    // A subtask has no handle: it is named by the wrapper it served.
                    let name = s.handle.as_ref().or(s.agent_type.as_ref());
                    let handle = match (name, depth) {
                        (Some(h), 1..) => format!("└ {} ", tackle_runtime::visible::visible(h)),
                        _ => String::new(),
                    };
                    writeln!(out, "{indent}{handle}{}", row(s)).context("writing the list")?;
                }
            }
        }
        SessionsCommand::Show { id, json } => {
            let log = log_of(config, &id)?;
            let rebuilt =
                tackle_agent::rebuild(&log).map_err(|e| Failure::Engine(anyhow!("{e}")))?;
            let messages = &rebuilt.conversation.messages;
            if json {
                serde_json::to_writer_pretty(&mut out, messages).context("writing the session")?;
                writeln!(out).context("writing the session")?;
            } else {
                out.write_all(show::to_text(messages).as_bytes())
                    .context("writing the session")?;
                if let Some(list) = rebuilt.conversation.last_result_text("todo") {
                    out.write_all(show::todo_text(&list).as_bytes())
                        .context("writing the session")?;
                }
            }
        }
        SessionsCommand::Replay { id, json } => {
            let log = log_of(config, &id)?;
            let records = EventLog::read_records(&log)
                .map_err(|e| anyhow!("reading {}: {e}", log.display()))?;
            for record in &records {
                if json {
                    serde_json::to_writer(
                        &mut out,
                        &serde_json::json!({"seq": record.seq, "event": record.event}),
                    )
                    .context("writing the events")?;
                    writeln!(out).context("writing the events")?;
                } else {
                    writeln!(out, "{}", replay::line(record)).context("writing the events")?;
                }
            }
        }
        SessionsCommand::Message { id, text } => {
            let log = log_of(config, &id)?;
            if text.trim().is_empty() {
                return Err(Failure::Usage(anyhow!(
                    "the message is empty; say what the session should hear"
                )));
            }
            let dir = log.parent().context("the session's directory")?;
            let inbox = tackle_agent::Inbox::of_session(dir);
            inbox
                .send(&text)
                .with_context(|| format!("writing to {}", inbox.dir().display()))?;
            writeln!(
                out,
                "left for session {id}: an autonomous run waiting in it wakes with it"
            )
            .context("writing the answer")?;
        }
        SessionsCommand::Fork {
            id,
            turn,
            json,
            trust_log,
        } => {
            let key = crate::own_sessions::key()
                .map_err(|why| anyhow!("cannot tell whether session {id}'s log is yours: {why}"))?;
            // With the user's fleet store, the fork is made there, from what it holds.
            crate::storage::install(&config.storage, None)
                .map_err(|e| Failure::Usage(anyhow!("{e:#}")))?;
            let held = match tackle_store::backend::log_backend() {
                Some(logs) => match logs.read(&id) {
                    Ok(records) => Some(records),
                    Err(tackle_store::BackendError::UnknownSession { .. }) => None,
                    Err(e) => return Err(Failure::Engine(anyhow!("reading session {id}: {e}"))),
                },
                None => None,
            };
            if let Some(records) = held {
                // The database is the user's own, as a resume from it takes it.
                let forked = fork::fork(
                    &config.root,
                    &id,
                    fork::Source::Records(records),
                    turn,
                    &key,
                )
                .map_err(Failure::Usage)?;
                say_forked(&mut out, &forked, json)?;
                return Ok(exit::OK);
            }
            let log = log_of(config, &id)?;
            let origin = crate::own_sessions::origin(&key, &id, &log)
                .map_err(|e| Failure::Engine(anyhow!("{e}")))?;
            if let tackle_runtime::LogOrigin::Foreign(why) = origin {
                if !trust_log {
                    return Err(Failure::Usage(anyhow!(
                        "session {id}'s log was not written by this user's tackle ({why}): it may have come with the repository, and a fork would carry its lines to the model as your conversation; fork it only if you trust every line of it: tackle sessions fork {id} --turn {turn} --trust-log"
                    )));
                }
                eprintln!(
                    "tackle: forking session {id}, whose log this user's tackle did not write ({why}), because --trust-log says you trust it"
                );
            }
            let forked = fork::fork(&config.root, &id, fork::Source::File(&log), turn, &key)
                .map_err(Failure::Usage)?;
            say_forked(&mut out, &forked, json)?;
        }
    }
    Ok(exit::OK)
}

/// Says what a fork made: its id and how to go on, or the fork as JSON.
fn say_forked(out: &mut impl Write, forked: &fork::Forked, json: bool) -> Result<(), Failure> {
    if json {
        serde_json::to_writer(&mut *out, forked).context("writing the fork")?;
        writeln!(out).context("writing the fork")?;
    } else {
        writeln!(
            out,
            "{}\nforked {} at turn {} ({} records); go on with: tackle run --resume {} \"<next input>\"",
            forked.session, forked.forked_from, forked.turn, forked.records, forked.session
        )
        .context("writing the fork")?;
    }
    Ok(())
}

/// Every session under the root, newest first.
pub fn summaries(config: &Config) -> anyhow::Result<Vec<Summary>> {
    let dir = Session::store_dir_for(&config.root).join("sessions");
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("reading {}", dir.display())),
    };
    let price = |model: &str, usage: &tackle_protocol::Usage| {
        let id: ModelId = model.parse().ok()?;
        let prices = config.models.entry(&id)?.entry.prices.as_ref()?;
        Some(tackle_agent::bounds::cost(usage, prices))
    };
    let key = crate::own_sessions::key();
    if let Err(why) = &key {
        eprintln!("tackle: every session is listed foreign: {why}");
    }
    let mut list = Vec::new();
    for entry in entries.flatten() {
        let id = entry.file_name().to_string_lossy().into_owned();
        let log = tackle_store::session_log_path(&Session::store_dir_for(&config.root), &id);
        // Only a directory without a log is passed over in silence: a log that is there but is
        // not a regular file (a FIFO, a link, a device) is reported by the non-blocking open.
        if std::fs::symlink_metadata(&log).is_err() {
            continue;
        }
        match summary::summarize(&id, &log, &price) {
            Ok(mut s) => {
                s.foreign_reason =
                    crate::own_sessions::foreign_reason(key.as_ref().ok(), &id, &log);
                s.foreign = s.foreign_reason.is_some();
                list.push(s);
            }
            Err(e) => eprintln!("tackle: session {id} is not listed: {e}"),
        }
    }
    list.sort_by(|a, b| b.started_at_ms.cmp(&a.started_at_ms).then(b.id.cmp(&a.id)));
    Ok(list)
}

/// `list` (newest first) with every subagent right under the session it works for, oldest
/// child first, and its depth in the tree; a child whose parent is not listed stands alone.
fn tree_order(list: &[Summary]) -> Vec<(usize, &Summary)> {
    let listed: std::collections::HashSet<&str> = list.iter().map(|s| s.id.as_str()).collect();
    let mut out = Vec::with_capacity(list.len());
    let mut stack: Vec<(usize, &Summary)> = list
        .iter()
        .filter(|s| s.parent.as_deref().is_none_or(|p| !listed.contains(p)))
        .rev()
        .map(|s| (0, s))
        .collect();
    let mut shown = std::collections::HashSet::new();
    while let Some((depth, s)) = stack.pop() {
        if !shown.insert(s.id.as_str()) {
            continue;
        }
        out.push((depth, s));
        // Children oldest first: pushed newest first, popped in reverse.
        stack.extend(
            list.iter()
                .filter(|c| c.parent.as_deref() == Some(s.id.as_str()))
                .map(|c| (depth + 1, c)),
        );
    }
    // Sessions whose parent links go round in a circle (a hand-written log) stand alone.
    out.extend(
        list.iter()
            .filter(|s| !shown.contains(s.id.as_str()))
            .map(|s| (0, s)),
    );
    out
}

/// The log of session `id`, or a usage error naming how to find one.
fn log_of(config: &Config, id: &str) -> Result<PathBuf, Failure> {
    let valid = !id.is_empty()
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    let log = tackle_store::session_log_path(&Session::store_dir_for(&config.root), id);
    if !valid || !log.is_file() {
        return Err(Failure::Usage(anyhow!(
            "no session {id:?} under {}; `tackle sessions ls` lists them{}",
            config.root.display(),
            crate::own_sessions::nearest_sessions(&config.root, id)
        )));
    }
    Ok(log)
}

fn row(s: &Summary) -> String {
    let when = tackle_tool::time::compact_utc((s.started_at_ms / 1000) as i64);
    let task = s.task.as_deref().map(one_line).unwrap_or_default();
    let cost = s
        .cost_usd
        .map(|c| format!("${c:.4}"))
        .unwrap_or_else(|| "-".to_owned());
    let outcome =
        s.outcome
            .map(|o| o.as_str())
            .unwrap_or(if s.agent { "unfinished" } else { "calls only" });
    format!(
        "{}{}  {when}  {}  {} turn(s)  {} call(s)  {cost}  {outcome}  {}",
        s.id,
        if s.foreign { "  FOREIGN" } else { "" },
        s.model.as_deref().unwrap_or("-"),
        s.turns,
        s.calls,
        tackle_runtime::visible::visible(&task)
    )
}

fn one_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or("");
    if line.chars().count() > 60 {
        format!("{}…", line.chars().take(60).collect::<String>())
    } else {
        line.to_owned()
    }
}
