//! `tackle attach SESSION` on a terminal: the chat's screen over a session a daemon hosts.
//!
//! The session's stream (`_tackle/session/attach`) is read on a task of its own and folded
//! into the same state `tackle chat` draws ([`super::feed`]): the transcript, the approval
//! widget (answered with `_tackle/approval/answer`; taken down when another client decides
//! first), the status line. A line typed is sent to the session (`_tackle/session/send`:
//! steering its running prompt, else its next prompt), and comes back on the stream like
//! anyone's. Ctrl-C cancels the daemon's running turn, a second one (or one when idle) leaves;
//! Ctrl-D and `/quit` leave without touching the turn, which goes on in the daemon. A stream
//! that ends (the daemon restarting, a client fallen behind) is attached again from the last
//! event id received.

use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow};
use ratatui::crossterm::event::Event as TermEvent;
use serde_json::{Value, json};
use tackle_runtime::Approval;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::app::App;
use super::approval::Ask;
use super::feed::{Fed, Feed};
use super::input::Action;
use super::render;
use super::view::NoticeKind;
use crate::commands::Failure;
use crate::daemon::client::{DaemonClient, Flow};

/// How often a stream that ended is attached again before the chat says the daemon is gone.
const ATTEMPTS: u32 = 6;

/// Whether `tackle attach` can draw the chat here: both ends are a terminal.
pub fn possible() -> bool {
    std::io::stdout().is_terminal() && std::io::stdin().is_terminal()
}

/// Follows `session` on the daemon `client` reaches until the person leaves.
pub fn run(
    client: DaemonClient,
    session: String,
    cursor: Option<String>,
    cwd: Option<PathBuf>,
) -> Result<u8, Failure> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let result = rt.block_on(attached(client, session, cursor, cwd));
    // The terminal reader thread may still wait for a key; leave without it.
    rt.shutdown_background();
    result.map(|()| crate::exit::OK).map_err(Failure::Engine)
}

/// What the stream's task hands the loop.
enum Streamed {
    Message(Value, Option<String>),
    /// The stream ended: the daemon's reason, or none when it closed.
    Ended(Option<String>),
}

struct Attached {
    app: App,
    feed: Feed,
    client: DaemonClient,
    session: String,
    streamed: mpsc::UnboundedSender<Streamed>,
    /// What background requests report (a send or an answer refused).
    notes: mpsc::UnboundedSender<(NoticeKind, String)>,
    follow: JoinHandle<()>,
    /// Attempts since the stream last delivered a message.
    attempts: u32,
}

async fn attached(
    client: DaemonClient,
    session: String,
    cursor: Option<String>,
    cwd: Option<PathBuf>,
) -> anyhow::Result<()> {
    let (streamed_tx, mut streamed) = mpsc::unbounded_channel();
    let (notes_tx, mut notes) = mpsc::unbounded_channel();
    let mut app = App::new(String::new(), 0, "", session.clone());
    app.remote = Some(format!("attached to {}", client.base()));
    app.view.notice(
        NoticeKind::Info,
        format!(
            "tackle attach · session {session} on {} · /help for commands",
            client.base()
        ),
    );
    let mut feed = Feed::new(cwd);
    feed.cursor = cursor;
    let follow = follow(
        &client,
        &session,
        feed.cursor.clone(),
        Duration::ZERO,
        &streamed_tx,
    );
    let mut chat = Attached {
        app,
        feed,
        client,
        session,
        streamed: streamed_tx,
        notes: notes_tx,
        follow,
        attempts: 0,
    };

    let mut keys = super::read_keys();
    let mut terminal = ratatui::try_init().context("setting up the terminal")?;
    let result = loop {
        if let Err(e) = terminal.draw(|f| render::draw(f, &chat.app)) {
            break Err(anyhow!("drawing the screen: {e}"));
        }
        if chat.app.quit {
            break Ok(());
        }
        tokio::select! {
            biased;
            Some(event) = keys.recv() => chat.terminal_event(event),
            Some(message) = streamed.recv() => chat.streamed(message),
            Some((kind, text)) = notes.recv() => chat.app.view.notice(kind, text),
            else => break Ok(()),
        }
    };
    ratatui::restore();
    chat.follow.abort();
    result
}

/// Attaches to `session` from `cursor` after `delay`, handing every message to the loop.
fn follow(
    client: &DaemonClient,
    session: &str,
    cursor: Option<String>,
    delay: Duration,
    out: &mpsc::UnboundedSender<Streamed>,
) -> JoinHandle<()> {
    let client = client.clone();
    let out = out.clone();
    let mut params = json!({"sessionId": session});
    if let Some(cursor) = cursor {
        params["lastEventId"] = json!(cursor);
    }
    tokio::spawn(async move {
        tokio::time::sleep(delay).await;
        let ended = client
            .stream("_tackle/session/attach", params, |message, id| {
                match out.send(Streamed::Message(message.clone(), id.map(str::to_owned))) {
                    Ok(()) => Flow::Continue,
                    Err(_) => Flow::Stop,
                }
            })
            .await;
        let why = match ended {
            Ok(_) => None,
            Err(e) => Some(e.to_string()),
        };
        let _ = out.send(Streamed::Ended(why));
    })
}

impl Attached {
    fn terminal_event(&mut self, event: TermEvent) {
        let TermEvent::Key(key) = event else {
            return;
        };
        if self.app.approval_takes(key) {
            return;
        }
        match self.app.input.key(key) {
            Action::None => {}
            Action::Submit(line) => self.submit(line),
            Action::Interrupt => {
                let turn_runs = self.app.running.is_some() && !self.app.cancelling;
                self.app.interrupt();
                if turn_runs {
                    self.request(
                        "_tackle/session/cancel",
                        json!({"sessionId": self.session}),
                        "cancelling the turn",
                    );
                }
            }
            // Leaving does not touch the turn: it goes on in the daemon.
            Action::Quit => self.app.quit = true,
            Action::ScrollUp => self.app.scroll = self.app.scroll.saturating_add(10),
            Action::ScrollDown => self.app.scroll = self.app.scroll.saturating_sub(10),
        }
    }

    fn submit(&mut self, line: String) {
        self.app.scroll = 0;
        let trimmed = line.trim();
        if trimmed.starts_with('/') {
            match trimmed.split_whitespace().next().unwrap_or("") {
                "/help" => self.app.view.notice(NoticeKind::Info, HELP),
                "/quit" | "/detach" => self.app.quit = true,
                "/cancel" => self.request(
                    "_tackle/session/cancel",
                    json!({"sessionId": self.session}),
                    "cancelling the turn",
                ),
                other => self.app.view.notice(
                    NoticeKind::Warning,
                    format!(
                        "unknown command `{}`; attached to a daemon the commands are /help, /cancel and /quit (the session's model, goal and compaction are the daemon's)",
                        crate::safe_text::one_line(other, 40)
                    ),
                ),
            }
            return;
        }
        // Shown when the daemon tells every client, this one included.
        self.request(
            "_tackle/session/send",
            json!({"sessionId": self.session, "text": line}),
            "sending your message",
        );
    }

    /// Calls `method` in the background; a refusal is said in the transcript.
    fn request(&self, method: &'static str, params: Value, doing: &'static str) {
        let client = self.client.clone();
        let notes = self.notes.clone();
        tokio::spawn(async move {
            if let Err(e) = client.call(method, params).await {
                let _ = notes.send((NoticeKind::Error, format!("{doing}: {e}")));
            }
        });
    }

    fn streamed(&mut self, streamed: Streamed) {
        match streamed {
            Streamed::Message(message, id) => {
                self.attempts = 0;
                let fed = self
                    .feed
                    .apply(&mut self.app, &message, id.as_deref(), Instant::now());
                match fed {
                    Fed::Nothing => {}
                    Fed::Ask { id, view } => self.ask(id, *view),
                    Fed::TurnStarted => {
                        if self.app.running.is_none() {
                            self.app.running = Some(CancellationToken::new());
                        }
                    }
                    Fed::Lagged => {
                        self.follow.abort();
                        self.follow = follow(
                            &self.client,
                            &self.session,
                            self.feed.cursor.clone(),
                            Duration::ZERO,
                            &self.streamed,
                        );
                    }
                }
            }
            Streamed::Ended(why) => {
                self.attempts += 1;
                let why = why.unwrap_or_else(|| "the daemon closed the stream".to_owned());
                if self.attempts > ATTEMPTS {
                    self.app.view.notice(
                        NoticeKind::Error,
                        format!(
                            "gave up following session {}: {why}; /quit leaves",
                            self.session
                        ),
                    );
                    return;
                }
                self.app.view.notice(
                    NoticeKind::Warning,
                    format!("{why}; attaching again from the last event received"),
                );
                // 0.25 s, 0.5 s, 1 s, … : a daemon that restarts is back within a few.
                let delay = Duration::from_millis(250 << (self.attempts - 1).min(4));
                self.follow = follow(
                    &self.client,
                    &self.session,
                    self.feed.cursor.clone(),
                    delay,
                    &self.streamed,
                );
            }
        }
    }

    /// Shows the daemon's request `id`; the answer given here goes back to the daemon.
    fn ask(&mut self, id: String, view: super::approval::ApprovalView) {
        let (reply, answer) = oneshot::channel();
        self.app.ask(Ask {
            view,
            reply,
            remote: Some(id.clone()),
        });
        let client = self.client.clone();
        let notes = self.notes.clone();
        let session = self.session.clone();
        tokio::spawn(async move {
            // Dropped unanswered: decided elsewhere, or the chat left.
            let Ok(approval) = answer.await else {
                return;
            };
            let mut params = json!({"sessionId": session, "requestId": id});
            params["optionId"] = json!(match &approval {
                Approval::Once => "allow_once",
                Approval::Session => "allow_session",
                Approval::Deny { .. } | Approval::Unavailable { .. } => "reject",
            });
            if let Approval::Deny {
                message: Some(message),
            } = &approval
            {
                params["message"] = json!(message);
            }
            if let Err(e) = client.call("_tackle/approval/answer", params).await {
                let _ = notes.send((NoticeKind::Warning, format!("your answer to {id}: {e}")));
            }
        });
    }
}

const HELP: &str = "attached to a session a daemon hosts:\n  \
a line you type is sent to it (steering its running turn, else starting the next)\n  \
o / s / d answer an approval (once, for the session, deny with a message for the model)\n  \
Ctrl-C cancels the running turn; a second one leaves\n  \
Ctrl-D or /quit leaves; the session and its turn go on in the daemon\n  \
/cancel cancels the running turn\n  \
PageUp / PageDown scroll";
