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
    /// `/replan`: archive this session's plan; its plan gate closes.
    Replan,
    Goal(GoalSlash),
    Stats,
    /// `/skills`: list the skills.
    Skills,
    /// `/skill <name> [task]`: load a skill into the conversation, with the rest of the line
    /// as the task.
    Skill {
        name: String,
        task: String,
    },
    Resume(Option<String>),
    Quit,
    /// A word after `/` that names no command.
    Unknown(String),
}

/// `/goal …`: the user's controls over the project's goal, as `tackle goal` has them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GoalSlash {
    /// `/goal` or `/goal show`.
    Show,
    /// `/goal set <objective>`: the objective is the rest of the line (empty when none).
    Set(String),
    /// `/goal pause|resume|cancel [<goal-id> <revision>]`; without them, the goal and
    /// revision the chat last showed.
    Control {
        control: tackle_goals::Control,
        named: Option<(String, u64)>,
    },
    /// Anything else after `/goal`: what was wrong with it.
    Bad(String),
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
    (
        "/replan",
        "archive this session's plan (plan mode: mutating tools wait for a new one)",
    ),
    (
        "/goal [show]",
        "show the project's goal: objective, status, revision, checklist",
    ),
    (
        "/goal set <objective>",
        "set a new goal (replaces the current one)",
    ),
    (
        "/goal pause|resume|cancel",
        "change the goal /goal last showed (or name it: <goal-id> <revision>)",
    ),
    ("/stats", "tokens used and their cost"),
    ("/skills", "list the skills the model may load"),
    (
        "/skill <name> [task]",
        "load a skill into the conversation yourself, with an optional task",
    ),
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
        "replan" => Slash::Replan,
        "goal" => Slash::Goal(goal(rest)),
        "stats" => Slash::Stats,
        "skills" => Slash::Skills,
        "skill" => Slash::Skill {
            name: arg.unwrap_or_default(),
            task: rest
                .split_once(char::is_whitespace)
                .map_or("", |(_, t)| t)
                .trim()
                .to_owned(),
        },
        "resume" => Slash::Resume(arg),
        "quit" | "exit" => Slash::Quit,
        other => Slash::Unknown(other.to_owned()),
    })
}

/// The words after `/goal`.
fn goal(rest: &str) -> GoalSlash {
    use tackle_goals::Control;
    let mut words = rest.split_whitespace();
    let sub = words.next().unwrap_or("show");
    let control = match sub {
        "show" if words.next().is_none() => return GoalSlash::Show,
        "set" => return GoalSlash::Set(rest[sub.len()..].trim().to_owned()),
        "pause" => Control::Pause,
        "resume" => Control::Resume,
        "cancel" => Control::Cancel,
        _ => {
            return GoalSlash::Bad(format!(
                "`/goal {}` is not a goal command; use /goal, /goal set <objective>, or /goal pause|resume|cancel",
                crate::safe_text::one_line(rest, 40)
            ));
        }
    };
    let args: Vec<&str> = words.collect();
    match args.as_slice() {
        [] => GoalSlash::Control {
            control,
            named: None,
        },
        [id, revision] => match revision.parse::<u64>() {
            Ok(r) => GoalSlash::Control {
                control,
                named: Some(((*id).to_owned(), r)),
            },
            Err(_) => GoalSlash::Bad(format!(
                "the revision must be a number, as /goal shows it: /goal {sub} <goal-id> <revision>"
            )),
        },
        _ => GoalSlash::Bad(format!(
            "/goal {sub} takes the goal and its revision together, or neither: /goal {sub} <goal-id> <revision>"
        )),
    }
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
            ("/skills", Some(Slash::Skills)),
            (
                "/skill pdf-forms fill  in form.pdf ",
                Some(Slash::Skill {
                    name: "pdf-forms".into(),
                    task: "fill  in form.pdf".into(),
                }),
            ),
            (
                "/skill",
                Some(Slash::Skill {
                    name: String::new(),
                    task: String::new(),
                }),
            ),
            ("/todo", Some(Slash::Todo)),
            ("/done", Some(Slash::Done(None))),
            (
                "/done  fixed the parser,  tests pass ",
                Some(Slash::Done(Some("fixed the parser,  tests pass".into()))),
            ),
            ("/stats", Some(Slash::Stats)),
            ("/replan", Some(Slash::Replan)),
            ("/goal", Some(Slash::Goal(GoalSlash::Show))),
            ("/goal show", Some(Slash::Goal(GoalSlash::Show))),
            (
                "/goal set  make CI  green ",
                Some(Slash::Goal(GoalSlash::Set("make CI  green".into()))),
            ),
            (
                "/goal set",
                Some(Slash::Goal(GoalSlash::Set(String::new()))),
            ),
            (
                "/goal pause",
                Some(Slash::Goal(GoalSlash::Control {
                    control: tackle_goals::Control::Pause,
                    named: None,
                })),
            ),
            (
                "/goal cancel goal-2 7",
                Some(Slash::Goal(GoalSlash::Control {
                    control: tackle_goals::Control::Cancel,
                    named: Some(("goal-2".into(), 7)),
                })),
            ),
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
    fn bad_goal_commands_say_what_is_wrong() {
        for (line, says) in [
            ("/goal frob", "not a goal command"),
            ("/goal show extra", "not a goal command"),
            ("/goal resume goal-1", "together, or neither"),
            ("/goal resume goal-1 two", "must be a number"),
            ("/goal pause goal-1 2 3", "together, or neither"),
        ] {
            match parse(line) {
                Some(Slash::Goal(GoalSlash::Bad(text))) => {
                    assert!(text.contains(says), "{line}: {text}")
                }
                other => panic!("{line}: {other:?}"),
            }
        }
    }

    #[test]
    fn unknown_commands_list_the_known_ones() {
        let text = unknown("frob");
        assert!(text.starts_with("unknown command `/frob`"));
        for name in [
            "/help", "/model", "/compact", "/done", "/todo", "/replan", "/goal", "/stats",
            "/resume", "/quit",
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
