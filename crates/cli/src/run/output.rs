//! What `tackle run` prints while the loop runs: with `--json`, every event as one JSON object
//! a line on stdout; otherwise the model's text on stdout and the tool calls, as they start and
//! finish, on stderr.

use std::io::Write;
use std::sync::Mutex;

use tackle_agent::{AgentEvent, Observer};
use tackle_runtime::visible::visible;

/// One JSON object a line; a reader that went away is ignored (the run goes on and its
/// record is complete).
pub struct JsonLines(pub Mutex<std::io::Stdout>);

impl Observer for JsonLines {
    fn on_event(&self, event: &AgentEvent) {
        let Ok(line) = serde_json::to_string(event) else {
            return;
        };
        let mut out = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }
}

/// The model's words on stdout, the tools' on stderr.
pub struct Text;

impl Observer for Text {
    fn on_event(&self, event: &AgentEvent) {
        match event {
            AgentEvent::TextDelta { text, .. } => {
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(printable(text).as_bytes());
                let _ = out.flush();
            }
            AgentEvent::TurnFinished { .. } => println!(),
            AgentEvent::ToolCallStarted { tool, .. } => eprintln!("tackle: → {}", visible(tool)),
            AgentEvent::ToolCallFinished {
                tool, status, code, ..
            } => {
                let code = code.as_ref().map(|c| format!(" ({c})")).unwrap_or_default();
                eprintln!("tackle: ← {} {status:?}{code}", visible(tool));
            }
            AgentEvent::Checkpoint { .. } => {
                eprintln!("tackle: the conversation was compacted to fit the context window")
            }
            _ => {}
        }
    }
}

/// Model text as a terminal may show it: lines and tabs kept, every other control character
/// (an escape sequence could rewrite the screen) shown as `\u{..}`.
fn printable(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() && c != '\n' && c != '\t' {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn model_text_keeps_lines_and_escapes_control_sequences() {
        assert_eq!(super::printable("a\n\tb"), "a\n\tb");
        assert_eq!(super::printable("x\u{1b}[2J"), "x\\u{1b}[2J");
    }
}
