//! Inline approvals: the runtime's ask reaches the chat as an [`Ask`] (the approver waits on
//! its reply), is drawn above the input line with the keys that need approval (a bash call's
//! as the commands they are), the diff an edit or write would apply and the gate's reason, and
//! is answered with o (once), s (for the session, when the keys allow it) or d (deny, then a
//! message the model sees, Enter to send).

use std::path::PathBuf;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use tackle_runtime::{Approval, ApprovalFuture, ApprovalRequest, Approver};
use tokio::sync::{mpsc, oneshot};

use super::diff;
use super::input::InputLine;
pub use crate::approval_view::ApprovalView;
use crate::approval_view::ShownKey;
use crate::safe_text::cut;

/// One ask on its way to the screen.
pub struct Ask {
    pub view: ApprovalView,
    pub reply: oneshot::Sender<Approval>,
    /// The daemon's id of the request, when the ask came from a daemon (`tackle attach`): it
    /// is taken down when another client decides it.
    pub remote: Option<String>,
}

/// The runtime's approver in a chat: every ask goes to the screen and waits for the answer.
pub struct ChatApprover {
    pub asks: mpsc::UnboundedSender<Ask>,
    pub root: PathBuf,
}

impl Approver for ChatApprover {
    fn approve<'a>(&'a self, request: ApprovalRequest<'a>) -> ApprovalFuture<'a> {
        let (reply, answer) = oneshot::channel();
        let view = ApprovalView::of(&request, &self.root);
        let sent = self
            .asks
            .send(Ask {
                view,
                reply,
                remote: None,
            })
            .is_ok();
        Box::pin(async move {
            let gone = || Approval::Unavailable {
                reason: "nobody answered: the turn was cancelled or the chat closed".to_owned(),
            };
            if !sent {
                return gone();
            }
            answer.await.unwrap_or_else(|_| gone())
        })
    }
}

/// The ask on screen, and how far its answer has come.
pub struct Pending {
    pub view: ApprovalView,
    /// The daemon's id of the request (see [`Ask::remote`]).
    pub remote: Option<String>,
    reply: Option<oneshot::Sender<Approval>>,
    /// `Some` once d was pressed: the message for the model being typed.
    pub deny_message: Option<InputLine>,
}

impl Pending {
    pub fn new(ask: Ask) -> Self {
        Self {
            view: ask.view,
            remote: ask.remote,
            reply: Some(ask.reply),
            deny_message: None,
        }
    }

    /// Handles a key; true once answered (the widget then goes away).
    pub fn key(&mut self, key: KeyEvent) -> bool {
        if key.kind == KeyEventKind::Release {
            return false;
        }
        if let Some(message) = &mut self.deny_message {
            if key.code == KeyCode::Enter {
                let text = message.take().trim().to_owned();
                let message = (!text.is_empty()).then_some(text);
                return self.answer(Approval::Deny { message });
            }
            if key.code == KeyCode::Esc {
                self.deny_message = None;
                return false;
            }
            message.key(key);
            return false;
        }
        match key.code {
            KeyCode::Char('o' | 'y') => self.answer(Approval::Once),
            KeyCode::Char('s') if self.view.session_grant => self.answer(Approval::Session),
            KeyCode::Char('d' | 'n') => {
                self.deny_message = Some(InputLine::default());
                false
            }
            _ => false,
        }
    }

    fn answer(&mut self, approval: Approval) -> bool {
        if let Some(reply) = self.reply.take() {
            // The call may have been cancelled meanwhile; then nobody waits for the answer.
            let _ = reply.send(approval);
        }
        true
    }

    /// The widget's lines.
    pub fn lines(&self) -> Vec<Line<'static>> {
        let v = &self.view;
        let bold = Style::default().add_modifier(Modifier::BOLD);
        let dim = Style::default().add_modifier(Modifier::DIM);
        let mut lines = vec![Line::from(vec![Span::styled(
            format!("{} needs approval", cut(v.tool.clone(), 60)),
            bold.fg(Color::Yellow),
        )])];
        for key in &v.keys {
            lines.push(match key {
                ShownKey::Command(command) => Line::from(vec![
                    Span::styled("  $ ", dim),
                    Span::styled(command.clone(), bold),
                ]),
                ShownKey::Key(key) => {
                    Line::from(vec![Span::styled("  key: ", dim), Span::raw(key.clone())])
                }
            });
        }
        match &v.diff {
            Some(d) => lines.extend(diff::render(d, "  ")),
            None if !v.effect.is_empty() => lines.extend(v.effect.iter().map(|l| {
                Line::from(vec![
                    Span::styled("  | ", dim),
                    Span::raw(cut(l.clone(), 300)),
                ])
            })),
            None => lines.push(Line::from(vec![
                Span::styled("  call: ", dim),
                Span::raw(cut(v.call.clone(), 300)),
            ])),
        }
        lines.push(Line::from(vec![
            Span::styled("  why: ", dim),
            Span::raw(cut(v.why.clone(), 300)),
        ]));
        lines.push(match &self.deny_message {
            Some(m) => Line::from(vec![
                Span::styled(
                    "  message for the model (Enter sends, empty for none): ",
                    bold,
                ),
                Span::raw(m.text.clone()),
            ]),
            None if v.session_grant => {
                Line::styled("  allow [o]nce, for this [s]ession, or [d]eny?", bold)
            }
            None => Line::styled("  allow [o]nce or [d]eny? (this key asks every time)", bold),
        });
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::crossterm::event::KeyModifiers;
    use serde_json::json;
    use tackle_protocol::{CallId, SessionId};

    fn key(c: char) -> KeyEvent {
        KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)
    }

    fn pending(session_grant: bool) -> (Pending, oneshot::Receiver<Approval>) {
        let (reply, rx) = oneshot::channel();
        let view = ApprovalView {
            tool: "bash".into(),
            call: "{}".into(),
            keys: vec![
                ShownKey::of("tool.bash.cmd:rm -rf build"),
                ShownKey::of("write:build"),
            ],
            why: "rule asks".into(),
            session_grant,
            diff: None,
            effect: Vec::new(),
        };
        (
            Pending::new(Ask {
                view,
                reply,
                remote: None,
            }),
            rx,
        )
    }

    #[test]
    fn bash_keys_show_as_commands() {
        let (p, _rx) = pending(true);
        let text: Vec<String> = p.lines().iter().map(|l| l.to_string()).collect();
        assert_eq!(text[1], "  $ rm -rf build");
        assert_eq!(text[2], "  key: write:build");
        assert!(text.last().unwrap().contains("[s]ession"));
    }

    #[test]
    fn answers_once_session_and_deny_with_a_message() {
        let (mut p, mut rx) = pending(true);
        assert!(p.key(key('o')));
        assert_eq!(rx.try_recv().unwrap(), Approval::Once);

        let (mut p, mut rx) = pending(true);
        assert!(p.key(key('s')));
        assert_eq!(rx.try_recv().unwrap(), Approval::Session);

        let (mut p, mut rx) = pending(false);
        assert!(!p.key(key('s')), "no session grant offered");
        assert!(!p.key(key('d')));
        for c in "use git clean".chars() {
            p.key(key(c));
        }
        assert!(
            p.lines()
                .last()
                .unwrap()
                .to_string()
                .ends_with("use git clean")
        );
        assert!(p.key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)));
        assert_eq!(
            rx.try_recv().unwrap(),
            Approval::Deny {
                message: Some("use git clean".into())
            }
        );
    }

    #[tokio::test]
    async fn the_approver_shows_the_edit_diff_and_waits_for_the_answer() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "old\n").unwrap();
        let (tx, mut rx) = mpsc::unbounded_channel();
        let approver = ChatApprover {
            asks: tx,
            root: dir.path().to_owned(),
        };
        let args = json!({"path": "a.txt", "old_string": "old", "new_string": "new"});
        let keys = vec!["write:a.txt".to_owned()];
        let (session, call_id) = (SessionId("s".into()), CallId("c".into()));
        let request = ApprovalRequest {
            session: &session,
            handle: None,
            call_id: &call_id,
            tool: "edit_file",
            read_only: false,
            arguments: &args,
            keys: &keys,
            message: "writes ask",
            session_grant: true,
            effect: None,
        };
        let answer = approver.approve(request);
        let ask = rx.recv().await.unwrap();
        let diff = ask.view.diff.clone().unwrap();
        assert!(diff.lines.iter().any(|l| l.text == "new"));
        ask.reply.send(Approval::Once).unwrap();
        assert_eq!(answer.await, Approval::Once);
    }
}
