//! grep, glob, read_many_files, write_file, edit_file and delete_file through `tackle call`:
//! result sets equal to ripgrep's and fd's on the same tree, skipped entries, the gate on
//! writes (asks by default, `--allow` lets it through, plan mode denies) and the read scope
//! on walked files.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use std::collections::BTreeSet;
use std::process::Command;

use harness::{Project, call_json};
use serde_json::json;

/// A tree with what the walk must skip: .gitignore'd files, hidden and vendored dirs, binary
/// files, nested dirs, a symlink.
fn fixture() -> Project {
    let p = Project::new();
    p.write(".gitignore", "target/\n*.log\n/secret.rs\n");
    p.write("src/main.rs", "fn main() {\n    helper();\n}\n");
    p.write(
        "src/lib.rs",
        "pub fn helper() {}\n// TODO: more\nfn Helper2() {}\n",
    );
    p.write("src/deep/a/b/c.rs", "fn deep() { let todo = 1; }\n");
    p.write("src/deep/.gitignore", "skipme.rs\n");
    p.write("src/deep/skipme.rs", "fn skipped() {}\n");
    p.write("src/notes.txt", "fn in text\nTODO later\n");
    p.write("target/debug/gen.rs", "fn generated() {}\n");
    p.write("build.log", "fn in log\n");
    p.write("secret.rs", "fn secret() {}\n");
    p.write(".hidden/h.rs", "fn hidden() {}\n");
    p.write(".hidden.rs", "fn hidden_file() {}\n");
    p.write("node_modules/pkg/index.rs", "fn vendored() {}\n");
    p.write("vendor/lib/v.rs", "fn vendored() {}\n");
    p.write("bin/blob.rs", b"fn binary() {}\n\0\0\0\x01\x02".as_slice());
    p.write("docs/readme.md", "fn fenced() {}\nTodo: case\n");
    // Past the searcher's 64 KiB buffer: matches on both sides of its edge, and a NUL after
    // the edge, where ripgrep keeps the matches it found before the NUL.
    let line = |i: usize, name: &str| {
        if i.is_multiple_of(50) {
            format!("fn {name}_{i}() {{}}\n")
        } else {
            format!("// filler {i}\n")
        }
    };
    let long: String = (0..6000).map(|i| line(i, "line")).collect();
    p.write("big/long.rs", long);
    let mut late_nul: Vec<u8> = (0..5000)
        .flat_map(|i| line(i, "early").into_bytes())
        .collect();
    late_nul.extend_from_slice(b"\0\0fn after_nul() {}\n");
    p.write("big/late_nul.rs", late_nul);
    p.symlink("src/main.rs", "link.rs");
    p
}

fn tool_available(name: &str) -> bool {
    Command::new(name).arg("--version").output().is_ok()
}

/// `fd` is `fdfind` on Debian.
fn fd() -> &'static str {
    if tool_available("fd") { "fd" } else { "fdfind" }
}

fn run(p: &Project, program: &str, args: &[&str]) -> String {
    let out = Command::new(program)
        .args(args)
        .current_dir(p.path())
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "{program} is required for this test (scripts/install-test-deps installs it): {e}"
            )
        });
    String::from_utf8(out.stdout).unwrap()
}

/// Vendored dirs are skipped by tackle's walk; the peers are told to skip them too.
const PEER_EXCLUDES: [&str; 2] = ["node_modules", "vendor"];

fn rg_set(p: &Project, extra: &[&str]) -> BTreeSet<(String, u64)> {
    let mut args = vec!["--json", "--no-require-git", "--no-config"];
    let globs: Vec<String> = PEER_EXCLUDES.iter().map(|d| format!("!{d}/")).collect();
    for g in &globs {
        args.extend(["-g", g.as_str()]);
    }
    args.extend_from_slice(extra);
    run(p, "rg", &args)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["type"] == "match")
        .map(|v| {
            let path = v["data"]["path"]["text"].as_str().unwrap();
            (
                path.trim_start_matches("./").to_owned(),
                v["data"]["line_number"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn grep_set(p: &Project, args: serde_json::Value) -> BTreeSet<(String, u64)> {
    let out = call_json(p, "grep", &args);
    out.success();
    let m = out.metadata();
    assert_eq!(m["truncated"], false);
    m["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["path"].as_str().unwrap().to_owned(),
                m["line"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn grep_finds_what_ripgrep_finds() {
    let p = fixture();
    let cases: [(serde_json::Value, Vec<&str>); 4] = [
        (json!({"pattern": "fn"}), vec!["fn", "."]),
        (
            json!({"pattern": "todo", "case_insensitive": true}),
            vec!["-i", "todo", "."],
        ),
        (json!({"pattern": "helper|deep"}), vec!["helper|deep", "."]),
        (
            json!({"pattern": "fn [a-z]+\\(", "path": "src"}),
            vec!["fn [a-z]+\\(", "src"],
        ),
    ];
    for (args, rg_args) in cases {
        let want = rg_set(&p, &rg_args);
        assert!(!want.is_empty(), "{rg_args:?}");
        assert_eq!(grep_set(&p, args.clone()), want, "{args}");
    }
    // What must not be there, by name.
    let all = grep_set(&p, json!({"pattern": "fn"}));
    for absent in [
        "target/debug/gen.rs",
        "build.log",
        "secret.rs",
        ".hidden/h.rs",
        "node_modules/pkg/index.rs",
        "vendor/lib/v.rs",
        "bin/blob.rs",
        "src/deep/skipme.rs",
        "link.rs",
    ] {
        assert!(
            !all.iter().any(|(f, _)| f == absent),
            "{absent} was searched"
        );
    }
}

#[test]
fn grep_text_single_file_glob_and_bad_patterns() {
    let p = fixture();
    let out = call_json(
        &p,
        "grep",
        &json!({"pattern": "helper", "path": "src/main.rs"}),
    );
    out.success();
    assert_eq!(out.text(), "src/main.rs:2:    helper();\n");
    let set = grep_set(&p, json!({"pattern": "fn", "glob": "*.md"}));
    assert_eq!(set, BTreeSet::from([("docs/readme.md".to_owned(), 1)]));
    let out = call_json(&p, "grep", &json!({"pattern": "a(b"}));
    out.tool_error("invalid_pattern");
    assert!(out.text().contains("literal: true"), "{}", out.text());
    call_json(&p, "grep", &json!({"pattern": "a(b", "literal": true})).success();
    call_json(&p, "grep", &json!({"pattern": "x", "path": "../"})).tool_error("path_outside_root");
    call_json(&p, "grep", &json!({"pattern": "x", "path": "nope"})).tool_error("not_found");
}

#[test]
fn grep_cuts_long_lines() {
    let p = Project::new();
    p.write("long.txt", format!("needle {}\n", "x".repeat(5000)));
    let out = call_json(&p, "grep", &json!({"pattern": "needle"}));
    out.success();
    let text = out.text();
    assert!(text.len() < 700 && text.contains("[line cut]"), "{text}");
}

#[test]
fn glob_finds_what_fd_finds() {
    let p = fixture();
    // fd before 8.7 honours .gitignore only inside a git repository.
    let git = Command::new("git")
        .args(["init", "-q"])
        .current_dir(p.path())
        .status()
        .expect("git is required for this test");
    assert!(git.success());
    for pattern in ["*.rs", "*.md", "c.rs", "*"] {
        let mut args = vec!["-t", "f", "-g", pattern];
        for d in PEER_EXCLUDES {
            args.extend(["-E", d]);
        }
        let want: BTreeSet<String> = run(&p, fd(), &args)
            .lines()
            .map(|l| l.trim_start_matches("./").to_owned())
            .collect();
        let out = call_json(&p, "glob", &json!({"pattern": pattern}));
        out.success();
        let got: BTreeSet<String> = out.metadata()["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f.as_str().unwrap().to_owned())
            .collect();
        assert_eq!(got, want, "{pattern}");
        // Sorted, and the text is the same list.
        let text = out.text();
        let listed: Vec<&str> = text.lines().collect();
        let mut sorted = listed.clone();
        sorted.sort_unstable();
        assert_eq!(listed, sorted);
    }
}

#[test]
fn glob_paths_caps_and_errors() {
    let p = fixture();
    let out = call_json(&p, "glob", &json!({"pattern": "src/**/*.rs"}));
    out.success();
    assert_eq!(
        out.metadata()["files"],
        json!(["src/deep/a/b/c.rs", "src/lib.rs", "src/main.rs"])
    );
    let out = call_json(&p, "glob", &json!({"pattern": "*.rs", "path": "src/deep"}));
    assert_eq!(out.metadata()["files"], json!(["src/deep/a/b/c.rs"]));
    call_json(&p, "glob", &json!({"pattern": "[z"})).tool_error("invalid_pattern");
    // Naming a vendored dir searches it.
    let out = call_json(&p, "glob", &json!({"pattern": "*.rs", "path": "vendor"}));
    assert_eq!(out.metadata()["files"], json!(["vendor/lib/v.rs"]));
    let many = Project::new();
    // The raw listing, not its digest: this checks the tool's own cap.
    many.config("[tool_output]\ndigests = false\n");
    for i in 0..1005 {
        many.write(format!("d/f{i:04}.txt"), "");
    }
    let out = call_json(&many, "glob", &json!({"pattern": "*.txt"}));
    out.success();
    let m = out.metadata();
    assert_eq!(m["truncated"], true);
    assert_eq!(m["total"], 1005);
    assert_eq!(m["files"].as_array().unwrap().len(), 1000);
    assert!(
        out.text().contains("showing the first 1000 of 1005"),
        "{}",
        out.text()
    );
}

#[test]
fn read_many_files_skips_what_it_cannot_read_and_keeps_going() {
    let p = fixture();
    let out = call_json(
        &p,
        "read_many_files",
        &json!({"paths": ["src/main.rs", "missing.rs", "src", "bin/blob.rs", "../x", "src/lib.rs"]}),
    );
    out.success();
    let files = out.metadata()["files"].clone();
    let skipped: Vec<&str> = files
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f.get("skipped").is_some())
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(skipped, ["missing.rs", "src", "bin/blob.rs", "../x"]);
    let text = out.text();
    assert!(
        text.contains("==> src/lib.rs <==\npub fn helper() {}\n"),
        "{text}"
    );
    assert!(
        text.contains("[skipped: missing.rs does not exist"),
        "{text}"
    );
    // By pattern: the walk's rules apply, sorted.
    let out = call_json(
        &p,
        "read_many_files",
        &json!({"pattern": "*.rs", "path": "src"}),
    );
    out.success();
    let read: Vec<String> = out.metadata()["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(read, ["src/deep/a/b/c.rs", "src/lib.rs", "src/main.rs"]);
    call_json(&p, "read_many_files", &json!({})).tool_error("invalid_arguments");
    call_json(
        &p,
        "read_many_files",
        &json!({"paths": ["a"], "pattern": "*"}),
    )
    .tool_error("invalid_arguments");
}

#[test]
fn read_many_files_bounds_each_file() {
    let p = Project::new();
    p.config("[tool_output]\nlines = 5000\nbytes = 1000000\ndigests = false\n");
    let big: String = (1..=3000).map(|i| format!("line {i}\n")).collect();
    p.write("big.txt", &big);
    let out = call_json(&p, "read_many_files", &json!({"paths": ["big.txt"]}));
    out.success();
    let text = out.text();
    assert!(
        text.contains("line 1000\n[truncated: showing lines 1-1000"),
        "{text}"
    );
    assert!(text.contains("\"offset\": 1001"), "{text}");
    assert!(!text.contains("line 1001\n"));
}

#[test]
fn walked_files_respect_the_read_scope() {
    let p = fixture();
    p.config("[permissions]\ndeny = [\"read:src/lib.rs\"]\n[path_scope]\ndeny = [\"docs/**\"]\n");
    let set = grep_set(&p, json!({"pattern": "fn"}));
    assert!(
        !set.iter()
            .any(|(f, _)| f == "src/lib.rs" || f.starts_with("docs/")),
        "{set:?}"
    );
    assert!(set.iter().any(|(f, _)| f == "src/main.rs"));
    let out = call_json(&p, "glob", &json!({"pattern": "*"}));
    let files = out.metadata()["files"].to_string();
    assert!(
        !files.contains("src/lib.rs") && !files.contains("docs/"),
        "{files}"
    );
    assert_eq!(out.metadata()["excluded_by_scope"], 2);
    let out = call_json(&p, "read_many_files", &json!({"pattern": "*.rs"}));
    assert!(!out.text().contains("pub fn helper"), "{}", out.text());
    // Named explicitly, the gate decides the file itself.
    call_json(&p, "read_many_files", &json!({"paths": ["src/lib.rs"]}))
        .tool_error("permission_denied");
}

#[test]
fn write_file_asks_by_default_and_the_gate_decides() {
    let p = Project::new();
    let args = r#"{"path":"src/new.rs","content":"fn new() {}\n"}"#;
    p.tackle(["call", "write_file", args, "--json"])
        .run()
        .tool_error("approval_unavailable");
    assert!(!p.join("src/new.rs").exists());
    p.tackle(["--mode", "plan", "call", "write_file", args, "--json"])
        .run()
        .tool_error("permission_denied");
    assert!(!p.join("src/new.rs").exists());
    p.tackle([
        "--allow",
        "write:docs/**",
        "call",
        "write_file",
        args,
        "--json",
    ])
    .run()
    .tool_error("approval_unavailable");
    let out = p
        .tackle([
            "--allow",
            "write:src/**",
            "call",
            "write_file",
            args,
            "--json",
        ])
        .run();
    out.success();
    assert_eq!(out.metadata()["created"], true);
    assert_eq!(
        std::fs::read_to_string(p.join("src/new.rs")).unwrap(),
        "fn new() {}\n"
    );
    // Outside the root: refused by the fs layer whatever the rules say.
    p.tackle([
        "--allow",
        "write:**",
        "call",
        "write_file",
        r#"{"path":"../x.rs","content":""}"#,
        "--json",
    ])
    .run()
    .code(1);
    assert!(!p.outside("x.rs").exists());
}

#[test]
fn edit_file_through_the_binary() {
    let p = Project::new();
    p.write("src/a.rs", "fn a() {\r\n    one();\r\n}\r\n");
    let allow = ["--allow", "write:src/**"];
    let mut cmd = p.tackle(allow);
    cmd.args([
        "call",
        "edit_file",
        r#"{"path":"src/a.rs","old_string":"    one();\n}","new_string":"    two();\n}"}"#,
        "--json",
    ]);
    let out = cmd.run();
    out.success();
    assert_eq!(
        std::fs::read_to_string(p.join("src/a.rs")).unwrap(),
        "fn a() {\r\n    two();\r\n}\r\n"
    );
    assert_eq!(out.metadata()["line_endings"], "crlf");
    assert!(
        out.text().contains("-    one();\n-}\n+    two();\n+}\n"),
        "{}",
        out.text()
    );
    let mut cmd = p.tackle(allow);
    cmd.args([
        "call",
        "edit_file",
        r#"{"path":"src/a.rs","old_string":"two( );","new_string":"x"}"#,
        "--json",
    ]);
    let out = cmd.run();
    out.tool_error("no_match");
    assert_eq!(out.metadata()["nearest_line"], 2);
    p.tackle([
        "call",
        "edit_file",
        r#"{"path":"src/a.rs","old_string":"two","new_string":"three"}"#,
        "--json",
    ])
    .run()
    .tool_error("approval_unavailable");
    p.tackle([
        "--mode",
        "plan",
        "call",
        "edit_file",
        r#"{"path":"src/a.rs","old_string":"two","new_string":"three"}"#,
        "--json",
    ])
    .run()
    .tool_error("permission_denied");
}

#[test]
fn delete_file_through_the_binary() {
    let p = Project::new();
    p.write("src/old.rs", "x");
    let del = |path: &str| {
        let mut cmd = p.tackle(["--allow", "write:src/**"]);
        cmd.args([
            "call",
            "delete_file",
            &json!({"path": path}).to_string(),
            "--json",
        ]);
        cmd.run()
    };
    assert_eq!(del("src/old.rs").success().metadata()["existed"], true);
    assert_eq!(del("src/old.rs").success().metadata()["existed"], false);
    p.mkdir("src/dir");
    del("src/dir").tool_error("is_a_directory");
    p.tackle(["call", "delete_file", r#"{"path":"src/dir"}"#, "--json"])
        .run()
        .code(1);
    p.tackle([
        "--mode",
        "plan",
        "call",
        "delete_file",
        r#"{"path":"x"}"#,
        "--json",
    ])
    .run()
    .tool_error("permission_denied");
}

#[test]
fn large_search_results_are_digests_that_retrieve_raw_undoes() {
    let p = Project::new();
    // 800 paths of 12 bytes: over the 8,000-byte digest threshold for glob too.
    for i in 0..800 {
        p.write(format!("src/m{i:03}.rs"), "fn needle() {}\n");
    }
    let out = call_json(&p, "grep", &json!({"pattern": "needle"}));
    out.success();
    assert!(out.json()["digested"] == true, "{}", out.text());
    assert!(out.text().contains("retrieve_raw"), "{}", out.text());
    let out = call_json(&p, "glob", &json!({"pattern": "*.rs"}));
    assert!(out.json()["digested"] == true, "{}", out.text());
}
