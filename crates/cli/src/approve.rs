//! The terminal approver: shows the exact call and the keys that need approval, and offers
//! once / for this session / deny with a message the model will see.
//!
//! It talks to the controlling terminal (`/dev/tty`), never to stdin or stdout, which may carry
//! arguments and results. Without a terminal it answers `Unavailable`, so nothing blocks.

use std::io::{BufRead, BufReader, Write};
use std::sync::Mutex;

use tackle_runtime::visible::{visible, visible_json};
use tackle_runtime::{Approval, ApprovalFuture, ApprovalRequest, Approver};

/// Something to converse with: the terminal in real use, buffers in tests.
pub trait Conversation: Send {
    fn say(&mut self, text: &str) -> std::io::Result<()>;
    /// One line of input without its newline; `None` at end of input.
    fn hear(&mut self) -> std::io::Result<Option<String>>;
}

struct Tty {
    reader: BufReader<std::fs::File>,
    writer: std::fs::File,
}

impl Conversation for Tty {
    fn say(&mut self, text: &str) -> std::io::Result<()> {
        self.writer.write_all(text.as_bytes())?;
        self.writer.flush()
    }

    fn hear(&mut self) -> std::io::Result<Option<String>> {
        let mut line = String::new();
        if self.reader.read_line(&mut line)? == 0 {
            return Ok(None);
        }
        Ok(Some(line.trim_end_matches(['\n', '\r']).to_owned()))
    }
}

/// A conversation on the controlling terminal (`/dev/tty`), if this process has one.
pub fn open_tty() -> Option<Box<dyn Conversation>> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
        .ok()?;
    let writer = f.try_clone().ok()?;
    Some(Box::new(Tty {
        reader: BufReader::new(f),
        writer,
    }))
}

pub struct TerminalApprover {
    conversation: Mutex<Option<Box<dyn Conversation>>>,
}

impl TerminalApprover {
    /// Use the controlling terminal, if there is one.
    pub fn from_tty() -> Self {
        Self {
            conversation: Mutex::new(open_tty()),
        }
    }

    #[cfg(test)]
    pub fn with_conversation(conversation: Box<dyn Conversation>) -> Self {
        Self {
            conversation: Mutex::new(Some(conversation)),
        }
    }

    fn ask_blocking(&self, prompt: &str, session_grant: bool) -> Approval {
        let mut guard = self.conversation.lock().unwrap_or_else(|p| p.into_inner());
        let Some(c) = guard.as_mut() else {
            return Approval::Unavailable {
                reason: "there is no terminal to ask on; allow the key with --allow or in .agents/config.toml".into(),
            };
        };
        let unavailable = |e: std::io::Error| Approval::Unavailable {
            reason: format!("the terminal failed: {e}"),
        };
        if let Err(e) = c.say(prompt) {
            return unavailable(e);
        }
        loop {
            let answer = match c.hear() {
                Ok(Some(a)) => a,
                Ok(None) => {
                    return Approval::Unavailable {
                        reason: "the terminal closed before an answer".into(),
                    };
                }
                Err(e) => return unavailable(e),
            };
            match answer.trim().to_ascii_lowercase().as_str() {
                "o" | "once" | "y" | "yes" => return Approval::Once,
                "s" | "session" if session_grant => return Approval::Session,
                "d" | "deny" | "n" | "no" => {
                    if let Err(e) = c.say("  message for the model (empty for none): ") {
                        return unavailable(e);
                    }
                    let message = match c.hear() {
                        Ok(m) => m.map(|m| m.trim().to_owned()).filter(|m| !m.is_empty()),
                        Err(e) => return unavailable(e),
                    };
                    return Approval::Deny { message };
                }
                _ => {
                    let hint = if session_grant {
                        "  answer o (once), s (this session) or d (deny): "
                    } else {
                        "  answer o (once) or d (deny): "
                    };
                    if let Err(e) = c.say(hint) {
                        return unavailable(e);
                    }
                }
            }
        }
    }
}

/// The prompt shown for one request. Everything in it that the model chose (the tool name,
/// arguments, keys, and the paths the gate's message quotes) is shown through
/// [`visible`]: no escape sequence, carriage return or bidirectional override reaches the
/// terminal raw.
pub fn prompt(request: &ApprovalRequest<'_>) -> String {
    let tool = visible(request.tool);
    let args = visible_json(request.arguments);
    let mut text = format!("\ntackle: {tool} needs approval\n  call: {tool} {args}\n");
    for k in request.keys {
        text.push_str(&format!("  key:  {}\n", visible(k)));
    }
    text.push_str(&format!("  why:  {}\n", visible(request.message)));
    if request.session_grant {
        text.push_str("  allow [o]nce, for this [s]ession, or [d]eny? ");
    } else {
        text.push_str("  allow [o]nce or [d]eny? (this key asks every time) ");
    }
    text
}

impl Approver for TerminalApprover {
    fn approve<'a>(&'a self, request: ApprovalRequest<'a>) -> ApprovalFuture<'a> {
        let prompt = prompt(&request);
        let session_grant = request.session_grant;
        // The conversation blocks on a person; keep it off the async workers.
        Box::pin(async move {
            tokio::task::block_in_place(|| self.ask_blocking(&prompt, session_grant))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    struct Script {
        answers: Vec<String>,
        said: Arc<Mutex<String>>,
    }

    impl Conversation for Script {
        fn say(&mut self, text: &str) -> std::io::Result<()> {
            self.said.lock().unwrap().push_str(text);
            Ok(())
        }
        fn hear(&mut self) -> std::io::Result<Option<String>> {
            Ok((!self.answers.is_empty()).then(|| self.answers.remove(0)))
        }
    }

    fn answer(lines: &[&str]) -> (Approval, String) {
        answer_with(lines, true)
    }

    fn answer_with(lines: &[&str], session_grant: bool) -> (Approval, String) {
        let said = Arc::new(Mutex::new(String::new()));
        let approver = TerminalApprover::with_conversation(Box::new(Script {
            answers: lines.iter().map(|s| s.to_string()).collect(),
            said: said.clone(),
        }));
        let keys = vec!["write:src/a.rs".to_owned()];
        let args = serde_json::json!({"path": "src/a.rs"});
        let session = tackle_protocol::SessionId("s".into());
        let call = tackle_protocol::CallId("c".into());
        let request = ApprovalRequest {
            session: &session,
            call_id: &call,
            tool: "write_file",
            read_only: false,
            arguments: &args,
            keys: &keys,
            message: "write:src/a.rs needs approval (default for writes)",
            session_grant,
        };
        let p = prompt(&request);
        let got = approver.ask_blocking(&p, session_grant);
        let text = said.lock().unwrap().clone();
        (got, text)
    }

    #[test]
    fn answers_table() {
        assert_eq!(answer(&["o"]).0, Approval::Once);
        assert_eq!(answer(&["session"]).0, Approval::Session);
        assert_eq!(
            answer(&["d", "use edit_file"]).0,
            Approval::Deny {
                message: Some("use edit_file".into())
            }
        );
        assert_eq!(answer(&["d", ""]).0, Approval::Deny { message: None });
        assert_eq!(answer(&["maybe", "s"]).0, Approval::Session);
        assert!(matches!(answer(&[]).0, Approval::Unavailable { .. }));
        let (_, shown) = answer(&["o"]);
        assert!(
            shown.contains("write_file {\"path\":\"src/a.rs\"}")
                && shown.contains("key:  write:src/a.rs"),
            "{shown}"
        );
        assert!(shown.contains("default for writes"), "{shown}");
        // A key the gate asks about every time is not offered for the session.
        let (got, shown) = answer_with(&["s", "o"], false);
        assert_eq!(got, Approval::Once);
        assert!(!shown.contains("[s]ession"), "{shown}");
        assert!(shown.contains("asks every time"), "{shown}");
    }

    /// Issue 13 §8: a model-supplied path that would redraw the prompt is shown escaped, in
    /// the call line, the keys and the gate's message alike. One case a row.
    #[test]
    fn model_supplied_text_cannot_redraw_the_prompt() {
        let attacks = [
            "x\u{1b}[1A\u{1b}[2K\r  call: write_file {}",
            "a\rkey:  write:harmless.txt",
            "evil\u{202e}txt.sh",
            "csi\u{9b}1A",
            "bell\u{7}del\u{7f}",
            "line\nkey:  write:ok.txt",
        ];
        for path in attacks {
            let keys = vec![format!("write:{path}")];
            let args = serde_json::json!({"path": path});
            let session = tackle_protocol::SessionId("s".into());
            let call = tackle_protocol::CallId("c".into());
            let message = format!("write:{path} needs approval (default for writes)");
            let request = ApprovalRequest {
                session: &session,
                call_id: &call,
                tool: "write_file",
                read_only: false,
                arguments: &args,
                keys: &keys,
                message: &message,
                session_grant: true,
            };
            let shown = prompt(&request);
            let lines: Vec<&str> = shown.lines().collect();
            // The blank line, the heading, the call, one key, why, and the question.
            assert_eq!(lines.len(), 6, "{path:?}: {shown}");
            assert!(
                !shown
                    .chars()
                    .any(|c| c != '\n' && tackle_runtime::visible::is_hidden(c)),
                "{path:?}: {shown:?}"
            );
        }
    }

    #[test]
    fn no_terminal_is_unavailable() {
        let approver = TerminalApprover {
            conversation: Mutex::new(None),
        };
        assert!(matches!(
            approver.ask_blocking("?", true),
            Approval::Unavailable { .. }
        ));
    }
}
