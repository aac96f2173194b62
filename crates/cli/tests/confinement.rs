//! Paths that escape the project root, refused through the CLI for every filesystem tool. A
//! small table; the full corpus belongs with the permission gate.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use std::time::Duration;

use harness::{Project, call_json};
use serde_json::json;

const SECRET: &str = "TOP-SECRET-CONTENT";

/// A project with a secret next to it and the links that point there.
fn project_with_escapes() -> Project {
    let p = Project::new();
    p.write("src/a.txt", "inside\n");
    let secret = p.write_outside("outside/secret.txt", format!("{SECRET}\n"));
    p.write_outside(format!("outside/{SECRET}-entry"), "");
    p.write_outside("proj-evil/x", format!("{SECRET}\n"));
    p.symlink(&secret, "link_abs");
    p.symlink("../outside/secret.txt", "link_rel");
    p.symlink("../outside", "link_dir");
    p.symlink(p.outside("nowhere"), "dangling");
    p
}

#[test]
fn escapes_are_refused_by_every_tool() {
    let p = project_with_escapes();
    let root = p.path().display().to_string();
    let table: Vec<(String, &str)> = vec![
        ("../outside/secret.txt".into(), "path_outside_root"),
        ("src/../../outside/secret.txt".into(), "path_outside_root"),
        ("..".into(), "path_outside_root"),
        (
            p.outside("outside/secret.txt").display().to_string(),
            "path_outside_root",
        ),
        (format!("{root}-evil/x"), "path_outside_root"),
        (format!("{root}/../outside/secret.txt"), "path_outside_root"),
        ("/etc/passwd".into(), "path_outside_root"),
        ("/proc/self/root/etc/passwd".into(), "path_outside_root"),
        ("link_abs".into(), "path_outside_root"),
        ("link_rel".into(), "path_outside_root"),
        ("link_dir".into(), "path_outside_root"),
        ("link_dir/secret.txt".into(), "path_outside_root"),
        ("dangling".into(), "path_outside_root"),
        ("src/a\0.txt".into(), "invalid_path"),
        ("x".repeat(256), "invalid_path"),
        (format!("src/{}", "y".repeat(256)), "invalid_path"),
        (String::new(), "invalid_path"),
    ];
    for tool in ["read_file", "stat", "list_dir"] {
        for (path, code) in &table {
            let out = call_json(&p, tool, &json!({"path": path}));
            if out.code != Some(1) || out.result_code().as_deref() != Some(*code) {
                out.fail(&format!("{tool} {path:?} must be refused with {code}"));
            }
            out.stdout_lacks(SECRET).stdout_lacks("root:x:0:0");
            p.tackle(["call", tool, &json!({"path": path}).to_string()])
                .run()
                .code(1)
                .stdout_contains(code)
                .stdout_lacks(SECRET)
                .stdout_lacks("root:x:0:0");
        }
    }
}

#[test]
fn in_tree_symlinks_and_absolute_paths_work() {
    let p = project_with_escapes();
    p.symlink("src", "inlink");
    p.symlink("src/a.txt", "alink");
    p.tackle(["call", "read_file", r#"{"path":"inlink/a.txt"}"#])
        .run()
        .success()
        .stdout_is("inside\n");
    p.tackle(["call", "read_file", r#"{"path":"alink"}"#])
        .run()
        .success()
        .stdout_is("inside\n");
    p.tackle(["call", "list_dir", r#"{"path":"inlink"}"#])
        .run()
        .success()
        .stdout_is("a.txt\n");
    let out = call_json(&p, "stat", &json!({"path": "inlink/a.txt"}));
    out.success();
    assert_eq!(out.metadata()["path"], "inlink/a.txt");
    assert_eq!(out.metadata()["size"], 7);
    let abs = p.join("src/a.txt").display().to_string();
    let out = call_json(&p, "read_file", &json!({"path": abs}));
    out.success();
    assert_eq!(out.text(), "inside\n");
    assert_eq!(out.metadata()["path"], "src/a.txt", "shown root-relative");
}

#[test]
fn fifo_is_refused_without_blocking() {
    let p = Project::new();
    let fifo = p.join("pipe");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(status.success(), "mkfifo failed");
    let out = p
        .tackle(["call", "read_file", r#"{"path":"pipe"}"#, "--json"])
        .timeout(Duration::from_secs(20))
        .run();
    out.tool_error("not_a_regular_file");
    out.stdout_contains("FIFO");
    p.tackle(["call", "list_dir", r#"{"path":"pipe"}"#, "--json"])
        .timeout(Duration::from_secs(20))
        .run()
        .tool_error("not_a_directory");
    let out = p
        .tackle(["call", "stat", r#"{"path":"pipe"}"#, "--json"])
        .timeout(Duration::from_secs(20))
        .run();
    out.success();
    assert_eq!(out.metadata()["type"], "other");
}
