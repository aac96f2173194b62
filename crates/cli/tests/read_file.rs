//! `tackle call read_file` on files and directories: paging, limits, line cuts, odd content.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use harness::{Project, call_json};
use serde_json::json;

fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

#[test]
fn whole_small_file() {
    let p = Project::new();
    p.write("a.txt", "alpha\nbeta\n");
    p.tackle(["call", "read_file", r#"{"path":"a.txt"}"#])
        .run()
        .success()
        .stdout_is("alpha\nbeta\n");
    let out = call_json(&p, "read_file", &json!({"path": "a.txt"}));
    out.success();
    let v = out.json();
    assert_eq!(v["status"], "ok");
    assert_eq!(v["is_error"], false);
    let m = &v["metadata"];
    assert_eq!(m["path"], "a.txt");
    assert_eq!(m["first_line"], 1);
    assert_eq!(m["lines"], 2);
    assert_eq!(m["total_lines"], 2);
    assert!(m["next_offset"].is_null(), "{m}");
    assert!(
        v.get("retained_output").is_none(),
        "read_file opts out of retention: {v}"
    );
}

#[test]
fn offset_and_limit_page_with_next_offset() {
    let p = Project::new();
    p.write("ten.txt", numbered(10));
    let out = call_json(
        &p,
        "read_file",
        &json!({"path": "ten.txt", "offset": 3, "limit": 4}),
    );
    out.success();
    assert!(
        out.text().starts_with("line 3\nline 4\nline 5\nline 6\n"),
        "{}",
        out.text()
    );
    let m = out.metadata();
    assert_eq!(m["first_line"], 3);
    assert_eq!(m["lines"], 4);
    assert_eq!(m["next_offset"], 7);

    p.tackle([
        "call",
        "read_file",
        r#"{"path":"ten.txt","offset":3,"limit":4}"#,
    ])
    .run()
    .success()
    .stdout_contains("line 6\n")
    .stdout_lacks("line 7\n")
    .stdout_contains("continue with offset 7");

    // The last page says nothing about continuing.
    let out = call_json(
        &p,
        "read_file",
        &json!({"path": "ten.txt", "offset": 7, "limit": 4}),
    );
    out.success();
    assert_eq!(out.text(), "line 7\nline 8\nline 9\nline 10\n");
    assert!(out.metadata()["next_offset"].is_null());
}

#[test]
fn default_limit_is_2000_lines_and_caps_larger_limits() {
    let p = Project::new();
    p.write("big.txt", numbered(2500));
    for args in [
        json!({"path": "big.txt"}),
        json!({"path": "big.txt", "limit": 5000}),
    ] {
        let out = call_json(&p, "read_file", &args);
        out.success();
        let m = out.metadata();
        assert_eq!(m["lines"], 2000, "{args}");
        assert_eq!(m["next_offset"], 2001, "{args}");
        let text = out.text();
        assert!(
            text.contains("line 2000\n") && !text.contains("line 2001\n"),
            "{args}"
        );
    }
    p.tackle(["call", "read_file", r#"{"path":"big.txt"}"#])
        .run()
        .success()
        .stdout_contains("continue with offset 2001");
    let out = call_json(&p, "read_file", &json!({"path": "big.txt", "offset": 2001}));
    out.success();
    assert_eq!(out.metadata()["lines"], 500);
    assert!(out.metadata()["next_offset"].is_null());
    assert!(out.text().ends_with("line 2500\n"));
}

#[test]
fn over_long_line_is_cut_with_a_marker() {
    let p = Project::new();
    let long = "x".repeat(5000);
    p.write("min.js", format!("short\n{long}\nafter\n"));
    let out = call_json(&p, "read_file", &json!({"path": "min.js"}));
    out.success();
    let text = out.text();
    assert!(text.contains("[line truncated: 5000 bytes]"), "{text}");
    assert!(
        !text.contains(&long),
        "the full long line must not be returned"
    );
    assert!(
        text.starts_with("short\n") && text.contains("after\n"),
        "{text}"
    );
    assert_eq!(out.metadata()["truncated_lines"], json!([2]));
}

#[test]
fn crlf_is_kept() {
    let p = Project::new();
    p.write("dos.txt", "one\r\ntwo\r\n");
    p.tackle(["call", "read_file", r#"{"path":"dos.txt"}"#])
        .run()
        .success()
        .stdout_is("one\r\ntwo\r\n");
}

#[test]
fn empty_file() {
    let p = Project::new();
    p.write("empty.txt", "");
    let out = call_json(&p, "read_file", &json!({"path": "empty.txt"}));
    out.success();
    assert!(out.text().contains("is empty"), "{}", out.text());
    assert_eq!(out.metadata()["lines"], 0);
}

#[test]
fn binary_file_is_reported_not_dumped() {
    let p = Project::new();
    let mut bytes = b"\x7fELF\x02\x01\x01\0\0\0".to_vec();
    bytes.extend(std::iter::repeat_n(0u8, 100));
    p.write("prog.bin", &bytes);
    let out = call_json(&p, "read_file", &json!({"path": "prog.bin"}));
    out.success();
    assert!(out.text().contains("binary file"), "{}", out.text());
    assert!(!out.text().contains("ELF"), "{}", out.text());
    assert_eq!(out.metadata()["binary"], true);
    assert_eq!(out.metadata()["bytes"], bytes.len());
}

#[test]
fn directory_lists_sorted_entries() {
    let p = Project::new();
    p.write("d/b.txt", "");
    p.write("d/a.txt", "");
    p.mkdir("d/c");
    p.symlink("a.txt", "d/link");
    p.tackle(["call", "read_file", r#"{"path":"d"}"#])
        .run()
        .success()
        .stdout_is("a.txt\nb.txt\nc/\nlink@\n");
    let out = call_json(
        &p,
        "read_file",
        &json!({"path": "d", "offset": 2, "limit": 2}),
    );
    out.success();
    assert!(out.text().starts_with("b.txt\nc/\n"), "{}", out.text());
    assert_eq!(out.metadata()["directory"], true);
    assert_eq!(out.metadata()["next_offset"], 4);
}

#[test]
fn offset_past_end_is_a_tool_error() {
    let p = Project::new();
    p.write("ten.txt", numbered(10));
    let out = call_json(&p, "read_file", &json!({"path": "ten.txt", "offset": 11}));
    out.tool_error("offset_past_end");
    assert_eq!(out.metadata()["total_lines"], 10);
    p.mkdir("d");
    p.write("d/x", "");
    call_json(&p, "read_file", &json!({"path": "d", "offset": 5})).tool_error("offset_past_end");
    // Text mode prints the error and still exits 1.
    p.tackle(["call", "read_file", r#"{"path":"ten.txt","offset":99}"#])
        .run()
        .code(1)
        .stdout_contains("offset_past_end")
        .stdout_contains("10 lines");
}

#[test]
fn offset_zero_and_limit_zero_are_invalid_arguments() {
    let p = Project::new();
    p.write("a.txt", "a\n");
    for (args, field) in [
        (json!({"path": "a.txt", "offset": 0}), "$.offset"),
        (json!({"path": "a.txt", "limit": 0}), "$.limit"),
    ] {
        let out = call_json(&p, "read_file", &args);
        out.tool_error("invalid_arguments");
        assert_eq!(out.metadata()["path"], field, "{args}");
    }
}

#[test]
fn missing_file_is_not_found() {
    let p = Project::new();
    call_json(&p, "read_file", &json!({"path": "nope.txt"})).tool_error("not_found");
}
