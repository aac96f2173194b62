//! `tackle chat`: the interactive terminal front end.
//!
//! The agent loop runs on its own task ([`worker`]); terminal input (read on a thread of its
//! own), the loop's events, the runtime's approval asks and the ends of runs meet in one
//! select loop here, which updates the state ([`app`]) and redraws ([`render`]). Typing while
//! a turn runs steers it (`Steering`: queued to the next safe boundary); Ctrl-C cancels the
//! turn, a second Ctrl-C (or one when idle) quits.

mod app;
mod approval;
pub(crate) mod attached;
mod commands;
mod diff;
mod feed;
mod goal;
mod input;
mod markdown;
mod question;
mod render;
pub(crate) mod setup;
mod slash;
mod view;
mod worker;

use std::io::IsTerminal as _;
use std::sync::Arc;

use anyhow::{Context, anyhow};
use ratatui::crossterm::event::{self as term, Event as TermEvent};
use tackle_agent::{AgentEvent, Compacted, Observer, Steering};
use tackle_config::Config;
use tackle_runtime::Runtime;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::commands::Failure;
use crate::exit;
use app::App;
use input::Action;
use view::NoticeKind;
use worker::{Done, Update, Work};

/// What the command line asked for.
pub struct ChatArgs {
    /// `--model` (`provider:model` or `replay:<file>`; without it `[model] default`) and a
    /// replayed `--agentic-small-model`.
    pub models: crate::run::ModelFlags,
    pub resume: Option<String>,
}

pub fn run(config: Config, args: ChatArgs) -> Result<u8, Failure> {
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        return Err(Failure::Usage(anyhow!(
            "tackle chat needs a terminal; for scripts use tackle run"
        )));
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    rt.block_on(chat(config, args))?;
    // The terminal reader thread may still wait for a key; leave without it.
    rt.shutdown_background();
    Ok(exit::OK)
}

/// Everything the select loop acts on besides the state.
struct Chat {
    app: App,
    config: Config,
    runtime: Arc<Runtime>,
    boundaries: Arc<tackle_agent::TaskBoundaries>,
    /// The subagents of the chat's sessions.
    tree: Arc<tackle_agent::delegate::Tree>,
    observer: Arc<dyn Observer>,
    /// Kept to build the runtime again when the goal tools come or go (`goal::goal_tools_follow`).
    approver: Arc<dyn tackle_runtime::Approver>,
    prompter: Arc<dyn tackle_agent::Prompter>,
    /// The agentic tools' small model, connected once: the runtime built again keeps it.
    small: Option<tackle_agent::agentic::SmallModel>,
    choice: setup::ModelChoice,
    /// The sealed posture's parts, when the session runs sealed.
    sealed: Option<setup::Sealed>,
    steering: Steering,
    work: mpsc::UnboundedSender<Work>,
}

async fn chat(config: Config, args: ChatArgs) -> Result<(), Failure> {
    let (updates_tx, mut updates) = mpsc::unbounded_channel();
    let (asks_tx, mut asks) = mpsc::unbounded_channel();
    let (questions_tx, mut questions) = mpsc::unbounded_channel();
    let (done_tx, mut done) = mpsc::unbounded_channel();
    let (work_tx, work_rx) = mpsc::unbounded_channel();
    let observer: Arc<dyn Observer> = Arc::new(worker::ChatObserver {
        updates: updates_tx,
        root: config.root.clone(),
    });
    let approver = Arc::new(approval::ChatApprover {
        asks: asks_tx,
        root: config.root.clone(),
    });
    let prompter = Arc::new(question::ChatPrompter {
        questions: questions_tx,
    });
    let small = crate::run::agentic::small_model(&config, args.models.small_replay.as_deref())?;
    let choice =
        setup::choose(&config.models, args.models.model.as_deref()).map_err(Failure::Usage)?;
    let session = match &args.resume {
        Some(id) => crate::own_sessions::resume(&config.root, id, "--resume", false)?,
        None => crate::own_sessions::open_as(&config.root, config.agent_loop.posture)?,
    };
    let is_sealed = crate::run::sealed::posture_of(&config, &session, args.resume.is_some())?;
    let (runtime, boundaries, tree, sealed) = if is_sealed {
        let (runtime, boundaries, tree, sealed) = setup::sealed_runtime(
            &config,
            approver.clone(),
            prompter.clone(),
            observer.clone(),
            small.as_ref(),
            &session,
            &choice,
            args.resume.is_some(),
        )?;
        (runtime, boundaries, tree, Some(sealed))
    } else {
        let (runtime, boundaries, tree) = setup::runtime(
            &config,
            approver.clone(),
            prompter.clone(),
            observer.clone(),
            small.as_ref(),
        )?;
        (runtime, boundaries, tree, None)
    };
    let session_id = session.id().0.clone();
    let agent = setup::agent(
        &config,
        runtime.clone(),
        boundaries.clone(),
        tree.clone(),
        session,
        &choice,
        observer.clone(),
        args.resume.is_some(),
        sealed.as_ref(),
    )?;
    let steering = agent.steering();
    tokio::spawn(worker::work(agent, work_rx, done_tx));
    let posture = crate::run::sealed::posture_line(&config, sealed.is_some());
    let mut chat = Chat {
        app: App::new(
            choice.setup.id(),
            choice.setup.entry.context_window,
            &posture,
            session_id.clone(),
        ),
        config,
        runtime,
        boundaries,
        tree,
        observer,
        approver,
        prompter,
        small,
        choice,
        sealed,
        steering,
        work: work_tx,
    };
    let verb = if args.resume.is_some() {
        "resumed"
    } else {
        "new"
    };
    chat.app.view.notice(
        NoticeKind::Info,
        format!("tackle chat · {verb} session {session_id} · /help for commands"),
    );
    for note in &chat.choice.notes {
        chat.app.view.notice(NoticeKind::Info, note.clone());
    }

    let mut keys = read_keys();
    let mut terminal = ratatui::try_init().context("setting up the terminal")?;
    let result = loop {
        if let Err(e) = terminal.draw(|f| render::draw(f, &chat.app)) {
            break Err(anyhow!("drawing the screen: {e}"));
        }
        if chat.app.quit {
            break Ok(());
        }
        // Biased: what the loop sent before an ask (its text, the call starting) or before a
        // run's end is on screen before them.
        tokio::select! {
            biased;
            Some(event) = keys.recv() => chat.terminal_event(event),
            Some(update) = updates.recv() => chat.update(update),
            Some(ask) = asks.recv() => chat.app.ask(ask),
            Some(asked) = questions.recv() => chat.app.question(asked),
            Some(end) = done.recv() => chat.done(end),
            else => break Ok(()),
        }
    };
    ratatui::restore();
    result.map_err(Failure::Engine)
}

/// The terminal's events, read on a thread of their own (crossterm's read blocks) until the
/// receiver is dropped.
pub(crate) fn read_keys() -> mpsc::UnboundedReceiver<term::Event> {
    let (keys_tx, keys) = mpsc::unbounded_channel();
    std::thread::spawn(move || {
        while let Ok(event) = term::read() {
            if keys_tx.send(event).is_err() {
                return;
            }
        }
    });
    keys
}

impl Chat {
    fn terminal_event(&mut self, event: TermEvent) {
        let TermEvent::Key(key) = event else {
            return;
        };
        if self.app.approval_takes(key) {
            return;
        }
        // Enter alone answers the model's question with its default.
        if key.code == term::KeyCode::Enter
            && key.kind != term::KeyEventKind::Release
            && self.app.input.text.is_empty()
            && let Some(asked) = self.app.questions.pop_front()
        {
            self.app.view.user("(the default)", false);
            asked.answer("");
            return;
        }
        match self.app.input.key(key) {
            Action::None => {}
            Action::Submit(line) => self.submit(line),
            Action::Interrupt => {
                self.app.interrupt();
            }
            Action::Quit => self.quit(),
            Action::ScrollUp => self.app.scroll = self.app.scroll.saturating_add(10),
            Action::ScrollDown => self.app.scroll = self.app.scroll.saturating_sub(10),
        }
    }

    fn submit(&mut self, line: String) {
        self.app.scroll = 0;
        if let Some(command) = slash::parse(&line) {
            return self.slash(command);
        }
        if let Some(asked) = self.app.questions.pop_front() {
            self.app.view.user(&line, false);
            asked.answer(&line);
            return;
        }
        self.submit_message(line);
    }

    /// `line` as the user's message: steering the running turn, or the input of a new run.
    fn submit_message(&mut self, line: String) {
        if self.app.running.is_some() {
            let queued = self.steering.send(line.clone());
            self.app.view.user(&line, queued);
            return;
        }
        self.app.view.user(&line, false);
        // Run admission: the goal tools are offered when the goal is open now.
        self.goal_tools_follow();
        let cancel = CancellationToken::new();
        self.app.running = Some(cancel.clone());
        self.app.run_seq += 1;
        if self
            .work
            .send(Work::Run {
                input: line,
                cancel,
                seq: self.app.run_seq,
            })
            .is_err()
        {
            self.app.running = None;
            self.app.view.notice(
                NoticeKind::Error,
                "the agent loop has stopped; restart tackle chat",
            );
        }
    }

    fn update(&mut self, update: Update) {
        let finished = matches!(update.event, AgentEvent::RunFinished { .. });
        self.app.view.apply(&update.event, update.diff, update.at);
        // The run is over for the user once its end is on screen (its record is written
        // before the event is sent): a Ctrl-C from here on quits, and new input starts a run.
        if finished {
            self.app.run_ended();
        }
    }

    fn done(&mut self, done: Done) {
        match done {
            // Usually the run's `run_finished` event has ended it already; this covers a loop
            // that returned without one, and never ends a later run.
            Done::Ran(seq) if seq == self.app.run_seq && self.app.running.is_some() => {
                self.app.run_ended()
            }
            Done::Ran(_) => {}
            Done::Compacted(seq, compacted) => {
                if seq == self.app.run_seq && self.app.running.is_some() {
                    self.app.run_ended();
                }
                self.app.view.fold_run_cost();
                let (kind, text) = match compacted {
                    // The checkpoint's own event has said what it stands for.
                    Compacted::Written { .. } => return,
                    Compacted::Nothing => (
                        NoticeKind::Info,
                        "nothing to summarise: a record would stand for no more than the conversation does now".to_owned(),
                    ),
                    Compacted::Failed(reason) => {
                        (NoticeKind::Warning, format!("not compacted: {reason}"))
                    }
                };
                self.app.view.notice(kind, text);
            }
            Done::Todo(Some(list)) => self.app.view.notice(NoticeKind::Info, list),
            Done::Todo(None) => self.app.view.notice(
                NoticeKind::Info,
                "no todo list yet: the model has not used the todo tool",
            ),
        }
    }

    fn quit(&mut self) {
        match &self.app.running {
            Some(cancel) => {
                cancel.cancel();
                self.app.cancelling = true;
                self.app.quit_after_run = true;
            }
            None => self.app.quit = true,
        }
    }
}
