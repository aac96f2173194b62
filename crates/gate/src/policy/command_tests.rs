//! Command rules in a policy: allow rules read a command word by word and normalised, deny and
//! ask rules also as written, so normalising narrows only what is allowed.

use super::*;
use crate::RuleSource;

fn rule(effect: Effect, pattern: &str) -> Rule {
    Rule::new(
        effect,
        Pattern::parse(pattern).unwrap(),
        RuleSource::Flag {
            flag: format!("--{effect}"),
        },
    )
}

fn decide(rules: &[(Effect, &str)], command: &str) -> Effect {
    let rules = rules.iter().map(|&(e, p)| rule(e, p)).collect();
    let policy = Policy::new(rules, Mode::Ask, PathScope::default(), UrlScope::default()).unwrap();
    let keys = ["tool.bash".to_owned(), format!("tool.bash.cmd:{command}")];
    let request = Request {
        tool: "bash",
        keys: &keys,
        mutating: true,
    };
    match policy.evaluate(&request, &Grants::new()) {
        Decision::Allow { .. } => Effect::Allow,
        Decision::Ask { .. } => Effect::Ask,
        Decision::Deny { .. } => Effect::Deny,
    }
}

use Effect::{Allow, Ask, Deny};

/// Rules of one row: effect and pattern.
type Rules = &'static [(Effect, &'static str)];

/// (rules, command, effect)
const TABLE: &[(Rules, &str, Effect)] = &[
    // Allow rules: word by word, normalised, never climbing out of what they name.
    (&[(Allow, "tool.bash.cmd:cat src/*")], "cat src/a.rs", Allow),
    (
        &[(Allow, "tool.bash.cmd:cat src/*")],
        "cat ./src//a.rs",
        Allow,
    ),
    (
        &[(Allow, "tool.bash.cmd:cat src/*")],
        "cat src/../../outside",
        Ask,
    ),
    (
        &[(Allow, "tool.bash.cmd:cat src/*")],
        "cat src/a /etc/passwd",
        Ask,
    ),
    (
        &[(Allow, "tool.bash.cmd:./scripts/*")],
        "./scripts/../../../usr/bin/touch pwned",
        Ask,
    ),
    (
        &[(Allow, "tool.bash.cmd:./scripts/* *")],
        "./scripts/../../../usr/bin/touch pwned",
        Ask,
    ),
    (
        &[(Allow, "tool.bash.cmd:./scripts/* *")],
        "./scripts/test.sh --fast",
        Allow,
    ),
    (
        &[(Allow, "tool.bash.cmd:git *")],
        "git log --output=../x",
        Allow,
    ),
    (
        &[(Allow, "tool.bash.cmd:git log *")],
        "git log -p src/a.rs",
        Allow,
    ),
    (&[(Allow, "tool.bash.cmd:git log *")], "git diff", Ask),
    // Deny and ask rules hold as written and normalised: a `*` crossing words still denies.
    (
        &[
            (Allow, "tool.bash.cmd:*"),
            (Deny, "tool.bash.cmd:cat /etc/*"),
        ],
        "cat /etc/passwd /tmp/x",
        Deny,
    ),
    (
        &[
            (Allow, "tool.bash.cmd:*"),
            (Deny, "tool.bash.cmd:cat /etc/*"),
        ],
        "cat /tmp/../etc/shadow",
        Deny,
    ),
    (
        &[
            (Allow, "tool.bash.cmd:*"),
            (Deny, "tool.bash.cmd:cat /etc/*"),
        ],
        "cat //etc//shadow",
        Deny,
    ),
    (
        &[
            (Allow, "tool.bash.cmd:*"),
            (Deny, "tool.bash.cmd:cat /etc/*"),
        ],
        "cat /../etc/shadow",
        Deny,
    ),
    (
        &[(Allow, "tool.bash.cmd:cp src/* /*")],
        "cp src/a /../..",
        Ask,
    ),
    (
        &[
            (Allow, "tool.bash.cmd:*"),
            (Ask, "tool.bash.cmd:./deploy.sh *"),
        ],
        "deploy/../deploy.sh prod",
        Ask,
    ),
    (
        &[
            (Allow, "tool.bash.cmd:*"),
            (Ask, "tool.bash.cmd:git push *"),
        ],
        "git push origin main",
        Ask,
    ),
    (
        &[
            (Allow, "tool.bash.cmd:git *"),
            (Deny, "tool.bash.cmd:git push*"),
        ],
        "git push -f",
        Deny,
    ),
    // Other patterns read command keys as whole-key globs, as before.
    (&[(Allow, "tool.bash.*")], "cat src/../../x", Allow),
    (&[(Allow, "**")], "cat src/a /etc/passwd", Allow),
];

#[test]
fn command_rules_table() {
    for &(rules, command, want) in TABLE {
        assert_eq!(decide(rules, command), want, "{rules:?} on {command:?}");
    }
}

/// Words of a small grammar: literal verbs and subcommands, whole-word wildcards, wildcards
/// inside a word, path words with and without a normal form of their own.
const PATTERN_WORDS: &[&str] = &["git", "log", "*", "l*", "./git", "x/../git", "src/*"];
const COMMAND_WORDS: &[&str] = &["git", "log", "./git", "src/a", "src/../git", "-n", "l"];

/// Every sequence of one to `most` words of `words`, joined by spaces.
fn sentences(words: &[&str], most: usize) -> Vec<String> {
    let mut all: Vec<String> = Vec::new();
    let mut last: Vec<String> = vec![String::new()];
    for _ in 0..most {
        last = last
            .iter()
            .flat_map(|head| {
                words.iter().map(move |w| {
                    if head.is_empty() {
                        (*w).to_owned()
                    } else {
                        format!("{head} {w}")
                    }
                })
            })
            .collect();
        all.extend(last.iter().cloned());
    }
    all
}

/// What one rule says of one command, read without the policy's index: an allow rule word
/// by word, a deny or ask rule as written or word by word.
fn rule_matches(rule: &Rule, command: &str) -> bool {
    let key = format!("{COMMAND_PREFIX}{command}");
    let words = CommandWords::split(command);
    let by_word = rule.pattern.matches_command(&words, rule.effect);
    match rule.effect {
        Effect::Allow => by_word,
        Effect::Deny | Effect::Ask => by_word || rule.pattern.matches_as_written(&key),
    }
}

/// The index (by first two words, guards matched word by word only where a word has a `/`,
/// allows only while nothing stronger matched) decides every command of a grammar as every
/// rule read one by one does: single rules of each effect, and pairs of an allow with a guard.
#[test]
fn the_index_decides_as_every_rule_read_alone() {
    let patterns: Vec<String> = sentences(PATTERN_WORDS, 3)
        .into_iter()
        .map(|p| format!("{COMMAND_PREFIX}{p}"))
        .collect();
    let commands = sentences(COMMAND_WORDS, 3);
    let mut sets: Vec<Vec<Rule>> = Vec::new();
    for p in &patterns {
        for effect in [Allow, Ask, Deny] {
            sets.push(vec![rule(effect, p)]);
        }
    }
    // Pairs: an allow and a guard, chosen by a fixed stride so every pattern takes part.
    for (i, p) in patterns.iter().enumerate() {
        let q = &patterns[(i * 37 + 11) % patterns.len()];
        sets.push(vec![rule(Allow, p), rule(Ask, q)]);
        sets.push(vec![rule(Deny, q), rule(Allow, p)]);
    }
    for rules in sets {
        let policy = Policy::new(
            rules.clone(),
            Mode::Ask,
            PathScope::default(),
            UrlScope::default(),
        )
        .unwrap();
        for command in &commands {
            let key = format!("{COMMAND_PREFIX}{command}");
            let got = policy.index.matching(&rules, &key, &mut Vec::new());
            let hits: Vec<&Rule> = rules.iter().filter(|r| rule_matches(r, command)).collect();
            let want = if hits.iter().any(|r| r.effect == Deny) {
                Deny
            } else if hits.iter().any(|r| r.effect == Ask) {
                Ask
            } else if hits.iter().any(|r| r.effect == Allow) {
                Allow
            } else {
                key::default_effect(&key)
            };
            let got = if got.deny.is_some() {
                Deny
            } else if got.ask.is_some() {
                Ask
            } else if got.allow {
                Allow
            } else {
                key::default_effect(&key)
            };
            let shown: Vec<String> = rules
                .iter()
                .map(|r| format!("{} {}", r.effect, r.pattern.as_str()))
                .collect();
            assert_eq!(got, want, "{shown:?} on {command:?}");
        }
    }
}

/// Why guards need not be matched word by word on a command without a `/`: there, whatever a
/// pattern matches word by word it also matches as written, for every pattern of the grammar.
#[test]
fn without_a_slash_words_match_nothing_the_whole_key_misses() {
    let words = [
        "git", "log", "*", "**", "l*", "?og", "./git", "x/../git", "src/*", "", "-n",
    ];
    let commands: Vec<String> = sentences(&["git", "log", "-n", "l", "", "gitlog"], 3)
        .into_iter()
        .filter(|c| !c.contains('/'))
        .collect();
    for p in sentences(&words, 3) {
        let pattern = Pattern::parse(&format!("{COMMAND_PREFIX}{p}")).unwrap();
        for command in &commands {
            let split = CommandWords::split(command);
            if pattern.matches_command(&split, Deny) {
                assert!(
                    pattern.matches_as_written(&format!("{COMMAND_PREFIX}{command}")),
                    "{p:?} matches {command:?} word by word but not as written"
                );
            }
        }
    }
}
