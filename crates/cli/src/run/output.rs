//! What `tackle run` prints while the loop runs: with `--json`, every event as one JSON object
//! a line on stdout; otherwise the model's text on stdout and the tool calls, as they start and
//! finish, on stderr.

use std::io::Write;
use std::sync::Mutex;

use tackle_agent::{AgentEvent, Observer, WindowSource};
use tackle_runtime::visible::{is_hidden, visible, visible_json};

/// One JSON object a line; a reader that went away is ignored (the run goes on and its
/// record is complete). The runtime's call events do not know the model turn they belong to;
/// a run's turns are sequential, so each `tool_call_*` and `approval_requested` line gets the
/// `turn` of the latest `turn_started`.
pub struct JsonLines {
    out: Mutex<JsonState>,
}

struct JsonState {
    out: std::io::Stdout,
    turn: Option<u32>,
}

impl JsonLines {
    pub fn stdout() -> Self {
        Self {
            out: Mutex::new(JsonState {
                out: std::io::stdout(),
                turn: None,
            }),
        }
    }
}

impl Observer for JsonLines {
    fn on_event(&self, event: &AgentEvent) {
        // The results and the reasoning are in the session's log; the stream says how each
        // call ended and what the model answered.
        if matches!(
            event,
            AgentEvent::ToolResults { .. } | AgentEvent::ThinkingDelta { .. }
        ) {
            return;
        }
        let Ok(mut value) = serde_json::to_value(event) else {
            return;
        };
        let mut state = self.out.lock().unwrap_or_else(|p| p.into_inner());
        tag_turn(&mut value, &mut state.turn);
        // JSON escapes only the C0 controls; a bidi override in the model's text would reach a
        // terminal showing these lines raw, so every hidden character is a `\uXXXX` escape.
        let _ = writeln!(state.out, "{}", visible_json(&value));
        let _ = state.out.flush();
    }
}

/// Remembers the turn a `turn_started` opens and adds it to the call events that follow.
fn tag_turn(value: &mut serde_json::Value, turn: &mut Option<u32>) {
    let Some(object) = value.as_object_mut() else {
        return;
    };
    match object.get("type").and_then(serde_json::Value::as_str) {
        Some("turn_started") => {
            *turn = object
                .get("turn")
                .and_then(serde_json::Value::as_u64)
                .and_then(|t| u32::try_from(t).ok());
        }
        Some("tool_call_started" | "tool_call_finished" | "approval_requested") => {
            if let Some(t) = *turn {
                object.entry("turn").or_insert(t.into());
            }
        }
        _ => {}
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
                tool,
                status,
                code,
                display,
                ..
            } => {
                let code = code.as_ref().map(|c| format!(" ({c})")).unwrap_or_default();
                eprintln!("tackle: ← {} {status:?}{code}", visible(tool));
                if let Some(display) = display {
                    eprintln!("tackle:   {}", printable(display));
                }
            }
            AgentEvent::Checkpoint {
                task_done: Some(note),
                ..
            } => eprintln!(
                "tackle: task done: {}; later turns start from its completion record",
                printable(note)
            ),
            AgentEvent::Checkpoint {
                task_done: None, ..
            } => {
                eprintln!("tackle: the conversation was compacted to fit the context window")
            }
            AgentEvent::Sleeping { wake, reason } => eprintln!(
                "tackle: waiting {} to: {}",
                printable(wake),
                printable(reason)
            ),
            AgentEvent::Woken { why } => eprintln!("tackle: woken: {}", printable(why)),
            AgentEvent::Subagent {
                handle,
                status,
                usage,
                ..
            } => {
                let tokens = usage.input_tokens + usage.output_tokens;
                if status == "running" {
                    eprintln!("tackle: subagent {} started", visible(handle));
                } else {
                    eprintln!(
                        "tackle: subagent {} {status} ({tokens} tokens)",
                        visible(handle)
                    );
                }
            }
            AgentEvent::Window {
                context,
                source,
                descriptions,
                ..
            } if descriptions == "compact" || source != WindowSource::Catalog.as_str() => {
                let form = if descriptions == "compact" {
                    "; tools go with one-sentence descriptions and the short system prompt"
                } else {
                    ""
                };
                eprintln!("tackle: window {context} tokens, from {source}{form}")
            }
            AgentEvent::Watchdog { message, cut, .. } => {
                let what = if *cut {
                    "watchdog ended the run"
                } else {
                    "watchdog"
                };
                eprintln!("tackle: {what}: {}", printable(message))
            }
            _ => {}
        }
    }
}

/// Model text as a terminal may show it: lines and tabs kept, every other character
/// [`is_hidden`] calls hidden shown as `\u{..}`: controls (an escape sequence could rewrite
/// the screen), bidirectional overrides, isolates and marks (which reorder what is read), and
/// zero-width and other invisible format characters.
pub(super) fn printable(text: &str) -> String {
    text.chars()
        .map(|c| {
            if is_hidden(c) && c != '\n' && c != '\t' {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn call_events_carry_the_turn_that_started_last() {
        let mut turn = None;
        let mut call = json!({"type": "tool_call_started", "tool": "bash"});
        super::tag_turn(&mut call, &mut turn);
        assert!(call.get("turn").is_none(), "no turn yet: none claimed");
        for (line, want) in [
            (json!({"type": "turn_started", "turn": 2}), None::<u64>),
            (
                json!({"type": "tool_call_started", "tool": "bash"}),
                Some(2),
            ),
            (
                json!({"type": "approval_requested", "tool": "bash"}),
                Some(2),
            ),
            (
                json!({"type": "tool_call_finished", "tool": "bash"}),
                Some(2),
            ),
            (json!({"type": "text_delta", "text": "x"}), None),
            (json!({"type": "turn_started", "turn": 3}), None),
            (json!({"type": "tool_call_finished", "tool": "x"}), Some(3)),
        ] {
            let mut line = line;
            let kind = line["type"].clone();
            super::tag_turn(&mut line, &mut turn);
            if kind != "turn_started" {
                assert_eq!(line.get("turn").and_then(|t| t.as_u64()), want, "{line}");
            }
        }
    }

    #[test]
    fn model_text_keeps_lines_and_escapes_control_sequences() {
        assert_eq!(super::printable("a\n\tb"), "a\n\tb");
        assert_eq!(super::printable("x\u{1b}[2J"), "x\\u{1b}[2J");
    }

    /// Every code point that reorders or hides text, each escaped in the plain output and in
    /// the `--json` line; and over every code point, nothing hidden survives either.
    #[test]
    fn bidi_and_invisible_format_characters_are_escaped_in_both_outputs() {
        let named: [(u32, &str); 24] = [
            (0x1b, "ESC"),
            (0x7f, "DEL"),
            (0x9b, "CSI (C1)"),
            (0x061c, "ARABIC LETTER MARK"),
            (0x200b, "ZERO WIDTH SPACE"),
            (0x200c, "ZERO WIDTH NON-JOINER"),
            (0x200d, "ZERO WIDTH JOINER"),
            (0x200e, "LEFT-TO-RIGHT MARK"),
            (0x200f, "RIGHT-TO-LEFT MARK"),
            (0x2028, "LINE SEPARATOR"),
            (0x2029, "PARAGRAPH SEPARATOR"),
            (0x202a, "LEFT-TO-RIGHT EMBEDDING"),
            (0x202b, "RIGHT-TO-LEFT EMBEDDING"),
            (0x202c, "POP DIRECTIONAL FORMATTING"),
            (0x202d, "LEFT-TO-RIGHT OVERRIDE"),
            (0x202e, "RIGHT-TO-LEFT OVERRIDE"),
            (0x2060, "WORD JOINER"),
            (0x2066, "LEFT-TO-RIGHT ISOLATE"),
            (0x2067, "RIGHT-TO-LEFT ISOLATE"),
            (0x2068, "FIRST STRONG ISOLATE"),
            (0x2069, "POP DIRECTIONAL ISOLATE"),
            (0xfeff, "ZERO WIDTH NO-BREAK SPACE (BOM)"),
            (0xfe0f, "VARIATION SELECTOR-16"),
            (0xe0041, "TAG LATIN CAPITAL LETTER A"),
        ];
        for (u, name) in named {
            let c = char::from_u32(u).unwrap();
            let text = format!("a{c}b");
            let shown = super::printable(&text);
            assert_eq!(shown, format!("a\\u{{{u:x}}}b"), "{name}");
            let line = super::visible_json(&json!({"type": "text_delta", "text": text}));
            assert!(!line.chars().any(super::is_hidden), "{name}: {line}");
            let back: serde_json::Value = serde_json::from_str(&line).unwrap();
            assert_eq!(back["text"], text, "{name}: the JSON still says the same");
        }
        for u in 0..=0x10_ffff_u32 {
            let Some(c) = char::from_u32(u) else { continue };
            let shown = super::printable(&format!("{c}"));
            let raw = shown
                .chars()
                .any(|s| super::is_hidden(s) && s != '\n' && s != '\t');
            assert!(!raw, "U+{u:04X} reaches the terminal raw: {shown:?}");
        }
    }
}
