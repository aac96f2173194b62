//! A rule written for a path must mean that path: generated path words (`.`, `..`, `//`,
//! symlinked components, absolute names, a trailing `/`, after a `cd` or not) are put in
//! command lines for several allow rules, and the gate's decision on the line's keys is checked
//! against where the path really lands on a temp tree (`std::fs::canonicalize`): an allow only
//! when the real target is inside what the rule names.

// Tests report failure by panicking.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use tackle_gate::{
    Effect, Grants, Mode, PathScope, Pattern, Policy, Request, Rule, RuleSource, UrlScope,
};
use tackle_tools::shell::Dialect;
use tackle_tools::shell::analyze::analyze;
use tackle_tools::shell::routing::{LineEnvironment, routing_keys};

/// The tree: `root/` (the project) beside `outside/`.
struct Tree {
    _dir: tempfile::TempDir,
    root: PathBuf,
    outside: PathBuf,
}

fn tree() -> Tree {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let root = base.join("root");
    let outside = base.join("outside");
    for d in [
        root.join("src/sub"),
        root.join("scripts"),
        root.join("other"),
        outside.join("deep/inner"),
        outside.join("src"),
    ] {
        std::fs::create_dir_all(d).unwrap();
    }
    for f in [
        root.join("src/a.rs"),
        root.join("src/sub/b.rs"),
        root.join("scripts/run.sh"),
        root.join("other/c.txt"),
        outside.join("deep/x"),
        outside.join("deep/inner/y"),
        outside.join("secret"),
        outside.join("src/a.rs"),
    ] {
        std::fs::write(f, "").unwrap();
    }
    let link = |target: &str, name: PathBuf| std::os::unix::fs::symlink(target, name).unwrap();
    // A link to a directory inside the root, one to a directory outside, one to a file outside.
    link("sub", root.join("src/in_link"));
    link("../../outside/deep/inner", root.join("src/out_link"));
    link("../../outside/secret", root.join("src/file_link"));
    link("../src", root.join("scripts/src_link"));
    Tree {
        _dir: dir,
        root,
        outside,
    }
}

/// Path words from a small grammar: a start (relative, `./`, `src/`, the root's absolute name,
/// `..` back into the root, a directory outside), one to three components (a name that does
/// not exist among them, for writes) (every third of the
/// three-component bodies, to keep the run short), an optional trailing `/`.
fn words(tree: &Tree) -> Vec<String> {
    const COMPONENTS: &[&str] = &[
        "src",
        "sub",
        "..",
        ".",
        "",
        "in_link",
        "out_link",
        "file_link",
        "a.rs",
        "scripts",
        "run.sh",
        "src_link",
        "new",
    ];
    let starts = [
        String::new(),
        "./".to_owned(),
        "src/".to_owned(),
        format!("{}/", tree.root.display()),
        "../root/".to_owned(),
        format!("{}/deep/", tree.outside.display()),
    ];
    let mut bodies: Vec<String> = COMPONENTS.iter().map(|c| (*c).to_owned()).collect();
    let mut frontier = bodies.clone();
    for depth in 2..=3 {
        let mut next = Vec::new();
        for b in &frontier {
            for c in COMPONENTS {
                next.push(format!("{b}/{c}"));
            }
        }
        let stride = if depth == 3 { 3 } else { 1 };
        bodies.extend(next.iter().step_by(stride).cloned());
        frontier = next;
    }
    let mut out = Vec::new();
    for start in &starts {
        for body in &bodies {
            for end in ["", "/"] {
                let word = format!("{start}{body}{end}");
                if !word.is_empty() && !out.contains(&word) {
                    out.push(word);
                }
            }
        }
    }
    out
}

/// One allow rule, the line it is tried in, and the directory it names.
struct Case {
    rules: &'static [&'static str],
    /// `{}` is the generated word.
    line: &'static str,
    /// The directory the line runs the word in, relative to the root.
    cwd: &'static str,
    /// What the rule names, relative to the root (or absolute when it starts with `@outside`).
    names: &'static str,
    /// The word must be a path the kernel resolves (a verb with a `/`).
    verb: bool,
}

const CASES: &[Case] = &[
    Case {
        rules: &["tool.bash.cmd:cat src/*"],
        line: "cat {}",
        cwd: "",
        names: "src",
        verb: false,
    },
    Case {
        rules: &["tool.bash.cmd:./scripts/* *"],
        line: "{} --fast",
        cwd: "",
        names: "scripts",
        verb: true,
    },
    Case {
        rules: &["tool.bash.cmd:cat @outside/deep/*"],
        line: "cat {}",
        cwd: "",
        names: "@outside/deep",
        verb: false,
    },
    Case {
        rules: &["tool.bash.cmd:cd *", "tool.bash.cmd:cat src/*"],
        line: "cd other && cat {}",
        cwd: "other",
        names: "src",
        verb: false,
    },
    Case {
        rules: &["tool.bash.cmd:cd *", "tool.bash.cmd:cat src/*"],
        line: "cd .. && cat {}",
        cwd: "..",
        names: "src",
        verb: false,
    },
    Case {
        rules: &["tool.bash.cmd:git log --output=src/*"],
        line: "git log --output={}",
        cwd: "",
        names: "src",
        verb: false,
    },
    Case {
        rules: &["tool.bash.cmd:echo *", "write:src/**"],
        line: "echo hi > {}",
        cwd: "",
        names: "src",
        verb: false,
    },
];

fn policy(tree: &Tree, rules: &[&str]) -> Policy {
    let rules = rules
        .iter()
        .map(|r| {
            let text = r.replace("@outside", &tree.outside.to_string_lossy());
            Rule::new(
                Effect::Allow,
                Pattern::parse(&text).unwrap(),
                RuleSource::BuiltIn,
            )
        })
        .collect();
    Policy::new(rules, Mode::Ask, PathScope::default(), UrlScope::default()).unwrap()
}

/// Where the kernel lands for `word` named from `cwd`: the canonical path when it exists, the
/// canonical parent and the last name when only the parent does (a file about to be written),
/// `None` when the name reaches nothing.
fn lands(cwd: &Path, word: &str) -> Option<PathBuf> {
    let path = cwd.join(word);
    if let Ok(real) = std::fs::canonicalize(&path) {
        return Some(real);
    }
    let trimmed = word.trim_end_matches('/');
    let (parent, name) = match trimmed.rsplit_once('/') {
        Some((p, n)) => (cwd.join(if p.is_empty() { "/" } else { p }), n),
        None => (cwd.to_path_buf(), trimmed),
    };
    if matches!(name, "" | "." | "..") || word.ends_with('/') {
        return None;
    }
    std::fs::canonicalize(parent).ok().map(|p| p.join(name))
}

fn allowed(policy: &Policy, tree: &Tree, line: &str) -> bool {
    let analysis = analyze(line, Dialect::Bash);
    let env = LineEnvironment {
        home: Some(tree.outside.clone()),
        cdpath_set: false,
    };
    let keys: Vec<String> = std::iter::once("tool.bash".to_owned())
        .chain(
            routing_keys(&analysis, &tree.root, &env)
                .iter()
                .map(|r| r.key()),
        )
        .collect();
    let request = Request {
        tool: "bash",
        keys: &keys,
        mutating: true,
    };
    policy.evaluate(&request, &Grants::new()).is_allow()
}

#[test]
fn an_allow_holds_only_where_the_path_really_lands() {
    let tree = tree();
    let words = words(&tree);
    let mut problems = Vec::new();
    for case in CASES {
        let policy = policy(&tree, case.rules);
        let cwd = tree.root.join(case.cwd);
        let named = match case.names.strip_prefix("@outside") {
            Some(rest) => PathBuf::from(format!("{}{rest}", tree.outside.display())),
            None => tree.root.join(case.names),
        };
        let (mut allows, mut inside, mut checked) = (0, 0, 0);
        for word in &words {
            if case.verb && !word.contains('/') {
                continue;
            }
            let Some(real) = lands(&cwd, word) else {
                continue;
            };
            checked += 1;
            let is_inside = real.starts_with(&named);
            inside += usize::from(is_inside);
            let line = case.line.replace("{}", word);
            if allowed(&policy, &tree, &line) {
                allows += 1;
                if !is_inside {
                    problems.push(format!(
                        "{:?}: {line:?} is allowed but lands on {}",
                        case.rules,
                        real.display()
                    ));
                }
            }
        }
        // Not vacuous: the grammar reaches inside and outside, and from the root plain names
        // are allowed (after a `cd` the words are read as if in the root: asking is expected).
        assert!(
            inside > 20 && checked > inside + 100 && (!case.cwd.is_empty() || allows > 10),
            "{:?}: checked {checked}, inside {inside}, allowed {allows}",
            case.rules
        );
        eprintln!(
            "{:?} in {:?}: {checked} words land somewhere, {inside} inside, {allows} allowed",
            case.rules, case.cwd
        );
    }
    assert!(
        problems.is_empty(),
        "{} allows outside what the rule names:\n{}",
        problems.len(),
        problems[..problems.len().min(40)].join("\n")
    );
}

/// What a plain word means stays allowed: the normalisation narrows only what climbs out.
#[test]
fn plain_words_inside_stay_allowed() {
    let tree = tree();
    let cases: &[(&[&str], &str, bool)] = &[
        (&["tool.bash.cmd:cat src/*"], "cat src/a.rs", true),
        (&["tool.bash.cmd:cat src/*"], "cat ./src//sub/b.rs", true),
        (&["tool.bash.cmd:cat src/*"], "cat src/in_link/b.rs", true),
        (&["tool.bash.cmd:cat src/*"], "cat src/out_link/y", false),
        (&["tool.bash.cmd:cat src/*"], "cat src/file_link", false),
        (&["tool.bash.cmd:cat src/*"], "cat src/out_link/../x", false),
        (&["tool.bash.cmd:cat src/*"], "cat src/*.rs", true),
        (&["tool.bash.cmd:cat src/*"], "cat src/*_link", false),
        (
            &["tool.bash.cmd:cat src/*"],
            "cat src/a.rs /etc/passwd",
            false,
        ),
        (
            &["tool.bash.cmd:./scripts/* *"],
            "./scripts/run.sh -v",
            true,
        ),
        (
            &["tool.bash.cmd:./scripts/* *"],
            "./scripts/../../../usr/bin/touch pwned",
            false,
        ),
        (&["tool.bash.cmd:git *"], "git log --oneline src/../x", true),
        (
            &["tool.bash.cmd:cd *", "tool.bash.cmd:cat src/*"],
            "cd other && cat src/a.rs",
            false,
        ),
        (
            &["tool.bash.cmd:cd *", "tool.bash.cmd:cat src/*"],
            "cd other && cat ../src/a.rs",
            false,
        ),
        (
            &["tool.bash.cmd:cd *", "tool.bash.cmd:cat src/*"],
            "cd src && cat a.rs",
            false,
        ),
        (
            &["tool.bash.cmd:cd *", "tool.bash.cmd:cat src/*"],
            "cd scripts && cat src_link/a.rs",
            false,
        ),
        (
            &["tool.bash.cmd:echo *", "write:src/**"],
            "echo hi > src/new.txt",
            true,
        ),
        (
            &["tool.bash.cmd:echo *", "write:src/**"],
            "echo hi > src/out_link/../new.txt",
            false,
        ),
    ];
    for &(rules, line, want) in cases {
        let policy = policy(&tree, rules);
        assert_eq!(allowed(&policy, &tree, line), want, "{rules:?} {line:?}");
    }
}
