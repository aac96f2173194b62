//! Seed 004's reading tools, sentence by sentence, as tables: read_file, list_files, search,
//! load_skill, todo_write.

#![allow(clippy::unwrap_used)] // tests: a failure should panic

mod common;

use std::time::{Duration, Instant};

use common::*;
use serde_json::{Value, json};
use tackle_sealed::tools::SealedSkill;

fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_file_pages_caps_and_never_opens_a_quarantined_file() {
    let long = numbered(2_500);
    let lab = Lab::new(
        Config::default(),
        &[
            ("src/long.txt", &long),
            ("src/short.txt", "a\nb\nc\n"),
            ("src/blob.bin", "ab\0cd"),
            ("vendor/blob.bin", "ab\0cd"),
            ("vendor/latin1.txt", "caf\u{e9}"),
        ],
    );
    std::fs::write(lab.path("vendor/latin1.txt"), b"caf\xe9\n").unwrap();
    // (arguments, error code or "", text it contains, text it lacks)
    let table: Vec<(Value, &str, &str, &str)> = vec![
        (
            json!({"path": "src/short.txt"}),
            "",
            "     2\tb",
            "continue",
        ),
        (
            json!({"path": "src/short.txt", "offset": 2, "limit": 1}),
            "",
            "[lines 2–2 of 3; continue with offset 3]",
            "\ta\n",
        ),
        (
            json!({"path": "src/long.txt"}),
            "",
            "continue with offset 2001",
            "line 2001\n",
        ),
        (
            json!({"path": "src/long.txt", "limit": 100_000}),
            "",
            "[lines 1–2000 of 2500; continue with offset 2001]",
            "line 2001\n",
        ),
        (
            json!({"path": "src/long.txt", "offset": 2401}),
            "",
            "line 2500",
            "continue",
        ),
        (
            json!({"path": "src/short.txt", "offset": 0}),
            "invalid_arguments",
            "1-based",
            "",
        ),
        (
            json!({"path": "src/short.txt", "limit": 0}),
            "invalid_arguments",
            "at least 1",
            "",
        ),
        (json!({"path": "src/blob.bin"}), "binary_file", "binary", ""),
        (
            json!({"path": "src/missing.txt"}),
            "not_found",
            "does not exist",
            "",
        ),
        (
            json!({"path": "src/short.txt", "path_ref": "ref:0"}),
            "invalid_arguments",
            "not both",
            "",
        ),
        (
            json!({"path_ref": "ref:99"}),
            "unknown_reference",
            "ref:99",
            "",
        ),
        (
            json!({"path_ref": "src/short.txt"}),
            "invalid_arguments",
            "not a reference",
            "",
        ),
        (
            json!({"path": "../outside.txt"}),
            "path_outside_root",
            "outside",
            "",
        ),
        // Not opened: a binary or non-UTF-8 file nobody vouched for is a reference, not an error.
        (json!({"path": "vendor/blob.bin"}), "", "ref:0", "binary"),
        (json!({"path": "vendor/latin1.txt"}), "", "ref:1", "UTF-8"),
        // A file keeps its reference.
        (json!({"path": "vendor/blob.bin"}), "", "ref:0", "ab"),
        (json!({"path_ref": "ref:1"}), "", "ref:1", "caf"),
    ];
    for (args, code, contains, lacks) in table {
        let result = lab.call("read_file", args.clone()).await;
        let text = result.text();
        assert_eq!(
            result.code.as_ref().map(|c| c.as_str()).unwrap_or(""),
            code,
            "{args}: {text}"
        );
        assert!(
            text.contains(contains),
            "{args}: {contains:?} not in {text}"
        );
        assert!(
            lacks.is_empty() || !text.contains(lacks),
            "{args}: {lacks:?} in {text}"
        );
        assert!(
            !text.contains("vendor/"),
            "{args}: a quarantined name in {text}"
        );
    }
}

/// Exactly these files, or an error containing this.
type Listed = Result<&'static [&'static str], &'static str>;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_files_globs_and_hands_out_one_reference_per_unvouched_entry() {
    let lab = Lab::new(
        Config::default(),
        &[
            ("src/main.rs", ""),
            ("src/a/b/deep.rs", ""),
            ("src/a/notes.md", ""),
            ("src/x1.txt", ""),
            ("src/x22.txt", ""),
            ("src/{a,b}.txt", ""),
            ("vendor/secret-name-one.txt", ""),
            ("vendor/sub/secret-name-two.txt", ""),
        ],
    );
    // (directory, pattern, exactly these files, or an error containing this)
    let table: Vec<(&str, Option<&str>, Listed)> = vec![
        ("src", Some("*.rs"), Ok(&["src/main.rs", "src/a/b/deep.rs"])),
        (
            "src",
            Some("a/**"),
            Ok(&["src/a/notes.md", "src/a/b/deep.rs"]),
        ),
        ("src", Some("**/*.md"), Ok(&["src/a/notes.md"])),
        ("src", Some("x?.txt"), Ok(&["src/x1.txt"])),
        ("src", Some("x*.txt"), Ok(&["src/x1.txt", "src/x22.txt"])),
        ("src", Some("*.nothing"), Ok(&[])),
        (
            "src",
            Some("{a,b}.txt"),
            Err("brace groups are not supported"),
        ),
        ("src", Some("/src/*"), Err("leading")),
        ("nowhere", None, Err("does not exist")),
    ];
    for (directory, pattern, want) in table {
        let mut args = json!({"directory": directory});
        if let Some(p) = pattern {
            args["pattern"] = json!(p);
        }
        let result = lab.call("list_files", args.clone()).await;
        let text = result.text();
        match want {
            Ok(files) => {
                assert!(!result.is_error, "{args}: {text}");
                let mut got: Vec<&str> = text.lines().filter(|l| !l.starts_with('[')).collect();
                got.retain(|l| *l != "(no files)");
                got.sort();
                let mut files = files.to_vec();
                files.sort();
                assert_eq!(got, files, "{args}");
            }
            Err(message) => {
                assert!(result.is_error && text.contains(message), "{args}: {text}")
            }
        }
    }
    // A pattern that makes a backtracking matcher exponential returns at once.
    let hard = format!("{}b", "*a".repeat(100));
    let started = Instant::now();
    let result = lab
        .call("list_files", json!({"directory": "src", "pattern": hard}))
        .await;
    assert!(!result.is_error, "{}", result.text());
    assert!(started.elapsed() < Duration::from_secs(5));

    // A directory nobody vouched for: one reference per entry, no name, no count of bytes.
    let listing = lab.call("list_files", json!({"directory": "vendor"})).await;
    let text = listing.text();
    assert_eq!(refs(&text), ["ref:0", "ref:1"], "{text}");
    assert!(!text.contains("secret-name"), "{text}");
    assert!(text.contains("2 of these are in directories nobody vouched for"));
    let whole = lab.call("list_files", json!({"directory": "."})).await;
    assert!(!whole.text().contains("secret-name"));
    assert!(whole.text().contains("src/main.rs"));
    let again = refs(&whole.text());
    assert!(
        again.contains(&"ref:0".to_owned()) && again.contains(&"ref:1".to_owned()),
        "the same entries keep their references: {}",
        whole.text()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_truncated_listing_says_so() {
    let lab = Lab::new(Config::default(), &[]);
    for i in 0..1_005 {
        lab.write(&format!("src/f{i:04}.txt"), "");
    }
    let result = lab.call("list_files", json!({"directory": "src"})).await;
    assert!(
        result.text().contains("[truncated"),
        "{}",
        &result.text()[..200]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_is_literal_and_trusted_only_when_every_file_is() {
    let many: String = (0..600).map(|i| format!("hit {i}\n")).collect();
    let lab = Lab::new(
        Config::default(),
        &[
            ("src/a.rs", "let a.b = 1;\nlet axb = 2;\nfn main() {}\n"),
            ("src/b.md", "a.b in prose\n"),
            ("docs/many.txt", &many),
            ("vendor/lib.rs", "vendor secret text\n"),
        ],
    );
    // (arguments, reference?, contains, lacks)
    let table: Vec<(Value, bool, &str, &str)> = vec![
        (
            json!({"pattern": "a.b", "directory": "src"}),
            false,
            "src/a.rs:1:let a.b = 1;",
            "axb",
        ),
        (
            json!({"pattern": "a.b", "directory": "src", "include": "*.md"}),
            false,
            "src/b.md:1:",
            "src/a.rs",
        ),
        (
            json!({"pattern": "fn .*main", "directory": "src"}),
            false,
            "looks like a regular expression",
            "src/a.rs:",
        ),
        (
            json!({"pattern": "absent text", "directory": "src"}),
            false,
            "no line contains",
            "regular",
        ),
        (
            json!({"pattern": "hit", "directory": "docs"}),
            false,
            "[incomplete",
            "",
        ),
        // Touching a file nobody vouched for: one reference, matched or not.
        (json!({"pattern": "secret"}), true, "quarantined", "vendor"),
        (
            json!({"pattern": "no such text anywhere"}),
            true,
            "quarantined",
            "no line contains",
        ),
        (
            json!({"pattern": "x", "directory": "vendor"}),
            true,
            "quarantined",
            "vendor",
        ),
        (
            json!({"pattern": "\\d+", "directory": "vendor"}),
            true,
            "looks like a regular expression",
            "vendor",
        ),
        (
            json!({"pattern": "", "directory": "src"}),
            false,
            "pattern is empty",
            "",
        ),
        (
            json!({"pattern": "a", "include": "{a,b}"}),
            false,
            "brace",
            "",
        ),
    ];
    for (args, quarantined, contains, lacks) in table {
        let result = lab.call("search", args.clone()).await;
        let text = result.text();
        assert_eq!(!refs(&text).is_empty(), quarantined, "{args}: {text}");
        assert!(
            text.contains(contains),
            "{args}: {contains:?} not in {text}"
        );
        assert!(
            lacks.is_empty() || !text.contains(lacks),
            "{args}: {lacks:?} in {text}"
        );
        assert!(!text.contains("vendor secret"), "{args}: {text}");
    }
    // A truncated quarantined search says it is incomplete too.
    lab.write("vendor/many.txt", &many);
    let result = lab.call("search", json!({"pattern": "hit"})).await;
    assert!(result.text().contains("incomplete"), "{}", result.text());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn load_skill_takes_a_listed_name_exactly_and_never_a_path() {
    let lab = Lab::new(
        Config {
            skills: vec![SealedSkill {
                name: "commit-style".to_owned(),
                description: "how commits are written".to_owned(),
                body: "Write plain messages.".to_owned(),
            }],
            ..Config::default()
        },
        &[(".agents/skills/evil/SKILL.md", "evil")],
    );
    // (name, code or "", contains)
    let table = [
        ("commit-style", "", "Write plain messages."),
        ("commit-styles", "no_such_skill", "close name is not taken"),
        ("Commit-Style", "no_such_skill", "if you meant commit-style"),
        ("../commit-style", "invalid_arguments", "never a path"),
        (
            "../.agents/skills/evil/SKILL.md",
            "invalid_arguments",
            "matches nothing",
        ),
        (
            "evil",
            "no_such_skill",
            "the listed skills are commit-style",
        ),
    ];
    for (name, code, contains) in table {
        let result = lab.call("load_skill", json!({"name": name})).await;
        let text = result.text();
        assert_eq!(
            result.code.as_ref().map(|c| c.as_str()).unwrap_or(""),
            code,
            "{name}: {text}"
        );
        assert!(text.contains(contains), "{name}: {text}");
        assert!(!text.contains("evil\n") || name == "evil", "{name}: {text}");
    }
    assert!(lab.person.asked().is_empty(), "load_skill never asks");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn todo_write_replaces_the_whole_list_and_reads_unknown_status_as_outstanding() {
    let lab = Lab::new(Config::default(), &[]);
    let first = lab
        .call(
            "todo_write",
            json!({"todos": [
                {"content": "read", "status": "completed"},
                {"content": "fix", "status": "in_progress"},
                {"content": "test", "status": "blocked"},
            ]}),
        )
        .await;
    assert_eq!(first.text(), "[x] read\n[~] fix\n[ ] test\n");
    let second = lab
        .call(
            "todo_write",
            json!({"todos": [{"content": "ship", "status": "??"}]}),
        )
        .await;
    assert_eq!(
        second.text(),
        "[ ] ship\n",
        "the previous list is replaced whole"
    );
    let empty = lab.call("todo_write", json!({"todos": []})).await;
    assert_eq!(empty.text(), "the list is empty\n");
    assert!(lab.person.asked().is_empty());
}
