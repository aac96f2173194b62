//! The slash commands typed on the input line: parsed here, carried out by the chat loop.

/// A parsed command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Slash {
    Help,
    Model(Option<String>),
    Compact,
    /// `/done <note>`: the note is the rest of the line.
    Done(Option<String>),
    Todo,
    Stats,
    Resume(Option<String>),
    Quit,
    /// A word after `/` that names no command.
    Unknown(String),
}

/// Every command with what it does, in the order `/help` lists them.
pub const COMMANDS: &[(&str, &str)] = &[
    ("/help", "list these commands and the keys"),
    (
        "/model [provider:model]",
        "show the model, or switch to another",
    ),
    (
        "/compact",
        "compact the conversation (the loop does it when the window fills)",
    ),
    (
        "/done <note>",
        "the task is finished: write its completion record (later turns start from it)",
    ),
    ("/todo", "show the session's todo list"),
    ("/stats", "tokens used and their cost"),
    ("/resume [id]", "list recent sessions, or continue one"),
    ("/quit", "leave (Ctrl-C when idle does too)"),
];

/// `None` when `line` is a message rather than a command.
pub fn parse(line: &str) -> Option<Slash> {
    let rest = line.trim().strip_prefix('/')?;
    let mut words = rest.split_whitespace();
    let name = words.next().unwrap_or("");
    let rest = rest.trim_start()[name.len()..].trim();
    let arg = words.next().map(str::to_owned);
    Some(match name {
        "help" | "?" => Slash::Help,
        "model" => Slash::Model(arg),
        "compact" => Slash::Compact,
        "done" => Slash::Done(Some(rest.to_owned()).filter(|r| !r.is_empty())),
        "todo" => Slash::Todo,
        "stats" => Slash::Stats,
        "resume" => Slash::Resume(arg),
        "quit" | "exit" => Slash::Quit,
        other => Slash::Unknown(other.to_owned()),
    })
}

/// What `/help` shows.
pub fn help() -> Vec<String> {
    let mut lines = vec!["commands:".to_owned()];
    for (name, what) in COMMANDS {
        lines.push(format!("  {name:<26}{what}"));
    }
    lines.push(
        "keys: Enter sends (while a turn runs, it steers: queued to the next safe point), \
         Ctrl-C cancels the turn (twice, or when idle: quit), PageUp/PageDown scroll"
            .to_owned(),
    );
    lines
}

/// What an unknown command is told.
pub fn unknown(name: &str) -> String {
    let known: Vec<&str> = COMMANDS
        .iter()
        .map(|(n, _)| n.split_whitespace().next().unwrap_or(n))
        .collect();
    format!(
        "unknown command `/{}`; the commands are {}",
        crate::safe_text::one_line(name, 40),
        known.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_parse_with_their_arguments() {
        let cases = [
            ("/help", Some(Slash::Help)),
            ("/model", Some(Slash::Model(None))),
            (
                "/model openai:gpt-5",
                Some(Slash::Model(Some("openai:gpt-5".into()))),
            ),
            ("  /compact ", Some(Slash::Compact)),
            ("/todo", Some(Slash::Todo)),
            ("/done", Some(Slash::Done(None))),
            (
                "/done  fixed the parser,  tests pass ",
                Some(Slash::Done(Some("fixed the parser,  tests pass".into()))),
            ),
            ("/stats", Some(Slash::Stats)),
            ("/resume abc", Some(Slash::Resume(Some("abc".into())))),
            ("/quit", Some(Slash::Quit)),
            ("/frob x", Some(Slash::Unknown("frob".into()))),
            ("hello /help", None),
        ];
        for (line, want) in cases {
            assert_eq!(parse(line), want, "{line}");
        }
    }

    #[test]
    fn unknown_commands_list_the_known_ones() {
        let text = unknown("frob");
        assert!(text.starts_with("unknown command `/frob`"));
        for name in [
            "/help", "/model", "/compact", "/done", "/todo", "/stats", "/resume", "/quit",
        ] {
            assert!(text.contains(name), "{text}");
        }
    }

    #[test]
    fn help_lists_every_command() {
        let all = help().join("\n");
        for (name, _) in COMMANDS {
            assert!(all.contains(name));
        }
    }
}
