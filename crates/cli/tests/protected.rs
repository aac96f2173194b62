//! Protected state no mode lifts (DESIGN.md §4a): tools never write `.agents/store/`, and a
//! write to `.agents/` configuration or to git's directory asks every time — in accept-edits
//! and yolo too, over `--allow` — which headless means refused. One case a row: mode × call,
//! each also through a symlink (`gitdir → .git`, `agentsdir → .agents`), since the gate sees
//! the real path as well as the name.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use harness::Project;
use serde_json::json;

const CONFIG: &str = "[permissions]\n";
const GIT_CONFIG: &str = "[core]\n\tbare = false\n";
const EVENTS: &str = "{\"seq\":1}\n";

fn project() -> Project {
    let p = Project::new();
    p.config(CONFIG);
    p.write(".git/config", GIT_CONFIG);
    p.mkdir(".git/hooks");
    p.write(".agents/store/sessions/old/events.jsonl", EVENTS);
    p.symlink(".git", "gitdir");
    p.symlink(".agents", "agentsdir");
    p
}

/// Every protected file unchanged, and no hook created.
fn untouched(p: &Project, row: &str) {
    let read = |rel: &str| std::fs::read_to_string(p.join(rel)).unwrap();
    assert_eq!(read(".agents/config.toml"), CONFIG, "{row}");
    assert_eq!(read(".git/config"), GIT_CONFIG, "{row}");
    assert_eq!(
        read(".agents/store/sessions/old/events.jsonl"),
        EVENTS,
        "{row}"
    );
    assert!(!p.join(".git/hooks/pre-commit").exists(), "{row}");
}

#[test]
fn protected_paths_hold_in_every_mode() {
    let asks = "approval_unavailable";
    let denied = "permission_denied";
    // (tool, arguments, expected code)
    let calls: Vec<(&str, serde_json::Value, &str)> = vec![
        (
            "write_file",
            json!({"path": ".agents/config.toml", "content": "mode = \"yolo\"\n"}),
            asks,
        ),
        (
            "write_file",
            json!({"path": "agentsdir/config.toml", "content": "mode = \"yolo\"\n"}),
            asks,
        ),
        (
            "write_file",
            json!({"path": ".agents/mcp.json", "content": "{}"}),
            asks,
        ),
        (
            "edit_file",
            json!({"path": ".git/config", "old_string": "bare = false", "new_string": "fsmonitor = touch pwned"}),
            asks,
        ),
        (
            "edit_file",
            json!({"path": "gitdir/config", "old_string": "bare = false", "new_string": "fsmonitor = touch pwned"}),
            asks,
        ),
        (
            "write_file",
            json!({"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\ntouch pwned\n"}),
            asks,
        ),
        (
            "write_file",
            json!({"path": "gitdir/hooks/pre-commit", "content": "#!/bin/sh\ntouch pwned\n"}),
            asks,
        ),
        ("delete_file", json!({"path": ".agents/config.toml"}), asks),
        (
            "delete_file",
            json!({"path": ".agents/store/sessions/old/events.jsonl"}),
            denied,
        ),
        (
            "delete_file",
            json!({"path": "agentsdir/store/sessions/old/events.jsonl"}),
            denied,
        ),
        (
            "edit_file",
            json!({"path": ".agents/store/sessions/old/events.jsonl", "old_string": "1", "new_string": "2"}),
            denied,
        ),
        (
            "write_file",
            json!({"path": ".agents/store/artifacts/forged", "content": "x"}),
            denied,
        ),
        // A bash redirect yields a write: key like any file tool.
        (
            "bash",
            json!({"command": "echo '[core] fsmonitor = touch pwned' >> .git/config"}),
            asks,
        ),
        (
            "bash",
            json!({"command": "echo x > .agents/store/sessions/old/events.jsonl"}),
            denied,
        ),
    ];
    let mut rows = 0;
    for mode in ["ask", "accept-edits", "yolo"] {
        for (tool, args, want) in &calls {
            let p = project();
            let row = format!("--mode {mode} {tool} {args}");
            let out = p
                .tackle([
                    "--headless",
                    "--mode",
                    mode,
                    "--allow",
                    "write:**",
                    "--allow",
                    "tool.bash.cmd:*",
                    "call",
                    tool,
                    &args.to_string(),
                    "--json",
                ])
                .run();
            out.tool_error(want);
            if *want == asks && mode != "ask" {
                assert!(
                    out.text().contains("needs approval every time"),
                    "{row}: {}",
                    out.text()
                );
            }
            untouched(&p, &row);
            assert!(!p.join("pwned").exists(), "{row}");
            rows += 1;
        }
    }
    assert_eq!(rows, 3 * calls.len());
}

#[test]
fn an_ordinary_write_still_follows_the_mode() {
    let p = project();
    p.tackle([
        "--headless",
        "--mode",
        "accept-edits",
        "call",
        "write_file",
        r#"{"path":"src/a.rs","content":"fn a() {}\n"}"#,
    ])
    .run()
    .success();
    assert_eq!(
        std::fs::read_to_string(p.join("src/a.rs")).unwrap(),
        "fn a() {}\n"
    );
}
