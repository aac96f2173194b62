//! Gate evaluation vs the cheapest tool it guards: `Policy::evaluate` of a 20-key request
//! against 200 rules (allow/ask/deny over paths, shell commands, URLs, messages), measured
//! beside one `std::fs::metadata` (a `stat`) on a file in a temp dir under `target/`, in the
//! same run, alternating rounds so drift affects both alike.
//!
//! Run: `cargo bench -p tackle-bench --bench gate_eval` (`GATE_EVAL_N` overrides the number
//! of timed batches; each batch is `BATCH` operations, so timer overhead stays out).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Instant;
use tackle_bench::{Stats, ratio};

use tackle_gate::{
    Decision, Effect, Grants, Mode, PathScope, Pattern, Policy, Request, Rule, RuleSource, UrlScope,
};

const BATCH: u32 = 100;
const ROUNDS: usize = 10;
const CRATES: [&str; 10] = [
    "protocol", "tool", "gate", "fs", "store", "runtime", "tools", "mcp", "llm", "agent",
];

fn main() {
    let n: usize = std::env::var("GATE_EVAL_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000);
    let rules = realistic_rules();
    assert_eq!(rules.len(), 200, "the benchmark promises 200 rules");
    let compile = Instant::now();
    let policy = Policy::new(
        rules,
        Mode::Ask,
        PathScope::parse(&["**"], &[".git/**", "*.pem"]).unwrap(),
        UrlScope::parse(&[
            "https://docs.rs/*",
            "https://crates.io/*",
            "https://github.com/*",
        ])
        .unwrap(),
    )
    .unwrap();
    let compile = compile.elapsed();
    let keys = request_keys();
    assert_eq!(keys.len(), 20, "the benchmark promises 20 keys");
    let request = Request {
        tool: "bash",
        keys: &keys,
        mutating: true,
    };
    let grants = Grants::new();
    // Every key is allowed, so every key is evaluated (a deny would return early).
    let decision = policy.evaluate(&request, &grants);
    assert!(
        matches!(decision, Decision::Allow { .. }),
        "{}",
        decision.message()
    );

    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let file = dir.path().join("guarded.rs");
    std::fs::write(&file, b"fn main() {}\n").unwrap();
    println!(
        "gate eval: {} rules, {} keys per request, N={n} batches of {BATCH}, stat on {}",
        policy.rules().len(),
        keys.len(),
        file.display()
    );
    println!("compile 200 rules (Policy::new): {compile:.1?}");

    for _ in 0..BATCH * 10 {
        black_box(policy.evaluate(black_box(&request), &grants));
        black_box(std::fs::metadata(black_box(&file)).unwrap());
    }
    let mut gate = Vec::with_capacity(n);
    let mut stat = Vec::with_capacity(n);
    for _ in 0..ROUNDS {
        for _ in 0..n / ROUNDS {
            let t = Instant::now();
            for _ in 0..BATCH {
                black_box(policy.evaluate(black_box(&request), &grants));
            }
            gate.push(t.elapsed() / BATCH);
        }
        for _ in 0..n / ROUNDS {
            let t = Instant::now();
            for _ in 0..BATCH {
                black_box(std::fs::metadata(black_box(&file)).unwrap());
            }
            stat.push(t.elapsed() / BATCH);
        }
    }
    let gate = Stats::of(&mut gate);
    let stat = Stats::of(&mut stat);
    println!("{:<40} {gate}", "Policy::evaluate (20 keys, 200 rules)");
    println!("{:<40} {stat}", "std::fs::metadata (one stat)");
    println!(
        "per key: {:.1?}    ratio evaluate / stat: median {:.2}x   mean {:.2}x",
        gate.median / keys.len() as u32,
        ratio(gate.median, stat.median),
        ratio(gate.mean, stat.mean)
    );
}

/// 200 rules of the kinds a project and user config hold: per-crate path rules, secrets,
/// generated files, shell verbs with their risky subcommands, documentation sites, messaging.
fn realistic_rules() -> Vec<Rule> {
    let mut rules = Vec::new();
    let mut line = 0;
    let mut add = |effect: Effect, pattern: &str| {
        line += 1;
        let source = if line % 5 == 0 {
            RuleSource::Flag {
                flag: format!("--{effect}"),
            }
        } else {
            RuleSource::File {
                path: PathBuf::from("/p/.agents/config.toml"),
                line,
            }
        };
        rules.push(Rule::new(effect, Pattern::parse(pattern).unwrap(), source));
    };
    // Paths: 10 crates x 8 rules = 80.
    for name in CRATES {
        add(Effect::Allow, &format!("write:crates/{name}/src/**"));
        add(Effect::Allow, &format!("write:crates/{name}/tests/**"));
        add(Effect::Ask, &format!("write:crates/{name}/Cargo.toml"));
        add(Effect::Deny, &format!("write:crates/{name}/target/**"));
        add(Effect::Allow, &format!("read:crates/{name}/**"));
        add(
            Effect::Deny,
            &format!("read:crates/{name}/fixtures/secret-*"),
        );
        add(
            Effect::Ask,
            &format!("write:crates/{name}/src/generated/**"),
        );
        add(Effect::Allow, &format!("write:crates/{name}/benches/*.rs"));
    }
    // Project-wide path rules: 20.
    for pattern in [
        "write:*.lock",
        "read:.env",
        "read:.env.*",
        "write:.github/**",
        "write:**/*.min.js",
        "read:**/id_rsa",
        "read:**/*.key",
        "write:/Cargo.toml",
        "write:docs/**",
        "write:*.md",
        "read:docs/**",
        "read:*.toml",
        "write:scripts/*.sh",
        "write:.agents/**",
        "read:.agents/store/**",
        "write:vendor/**",
        "read:**/node_modules/**",
        "write:build/",
        "read:artifact://*",
        "write:goal:current",
    ] {
        let effect = if pattern.contains("lock")
            || pattern.contains(".env")
            || pattern.contains("id_rsa")
            || pattern.contains(".key")
            || pattern.contains("vendor")
        {
            Effect::Deny
        } else if pattern.contains(".github")
            || pattern.contains("Cargo")
            || pattern.contains("scripts")
        {
            Effect::Ask
        } else {
            Effect::Allow
        };
        add(effect, pattern);
    }
    // Shell: 60 verbs and subcommands.
    for verb in [
        "ls", "cat", "head", "tail", "wc", "sort", "uniq", "diff", "echo", "pwd", "which", "env",
        "date", "du", "df", "file", "stat", "tree", "jq", "sed -n",
    ] {
        add(Effect::Allow, &format!("tool.bash.cmd:{verb} *"));
    }
    for sub in [
        "status",
        "log",
        "diff",
        "show",
        "branch",
        "blame",
        "grep",
        "rev-parse",
        "ls-files",
        "stash list",
    ] {
        add(Effect::Allow, &format!("tool.bash.cmd:git {sub} *"));
    }
    for sub in ["push", "reset --hard", "clean -fd", "checkout --", "rebase"] {
        add(Effect::Ask, &format!("tool.bash.cmd:git {sub} *"));
    }
    for sub in [
        "build", "test", "check", "clippy", "fmt", "doc", "bench", "tree", "metadata", "run",
    ] {
        add(Effect::Allow, &format!("tool.bash.cmd:cargo {sub} *"));
    }
    for sub in ["publish", "install", "login", "yank", "owner"] {
        add(Effect::Ask, &format!("tool.bash.cmd:cargo {sub} *"));
    }
    for verb in [
        "rm -rf /*",
        "sudo *",
        "curl *|*sh",
        "dd *",
        "mkfs*",
        "chmod -R 777 *",
        "shutdown*",
        "reboot*",
        ":(){*",
        "nc -l*",
    ] {
        add(Effect::Deny, &format!("tool.bash.cmd:{verb}"));
    }
    // URLs: 30.
    for site in [
        "docs.rs",
        "crates.io",
        "doc.rust-lang.org",
        "github.com/rust-lang",
        "github.com/tokio-rs",
        "github.com/BurntSushi",
        "rust-lang.github.io",
        "blog.rust-lang.org",
        "lib.rs",
        "users.rust-lang.org",
    ] {
        add(Effect::Allow, &format!("fetch:https://{site}/*"));
    }
    for site in [
        "github.com/*/issues/*",
        "github.com/*/pull/*",
        "gist.github.com/*",
        "raw.githubusercontent.com/*",
        "pastebin.com/*",
    ] {
        add(Effect::Ask, &format!("fetch:https://{site}"));
    }
    for n in 0..15 {
        add(Effect::Deny, &format!("fetch:https://tracker{n}.example/*"));
    }
    // Tools, messaging, peers: 10.
    for (effect, pattern) in [
        (Effect::Allow, "message:parent"),
        (Effect::Ask, "message:sibling"),
        (Effect::Deny, "message:child"),
        (Effect::Ask, "call_peer:deployer"),
        (Effect::Allow, "call_peer:reviewer"),
        (Effect::Deny, "tool.mcp.untrusted.*"),
        (Effect::Ask, "tool.mcp.github.create_*"),
        (Effect::Allow, "tool.mcp.github.get_*"),
        (Effect::Deny, "tool.delete_tree"),
        (Effect::Ask, "tool.bash.cmd:?"),
    ] {
        add(effect, pattern);
    }
    rules
}

/// A busy call's keys: the tool, reads and writes across crates, shell commands, a fetch, an
/// artifact read, a message. All allowed by the rules above.
fn request_keys() -> Vec<String> {
    [
        "tool.bash",
        "read:crates/gate/src/policy.rs",
        "read:crates/runtime/src/layer/gate.rs",
        "read:crates/store/src/event_log.rs",
        "read:docs/DESIGN.md",
        "read:Cargo.toml",
        "read:crates/tools/src/bash/parse.rs",
        "write:crates/gate/src/policy.rs",
        "write:crates/gate/tests/table.rs",
        "write:crates/runtime/src/layer/gate.rs",
        "write:docs/gate.md",
        "tool.bash.cmd:cargo test -p tackle-gate",
        "tool.bash.cmd:git status --short",
        "tool.bash.cmd:ls -la crates/gate/src",
        "tool.bash.cmd:jq .rules config.json",
        "tool.bash.cmd:sed -n 1,40p crates/gate/src/lib.rs",
        "fetch:https://docs.rs/globset/latest/globset/struct.GlobSet.html",
        "read:artifact://9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        "message:parent",
        "call_peer:reviewer",
    ]
    .iter()
    .map(|k| (*k).to_owned())
    .collect()
}
