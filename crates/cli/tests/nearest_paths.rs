//! A path that does not exist is answered with the nearest existing paths, through each file
//! tool that names one, and never with a path the call could not read (a denied file, a
//! protected one, one outside the path scope).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use harness::Project;
use serde_json::{Value, json};

fn project() -> Project {
    let p = Project::new();
    p.write("notes.txt", "The number is 7316.\n");
    p.write("docs/notes.txt", "older notes\n");
    p.write("src/main.rs", "fn main() {}\n");
    p.write("config/app.json", "{\"port\": 8080}\n");
    p.write("secrets/notes.txt", "do not show\n");
    p
}

fn error_text(p: &Project, extra: &[&str], tool: &str, args: &Value) -> String {
    let mut command: Vec<String> = extra.iter().map(|s| (*s).to_owned()).collect();
    command.extend([
        "call".into(),
        tool.into(),
        args.to_string(),
        "--json".into(),
    ]);
    let out = p.tackle(command).run();
    out.tool_error("not_found");
    out.text()
}

#[test]
fn each_file_tool_names_the_nearest_paths() {
    let p = project();
    let cases: &[(&str, Value, &str)] = &[
        (
            "read_file",
            json!({"path": "project_root/notes.txt"}),
            "the nearest existing paths: notes.txt, docs/notes.txt",
        ),
        (
            "view_file_outline",
            json!({"path": "src/mian.rs"}),
            "the nearest existing paths: src/main.rs",
        ),
        (
            "json_query",
            json!({"path": "app.json", "expression": ".port"}),
            "the nearest existing paths: config/app.json",
        ),
        (
            "list_dir",
            json!({"path": "repo/docs"}),
            "the nearest existing paths: docs",
        ),
        (
            "edit_file",
            json!({"path": "project/src/main.rs", "old_string": "main", "new_string": "start"}),
            "the nearest existing paths: src/main.rs",
        ),
    ];
    for (tool, args, want) in cases {
        let text = error_text(&p, &[], tool, args);
        assert!(text.contains(want), "{tool}: {text}");
    }
    let out = p
        .tackle(["call", "stat", r#"{"path":"x/main.rs"}"#, "--json"])
        .run();
    out.success();
    assert_eq!(out.metadata()["nearest"], json!(["src/main.rs"]));
}

#[test]
fn a_hint_never_names_a_file_the_call_could_not_read() {
    let p = project();
    let text = error_text(
        &p,
        &["--deny", "read:secrets/**", "--deny", "read:docs/notes.txt"],
        "read_file",
        &json!({"path": "missing/notes.txt"}),
    );
    assert!(
        text.trim_end()
            .ends_with("the nearest existing paths: notes.txt"),
        "{text}"
    );
    assert!(
        !text.contains("secrets") && !text.contains("docs/"),
        "{text}"
    );
}
