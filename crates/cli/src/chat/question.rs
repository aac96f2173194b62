//! ask_user in a chat: the model's question reaches the chat as an [`Asked`] (the tool waits
//! on its reply), is shown in the transcript, and the next line typed answers it (Enter on an
//! empty line takes the default). A cancelled turn or a closed chat drops the reply, and the
//! model is told no one answered.

use tackle_agent::ask_user::AnswerFuture;
use tackle_agent::{Answer, Prompter, Question};
use tokio::sync::{mpsc, oneshot};

use crate::safe_text::safe_lines;

/// A question on its way to the screen.
pub struct Asked {
    pub question: Question,
    reply: oneshot::Sender<Answer>,
}

impl Asked {
    /// What the transcript shows, safe to draw.
    pub fn shown(&self) -> String {
        let mut text = format!(
            "the model asks: {}",
            safe_lines(&self.question.text).join("\n  ")
        );
        match &self.question.default {
            Some(d) => text.push_str(&format!(
                "\n  (type the answer and Enter; Enter alone answers \"{}\")",
                safe_lines(d).join(" ")
            )),
            None => text.push_str("\n  (type the answer and Enter)"),
        }
        text
    }

    /// Answers with `line`: empty means the default, when there is one.
    pub fn answer(self, line: &str) {
        let line = line.trim();
        let answer = match (&self.question.default, line.is_empty()) {
            (Some(d), true) => Answer::Typed {
                text: d.clone(),
                defaulted: true,
            },
            _ => Answer::Typed {
                text: line.to_owned(),
                defaulted: false,
            },
        };
        // The call may have been cancelled meanwhile; then no one waits.
        let _ = self.reply.send(answer);
    }
}

/// The chat's prompter: every question goes to the screen and waits for the answer.
pub struct ChatPrompter {
    pub questions: mpsc::UnboundedSender<Asked>,
}

impl Prompter for ChatPrompter {
    fn ask(&self, question: Question) -> AnswerFuture<'_> {
        let (reply, answer) = oneshot::channel();
        let sent = self.questions.send(Asked { question, reply }).is_ok();
        Box::pin(async move {
            let gone = || Answer::Unavailable("the chat closed before an answer".to_owned());
            if !sent {
                return gone();
            }
            answer.await.unwrap_or_else(|_| gone())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tackle_protocol::SessionId;

    fn question(default: Option<&str>) -> Question {
        Question {
            session: SessionId("s".into()),
            text: "Delete it?\u{1b}[2J\nreally?".into(),
            default: default.map(str::to_owned),
        }
    }

    #[tokio::test]
    async fn a_typed_line_answers_an_empty_one_takes_the_default_and_a_drop_says_so() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let prompter = ChatPrompter { questions: tx };
        let typed = |text: &str, defaulted| Answer::Typed {
            text: text.into(),
            defaulted,
        };
        for (default, line, want) in [
            (Some("no"), " yes ", typed("yes", false)),
            (Some("no"), "", typed("no", true)),
            (None, "", typed("", false)),
        ] {
            let pending = prompter.ask(question(default));
            let asked = rx.recv().await.unwrap();
            let shown = asked.shown();
            assert!(shown.contains("Delete it?\\x1b[2J\n  really?"), "{shown}");
            assert!(!shown.contains('\u{1b}'));
            asked.answer(line);
            assert_eq!(pending.await, want);
        }
        let pending = prompter.ask(question(None));
        drop(rx.recv().await.unwrap());
        assert!(matches!(pending.await, Answer::Unavailable(_)));
    }
}
