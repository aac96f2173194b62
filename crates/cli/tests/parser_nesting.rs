//! Generated nesting through the binary (issue 37): the files that ended tackle (5,000 nested
//! `mod a {`, a JS array 20,000 deep with a syntax error), deeply nested requests to
//! `tackle serve`, and deeply nested settings and mcp.json files, at depth 10, 1,000 and
//! 100,000. Each run must end with an exit status (never a signal) and a result or a clean
//! error. The table of every parser and its bounds is `tackle_tools::parser_bounds::PARSERS`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use harness::{Output, Project, call_json};
use serde_json::{Value, json};

const DEPTHS: [usize; 3] = [10, 1_000, 100_000];

fn nest(open: &str, middle: &str, close: &str, n: usize) -> String {
    open.repeat(n) + middle + &close.repeat(n)
}

/// The process ended by exiting, not by a signal (an overflow is SIGSEGV or SIGABRT).
fn exited(out: &Output) -> i32 {
    out.code
        .unwrap_or_else(|| out.fail("ended by a signal instead of exiting"))
}

#[test]
fn outline_of_the_files_that_ended_tackle_is_a_result() {
    let p = Project::new();
    let deep_rs = nest("mod a {\n", "fn f() {}\n", "}\n", 5_000);
    assert!(deep_rs.len() > 35_000);
    p.write("deep.rs", &deep_rs);
    // The syntax error at the innermost level, where the search for it must go.
    p.write(
        "deep.js",
        format!("const x = {};\n", nest("[", "1 1", "]", 20_000)),
    );

    let out = call_json(&p, "view_file_outline", &json!({"path": "deep.rs"}));
    out.success();
    let m = out.metadata();
    assert_eq!(m["analysis"], "parsed", "{m}");
    assert_eq!(m["deeper_not_shown"], true, "{m}");
    assert!(
        out.text()
            .contains("nesting deeper than 64 levels is not shown"),
        "{}",
        out.text()
    );

    let out = call_json(&p, "view_file_outline", &json!({"path": "deep.js"}));
    out.success();
    assert_eq!(out.metadata()["analysis"], "partial");
    assert!(
        out.text().contains("syntax error at line"),
        "{}",
        out.text()
    );
}

#[test]
fn serve_answers_deeply_nested_requests() {
    let p = Project::new();
    p.write("a.txt", "alpha\n");
    let mut lines = vec![
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned(),
    ];
    for n in DEPTHS {
        lines.push(format!(
            r#"{{"jsonrpc":"2.0","id":{n},"method":"tools/call","params":{{"name":"read_file","arguments":{{"path":"a.txt","deep":{}}}}}}}"#,
            nest("[", "1", "]", n)
        ));
        lines.push(format!(
            r#"{{"jsonrpc":"2.0","id":"params-{n}","method":"tools/list","params":{}}}"#,
            nest("{\"a\":", "1", "}", n)
        ));
    }
    lines.push(r#"{"jsonrpc":"2.0","id":"last","method":"ping"}"#.to_owned());
    let out = p.tackle(["serve"]).stdin(lines.join("\n") + "\n").run();
    assert_eq!(exited(&out), 0, "stderr: {}", out.stderr);
    let ids: Vec<Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter_map(|m| m.get("id").cloned())
        .collect();
    for n in DEPTHS {
        assert!(ids.contains(&json!(n)), "no answer to {n}: {}", out.stdout);
        assert!(
            ids.contains(&json!(format!("params-{n}"))),
            "no answer to params-{n}: {}",
            out.stdout
        );
    }
    assert!(ids.contains(&json!("last")), "{}", out.stdout);
}

#[test]
fn deep_project_files_are_clean_errors() {
    for n in DEPTHS {
        let p = Project::new();
        p.user_config(&format!(
            "[tools]\ndisable = {}\n",
            nest("[", "\"bash\"", "]", n)
        ));
        let out = p.tackle(["config"]).run();
        assert_ne!(exited(&out), 0, "settings nested {n}");
        assert!(out.stderr.contains("config.toml"), "{n}: {}", out.stderr);

        let p = Project::new();
        p.write(
            ".agents/mcp.json",
            format!(
                r#"{{"servers": {{"a": {{"command": "x", "args": {}}}}}}}"#,
                nest("[", "\"y\"", "]", n)
            ),
        );
        let out = p.tackle(["mcp", "list", "--json"]).run();
        assert_ne!(exited(&out), 0, "mcp.json nested {n}");
        assert!(out.stderr.contains("mcp.json"), "{n}: {}", out.stderr);
    }
}

/// json_query's input, inline or as a file of the repository, and a string handed to
/// `fromjson`, nested up to 3,000,000 deep: an answer within the bound, a refusal naming it
/// past it, never an abort.
#[test]
fn json_query_on_deep_documents_is_a_result() {
    for n in DEPTHS.into_iter().chain([3_000_000]) {
        let p = Project::new();
        let doc = nest("[", "1", "]", n);
        p.write("deep.json", &doc);
        let calls = [
            json!({"expression": "length", "path": "deep.json"}),
            json!({"expression": "length", "data": doc}),
            json!({"expression": "fromjson | length", "data": json!(doc).to_string()}),
        ];
        for args in calls {
            let out = p
                .tackle(["call", "json_query", "-"])
                .stdin(args.to_string())
                .run();
            let row = format!("{n} deep, {}", &args["expression"]);
            if n <= 10 {
                assert_eq!(exited(&out), 0, "{row}: {}{}", out.stdout, out.stderr);
                assert_eq!(out.stdout.trim(), "1", "{row}");
            } else {
                assert_eq!(exited(&out), 1, "{row}: {}{}", out.stdout, out.stderr);
                let said = format!("{}{}", out.stdout, out.stderr);
                assert!(said.contains("more than 512 deep"), "{row}: {said}");
            }
        }
    }
}
