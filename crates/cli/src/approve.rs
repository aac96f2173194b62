//! The terminal approver of `tackle run` and `tackle call`: shows the tool, the keys that need
//! approval (a bash command's as the command), the diff a file change would apply (the exact
//! call when there is none) and the gate's reason, as chat's widget does from the same
//! [`ApprovalView`]; then offers once / for this session / deny with a message the model will
//! see.
//!
//! It talks to the controlling terminal (`/dev/tty`), never to stdin or stdout, which may carry
//! arguments and results. Without a terminal it answers `Unavailable`, so nothing blocks.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::sync::Mutex;

use tackle_runtime::{Approval, ApprovalFuture, ApprovalRequest, Approver};

use crate::approval_view::{ApprovalView, ShownKey};
use crate::diff::plain;

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
    /// The project root, where a file change's current content is read.
    root: PathBuf,
    /// Whether the diff is coloured.
    colour: bool,
}

impl TerminalApprover {
    /// Use the controlling terminal, if there is one; diffs are read under `root` and
    /// coloured unless `NO_COLOR` or `TERM` say otherwise.
    pub fn from_tty(root: PathBuf) -> Self {
        let colour = plain::wants_colour(
            std::env::var_os("NO_COLOR").as_deref(),
            std::env::var_os("TERM").as_deref(),
        );
        Self {
            conversation: Mutex::new(open_tty()),
            root,
            colour,
        }
    }

    #[cfg(test)]
    pub fn with_conversation(
        conversation: Box<dyn Conversation>,
        root: PathBuf,
        colour: bool,
    ) -> Self {
        Self {
            conversation: Mutex::new(Some(conversation)),
            root,
            colour,
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

/// The prompt shown for one ask. Everything in it that the model or the repository chose (the
/// tool name, arguments, keys, file names and content, the paths the gate's message quotes) was
/// made safe by [`ApprovalView`]: no escape sequence, carriage return or bidirectional override
/// reaches the terminal raw; the only escapes are the diff's colours, when `colour` is set.
pub fn prompt(view: &ApprovalView, colour: bool) -> String {
    let mut text = format!("\ntackle: {} needs approval\n", view.tool);
    for key in &view.keys {
        match key {
            ShownKey::Command(command) => text.push_str(&format!("  $ {command}\n")),
            ShownKey::Key(key) => text.push_str(&format!("  key:  {key}\n")),
        }
    }
    match &view.diff {
        Some(diff) => text.push_str(&plain::render(diff, "  ", colour)),
        None if !view.effect.is_empty() => {
            for line in &view.effect {
                text.push_str(&format!("  | {line}\n"));
            }
        }
        None => text.push_str(&format!("  call: {} {}\n", view.tool, view.call)),
    }
    text.push_str(&format!("  why:  {}\n", view.why));
    if view.session_grant {
        text.push_str("  allow [o]nce, for this [s]ession, or [d]eny? ");
    } else {
        text.push_str("  allow [o]nce or [d]eny? (this key asks every time) ");
    }
    text
}

impl Approver for TerminalApprover {
    fn approve<'a>(&'a self, request: ApprovalRequest<'a>) -> ApprovalFuture<'a> {
        // The file is read and the conversation blocks on a person; keep both off the async
        // workers.
        Box::pin(async move {
            tokio::task::block_in_place(|| {
                let view = ApprovalView::of(&request, &self.root);
                self.ask_blocking(&prompt(&view, self.colour), view.session_grant)
            })
        })
    }
}

#[cfg(test)]
#[path = "approve_tests.rs"]
mod tests;
