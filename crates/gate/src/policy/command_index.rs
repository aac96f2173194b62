//! The command rules of a bucket, indexed by their first two literal words, so a command key
//! meets only the rules written for its own verb and subcommand.
//!
//! Matching word by word costs more than a glob set's one pass, and a policy has many command
//! rules (`git log *`, `git push *`, `cargo test *`, …) of which a key's first two words select
//! one or two. A rule whose first word is a wildcard is met by every key; one whose second word
//! is a wildcard (or that has one word) by every key with its verb.
//!
//! Allow rules and guards (deny and ask rules) are indexed apart: a guard is also in its
//! bucket's key set, matched on the key as written, and word by word it can only add matches
//! through a word's normal form, which differs from its text only when the word has a `/`
//! (`command.rs`). So a command without a `/` never pays for matching guards word by word
//! ([`super::command_tests`] checks this against every pattern of a grammar), and allow rules
//! are matched only while no guard has matched and no allow has.

use std::collections::HashMap;

use foldhash::fast::FixedState;

use crate::command::word_spellings;
use crate::{Effect, Pattern};

/// A bucket's command rules: allow rules and guards, each indexed by first words.
#[derive(Clone, Debug, Default)]
pub(super) struct CommandRules {
    allow: WordIndex,
    guard: WordIndex,
}

/// Rules by their literal first word, then by their literal second word.
#[derive(Clone, Debug, Default)]
struct WordIndex {
    by_verb: HashMap<String, SecondWords, FixedState>,
    any_verb: Vec<usize>,
}

#[derive(Clone, Debug, Default)]
struct SecondWords {
    by_word: HashMap<String, Vec<usize>, FixedState>,
    /// Rules of this verb whose second word is a wildcard, or that have no second word.
    any_word: Vec<usize>,
}

/// The first two words of a command key, each as written and normalised.
#[derive(Debug)]
pub(super) struct CommandHead<'a> {
    verb: (&'a str, Option<String>),
    second: Option<(&'a str, Option<String>)>,
}

impl<'a> CommandHead<'a> {
    /// The head of `command` (a key without `tool.bash.cmd:`).
    pub(super) fn of(command: &'a str) -> CommandHead<'a> {
        let mut words = command.split(' ');
        CommandHead {
            verb: word_spellings(words.next().unwrap_or("")),
            second: words.next().map(word_spellings),
        }
    }
}

fn spellings<'s>((raw, normal): &'s (&'s str, Option<String>)) -> impl Iterator<Item = &'s str> {
    std::iter::once(*raw).chain(normal.as_deref())
}

impl CommandRules {
    pub(super) fn add(&mut self, index: usize, pattern: &Pattern, effect: Effect) {
        match effect {
            Effect::Allow => self.allow.add(index, pattern),
            Effect::Deny | Effect::Ask => self.guard.add(index, pattern),
        }
    }

    /// Calls `visit` with every guard a command key whose head is `head` may match (some
    /// twice).
    pub(super) fn guards(&self, head: &CommandHead<'_>, visit: impl FnMut(usize) -> bool) {
        self.guard.find(head, visit);
    }

    /// Calls `visit` with every allow rule the key may match until it returns true; returns
    /// whether it did.
    pub(super) fn allows(&self, head: &CommandHead<'_>, visit: impl FnMut(usize) -> bool) -> bool {
        self.allow.find(head, visit)
    }
}

impl WordIndex {
    fn add(&mut self, index: usize, pattern: &Pattern) {
        let Some([raw, normal]) = pattern.command_word(0) else {
            self.any_verb.push(index);
            return;
        };
        let second = pattern.command_word(1);
        for verb in distinct(raw, normal) {
            let rules = self.by_verb.entry(verb.to_owned()).or_default();
            match second {
                Some([raw, normal]) => {
                    for word in distinct(raw, normal) {
                        rules
                            .by_word
                            .entry(word.to_owned())
                            .or_default()
                            .push(index);
                    }
                }
                None => rules.any_word.push(index),
            }
        }
    }

    /// Visits the candidates of `head` until `visit` returns true; returns whether it did.
    fn find(&self, head: &CommandHead<'_>, mut visit: impl FnMut(usize) -> bool) -> bool {
        for verb in spellings(&head.verb) {
            let Some(rules) = self.by_verb.get(verb) else {
                continue;
            };
            if let Some(second) = &head.second {
                for word in spellings(second) {
                    if let Some(list) = rules.by_word.get(word)
                        && list.iter().any(|&i| visit(i))
                    {
                        return true;
                    }
                }
            }
            if rules.any_word.iter().any(|&i| visit(i)) {
                return true;
            }
        }
        self.any_verb.iter().any(|&i| visit(i))
    }
}

fn distinct<'s>(raw: &'s str, normal: &'s str) -> impl Iterator<Item = &'s str> {
    std::iter::once(raw).chain((normal != raw).then_some(normal))
}
