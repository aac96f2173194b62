//! The chat's state: the transcript's view model, the input line, the approval on screen and
//! those waiting behind it, what the status line shows, and whether a turn runs.

use std::collections::VecDeque;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use tokio_util::sync::CancellationToken;

use super::approval::{Ask, Pending};
use super::input::InputLine;
use super::question::Asked;
use super::view::{NoticeKind, View};

pub struct App {
    pub view: View,
    pub input: InputLine,
    pub approval: Option<Pending>,
    /// Asks that arrived while another was on screen (calls of one batch ask one by one).
    pub waiting: VecDeque<Ask>,
    /// The model's questions (ask_user), oldest first: the first is the one the next line
    /// typed answers.
    pub questions: VecDeque<Asked>,
    /// `provider:model`.
    pub model: String,
    /// The model's context window in tokens.
    pub window: u64,
    /// The posture in a few words (`mode standard`).
    pub posture: String,
    pub session: String,
    /// The goal and revision `/goal` last showed: what a bare `/goal pause` acts on.
    pub goal_seen: Option<(String, u64)>,
    /// The running turn's cancel, while one runs.
    pub running: Option<CancellationToken>,
    /// The number of the latest run started (see `worker::Done::Ran`).
    pub run_seq: u64,
    /// Ctrl-C was pressed during this turn.
    pub cancelling: bool,
    /// Leave once the running turn has wound down.
    pub quit_after_run: bool,
    pub quit: bool,
    /// Lines scrolled up from the bottom.
    pub scroll: u16,
    /// The daemon a `tackle attach` follows the session on: the status line names it instead
    /// of the model and context, which the daemon's session keeps.
    pub remote: Option<String>,
}

/// What Ctrl-C did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interrupted {
    Cancelled,
    Quit,
}

impl App {
    pub fn new(model: String, window: u64, posture: &str, session: String) -> Self {
        Self {
            view: View::default(),
            input: InputLine::default(),
            approval: None,
            waiting: VecDeque::new(),
            questions: VecDeque::new(),
            model,
            window,
            posture: short_posture(posture),
            session,
            goal_seen: None,
            running: None,
            run_seq: 0,
            cancelling: false,
            quit_after_run: false,
            quit: false,
            scroll: 0,
            remote: None,
        }
    }

    /// Ctrl-C: cancels the running turn (its model stream or batch); a second one, or one
    /// while idle, quits.
    pub fn interrupt(&mut self) -> Interrupted {
        match &self.running {
            Some(cancel) if !self.cancelling => {
                cancel.cancel();
                self.cancelling = true;
                // The calls waiting for an answer are cancelled with their batch.
                self.approval = None;
                self.waiting.clear();
                self.questions.clear();
                self.view
                    .notice(NoticeKind::Warning, "cancelling… (Ctrl-C again quits)");
                Interrupted::Cancelled
            }
            _ => {
                self.quit = true;
                Interrupted::Quit
            }
        }
    }

    pub fn ask(&mut self, ask: Ask) {
        if self.approval.is_none() {
            self.approval = Some(Pending::new(ask));
        } else {
            self.waiting.push_back(ask);
        }
    }

    /// The approval on screen was answered: the next one, if any, takes its place.
    /// An approval on screen takes every key but Ctrl-C (which still interrupts); true when
    /// it took `key`.
    pub fn approval_takes(&mut self, key: KeyEvent) -> bool {
        let Some(pending) = &mut self.approval else {
            return false;
        };
        let ctrl_c =
            key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl_c {
            return false;
        }
        if pending.key(key) {
            self.answered();
        }
        true
    }

    pub fn answered(&mut self) {
        self.approval = self.waiting.pop_front().map(Pending::new);
    }

    /// The daemon's request `id` was decided by another client: taken down here. Whether it
    /// was still open here.
    pub fn withdraw(&mut self, id: &str) -> bool {
        if self
            .approval
            .as_ref()
            .is_some_and(|p| p.remote.as_deref() == Some(id))
        {
            self.answered();
            return true;
        }
        let before = self.waiting.len();
        self.waiting.retain(|a| a.remote.as_deref() != Some(id));
        self.waiting.len() != before
    }

    /// A question from the model: shown now, answered by the next line.
    pub fn question(&mut self, asked: Asked) {
        self.view.notice(NoticeKind::Warning, asked.shown());
        self.questions.push_back(asked);
    }

    pub fn run_ended(&mut self) {
        self.running = None;
        self.cancelling = false;
        self.approval = None;
        self.waiting.clear();
        self.questions.clear();
        if self.quit_after_run {
            self.quit = true;
        }
    }

    /// The status line: model, posture, context in use of the window, and what goes on.
    pub fn status(&self) -> String {
        let used = self.view.stats.context;
        let window = self.view.stats.window.unwrap_or(self.window);
        let percent = (used * 100).checked_div(window).unwrap_or(0);
        let state = if self.approval.is_some() {
            "waiting for approval"
        } else if !self.questions.is_empty() {
            "waiting for your answer"
        } else if self.cancelling {
            "cancelling"
        } else if self.running.is_some() {
            "working"
        } else {
            "ready"
        };
        if let Some(daemon) = &self.remote {
            return format!(
                "{daemon} · session {} · {state}",
                crate::safe_text::one_line(&self.session, 40)
            );
        }
        let compact = if self.view.stats.compact {
            " · compact tools"
        } else {
            ""
        };
        format!(
            "{} · {} · context {}/{} ({percent}%){compact} · {state}",
            crate::safe_text::one_line(&self.model, 60),
            self.posture,
            tokens(used),
            tokens(window),
        )
    }
}

/// `posture: mode standard · paths: …` → `mode standard`.
fn short_posture(line: &str) -> String {
    let first = line.split(" · ").next().unwrap_or(line);
    let first = first.strip_prefix("posture: ").unwrap_or(first);
    // `sealed (what it means…)` shows as `sealed`.
    first.split(" (").next().unwrap_or(first).to_owned()
}

/// A token count in a few characters: `950`, `12.3k`, `1.2M`.
pub fn tokens(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => format!("{:.1}k", n as f64 / 1_000.0),
        _ => format!("{:.1}M", n as f64 / 1_000_000.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn app() -> App {
        App::new(
            "replay:t".into(),
            200_000,
            "posture: mode standard · paths: project root",
            "s1".into(),
        )
    }

    #[test]
    fn ctrl_c_cancels_a_turn_then_quits() {
        let mut a = app();
        assert_eq!(a.interrupt(), Interrupted::Quit, "idle: quit");
        let mut a = app();
        let cancel = CancellationToken::new();
        a.running = Some(cancel.clone());
        assert_eq!(a.interrupt(), Interrupted::Cancelled);
        assert!(cancel.is_cancelled());
        assert!(!a.quit);
        assert_eq!(a.interrupt(), Interrupted::Quit);
        assert!(a.quit);
    }

    #[test]
    fn the_status_line_shows_model_posture_and_context() {
        let mut a = app();
        a.view.stats.context = 12_345;
        assert_eq!(
            a.status(),
            "replay:t · mode standard · context 12.3k/200.0k (6%) · ready"
        );
    }

    #[test]
    fn token_counts_are_short() {
        assert_eq!(tokens(950), "950");
        assert_eq!(tokens(1_500), "1.5k");
        assert_eq!(tokens(2_000_000), "2.0M");
    }
}
