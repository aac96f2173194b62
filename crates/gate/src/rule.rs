//! Rules: an effect, a pattern, and where the rule came from.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use crate::Pattern;
use crate::error::ParseEffectError;

/// What a rule (or a default, scope or mode) does to a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Effect {
    /// Run without asking.
    Allow,
    /// Ask the approver first.
    Ask,
    /// Refuse.
    Deny,
}

impl Effect {
    /// `allow`, `ask` or `deny`.
    pub fn as_str(self) -> &'static str {
        match self {
            Effect::Allow => "allow",
            Effect::Ask => "ask",
            Effect::Deny => "deny",
        }
    }
}

impl fmt::Display for Effect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Effect {
    type Err = ParseEffectError;

    fn from_str(s: &str) -> Result<Effect, ParseEffectError> {
        match s {
            "allow" => Ok(Effect::Allow),
            "ask" => Ok(Effect::Ask),
            "deny" => Ok(Effect::Deny),
            _ => Err(ParseEffectError {
                input: s.to_owned(),
            }),
        }
    }
}

/// Where a rule came from, so a denial can point at the line to change.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum RuleSource {
    /// The gate's built-in defaults.
    BuiltIn,
    /// A line of a config file (user or project).
    File {
        /// The config file.
        path: PathBuf,
        /// 1-based line of the rule.
        line: usize,
    },
    /// A command-line flag such as `--allow`, `--deny` or `--disable-tools`.
    Flag {
        /// The flag as typed, with its dashes.
        flag: String,
    },
    /// A rule a child session adds to its parent's policy (a subagent type's `permissions`):
    /// it only narrows, and what a run pre-approved (a skill's `allowed-tools`) never answers
    /// its ask; a person's own approval does.
    Narrowing {
        /// Who added it, as a person reads it ("the subagent's type").
        by: String,
    },
    /// A rule the program embedding tackle wrote into its own policy (no file or flag of the
    /// user's holds it), so a refusal names that program rather than a line to edit.
    Embedder {
        /// The program, as a person reads it ("the release bot").
        by: String,
    },
}

impl RuleSource {
    /// The source as it reads after a rule in a sentence: "at /p/config.toml:7", "from --deny".
    pub(crate) fn located(&self) -> String {
        match self {
            RuleSource::BuiltIn => "from the built-in defaults".to_owned(),
            RuleSource::File { .. } => format!("at {self}"),
            RuleSource::Flag { .. } | RuleSource::Narrowing { .. } => format!("from {self}"),
            RuleSource::Embedder { by } => format!("set by {by}"),
        }
    }
}

impl fmt::Display for RuleSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RuleSource::BuiltIn => f.write_str("built-in default"),
            RuleSource::File { path, line } => write!(f, "{}:{line}", path.display()),
            RuleSource::Flag { flag } => f.write_str(flag),
            RuleSource::Narrowing { by } | RuleSource::Embedder { by } => f.write_str(by),
        }
    }
}

/// One `allow`/`ask`/`deny` rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    /// What the rule does to the keys it matches.
    pub effect: Effect,
    /// Which keys it matches.
    pub pattern: Pattern,
    /// Where it was written.
    pub source: RuleSource,
}

impl Rule {
    /// A rule from its parts.
    pub fn new(effect: Effect, pattern: Pattern, source: RuleSource) -> Rule {
        Rule {
            effect,
            pattern,
            source,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_display() {
        assert_eq!(RuleSource::BuiltIn.to_string(), "built-in default");
        let file = RuleSource::File {
            path: PathBuf::from("/p/.agents/config.toml"),
            line: 12,
        };
        assert_eq!(file.to_string(), "/p/.agents/config.toml:12");
        let flag = RuleSource::Flag {
            flag: "--allow".to_owned(),
        };
        assert_eq!(flag.to_string(), "--allow");
        let program = RuleSource::Embedder {
            by: "the release bot".to_owned(),
        };
        assert_eq!(program.to_string(), "the release bot");
    }

    #[test]
    fn a_deny_by_an_embedders_rule_names_the_program_and_no_file_or_flag() {
        let rule = Rule::new(
            Effect::Deny,
            Pattern::parse("read:secrets/**").unwrap(),
            RuleSource::Embedder {
                by: "the release bot".to_owned(),
            },
        );
        let policy = crate::Policy::new(
            vec![rule],
            crate::Mode::Yolo,
            crate::PathScope::default(),
            crate::UrlScope::default(),
        )
        .unwrap();
        let keys = [
            "tool.read_file".to_owned(),
            "read:secrets/key.txt".to_owned(),
        ];
        let request = crate::policy::Request {
            tool: "read_file",
            keys: &keys,
            mutating: false,
        };
        let decision = policy.evaluate(&request, &crate::Grants::new());
        let crate::Decision::Deny { verdict } = decision else {
            panic!("not denied: {decision:?}");
        };
        let text = verdict.message();
        assert_eq!(
            text,
            "read:secrets/key.txt is denied by deny rule \"read:secrets/**\" set by the release \
             bot; the rule is that program's own, and holds until it changes its policy"
        );
    }

    #[test]
    fn effects_round_trip() {
        for effect in [Effect::Allow, Effect::Ask, Effect::Deny] {
            assert_eq!(effect.to_string().parse::<Effect>().unwrap(), effect);
        }
        let err = "permit".parse::<Effect>().unwrap_err().to_string();
        assert!(err.contains("\"permit\""), "{err}");
    }
}
