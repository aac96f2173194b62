//! Who answers ask_user in `tackle run`: `--ask-user=stdin` reads each answer as a line of
//! standard input (the question goes to stderr), `--ask-user=auto` asks on the controlling
//! terminal when there is one. Without a terminal under `auto`, under `--headless`, or once
//! standard input is closed, the question is refused at once, never left waiting.
//!
//! Questions are the model's text: shown through `visible`, so an escape sequence in one
//! cannot repaint the terminal. One question is asked at a time.

use std::io::{BufRead, Write};
use std::sync::{Arc, Mutex};

use tackle_agent::ask_user::AnswerFuture;
use tackle_agent::{Answer, Prompter, Question};
use tackle_runtime::visible::visible;

use crate::approve::{Conversation, open_tty};

/// `--ask-user`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum AskMode {
    /// Read each answer as a line of standard input; the question is printed on stderr.
    Stdin,
    /// Ask on the controlling terminal; refuse when there is none (or under --headless).
    Auto,
}

/// The prompter `--ask-user` asks for.
pub fn prompter(mode: AskMode, headless: bool) -> Arc<dyn Prompter> {
    let conversation: Result<Box<dyn Conversation>, String> = match mode {
        AskMode::Stdin => Ok(Box::new(StdinConversation)),
        AskMode::Auto if headless => Err("the run is headless (--headless or TACKLE_HEADLESS=1)".into()),
        AskMode::Auto => open_tty().ok_or_else(|| {
            "there is no terminal to ask on (--ask-user=auto); use --ask-user=stdin to answer on standard input".to_owned()
        }),
    };
    Arc::new(LinePrompter {
        conversation: Arc::new(Mutex::new(conversation)),
    })
}

/// Questions on a line-based [`Conversation`]; `Err` holds why no one can answer.
pub struct LinePrompter {
    conversation: Arc<Mutex<Result<Box<dyn Conversation>, String>>>,
}

impl LinePrompter {
    #[cfg(test)]
    pub fn with_conversation(conversation: Box<dyn Conversation>) -> Self {
        Self {
            conversation: Arc::new(Mutex::new(Ok(conversation))),
        }
    }
}

impl Prompter for LinePrompter {
    fn ask(&self, question: Question) -> AnswerFuture<'_> {
        let conversation = self.conversation.clone();
        Box::pin(async move {
            // A blocking read; a cancelled call drops this future, and the line read after it
            // is not taken as an answer to anything.
            tokio::task::spawn_blocking(move || {
                let mut guard = conversation.lock().unwrap_or_else(|p| p.into_inner());
                match guard.as_mut() {
                    Ok(c) => ask_on(c.as_mut(), &question),
                    Err(why) => Answer::Unavailable(why.clone()),
                }
            })
            .await
            .unwrap_or_else(|e| Answer::Unavailable(format!("the prompt failed: {e}")))
        })
    }
}

fn ask_on(c: &mut dyn Conversation, q: &Question) -> Answer {
    let mut text = format!("\n? the model asks: {}\n", visible(&q.text));
    if let Some(d) = &q.default {
        text.push_str(&format!("  (an empty line answers \"{}\")\n", visible(d)));
    }
    text.push_str("answer> ");
    if let Err(e) = c.say(&text) {
        return Answer::Unavailable(format!("could not show the question: {e}"));
    }
    match c.hear() {
        Ok(Some(line)) if line.trim().is_empty() => match &q.default {
            Some(d) => Answer::Typed {
                text: d.clone(),
                defaulted: true,
            },
            None => Answer::Typed {
                text: String::new(),
                defaulted: false,
            },
        },
        Ok(Some(line)) => Answer::Typed {
            text: line.trim().to_owned(),
            defaulted: false,
        },
        Ok(None) => Answer::Unavailable("the input is closed".into()),
        Err(e) => Answer::Unavailable(format!("could not read the answer: {e}")),
    }
}

/// Standard input for answers, stderr for questions (stdout may carry `--json` lines).
struct StdinConversation;

impl Conversation for StdinConversation {
    fn say(&mut self, text: &str) -> std::io::Result<()> {
        let mut err = std::io::stderr().lock();
        err.write_all(text.as_bytes())?;
        err.flush()
    }

    fn hear(&mut self) -> std::io::Result<Option<String>> {
        let mut line = String::new();
        if std::io::stdin().lock().read_line(&mut line)? == 0 {
            return Ok(None);
        }
        Ok(Some(line.trim_end_matches(['\n', '\r']).to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tackle_protocol::SessionId;

    struct Script {
        answers: Vec<&'static str>,
        said: Arc<Mutex<String>>,
    }

    impl Conversation for Script {
        fn say(&mut self, text: &str) -> std::io::Result<()> {
            self.said.lock().unwrap().push_str(text);
            Ok(())
        }
        fn hear(&mut self) -> std::io::Result<Option<String>> {
            Ok((!self.answers.is_empty()).then(|| self.answers.remove(0).to_owned()))
        }
    }

    fn question(text: &str, default: Option<&str>) -> Question {
        Question {
            session: SessionId("s".into()),
            text: text.into(),
            default: default.map(str::to_owned),
        }
    }

    #[tokio::test]
    async fn answers_defaults_escapes_and_a_closed_input() {
        let said = Arc::new(Mutex::new(String::new()));
        let p = LinePrompter::with_conversation(Box::new(Script {
            answers: vec!["  yes please ", "", ""],
            said: said.clone(),
        }));
        let typed = |text: &str, defaulted| Answer::Typed {
            text: text.into(),
            defaulted,
        };
        let q = question("Delete the backup?\u{1b}[2J", Some("no"));
        assert_eq!(p.ask(q.clone()).await, typed("yes please", false));
        assert_eq!(p.ask(q).await, typed("no", true));
        assert_eq!(p.ask(question("Name?", None)).await, typed("", false));
        let closed = p.ask(question("Again?", None)).await;
        assert!(
            matches!(&closed, Answer::Unavailable(why) if why.contains("closed")),
            "{closed:?}"
        );
        let shown = said.lock().unwrap().clone();
        assert!(shown.contains("Delete the backup?\\x1b[2J"), "{shown}");
        assert!(!shown.contains('\u{1b}'), "{shown}");
        assert!(shown.contains("an empty line answers \"no\""), "{shown}");
    }

    #[tokio::test]
    async fn a_headless_auto_prompter_refuses_at_once() {
        let p = prompter(AskMode::Auto, true);
        let answer = p.ask(question("Which?", None)).await;
        assert!(
            matches!(&answer, Answer::Unavailable(why) if why.contains("headless")),
            "{answer:?}"
        );
    }
}
