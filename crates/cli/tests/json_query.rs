//! json_query's jq engine offers pure computation only, over `tackle call` and `tackle serve`
//! alike (issue 37 §3): a filter naming `env`, `$ENV`, `halt` or `halt_error` gets an error
//! result naming it, one over the memory budget a `resource_limit`, each call is recorded as
//! finished, and the process lives on to serve the next request.

#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns: a failure should panic loudly

mod harness;

use harness::{Project, call_json};
use serde_json::{Value, json};

/// (expression, result code, text the result must carry).
const CASES: &[(&str, &str, &str)] = &[
    ("env", "invalid_filter", "`env` is not offered"),
    ("env.HOME", "invalid_filter", "`env` is not offered"),
    ("$ENV", "invalid_filter", "`$ENV` is not offered"),
    ("halt", "invalid_filter", "`halt` is not offered"),
    (
        "halt_error(5)",
        "invalid_filter",
        "`halt_error` is not offered",
    ),
    (
        "\"bye\" | halt_error",
        "invalid_filter",
        "`halt_error` is not offered",
    ),
    ("debug", "invalid_filter", "`debug` is not offered"),
    ("\"a\" * 1000000 | . * 1000000", "resource_limit", "MiB"),
];

fn finished_calls(p: &Project) -> usize {
    p.sessions()
        .iter()
        .flatten()
        .filter(|e| e["event"]["type"] == "call_finished")
        .count()
}

#[test]
fn call_refuses_what_the_engine_does_not_offer_and_records_the_call() {
    let p = Project::new();
    for (i, (expression, code, says)) in CASES.iter().enumerate() {
        let out = call_json(
            &p,
            "json_query",
            &json!({ "expression": expression, "data": "{}" }),
        );
        out.tool_error(code);
        let text = out.text();
        assert!(text.contains(says), "{expression}: {text}");
        assert_eq!(
            finished_calls(&p),
            i + 1,
            "{expression}: call_finished written"
        );
    }
    // The engine still computes.
    let out = call_json(
        &p,
        "json_query",
        &json!({ "expression": ".a + 1", "data": "{\"a\": 1}" }),
    );
    out.success();
    assert_eq!(out.text().trim(), "2");
}

#[test]
fn serve_answers_each_refusal_and_keeps_serving() {
    let p = Project::new();
    p.write("data.json", "{\"a\": [1, 2]}");
    let mut lines = vec![
        json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}),
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
    ];
    for (i, (expression, ..)) in CASES.iter().enumerate() {
        lines.push(json!({"jsonrpc":"2.0","id":i + 1,"method":"tools/call","params":{"name":"json_query","arguments":{"expression":expression,"path":"data.json"}}}));
    }
    let last = CASES.len() + 1;
    lines.push(json!({"jsonrpc":"2.0","id":last,"method":"tools/call","params":{"name":"json_query","arguments":{"expression":".a | length","path":"data.json"}}}));
    let input: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let out = p.tackle(["serve"]).stdin(input).run();
    out.success();
    let answers: Vec<Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let answer = |id: usize| {
        answers
            .iter()
            .find(|m| m["id"] == id)
            .unwrap_or_else(|| out.fail(&format!("no answer to request {id}")))
    };
    for (i, (expression, _, says)) in CASES.iter().enumerate() {
        let result = &answer(i + 1)["result"];
        assert_eq!(result["isError"], true, "{expression}: {result}");
        assert!(result.to_string().contains(says), "{expression}: {result}");
    }
    let result = &answer(last)["result"];
    assert_eq!(result["isError"], false, "{result}");
    assert!(result.to_string().contains('2'), "{result}");
    assert_eq!(
        finished_calls(&p),
        CASES.len() + 1,
        "every call is recorded as finished"
    );
}
