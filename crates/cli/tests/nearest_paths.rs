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
            json!({"path": "project_root/notse.txt"}),
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
            json!({"path": "project/src/mian.rs", "old_string": "main", "new_string": "start"}),
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
        &json!({"path": "missing/note.txt"}),
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

#[test]
fn a_path_with_directories_of_its_own_in_front_reads_the_file_it_ends_with() {
    let p = project();
    for asked in [
        "project_root/notes.txt",
        "home/me/repo/src/main.rs",
        "./x/./config/app.json",
    ] {
        let out = p
            .tackle([
                "call",
                "read_file",
                &json!({ "path": asked }).to_string(),
                "--json",
            ])
            .run();
        out.success();
        assert_eq!(out.metadata()["read_instead_of"], json!(asked), "{asked}");
        assert!(
            out.text()
                .contains("the one existing file that path ends with"),
            "{asked}"
        );
    }
    let out = p
        .tackle([
            "call",
            "read_file",
            r#"{"path":"project_root/notes.txt"}"#,
            "--json",
        ])
        .run();
    assert!(out.text().contains("The number is 7316."), "{}", out.text());

    let edit = json!({"path": "project/src/main.rs", "old_string": "main", "new_string": "start"});
    let out = p
        .tackle([
            "--allow",
            "write:src/**",
            "call",
            "edit_file",
            &edit.to_string(),
            "--json",
        ])
        .run();
    out.success();
    assert_eq!(
        out.metadata()["edited_instead_of"],
        json!("project/src/main.rs")
    );
    assert_eq!(
        std::fs::read_to_string(p.join("src/main.rs")).unwrap(),
        "fn start() {}\n"
    );
    assert!(!p.join("project").exists());
}

#[test]
fn reading_instead_never_reaches_a_file_the_call_could_not_read() {
    let p = project();
    // The one file the path ends with is denied: nothing is read, and the hint names only
    // what the call may read.
    let out = p
        .tackle([
            "--deny",
            "read:notes.txt",
            "call",
            "read_file",
            r#"{"path":"project_root/notes.txt"}"#,
            "--json",
        ])
        .run();
    assert!(!out.text().contains("7316"), "{}", out.text());
    assert!(out.metadata().get("read_instead_of").is_none());
    // Absolute paths and `..` are never read instead: they are refused or not found as asked.
    for asked in ["/elsewhere/notes.txt", "docs/../../notes.txt"] {
        let out = p
            .tackle([
                "call",
                "read_file",
                &json!({ "path": asked }).to_string(),
                "--json",
            ])
            .run();
        assert!(!out.text().contains("7316"), "{asked}: {}", out.text());
    }
}
