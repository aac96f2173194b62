//! `stat` and `list_dir` through `tackle call`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use harness::{Project, call_json};
use serde_json::json;

/// `YYYY-MM-DDTHH:MM:SS` followed by `Z` or an offset, optionally with fractional seconds.
fn is_rfc3339(s: &str) -> bool {
    let b = s.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| r.clone().all(|i| b.get(i).is_some_and(u8::is_ascii_digit));
    b.len() >= 20
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && b[10] == b'T'
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19)
        && (s.ends_with('Z') || s[19..].contains(['+', '-']))
}

#[test]
fn stat_existing_file() {
    use std::os::unix::fs::PermissionsExt;
    let p = Project::new();
    let path = p.write("src/lib.rs", "fn main() {}\n");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
    let out = call_json(&p, "stat", &json!({"path": "src/lib.rs"}));
    out.success();
    let m = out.metadata();
    assert_eq!(m["exists"], true, "{m}");
    assert_eq!(m["path"], "src/lib.rs");
    assert_eq!(m["size"], 13);
    assert_eq!(m["is_dir"], false);
    assert_eq!(m["type"], "file");
    assert_eq!(m["mode"], "0640");
    let mtime = m["mtime"].as_str().unwrap();
    assert!(is_rfc3339(mtime), "mtime {mtime:?} is not RFC 3339");
    // The text is the same object, for the model.
    let shown: serde_json::Value = serde_json::from_str(&out.text()).unwrap();
    assert_eq!(shown, m);
}

#[test]
fn stat_directory_and_root() {
    let p = Project::new();
    p.mkdir("src");
    for (path, shown) in [("src", "src"), (".", ".")] {
        let out = call_json(&p, "stat", &json!({"path": path}));
        out.success();
        assert_eq!(out.metadata()["is_dir"], true);
        assert_eq!(out.metadata()["type"], "dir");
        assert_eq!(out.metadata()["path"], shown);
    }
}

#[test]
fn stat_missing_path_is_not_an_error() {
    let p = Project::new();
    let out = call_json(&p, "stat", &json!({"path": "not/yet/written.txt"}));
    out.success();
    assert_eq!(out.metadata()["exists"], false);
    p.tackle(["call", "stat", r#"{"path":"nope"}"#])
        .run()
        .success()
        .stdout_contains(r#""exists": false"#);
}

#[test]
fn stat_does_not_follow_an_in_tree_symlink() {
    let p = Project::new();
    p.write("target.txt", "x");
    p.symlink("target.txt", "link");
    let out = call_json(&p, "stat", &json!({"path": "link"}));
    out.success();
    assert_eq!(out.metadata()["type"], "symlink");
}

#[test]
fn list_dir_sorted_with_markers() {
    let p = Project::new();
    p.write("d/zeta.txt", "");
    p.write("d/Alpha.txt", "");
    p.write("d/beta.txt", "");
    p.mkdir("d/sub");
    p.symlink("beta.txt", "d/link");
    p.symlink("sub", "d/dirlink");
    let want = "Alpha.txt\nbeta.txt\ndirlink@\nlink@\nsub/\nzeta.txt\n";
    p.tackle(["call", "list_dir", r#"{"path":"d"}"#])
        .run()
        .success()
        .stdout_is(want);
    let out = call_json(&p, "list_dir", &json!({"path": "d"}));
    out.success();
    assert_eq!(
        out.metadata()["entries"],
        json!([
            "Alpha.txt",
            "beta.txt",
            "dirlink@",
            "link@",
            "sub/",
            "zeta.txt"
        ])
    );
}

#[test]
fn list_dir_root_and_empty() {
    let p = Project::new();
    p.mkdir("empty");
    p.tackle(["call", "list_dir", r#"{"path":"."}"#])
        .run()
        .success()
        .stdout_is(".agents/\nempty/\n");
    p.tackle(["call", "list_dir", r#"{"path":"empty"}"#])
        .run()
        .success()
        .stdout_contains("is empty");
}

#[test]
fn list_dir_errors() {
    let p = Project::new();
    p.write("file.txt", "x");
    call_json(&p, "list_dir", &json!({"path": "file.txt"})).tool_error("not_a_directory");
    call_json(&p, "list_dir", &json!({"path": "missing"})).tool_error("not_found");
}
