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
    for want in [
        "read_file",
        "read_many_files",
        "write_file",
        "edit_file",
        "delete_file",
        "stat",
        "list_dir",
        "glob",
        "grep",
        "bash",
        "view_file_outline",
        "json_query",
        "todo",
        "retrieve_raw",
    ] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }
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
        // Every property a schema declares is documented for the model.
        for (name, prop) in schema["properties"].as_object().unwrap() {
            assert!(
                prop["description"].as_str().is_some_and(|d| !d.is_empty())
                    || prop.get("$ref").is_some()
                    || prop.get("allOf").is_some(),
                "{}: property `{name}` has no description",
                spec["name"]
            );
        }
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

/// Every schema the catalog publishes (with the configured tools, fetch_url and alert, offered
/// too) uses only the keywords every major client reads: no `format: uint64`, no `$ref`, no
/// type arrays. A tool whose schema the rewrite cannot make portable fails here.
#[test]
fn every_published_schema_is_portable() {
    let p = Project::new();
    p.config(
        "[url_scope]\nallow = [\"https://docs.rs/*\"]\n[permissions]\nallow = [\"fetch:https://docs.rs/*\"]\n\
         [alert.targets.oncall]\nurl_env = \"TACKLE_TEST_ONCALL_URL\"\n",
    );
    p.trust();
    let out = p
        .tackle(["tools", "--json"])
        .env("TACKLE_TEST_ONCALL_URL", "http://127.0.0.1:9/hook")
        .run();
    out.success();
    let specs = out.json();
    let names: Vec<&str> = specs
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"fetch_url") && names.contains(&"alert"),
        "{names:?}"
    );
    for spec in specs.as_array().unwrap() {
        let schema = &spec["input_schema"];
        assert_eq!(
            tackle_tool::first_unportable(schema),
            None,
            "{}: {schema}",
            spec["name"]
        );
    }
}

/// `bash_stdin` is offered exactly where an interactive bash call can exist: beside bash.
#[test]
fn bash_stdin_is_offered_only_beside_bash() {
    let p = Project::new();
    let names = |args: &[&str]| -> Vec<String> {
        let mut cmd = p.tackle(args.to_vec());
        cmd.args(["tools", "--json"]);
        cmd.run()
            .json()
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .filter(|n| n == "bash" || n == "bash_stdin")
            .collect()
    };
    let cases: &[(&[&str], &[&str])] = &[
        (&[], &["bash", "bash_stdin"]),
        (&["--disable-tools", "bash"], &[]),
        (&["--deny", "tool.bash"], &[]),
        (&["--disable-tools", "bash_stdin"], &["bash"]),
        (&["--deny", "tool.bash_stdin"], &["bash"]),
    ];
    for (args, want) in cases {
        assert_eq!(names(args), *want, "tackle {args:?} tools");
    }
}

/// The compact catalog: the same tools in the same order with the same schemas, each described
/// in one sentence that ends where the full description's first sentence does (or is the
/// tool's own summary), and shorter in all.
#[test]
fn the_compact_catalog_keeps_names_and_schemas_and_shortens_descriptions() {
    let p = Project::new();
    let full = p.tackle(["tools", "--json"]).run();
    full.success();
    let compact = p
        .tackle(["tools", "--json", "--descriptions", "compact"])
        .run();
    compact.success();
    let (full, compact) = (full.json(), compact.json());
    let (full, compact) = (full.as_array().unwrap(), compact.as_array().unwrap());
    assert_eq!(full.len(), compact.len());
    let length = |specs: &[serde_json::Value]| -> usize {
        specs
            .iter()
            .map(|s| s["description"].as_str().unwrap().len())
            .sum()
    };
    assert!(
        length(compact) * 2 < length(full),
        "{} vs {}",
        length(compact),
        length(full)
    );
    for (f, c) in full.iter().zip(compact) {
        assert_eq!(f["name"], c["name"]);
        assert_eq!(f["input_schema"], c["input_schema"], "{}", f["name"]);
        let short = c["description"].as_str().unwrap();
        assert!(
            !short.is_empty() && short.len() <= 201 * 4,
            "{}: {short}",
            f["name"]
        );
        assert_eq!(
            short.matches(". ").count(),
            0,
            "{}: more than one sentence: {short}",
            f["name"]
        );
    }
    let bad = p.tackle(["tools", "--descriptions", "short"]).run();
    bad.code(2);
}
