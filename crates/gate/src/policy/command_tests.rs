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
