//! `tackle tools`: the catalog a model receives.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use harness::Project;

#[test]
fn tools_json_is_name_description_schema() {
    let p = Project::new();
    let out = p.tackle(["tools", "--json"]).run();
    out.success();
    let specs = out.json();
    let specs = specs
        .as_array()
        .unwrap_or_else(|| out.fail("catalog is not an array"));
    let names: Vec<&str> = specs.iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["read_file", "stat", "list_dir", "bash"]);
    for spec in specs {
        let obj = spec.as_object().unwrap();
        let mut keys: Vec<&str> = obj.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["description", "input_schema", "name"], "{spec}");
        assert!(!spec["description"].as_str().unwrap().is_empty(), "{spec}");
        let schema = &spec["input_schema"];
        assert_eq!(schema["type"], "object", "{spec}");
        assert_eq!(
            schema["additionalProperties"], false,
            "{}: schema must be strict",
            spec["name"]
        );
        assert!(
            schema["required"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r == "path" || r == "command"),
            "{spec}"
        );
    }
}

#[test]
fn tools_text_lists_every_tool() {
    let p = Project::new();
    let out = p.tackle(["tools"]).run();
    out.success();
    for name in ["read_file", "stat", "list_dir"] {
        let line = format!("{name}\n");
        out.stdout_contains(&line);
    }
    out.stdout_contains("input: {");
}

#[test]
fn tools_needs_no_project() {
    let p = Project::bare();
    p.tackle_in(".", ["tools", "--json"]).run().success();
}
