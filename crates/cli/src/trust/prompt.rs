//! Asking once, on a terminal, whether to trust a folder.
//!
//! Only a front end a person is at asks: standard input and standard error are terminals and
//! `--headless` is off. The question goes to `/dev/tty` (like the approver), shows every
//! widening and every secret it would move, and only `y`/`yes` trusts; anything else, end of
//! input or a terminal error runs narrow-only. Every string the repository wrote is made
//! visible first ([`visible`]), so a value with escape sequences cannot redraw the question.

use std::io::IsTerminal;
use std::sync::Mutex;

use crate::approve::{Conversation, open_tty};

use super::{ProjectTrust, TrustState};

pub use tackle_config::trust::consent::{Consent, NeverAsk};

/// Asks on a conversation (the terminal in real use).
pub struct TerminalConsent {
    conversation: Mutex<Option<Box<dyn Conversation>>>,
}

impl TerminalConsent {
    /// The terminal consent when a person is at this process (stdin and stderr are terminals
    /// and `/dev/tty` opens), else `None`.
    pub fn if_interactive() -> Option<Self> {
        if !std::io::stdin().is_terminal() || !std::io::stderr().is_terminal() {
            return None;
        }
        Some(Self::with_conversation(open_tty()?))
    }

    pub fn with_conversation(conversation: Box<dyn Conversation>) -> Self {
        Self {
            conversation: Mutex::new(Some(conversation)),
        }
    }
}

impl Consent for TerminalConsent {
    fn ask(&self, trust: &ProjectTrust) -> bool {
        let mut guard = self.conversation.lock().unwrap_or_else(|p| p.into_inner());
        let Some(c) = guard.as_mut() else {
            return false;
        };
        if c.say(&question(trust)).is_err() {
            return false;
        }
        matches!(
            c.hear()
                .ok()
                .flatten()
                .map(|a| a.trim().to_ascii_lowercase())
                .as_deref(),
            Some("y" | "yes")
        )
    }
}

/// The question for one root.
pub fn question(trust: &ProjectTrust) -> String {
    let lead = match trust.state {
        TrustState::Changed => "changed since you trusted it; it now would",
        _ => "is not trusted. Its project config would",
    };
    let mut text = format!(
        "\ntackle: the folder {} {lead} widen your settings:\n",
        visible(&trust.root)
    );
    text.push_str(&super::describe(&trust.widenings));
    let secrets: usize = trust.widenings.iter().map(|w| w.secrets.len()).sum();
    if secrets > 0 {
        text.push_str(&format!(
            "  trusting it hands over {secrets} secret(s), each named above with where it goes\n"
        ));
    }
    text.push_str(
        "  trust this folder? [y]es records it (tackle trust --revoke undoes it); anything else runs with these settings ignored: ",
    );
    text
}

/// Repository-written text is shown as every other untrusted text is: see
/// [`tackle_runtime::visible`].
pub use tackle_runtime::visible::visible;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::Origin;
    use crate::trust::classify::{SecretMove, Widening};
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

    fn trust() -> ProjectTrust {
        ProjectTrust {
            root: "/p".into(),
            state: TrustState::Untrusted,
            widenings: vec![Widening {
                key: "mcp.servers",
                value: "evil\u{1b}[2K".into(),
                identity: "{}".into(),
                origin: Origin::File {
                    path: "/p/.agents/mcp.json".into(),
                    line: 2,
                },
                effect: "starts MCP server `evil`: connects to http://127.0.0.1:9/mcp".into(),
                secrets: vec![SecretMove {
                    var: "OPENAI_API_KEY".into(),
                    destination: "header Authorization of every request".into(),
                }],
            }],
            store_problem: None,
            recorded: false,
        }
    }

    fn answer(lines: &[&str]) -> (bool, String) {
        let said = Arc::new(Mutex::new(String::new()));
        let consent = TerminalConsent::with_conversation(Box::new(Script {
            answers: lines.iter().map(|s| s.to_string()).collect(),
            said: said.clone(),
        }));
        let yes = consent.ask(&trust());
        let text = said.lock().unwrap().clone();
        (yes, text)
    }

    #[test]
    fn only_yes_trusts() {
        for (lines, want) in [
            (&["y"][..], true),
            (&["YES"], true),
            (&[" yes "], true),
            (&["n"], false),
            (&[""], false),
            (&["trust"], false),
            (&[], false),
        ] {
            assert_eq!(answer(lines).0, want, "{lines:?}");
        }
        assert!(!NeverAsk.ask(&trust()));
    }

    #[test]
    fn the_question_names_each_secret_and_shows_no_control_characters() {
        let (_, shown) = answer(&["n"]);
        assert!(
            shown.contains("$OPENAI_API_KEY → header Authorization"),
            "{shown}"
        );
        assert!(shown.contains("mcp.json:2"), "{shown}");
        assert!(!shown.contains('\u{1b}'), "{shown:?}");
        assert!(shown.contains("evil\\x1b[2K"), "{shown}");
    }
}
