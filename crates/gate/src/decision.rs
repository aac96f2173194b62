//! The gate's answer for one call, with the reason for every key that was not simply allowed.

use crate::key::{self, UNPARSEABLE_BASH};
use crate::{Effect, Mode, RuleSource};

/// The outcome of [`crate::Policy::evaluate`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Every key is allowed.
    Allow {
        /// Keys that would have asked but were allowed by a session grant or by the mode
        /// (accept-edits, yolo). Empty when rules and defaults allowed everything.
        overrides: Vec<KeyVerdict>,
    },
    /// No key is denied and at least one needs approval.
    Ask {
        /// Every key that asks, in request order.
        keys: Vec<KeyVerdict>,
    },
    /// A key is denied; the first one in request order.
    Deny {
        /// The denied key and why.
        verdict: KeyVerdict,
    },
}

/// The verdict on one key and what decided it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyVerdict {
    /// The permission key.
    pub key: String,
    /// Its effect.
    pub effect: Effect,
    /// What decided the effect.
    pub because: Because,
}

/// What decided a key's effect.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Because {
    /// The winning rule (deny > ask > allow; among equals, the first written).
    Rule {
        /// The rule's pattern as written.
        pattern: String,
        /// Where the rule was written.
        source: RuleSource,
    },
    /// No rule matched; the default for the key's action applied.
    Default {
        /// The key's action (`write`, `tool.bash.cmd`, `fetch`...).
        action: String,
    },
    /// The path is outside `path_scope.allow`, inside `path_scope.deny`, or leaves the root.
    PathScope {
        /// Which of these, and how to change it.
        detail: String,
    },
    /// No `url_scope.allow` pattern matches the URL.
    UrlScope,
    /// The mode decided: plan denied a mutation, accept-edits or yolo allowed an ask.
    Mode(Mode),
    /// A session grant allowed a key that would have asked.
    Grant,
    /// A built-in protected path (`.agents/`, `.git/`): denied or asked whatever the mode,
    /// the allow rules and the grants say.
    Protected {
        /// Why the path is protected.
        why: String,
    },
}

impl Decision {
    /// True for [`Decision::Allow`].
    pub fn is_allow(&self) -> bool {
        matches!(self, Decision::Allow { .. })
    }

    /// The decision as one line for the model or the user: each key that is not allowed, what
    /// decided it (rule with its source, default, scope or mode) and how to allow it.
    pub fn message(&self) -> String {
        match self {
            Decision::Allow { overrides } if overrides.is_empty() => "allowed".to_owned(),
            Decision::Allow { overrides } => {
                let parts: Vec<String> = overrides.iter().map(KeyVerdict::message).collect();
                format!("allowed: {}", parts.join("; "))
            }
            Decision::Ask { keys } => {
                let parts: Vec<String> = keys.iter().map(KeyVerdict::message).collect();
                parts.join("; ")
            }
            Decision::Deny { verdict } => verdict.message(),
        }
    }
}

impl KeyVerdict {
    /// This key's verdict as a sentence naming the key, the reason and the fix.
    pub fn message(&self) -> String {
        let key = &self.key;
        match (self.effect, &self.because) {
            (Effect::Deny, Because::Rule { pattern, source }) => {
                let fix = match source {
                    RuleSource::BuiltIn => "built-in deny rules hold in every mode",
                    RuleSource::Embedder { .. } => {
                        "the rule is that program's own, and holds until it changes its policy"
                    }
                    _ => "deny rules beat allow rules, so remove or narrow this one to allow it",
                };
                format!(
                    "{key} is denied by deny rule \"{pattern}\" {}; {fix}",
                    source.located()
                )
            }
            (Effect::Deny, Because::Default { action }) => format!(
                "{key} is denied (default for {}); allow it with --allow {}",
                key::action_noun(action),
                shell_quote(&key::suggested_allow(key))
            ),
            (Effect::Deny, Because::PathScope { detail }) => {
                format!("{key} is denied by the path scope: {detail}")
            }
            (Effect::Deny, Because::UrlScope) => {
                let url = key::resource(key).unwrap_or(key);
                let origin = key::suggested_allow(key);
                let origin = origin.strip_prefix("fetch:").unwrap_or(&origin);
                format!(
                    "{key} is denied by the url scope: no url_scope.allow pattern matches {url}; \
                     add one such as \"{origin}\" to url_scope.allow"
                )
            }
            (Effect::Deny, Because::Mode(mode)) => format!(
                "{key} is denied in {mode} mode, which refuses every mutating call; \
                 switch to ask or accept-edits mode to run it"
            ),
            (Effect::Deny, Because::Protected { why }) => format!(
                "{key} is denied: {why}; this built-in protection holds in every mode and no \
                 rule or grant lifts it"
            ),
            (Effect::Ask, Because::Protected { why }) => format!(
                "{key} needs approval every time: {why}; this built-in protection holds in \
                 every mode (yolo and accept-edits included), over allow rules, and a session \
                 grant does not cover it"
            ),
            (Effect::Ask, _) if key == UNPARSEABLE_BASH => format!(
                "{key} needs approval: what the line runs or writes cannot be known without \
                 running it (a parse error, a command name built at run time, arithmetic over \
                 variables, a change to PATH, HOME, IFS or another variable that changes what \
                 runs, source, a cd that is not literal…), so no allow rule or session grant \
                 applies; approve it for this call, or rewrite it as plain literal commands"
            ),
            (Effect::Ask, Because::Rule { pattern, source }) => format!(
                "{key} needs approval (ask rule \"{pattern}\" {}); ask rules beat allow rules, \
                 so remove or narrow that one to stop the prompt",
                source.located()
            ),
            (Effect::Ask, Because::Default { action }) => format!(
                "{key} needs approval (default for {}); allow it with --allow {}",
                key::action_noun(action),
                shell_quote(&key::suggested_allow(key))
            ),
            (Effect::Allow, Because::Grant) => format!("{key} is allowed by a session grant"),
            (Effect::Allow, Because::Mode(mode)) => format!("{key} is allowed by {mode} mode"),
            (Effect::Allow, Because::Rule { pattern, source }) => format!(
                "{key} is allowed by allow rule \"{pattern}\" {}",
                source.located()
            ),
            (Effect::Allow, Because::Default { action }) => format!(
                "{key} is allowed (default for {})",
                key::action_noun(action)
            ),
            // Combinations the policy never produces (an allow by scope, an ask by grant).
            (effect, _) => format!("{key}: {effect}"),
        }
    }
}

/// Single-quotes a pattern for a shell command line.
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}
