use std::path::PathBuf;

use super::*;
use crate::RuleSource;

const CONFIG: &str = "/p/.agents/config.toml";

fn at(effect: Effect, pattern: &str, line: usize) -> Rule {
    Rule::new(
        effect,
        Pattern::parse(pattern).unwrap(),
        RuleSource::File {
            path: PathBuf::from(CONFIG),
            line,
        },
    )
}

fn flag(effect: Effect, pattern: &str) -> Rule {
    Rule::new(
        effect,
        Pattern::parse(pattern).unwrap(),
        RuleSource::Flag {
            flag: format!("--{effect}"),
        },
    )
}

fn built_in(effect: Effect, pattern: &str) -> Rule {
    Rule::new(
        effect,
        Pattern::parse(pattern).unwrap(),
        RuleSource::BuiltIn,
    )
}

fn policy(rules: Vec<Rule>) -> Policy {
    Policy::new(rules, Mode::Ask, PathScope::default(), UrlScope::default()).unwrap()
}

fn with_urls(rules: Vec<Rule>, urls: &[&str]) -> Policy {
    Policy::new(
        rules,
        Mode::Ask,
        PathScope::default(),
        UrlScope::parse(urls).unwrap(),
    )
    .unwrap()
}

fn keys(tool: &str, resources: &[&str]) -> Vec<String> {
    std::iter::once(format!("tool.{tool}"))
        .chain(resources.iter().map(|r| (*r).to_owned()))
        .collect()
}

fn decide(policy: &Policy, tool: &str, resources: &[&str], mutating: bool) -> Decision {
    decide_with(policy, tool, resources, mutating, &Grants::new())
}

fn decide_with(
    policy: &Policy,
    tool: &str,
    resources: &[&str],
    mutating: bool,
    grants: &Grants,
) -> Decision {
    let keys = keys(tool, resources);
    policy.evaluate(
        &Request {
            tool,
            keys: &keys,
            mutating,
        },
        grants,
    )
}

fn effect(decision: &Decision) -> Effect {
    match decision {
        Decision::Allow { .. } => Effect::Allow,
        Decision::Ask { .. } => Effect::Ask,
        Decision::Deny { .. } => Effect::Deny,
    }
}

/// The verdict that decided a non-allow decision (the first asking key for an ask).
fn verdict(decision: &Decision) -> &KeyVerdict {
    match decision {
        Decision::Deny { verdict } => verdict,
        Decision::Ask { keys } => &keys[0],
        Decision::Allow { .. } => panic!("allowed: {decision:?}"),
    }
}

/// The tool a key would come from, and whether that call mutates.
fn tool_for(key: &str) -> (&'static str, bool) {
    match key::action(key) {
        "write" => ("write_file", true),
        "tool.bash.cmd" => ("bash", true),
        "fetch" => ("fetch_url", false),
        "message" => ("send_message", true),
        "call_peer" => ("call_peer", true),
        _ => ("read_file", false),
    }
}

fn decide_key(policy: &Policy, key: &str) -> Decision {
    let (tool, mutating) = tool_for(key);
    decide(policy, tool, &[key], mutating)
}

#[test]
fn precedence_deny_beats_ask_beats_allow_across_sources() {
    // (rules, key, effect, winning pattern, winning source)
    let file = |line| format!("{CONFIG}:{line}");
    let cases: Vec<(Vec<Rule>, &str, Effect, &str, String)> = vec![
        (
            vec![
                flag(Effect::Allow, "write:src/**"),
                at(Effect::Deny, "write:src/secret.rs", 7),
            ],
            "write:src/secret.rs",
            Effect::Deny,
            "write:src/secret.rs",
            file(7),
        ),
        (
            vec![
                at(Effect::Deny, "write:*.lock", 3),
                flag(Effect::Allow, "write:**"),
            ],
            "write:Cargo.lock",
            Effect::Deny,
            "write:*.lock",
            file(3),
        ),
        (
            vec![
                built_in(Effect::Allow, "tool.bash.cmd:git *"),
                at(Effect::Ask, "tool.bash.cmd:git push *", 12),
            ],
            "tool.bash.cmd:git push origin main",
            Effect::Ask,
            "tool.bash.cmd:git push *",
            file(12),
        ),
        (
            vec![
                flag(Effect::Ask, "write:src/**"),
                at(Effect::Deny, "write:src/gen/**", 9),
                built_in(Effect::Allow, "**"),
            ],
            "write:src/gen/a.rs",
            Effect::Deny,
            "write:src/gen/**",
            file(9),
        ),
        (
            vec![
                built_in(Effect::Deny, "tool.bash.cmd:rm -rf *"),
                flag(Effect::Allow, "tool.bash.cmd:*"),
            ],
            "tool.bash.cmd:rm -rf /",
            Effect::Deny,
            "tool.bash.cmd:rm -rf *",
            "built-in default".to_owned(),
        ),
        (
            vec![
                flag(Effect::Ask, "fetch:*"),
                at(Effect::Allow, "fetch:https://docs.rs/*", 2),
            ],
            "fetch:https://docs.rs/globset",
            Effect::Ask,
            "fetch:*",
            "--ask".to_owned(),
        ),
        // Among rules of the winning effect, the first written is named.
        (
            vec![
                at(Effect::Deny, "read:.env", 4),
                at(Effect::Deny, "read:**/.env", 5),
            ],
            "read:config/.env",
            Effect::Deny,
            "read:.env",
            file(4),
        ),
        // A key glob and a path glob of the same effect: the earlier one is named.
        (
            vec![
                at(Effect::Deny, "*src/*", 20),
                at(Effect::Deny, "write:src/**", 6),
            ],
            "write:src/a.rs",
            Effect::Deny,
            "*src/*",
            file(20),
        ),
    ];
    // Rules whose action is a wildcard are weighed against the key's own action's rules.
    let cases = cases.into_iter().chain([
        (
            vec![
                flag(Effect::Allow, "tool.bash.cmd:*"),
                at(Effect::Deny, "*rm -rf*", 30),
            ],
            "tool.bash.cmd:rm -rf target",
            Effect::Deny,
            "*rm -rf*",
            file(30),
        ),
        (
            vec![at(Effect::Ask, "write:*", 31), flag(Effect::Allow, "**")],
            "write:a/b.rs",
            Effect::Ask,
            "write:*",
            file(31),
        ),
    ]);
    for (rules, key, want, pattern, source) in cases {
        let policy = with_urls(rules, &["https://*"]);
        let decision = decide_key(&policy, key);
        assert_eq!(effect(&decision), want, "{key}: {decision:?}");
        let verdict = verdict(&decision);
        assert_eq!(verdict.key, key);
        match &verdict.because {
            Because::Rule {
                pattern: got,
                source: got_source,
            } => {
                assert_eq!(got, pattern, "{key}");
                assert_eq!(got_source.to_string(), source, "{key}");
            }
            other => panic!("{key}: decided by {other:?}"),
        }
    }
}

#[test]
fn allow_rules_allow() {
    let policy = policy(vec![
        flag(Effect::Allow, "write:src/**"),
        at(Effect::Allow, "tool.bash.cmd:cargo *", 1),
        at(Effect::Allow, "message:parent", 2),
    ]);
    for key in [
        "write:src/a/b.rs",
        "tool.bash.cmd:cargo test -p tackle-gate",
        "message:parent",
    ] {
        assert_eq!(
            decide_key(&policy, key),
            Decision::Allow { overrides: vec![] }
        );
    }
}

#[test]
fn defaults_per_action() {
    let policy = with_urls(vec![], &["https://docs.rs/*"]);
    let cases: &[(&str, Effect)] = &[
        ("tool.read_file", Effect::Allow),
        ("tool.mcp.github.create_issue", Effect::Ask),
        ("read:src/a.rs", Effect::Allow),
        ("read:artifact://0123abcd", Effect::Allow),
        ("read:goal:current", Effect::Allow),
        ("write:src/a.rs", Effect::Ask),
        ("write:goal:current", Effect::Ask),
        ("tool.bash.cmd:ls -la", Effect::Ask),
        ("call_peer:reviewer", Effect::Ask),
        ("fetch:https://docs.rs/globset", Effect::Deny),
        ("message:parent", Effect::Deny),
        ("message:*", Effect::Deny),
        ("launch:rockets", Effect::Ask),
    ];
    for &(key, want) in cases {
        let decision = policy.evaluate(
            &Request {
                tool: "any",
                keys: &[key.to_owned()],
                mutating: false,
            },
            &Grants::new(),
        );
        assert_eq!(effect(&decision), want, "{key}: {decision:?}");
        if want != Effect::Allow {
            assert_eq!(
                verdict(&decision).because,
                Because::Default {
                    action: key::action(key).to_owned()
                },
                "{key}"
            );
        }
    }
}

#[test]
fn path_scope_denies_whatever_the_rules_say() {
    let scope = PathScope::parse(&["src/**", "docs/**"], &["src/secrets/**", "*.pem"]).unwrap();
    let rules = vec![
        built_in(Effect::Allow, "read:**"),
        flag(Effect::Allow, "write:**"),
        flag(Effect::Allow, "**"),
    ];
    let policy = Policy::new(rules, Mode::Yolo, scope, UrlScope::default()).unwrap();
    // (key, effect, detail fragment)
    let cases: &[(&str, Effect, &str)] = &[
        ("read:src/a.rs", Effect::Allow, ""),
        ("write:docs/x.md", Effect::Allow, ""),
        ("read:README.md", Effect::Deny, "outside path_scope.allow"),
        ("write:target/x", Effect::Deny, "outside path_scope.allow"),
        (
            "read:src/secrets/k",
            Effect::Deny,
            "inside path_scope.deny (\"src/secrets/**\")",
        ),
        (
            "write:src/tls/server.pem",
            Effect::Deny,
            "inside path_scope.deny (\"*.pem\")",
        ),
        (
            "read:../etc/passwd",
            Effect::Deny,
            "leaves the project root",
        ),
        ("read:src/../../x", Effect::Deny, "leaves the project root"),
        ("write:/etc/passwd", Effect::Deny, "leaves the project root"),
        // Artifacts and the goal are not paths: the path scope does not apply.
        ("read:artifact://0123abcd", Effect::Allow, ""),
        ("write:goal:current", Effect::Allow, ""),
    ];
    for &(key, want, detail) in cases {
        let decision = decide_key(&policy, key);
        assert_eq!(effect(&decision), want, "{key}: {decision:?}");
        if want == Effect::Deny {
            match &verdict(&decision).because {
                Because::PathScope { detail: got } => assert!(got.contains(detail), "{got}"),
                other => panic!("{key}: {other:?}"),
            }
        }
    }
}

#[test]
fn default_path_scope_is_the_whole_root() {
    let policy = policy(vec![]);
    assert!(decide_key(&policy, "read:a/b/c/d.rs").is_allow());
    assert!(decide_key(&policy, "read:.hidden").is_allow());
    assert_eq!(
        effect(&decide_key(&policy, "read:../outside")),
        Effect::Deny
    );
}

#[test]
fn url_scope() {
    let allow_fetch = vec![flag(Effect::Allow, "fetch:*")];
    // (url scope, key, effect, decided by url scope)
    let cases: &[(&[&str], &str, Effect, bool)] = &[
        (&[], "fetch:https://docs.rs/x", Effect::Deny, true),
        (
            &["https://docs.rs/*"],
            "fetch:https://docs.rs/x",
            Effect::Allow,
            false,
        ),
        (
            &["https://docs.rs/*"],
            "fetch:https://docs.rs/a/b?q=1",
            Effect::Allow,
            false,
        ),
        (
            &["https://docs.rs/*"],
            "fetch:https://docs.rs.evil.example/x",
            Effect::Deny,
            true,
        ),
        (
            &["https://docs.rs/*"],
            "fetch:http://docs.rs/x",
            Effect::Deny,
            true,
        ),
        (
            &["fetch:https://crates.io/*"],
            "fetch:https://crates.io/crates/globset",
            Effect::Allow,
            false,
        ),
    ];
    for &(urls, key, want, by_scope) in cases {
        let policy = with_urls(allow_fetch.clone(), urls);
        let decision = decide_key(&policy, key);
        assert_eq!(effect(&decision), want, "{key} in {urls:?}: {decision:?}");
        if by_scope {
            assert_eq!(verdict(&decision).because, Because::UrlScope);
        }
    }
    // Inside the URL scope but without a rule: fetch's default (deny) still applies.
    let policy = with_urls(vec![], &["https://docs.rs/*"]);
    let decision = decide_key(&policy, "fetch:https://docs.rs/x");
    assert_eq!(
        verdict(&decision).because,
        Because::Default {
            action: "fetch".to_owned()
        }
    );
}

#[test]
fn modes() {
    use Effect::{Allow, Ask, Deny};
    let rules = vec![
        at(Effect::Deny, "write:Cargo.lock", 3),
        at(Effect::Allow, "fetch:https://docs.rs/*", 4),
    ];
    let keys = [
        "read:src/a.rs",
        "write:src/a.rs",
        "tool.bash.cmd:cargo build",
        "fetch:https://docs.rs/x",
        "fetch:https://example.com/x",
        "write:Cargo.lock",
        "message:parent",
    ];
    // Expected effects per key, in the order above.
    let table: &[(Mode, [Effect; 7])] = &[
        (Mode::Ask, [Allow, Ask, Ask, Allow, Deny, Deny, Deny]),
        (
            Mode::AcceptEdits,
            [Allow, Allow, Ask, Allow, Deny, Deny, Deny],
        ),
        (Mode::Plan, [Allow, Deny, Deny, Allow, Deny, Deny, Deny]),
        (Mode::Yolo, [Allow, Allow, Allow, Allow, Deny, Deny, Deny]),
    ];
    for &(mode, expected) in table {
        let policy = Policy::new(
            rules.clone(),
            mode,
            PathScope::default(),
            UrlScope::parse(&["https://*"]).unwrap(),
        )
        .unwrap();
        for (key, want) in keys.iter().zip(expected) {
            let decision = decide_key(&policy, key);
            assert_eq!(effect(&decision), want, "{mode} {key}: {decision:?}");
        }
    }
}

#[test]
fn plan_mode_denies_mutating_calls_and_writes() {
    let policy = Policy::new(
        vec![flag(Effect::Allow, "**")],
        Mode::Plan,
        PathScope::default(),
        UrlScope::default(),
    )
    .unwrap();
    // A mutating call is denied at its tool key, whatever its resources.
    let decision = decide(&policy, "delete_file", &["read:src/a.rs"], true);
    assert_eq!(
        decision,
        Decision::Deny {
            verdict: KeyVerdict {
                key: "tool.delete_file".to_owned(),
                effect: Effect::Deny,
                because: Because::Mode(Mode::Plan),
            }
        }
    );
    // A write key is denied even when the call claims not to mutate.
    let decision = decide(&policy, "odd_tool", &["write:src/a.rs"], false);
    assert_eq!(verdict(&decision).because, Because::Mode(Mode::Plan));
    assert_eq!(verdict(&decision).key, "write:src/a.rs");
    // Without the tool key among the keys, the mutation is still denied.
    let decision = policy.evaluate(
        &Request {
            tool: "bash",
            keys: &["tool.bash.cmd:touch x".to_owned()],
            mutating: true,
        },
        &Grants::new(),
    );
    assert_eq!(verdict(&decision).key, "tool.bash");
    // Reads still run.
    assert!(decide(&policy, "read_file", &["read:src/a.rs"], false).is_allow());
}

#[test]
fn yolo_keeps_denies_and_reports_overrides() {
    let policy = Policy::new(
        vec![at(Effect::Deny, "tool.bash.cmd:rm *", 8)],
        Mode::Yolo,
        PathScope::default(),
        UrlScope::default(),
    )
    .unwrap();
    let decision = decide(
        &policy,
        "bash",
        &["tool.bash.cmd:cargo build", "tool.bash.cmd:rm -rf target"],
        true,
    );
    assert_eq!(effect(&decision), Effect::Deny);
    let decision = decide(&policy, "bash", &["tool.bash.cmd:cargo build"], true);
    assert_eq!(
        decision,
        Decision::Allow {
            overrides: vec![KeyVerdict {
                key: "tool.bash.cmd:cargo build".to_owned(),
                effect: Effect::Allow,
                because: Because::Mode(Mode::Yolo),
            }]
        }
    );
}

#[test]
fn unparseable_scripts_are_never_allowed_by_a_rule() {
    for allow in ["**", "*", "tool.bash.cmd:*", "tool.bash.cmd:**", "tool.*"] {
        let policy = policy(vec![flag(Effect::Allow, allow)]);
        let decision = decide(&policy, "bash", &[UNPARSEABLE_BASH], true);
        assert_eq!(effect(&decision), Effect::Ask, "allow {allow}");
        assert_eq!(verdict(&decision).key, UNPARSEABLE_BASH);
        // The same rule does allow parsed commands.
        assert!(decide(&policy, "bash", &["tool.bash.cmd:ls"], true).is_allow());
    }
    for deny in ["**", "tool.bash.cmd:*", "tool.bash.cmd:?"] {
        let policy = policy(vec![flag(Effect::Deny, deny)]);
        let decision = decide(&policy, "bash", &[UNPARSEABLE_BASH], true);
        assert_eq!(effect(&decision), Effect::Deny, "deny {deny}");
    }
    // An explicit ask rule for it is fine.
    let asking = policy(vec![flag(Effect::Ask, "tool.bash.cmd:?")]);
    assert_eq!(
        effect(&decide(&asking, "bash", &[UNPARSEABLE_BASH], true)),
        Effect::Ask
    );
    // `tool.bash.cmd:?` names the key literally, not any one-character command.
    let literal = policy(vec![flag(Effect::Deny, "tool.bash.cmd:?")]);
    assert_eq!(
        effect(&decide(&literal, "bash", &["tool.bash.cmd:w"], true)),
        Effect::Ask
    );
    // A session grant does not cover the next unparseable script.
    let plain = policy(vec![]);
    let mut grants = Grants::new();
    assert!(!grants.grant_session(UNPARSEABLE_BASH));
    let decision = decide_with(&plain, "bash", &[UNPARSEABLE_BASH], true, &grants);
    assert_eq!(effect(&decision), Effect::Ask);
}

#[test]
fn an_allow_rule_for_the_unparseable_key_is_refused() {
    let err = Policy::new(
        vec![at(Effect::Allow, UNPARSEABLE_BASH, 14)],
        Mode::Ask,
        PathScope::default(),
        UrlScope::default(),
    )
    .unwrap_err();
    let text = err.to_string();
    assert!(text.contains(&format!("{CONFIG}:14")), "{text}");
}

#[test]
fn bad_path_scopes_are_refused() {
    for (allow, needle) in [("/etc/**", "is absolute"), ("../other/**", "'..'")] {
        let err = Policy::new(
            vec![],
            Mode::Ask,
            PathScope::parse(&[allow], &[]).unwrap(),
            UrlScope::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains(needle) && err.contains(allow), "{err}");
    }
}

#[test]
fn grants_turn_asks_into_allows_but_never_denies() {
    let policy = policy(vec![at(Effect::Deny, "write:Cargo.lock", 2)]);
    let mut grants = Grants::new();
    assert!(grants.grant_session("write:src/a.rs"));
    assert!(grants.grant_session("write:Cargo.lock"));
    assert!(grants.grant_session("fetch:https://docs.rs/x"));

    let decision = decide_with(&policy, "write_file", &["write:src/a.rs"], true, &grants);
    assert_eq!(
        decision,
        Decision::Allow {
            overrides: vec![KeyVerdict {
                key: "write:src/a.rs".to_owned(),
                effect: Effect::Allow,
                because: Because::Grant,
            }]
        }
    );
    // Grants are exact keys, not patterns.
    let decision = decide_with(&policy, "write_file", &["write:src/b.rs"], true, &grants);
    assert_eq!(effect(&decision), Effect::Ask);
    // Never over a deny rule, a deny default or a scope.
    for key in ["write:Cargo.lock", "fetch:https://docs.rs/x"] {
        let decision = decide_with(&policy, "t", &[key], true, &grants);
        assert_eq!(effect(&decision), Effect::Deny, "{key}");
    }
}

#[test]
fn ask_lists_every_asking_key_and_deny_wins_over_ask() {
    let policy = policy(vec![]);
    let decision = decide(
        &policy,
        "bash",
        &["tool.bash.cmd:make", "tool.bash.cmd:ls", "read:src/a.rs"],
        true,
    );
    match decision {
        Decision::Ask { keys } => {
            let names: Vec<&str> = keys.iter().map(|k| k.key.as_str()).collect();
            assert_eq!(names, ["tool.bash.cmd:make", "tool.bash.cmd:ls"]);
        }
        other => panic!("{other:?}"),
    }
    let decision = decide(
        &policy,
        "multi",
        &["write:a", "message:parent", "write:b"],
        true,
    );
    assert_eq!(verdict(&decision).key, "message:parent");
    assert_eq!(effect(&decision), Effect::Deny);
}

/// (rules, url scope, tool, actions, advertised)
type AdvertisingCase<'a> = (&'a [Rule], &'a [&'a str], &'a str, &'a [&'a str], bool);

#[test]
fn advertising() {
    let deny_bash = vec![flag(Effect::Deny, "tool.bash")];
    let allow_docs = vec![at(Effect::Allow, "fetch:https://docs.rs/*", 3)];
    let ask_fetch = vec![flag(Effect::Ask, "fetch:*")];
    let allow_parent = vec![at(Effect::Allow, "message:parent", 5)];
    let allow_all = vec![flag(Effect::Allow, "**")];
    let deny_fetch = vec![flag(Effect::Deny, "fetch:*")];
    let allow_fetch_tool = vec![flag(Effect::Allow, "tool.fetch_url")];
    let ask_reads = vec![flag(Effect::Ask, "read:**")];
    // (rules, url scope, tool, actions, advertised)
    let cases: &[AdvertisingCase] = &[
        // Plain tools.
        (&[], &[], "read_file", &["read"], true),
        (&[], &[], "bash", &["tool.bash.cmd"], true),
        (&[], &[], "edit_file", &["read", "write"], true),
        (&[], &[], "mcp.github.create_issue", &[], true),
        // A deny rule on the tool key hides it; one on its commands does not.
        (&deny_bash, &[], "bash", &["tool.bash.cmd"], false),
        (&deny_bash, &[], "read_file", &["read"], true),
        (
            &[flag(Effect::Deny, "tool.bash.cmd:*")],
            &[],
            "bash",
            &["tool.bash.cmd"],
            true,
        ),
        (
            &[flag(Effect::Deny, "tool.mcp.github.*")],
            &[],
            "mcp.github.create_issue",
            &[],
            false,
        ),
        // fetch: needs a URL scope and an allow or ask rule.
        (&[], &[], "fetch_url", &["fetch"], false),
        (&[], &["https://docs.rs/*"], "fetch_url", &["fetch"], false),
        (&allow_docs, &[], "fetch_url", &["fetch"], false),
        (
            &allow_docs,
            &["https://docs.rs/*"],
            "fetch_url",
            &["fetch"],
            true,
        ),
        (&ask_fetch, &["https://*"], "fetch_url", &["fetch"], true),
        (&allow_all, &["https://*"], "fetch_url", &["fetch"], true),
        (
            &allow_fetch_tool,
            &["https://*"],
            "fetch_url",
            &["fetch"],
            true,
        ),
        (&deny_fetch, &["https://*"], "fetch_url", &["fetch"], false),
        (&ask_reads, &["https://*"], "fetch_url", &["fetch"], false),
        // message: hidden until an allow or ask rule names it.
        (&[], &[], "send_message", &["message"], false),
        (&allow_parent, &[], "send_message", &["message"], true),
        (&allow_docs, &[], "send_message", &["message"], false),
        (&allow_all, &[], "send_message", &["message"], true),
    ];
    for (rules, urls, tool, actions, want) in cases {
        let policy = with_urls(rules.to_vec(), urls);
        assert_eq!(
            policy.advertises(tool, actions),
            *want,
            "{tool} {actions:?} with {:?} urls {urls:?}",
            rules.iter().map(|r| r.pattern.as_str()).collect::<Vec<_>>()
        );
    }
}

#[test]
fn messages_name_the_key_the_rule_and_the_fix() {
    let policy = with_urls(
        vec![
            at(Effect::Deny, "write:src/**", 7),
            flag(Effect::Ask, "tool.bash.cmd:git push *"),
            built_in(Effect::Deny, "tool.bash.cmd:sudo *"),
        ],
        &["https://docs.rs/*"],
    );
    let cases: &[(&str, &[&str])] = &[
        (
            "write:src/main.rs",
            &[
                "write:src/main.rs is denied by deny rule \"write:src/**\" at /p/.agents/config.toml:7",
            ],
        ),
        (
            "write:docs/guide.md",
            &[
                "write:docs/guide.md needs approval (default for writes); allow it with --allow 'write:docs/**'",
            ],
        ),
        (
            "tool.bash.cmd:git push origin main",
            &["ask rule \"tool.bash.cmd:git push *\" from --ask"],
        ),
        (
            "tool.bash.cmd:sudo ls",
            &["deny rule \"tool.bash.cmd:sudo *\" from the built-in defaults"],
        ),
        (
            "tool.bash.cmd:cargo test -p x",
            &[
                "needs approval (default for shell commands); allow it with --allow 'tool.bash.cmd:cargo *'",
            ],
        ),
        (
            "fetch:https://docs.rs/globset",
            &["is denied (default for fetches); allow it with --allow 'fetch:https://docs.rs/*'"],
        ),
        (
            "fetch:https://example.com/x",
            &[
                "denied by the url scope",
                "\"https://example.com/*\" to url_scope.allow",
            ],
        ),
        (
            "message:parent",
            &[
                "message:parent is denied (default for messages); allow it with --allow 'message:parent'",
            ],
        ),
        (
            "read:../x",
            &["read:../x is denied by the path scope: \"../x\" leaves the project root"],
        ),
        (
            UNPARSEABLE_BASH,
            &[
                "cannot be known without running it",
                "approve it for this call",
            ],
        ),
    ];
    for &(key, needles) in cases {
        let text = decide_key(&policy, key).message();
        for needle in needles {
            assert!(text.contains(needle), "{key}: {text}");
        }
    }
    // Plan mode names itself and the way out.
    let mut plan = policy.clone();
    plan.set_mode(Mode::Plan);
    let text = decide(&plan, "write_file", &["write:a"], true).message();
    assert!(
        text.contains("tool.write_file is denied in plan mode"),
        "{text}"
    );
    assert!(text.contains("switch to ask or accept-edits"), "{text}");
    // An ask over several keys names them all.
    let text = decide(
        &policy,
        "bash",
        &["tool.bash.cmd:make", "tool.bash.cmd:ls"],
        true,
    )
    .message();
    assert!(text.contains("tool.bash.cmd:make needs approval"), "{text}");
    assert!(text.contains("tool.bash.cmd:ls needs approval"), "{text}");
}

#[test]
fn many_rules_still_name_the_right_one() {
    let mut rules: Vec<Rule> = (0..150)
        .map(|i| at(Effect::Allow, &format!("write:pkg{i}/**"), i + 1))
        .collect();
    rules.push(at(Effect::Deny, "write:pkg42/private/**", 500));
    let policy = policy(rules);
    assert!(decide_key(&policy, "write:pkg42/src/a.rs").is_allow());
    let decision = decide_key(&policy, "write:pkg42/private/k");
    assert!(decision.message().contains(&format!("{CONFIG}:500")));
    assert_eq!(effect(&decide_key(&policy, "write:pkg150/a")), Effect::Ask);
}

#[test]
fn policies_can_be_shared_across_threads() {
    fn shareable<T: Send + Sync>() {}
    shareable::<Policy>();
    shareable::<Grants>();
    shareable::<Decision>();
}

/// Protected paths hold in every mode, over allow rules and session grants: the store is
/// denied (reads too), configuration and git's directory ask. One case a row: (mode, allow rules, grant the
/// key?, key, expected effect).
#[test]
fn protected_paths_hold_in_every_mode_over_rules_and_grants() {
    let modes = [Mode::Ask, Mode::AcceptEdits, Mode::Yolo];
    let keys_and_effects: &[(&str, Effect)] = &[
        ("write:.agents/store/artifacts/0123", Effect::Deny),
        ("write:.agents/store/sessions/s/events.jsonl", Effect::Deny),
        ("write:.agents/config.toml", Effect::Ask),
        ("write:.agents/mcp.json", Effect::Ask),
        ("write:.git/config", Effect::Ask),
        ("write:.git/hooks/pre-commit", Effect::Ask),
        ("write:.git", Effect::Ask),
        ("write:sub/.git/config", Effect::Ask),
        ("write:./.git//config", Effect::Ask),
        ("read:.agents/store/artifacts/0123", Effect::Deny),
        ("read:.AGENTS/Store/sessions/s/events.jsonl", Effect::Deny),
        ("read:.agents/store", Effect::Deny),
        ("read:sub/.agents/store/artifacts", Effect::Deny),
    ];
    let rule_sets: [Vec<Rule>; 3] = [
        vec![],
        vec![
            flag(Effect::Allow, "write:**"),
            flag(Effect::Allow, "read:**"),
        ],
        vec![
            at(Effect::Allow, "write:.git/**", 2),
            flag(Effect::Allow, "write:.agents/**"),
        ],
    ];
    let mut rows = 0;
    for mode in modes {
        for rules in &rule_sets {
            for granted in [false, true] {
                for &(key, want) in keys_and_effects {
                    let policy = Policy::new(
                        rules.clone(),
                        mode,
                        PathScope::default(),
                        UrlScope::default(),
                    )
                    .unwrap();
                    let mut grants = Grants::new();
                    if granted {
                        grants.grant_session(key);
                    }
                    let decision = decide_with(&policy, "write_file", &[key], true, &grants);
                    let row = format!("{mode} {rules:?} granted={granted} {key}");
                    assert_eq!(effect(&decision), want, "{row}: {decision:?}");
                    let v = verdict(&decision);
                    assert_eq!(v.key, key, "{row}");
                    assert!(
                        matches!(v.because, Because::Protected { .. }),
                        "{row}: {:?}",
                        v.because
                    );
                    assert!(policy.is_protected(key), "{row}");
                    rows += 1;
                }
            }
        }
    }
    assert_eq!(rows, 3 * 3 * 2 * keys_and_effects.len());
}

#[test]
fn protected_paths_yield_to_denies_and_leave_reads_alone() {
    // A deny rule or the path scope still denies a protected path (deny beats ask).
    let p = policy(vec![flag(Effect::Deny, "write:.git/**")]);
    let d = decide_key(&p, "write:.git/config");
    assert_eq!(effect(&d), Effect::Deny);
    assert!(matches!(verdict(&d).because, Because::Rule { .. }));
    // Plan mode denies every write, protected or not.
    let plan = Policy::new(
        vec![],
        Mode::Plan,
        PathScope::default(),
        UrlScope::default(),
    )
    .unwrap();
    assert_eq!(
        effect(&decide_key(&plan, "write:.git/config")),
        Effect::Deny
    );
    // Reads of protected paths are ordinary reads, and walks may read them.
    let p = policy(vec![]);
    assert_eq!(effect(&decide_key(&p, "read:.git/config")), Effect::Allow);
    assert!(p.admits_walked_read(".agents/config.toml"));
    // The store is the exception: no walk reads or lists what is in it.
    assert!(!p.admits_walked_read(".agents/store/artifacts/0123"));
    assert!(!p.admits_walked_read("sub/.agents/store/sessions/s/events.jsonl"));
    assert!(!p.is_protected("read:.git/config"));
    assert!(!p.is_protected("write:src/.git.rs"));
    // A call with an ordinary key and a protected one asks only about the protected one.
    let yolo = Policy::new(
        vec![],
        Mode::Yolo,
        PathScope::default(),
        UrlScope::default(),
    )
    .unwrap();
    let d = decide(
        &yolo,
        "bash",
        &["tool.bash.cmd:echo x", "write:.git/config"],
        true,
    );
    match &d {
        Decision::Ask { keys } => {
            assert_eq!(keys.len(), 1, "{d:?}");
            assert_eq!(keys[0].key, "write:.git/config");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn protected_path_messages_say_why_and_that_nothing_lifts_them() {
    let yolo = Policy::new(
        vec![],
        Mode::Yolo,
        PathScope::default(),
        UrlScope::default(),
    )
    .unwrap();
    let text = decide_key(&yolo, "write:.git/config").message();
    assert!(
        text.contains("write:.git/config needs approval every time"),
        "{text}"
    );
    assert!(text.contains("core.fsmonitor"), "{text}");
    assert!(text.contains("yolo"), "{text}");
    assert!(text.contains("session grant does not cover it"), "{text}");
    let text = decide_key(&yolo, "write:.agents/store/artifacts/x").message();
    assert!(text.contains("is denied"), "{text}");
    assert!(text.contains("runtime only"), "{text}");
    let text = decide_key(&yolo, "write:.agents/config.toml").message();
    assert!(text.contains("project configuration"), "{text}");
}

#[test]
fn a_runs_pre_approval_never_answers_a_narrowing_ask_and_a_persons_grant_does() {
    let narrowing = Rule::new(
        Effect::Ask,
        Pattern::parse("tool.bash.cmd:git push *").unwrap(),
        RuleSource::Narrowing {
            by: "the subagent's type".to_owned(),
        },
    );
    let user_ask = at(Effect::Ask, "tool.bash.cmd:git commit *", 3);
    let p = policy(vec![narrowing, user_ask]);
    let mut run = Grants::new();
    run.grant_for_run(Pattern::parse("tool.bash.cmd:git *").unwrap());
    // (key, granted for the run only → effect, also granted by a person → effect)
    let table = [
        ("tool.bash.cmd:git push origin", Effect::Ask, Effect::Allow),
        (
            "tool.bash.cmd:git commit -m x",
            Effect::Allow,
            Effect::Allow,
        ),
        ("tool.bash.cmd:git status", Effect::Allow, Effect::Allow),
    ];
    for (key, by_run, by_person) in table {
        let got = decide_with(&p, "bash", &[key], true, &run);
        assert_eq!(effect(&got), by_run, "{key} with the run's grant: {got:?}");
        let mut person = run.clone();
        person.grant_session(key);
        let got = decide_with(&p, "bash", &[key], true, &person);
        assert_eq!(
            effect(&got),
            by_person,
            "{key} granted by a person: {got:?}"
        );
    }
}
