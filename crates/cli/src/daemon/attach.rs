//! `tackle attach [SESSION]`: follow a session a daemon hosts. On a terminal it is the chat's
//! screen (`crate::chat::attached`); otherwise, or with `--lines` or `--json`, line by line,
//! here: what the session said (from the start, or after `--last-event-id`) is printed, then
//! what it says as it happens; each line typed is sent to it (`_tackle/session/send`: steering
//! a running prompt, else the next prompt), and `/allow ID`, `/allow-session ID`, `/reject
//! ID`, `/cancel` and `/quit` do what they say. Without SESSION it lists the daemon's
//! sessions.

use std::io::BufRead;

use anyhow::{Context, anyhow};
use serde_json::{Value, json};

use super::client::{DaemonClient, Flow};
use crate::args::DaemonAddress;
use crate::commands::Failure;
use crate::exit;

pub fn run(
    session: Option<String>,
    address: DaemonAddress,
    last_event_id: Option<String>,
    lines: bool,
    json: bool,
) -> Result<u8, Failure> {
    let client = super::locate(&address).map_err(Failure::Usage)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let Some(session) = session else {
        let listed = rt
            .block_on(client.call("_tackle/sessions/list", Value::Null))
            .map_err(|e| Failure::Engine(anyhow!("{}: {e}", client.base())))?;
        if json {
            println!("{listed}");
        } else {
            for s in listed["sessions"].as_array().into_iter().flatten() {
                println!(
                    "{}  {:<8}  {}",
                    s["sessionId"].as_str().unwrap_or("?"),
                    s["state"].as_str().unwrap_or("?"),
                    s["cwd"].as_str().unwrap_or("?")
                );
            }
        }
        return Ok(exit::OK);
    };
    if !lines && crate::chat::attached::possible() {
        // Known before the screen is taken over: a session the daemon does not host is said
        // plainly, and a diff's path is shown relative to the session's directory.
        let listed = rt
            .block_on(client.call("_tackle/sessions/list", Value::Null))
            .map_err(|e| Failure::Engine(anyhow!("{}: {e}", client.base())))?;
        let Some(found) = listed["sessions"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|s| s["sessionId"] == session.as_str())
        else {
            return Err(Failure::Usage(anyhow!(
                "the daemon at {} hosts no session {session}; `tackle attach` without a session lists those it does",
                client.base()
            )));
        };
        let cwd = found["cwd"].as_str().map(std::path::PathBuf::from);
        drop(rt);
        return crate::chat::attached::run(client, session, last_event_id, cwd);
    }
    let (lines_tx, mut lines) = tokio::sync::mpsc::unbounded_channel::<String>();
    // Standard input is read on a thread of its own: a blocking read holds nothing else up.
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if lines_tx.send(line).is_err() {
                break;
            }
        }
    });
    rt.block_on(async move {
        let follower = client.clone();
        let followed = session.clone();
        let mut params = json!({"sessionId": session});
        if let Some(cursor) = last_event_id {
            params["lastEventId"] = json!(cursor);
        }
        let mut follow = tokio::spawn(async move {
            follower
                .stream("_tackle/session/attach", params, |message, id| {
                    if json {
                        println!("{}", json!({"eventId": id, "message": message}));
                    } else {
                        super::remote::show(message, false, &followed);
                    }
                    Flow::Continue
                })
                .await
        });
        let mut typing = true;
        loop {
            tokio::select! {
                ended = &mut follow => {
                    return match ended {
                        Ok(Ok(_)) => Ok(exit::OK),
                        Ok(Err(e)) => Err(Failure::Engine(anyhow!("following session {session}: {e}"))),
                        Err(e) => Err(Failure::Engine(anyhow!("following session {session}: {e}"))),
                    };
                }
                line = lines.recv(), if typing => match line {
                    // Standard input ended: keep following.
                    None => typing = false,
                    Some(line) => {
                        if line.trim() == "/quit" {
                            follow.abort();
                            return Ok(exit::OK);
                        }
                        if let Err(e) = command(&client, &session, line.trim()).await {
                            eprintln!("tackle: {e}");
                        }
                    }
                },
                _ = tokio::signal::ctrl_c() => {
                    follow.abort();
                    return Ok(exit::OK);
                }
            }
        }
    })
}

/// What one typed line does.
async fn command(client: &DaemonClient, session: &str, line: &str) -> anyhow::Result<()> {
    if line.is_empty() {
        return Ok(());
    }
    let answer = |request: &str, option: &str| json!({"sessionId": session, "requestId": request, "optionId": option});
    let words: Vec<&str> = line.split_whitespace().collect();
    let result = match words.as_slice() {
        ["/allow", id] => {
            client
                .call("_tackle/approval/answer", answer(id, "allow_once"))
                .await
        }
        ["/allow-session", id] => {
            client
                .call("_tackle/approval/answer", answer(id, "allow_session"))
                .await
        }
        ["/reject", id] => {
            client
                .call("_tackle/approval/answer", answer(id, "reject"))
                .await
        }
        ["/cancel"] => {
            client
                .call("_tackle/session/cancel", json!({"sessionId": session}))
                .await
        }
        [first, ..] if first.starts_with('/') => {
            return Err(anyhow!(
                "unknown command {first}; the commands are /allow ID, /allow-session ID, /reject ID, /cancel and /quit (anything else is sent to the session)"
            ));
        }
        _ => {
            client
                .call(
                    "_tackle/session/send",
                    json!({"sessionId": session, "text": line}),
                )
                .await
        }
    };
    result.map(drop).map_err(|e| anyhow!("{e}"))
}
