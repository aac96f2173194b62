//! Rules apply to the file, not to the name (DESIGN.md §4a), through the binary: the
//! reproductions of issue 13 §3, one case a row. Each names a fenced file through an in-root
//! symlink and must be refused (or, for a walk, leave the file out) with the content unseen.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use harness::Project;
use serde_json::json;

const KEY: &str = "PRIVATE-KEY-CONTENT\n";
const ENV: &str = "API_TOKEN=env-secret-value\n";

fn project() -> Project {
    let p = Project::new();
    p.write("secrets/key.pem", KEY);
    p.write(".env", ENV);
    p.write("src/a.rs", "fn a() {}\n");
    p.mkdir(".git/hooks");
    p.symlink("secrets/key.pem", "alias.txt");
    p.symlink("secrets", "sdir");
    p.symlink(p.join("secrets/key.pem"), "absalias.txt");
    p.symlink(".env", "notenv.txt");
    p.symlink(".git", "gitdir");
    p
}

#[test]
fn issue_13_reproductions_are_refused() {
    // (flag, pattern, tool, arguments, expected code or None for a walk that must omit it)
    let rows: Vec<(&str, &str, &str, serde_json::Value, Option<&str>)> = vec![
        (
            "--deny",
            "read:secrets/**",
            "read_file",
            json!({"path": "alias.txt"}),
            Some("permission_denied"),
        ),
        (
            "--deny",
            "read:secrets/**",
            "read_file",
            json!({"path": "sdir/key.pem"}),
            Some("permission_denied"),
        ),
        (
            "--deny",
            "read:secrets/**",
            "read_file",
            json!({"path": "absalias.txt"}),
            Some("permission_denied"),
        ),
        (
            "--deny",
            "read:secrets/**",
            "grep",
            json!({"pattern": "PRIVATE", "path": "sdir"}),
            None,
        ),
        (
            "--deny",
            "read:secrets/**",
            "read_many_files",
            json!({"pattern": "*", "path": "sdir"}),
            None,
        ),
        (
            "--deny",
            "read:.env",
            "read_file",
            json!({"path": "notenv.txt"}),
            Some("permission_denied"),
        ),
        (
            "--deny",
            "read:.env",
            "read_many_files",
            json!({"paths": ["notenv.txt"]}),
            Some("permission_denied"),
        ),
        (
            "--deny",
            "read:.env",
            "json_query",
            json!({"path": "notenv.txt", "expression": "."}),
            Some("permission_denied"),
        ),
        (
            "--deny",
            "write:.git/**",
            "write_file",
            json!({"path": "gitdir/hooks/pre-commit", "content": "#!/bin/sh\nid\n"}),
            Some("permission_denied"),
        ),
    ];
    for (flag, pattern, tool, args, want) in rows {
        let p = project();
        let row = format!("{flag} {pattern} {tool} {args}");
        let out = p
            .tackle([
                "--headless",
                "--mode",
                "accept-edits",
                flag,
                pattern,
                "call",
                tool,
                &args.to_string(),
                "--json",
            ])
            .run();
        match want {
            Some(code) => {
                out.tool_error(code);
            }
            None => {
                out.success();
                assert_eq!(out.metadata()["excluded_by_scope"], 1, "{row}");
            }
        }
        out.stdout_lacks("PRIVATE-KEY-CONTENT")
            .stdout_lacks("env-secret-value");
        assert!(!p.join(".git/hooks/pre-commit").exists(), "{row}");
    }
}

#[test]
fn path_scope_deny_applies_to_the_real_path() {
    let p = project();
    p.config("[path_scope]\ndeny = [\"secrets/**\", \".env\"]\n");
    for path in ["alias.txt", "sdir/key.pem", "absalias.txt", "notenv.txt"] {
        let out = p
            .tackle([
                "--headless",
                "call",
                "read_file",
                &json!({ "path": path }).to_string(),
                "--json",
            ])
            .run();
        out.tool_error("permission_denied")
            .stdout_lacks("PRIVATE-KEY-CONTENT")
            .stdout_lacks("env-secret-value");
        assert!(out.text().contains("path scope"), "{path}: {}", out.text());
    }
}
