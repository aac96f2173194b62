//! Bad tool names and arguments through `tackle call`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use harness::{Project, call_json};
use serde_json::json;

#[test]
fn unknown_tool_suggests_the_closest_name() {
    let p = Project::new();
    let out = call_json(&p, "read_fil", &json!({"path": "a"}));
    out.tool_error("unknown_tool");
    p.tackle(["call", "read_fil", r#"{"path":"a"}"#])
        .run()
        .code(1)
        .stdout_contains("unknown_tool")
        .stdout_contains("did you mean read_file");
}

#[test]
fn invalid_arguments_name_the_json_path() {
    let p = Project::new();
    p.write("a.txt", "a\n");
    let table = [
        ("read_file", json!({"path": "a.txt", "bogus": 1}), "$.bogus"),
        ("read_file", json!({"path": 3}), "$.path"),
        (
            "read_file",
            json!({"path": "a.txt", "offset": "3"}),
            "$.offset",
        ),
        (
            "read_file",
            json!({"path": "a.txt", "limit": -1}),
            "$.limit",
        ),
        ("stat", json!({"path": "a.txt", "follow": true}), "$.follow"),
        ("list_dir", json!({"path": ["."]}), "$.path"),
    ];
    for (tool, args, field) in table {
        let out = call_json(&p, tool, &args);
        out.tool_error("invalid_arguments");
        if out.metadata()["path"] != field || !out.text().contains(field) {
            out.fail(&format!(
                "{tool} {args}: expected the error to name {field}"
            ));
        }
    }
    // A missing required field is invalid too.
    call_json(&p, "read_file", &json!({})).tool_error("invalid_arguments");
    call_json(&p, "read_file", &json!([])).tool_error("invalid_arguments");
}

#[test]
fn malformed_json_is_a_usage_error() {
    let p = Project::new();
    for bad in ["{", "path=a.txt", "", "{'path':'a'}"] {
        p.tackle(["call", "read_file", bad])
            .run()
            .code(2)
            .stdout_is("")
            .stderr_contains("not valid JSON");
    }
}

#[test]
fn arguments_from_stdin() {
    let p = Project::new();
    p.write("a.txt", "from stdin\n");
    p.tackle(["call", "read_file", "-"])
        .stdin(r#"{"path":"a.txt"}"#)
        .run()
        .success()
        .stdout_is("from stdin\n");
    p.tackle(["call", "read_file", "-"])
        .stdin("{nope")
        .run()
        .code(2)
        .stderr_contains("not valid JSON");
}

#[test]
fn missing_arguments_is_a_usage_error() {
    let p = Project::new();
    p.tackle(["call", "read_file"]).run().code(2);
    p.tackle(["no-such-command"]).run().code(2);
}
