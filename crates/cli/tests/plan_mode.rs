//! Plan mode end to end through `tackle call` (seed 003, record_plan): the gate a plan opens,
//! the repeats that do not mint files, revocation, the modes' descriptions, and `--task`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use harness::{Output, Project};
use serde_json::{Value, json};

/// The id of the only session in the project.
fn only_session(p: &Project) -> String {
    let mut ids: Vec<String> = std::fs::read_dir(p.join(".agents/store/sessions"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(ids.len(), 1, "{ids:?}");
    ids.pop().unwrap()
}

fn call_in(p: &Project, session: &str, turn: Option<&str>, tool: &str, args: &Value) -> Output {
    let mut argv = vec![
        "--allow".to_owned(),
        "write:**".to_owned(),
        "call".to_owned(),
        tool.to_owned(),
        args.to_string(),
        "--json".to_owned(),
        "--session".to_owned(),
        session.to_owned(),
    ];
    if let Some(t) = turn {
        argv.extend(["--turn".to_owned(), t.to_owned()]);
    }
    p.tackle(argv).run()
}

fn plans(p: &Project, dir: &str) -> Vec<String> {
    let mut names: Vec<String> = match std::fs::read_dir(p.join(dir)) {
        Ok(rd) => rd
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.ends_with(".md"))
            .collect(),
        Err(_) => Vec::new(),
    };
    names.sort();
    names
}

fn required() -> Project {
    let p = Project::new();
    // An untrusted project may ask for plans: plan_mode only holds calls back.
    p.config("[permissions]\nplan_mode = \"required\"\n");
    p
}

#[test]
fn required_denies_mutating_calls_until_the_sessions_plan_is_on_file() {
    let p = required();
    let write = json!({"path": "a.txt", "content": "x\n"});
    // The first call opens the session; reads are never held.
    p.write("r.txt", "r\n");
    p.tackle(["call", "read_file", r#"{"path":"r.txt"}"#])
        .run()
        .success();
    let s = only_session(&p);
    let denied = call_in(&p, &s, None, "write_file", &write);
    denied.tool_error("permission_denied");
    assert_eq!(
        denied.metadata()["tool_denied"]["rule"],
        "permissions.plan_mode = \"required\""
    );
    assert!(
        denied.text().contains("call record_plan"),
        "{}",
        denied.text()
    );
    assert!(!p.join("a.txt").exists());
    // MCP-free build: bash is plan-gated too.
    call_in(&p, &s, None, "bash", &json!({"command": "true"})).tool_error("permission_denied");

    let plan = call_in(
        &p,
        &s,
        None,
        "record_plan",
        &json!({"plan": "1. write a.txt"}),
    );
    plan.success();
    let text = plan.text();
    assert!(text.contains("Now unblocked for this session: "), "{text}");
    assert!(
        text.contains("write_file") && text.contains("bash"),
        "{text}"
    );
    assert!(!text.contains("read_file"), "{text}");
    assert_eq!(plan.metadata()["outcome"], "recorded");
    assert_eq!(plan.metadata()["gate_opened"], true);
    let file = std::fs::read_to_string(p.join(".agents/plans/plan-1.md")).unwrap();
    assert!(
        file.starts_with(&format!("---\nplan: 1\nsession: \"{s}\"\nturn: \"")),
        "{file}"
    );
    assert!(
        !file.contains("agent:"),
        "keys are omitted, never empty: {file}"
    );
    assert!(file.ends_with("---\n1. write a.txt\n"), "{file}");

    call_in(&p, &s, None, "write_file", &write).success();
    assert!(p.join("a.txt").exists());
    // A new session has no plan on file.
    p.tackle([
        "--allow",
        "write:**",
        "call",
        "write_file",
        &write.to_string(),
        "--json",
    ])
    .run()
    .tool_error("permission_denied");

    // A later plan does not announce again.
    let later = call_in(&p, &s, None, "record_plan", &json!({"plan": "2. more"}));
    assert!(
        later.text().contains("already satisfied"),
        "{}",
        later.text()
    );
    assert!(!later.text().contains("Now unblocked"), "{}", later.text());
}

/// Seed 003, "record_plan repeats don't mint plan files", through the binary: `--turn` names
/// the turn, so separate invocations can share one.
#[test]
fn repeats_within_a_turn_revise_and_identical_text_writes_nothing() {
    let p = required();
    p.tackle(["call", "stat", r#"{"path":"."}"#])
        .run()
        .success();
    let s = only_session(&p);
    let rows: &[(&str, &str, &str, &[&str])] = &[
        ("t1", "1. read", "recorded", &["plan-1.md"]),
        ("t1", "1. read\n2. fix", "updated", &["plan-1.md"]),
        ("t1", "1. read\n2. fix", "unchanged", &["plan-1.md"]),
        ("t2", "1. read\n2. fix", "unchanged", &["plan-1.md"]),
        (
            "t2",
            "1. other plan",
            "recorded",
            &["plan-1.md", "plan-2.md"],
        ),
    ];
    for (turn, text, outcome, files) in rows {
        let out = call_in(&p, &s, Some(turn), "record_plan", &json!({ "plan": text }));
        out.success();
        let meta = out.metadata();
        assert_eq!(meta["outcome"], *outcome, "{turn} {text:?}: {}", out.text());
        assert_eq!(
            meta.get("no_op").is_some(),
            *outcome == "unchanged",
            "{meta}"
        );
        assert_eq!(plans(&p, ".agents/plans"), *files, "{turn} {text:?}");
    }
    let revised = std::fs::read_to_string(p.join(".agents/plans/plan-1.md")).unwrap();
    assert!(revised.ends_with("1. read\n2. fix\n"), "{revised}");
}

#[test]
fn revoke_archives_the_sessions_plan_and_closes_its_gate() {
    let p = required();
    p.tackle(["call", "stat", r#"{"path":"."}"#])
        .run()
        .success();
    let s = only_session(&p);
    call_in(&p, &s, None, "record_plan", &json!({"plan": "1. x"})).success();
    let out = p
        .tackle(["plan", "revoke", "--session", &s, "--json"])
        .run();
    out.success();
    let v = out.json();
    assert_eq!(v["result"]["revoked"], "own");
    assert_eq!(v["result"]["plans"], json!([1]));
    assert_eq!(plans(&p, ".agents/plans"), Vec::<String>::new());
    assert_eq!(plans(&p, ".agents/plans/archive"), ["plan-1.md"]);
    call_in(
        &p,
        &s,
        None,
        "write_file",
        &json!({"path": "a", "content": ""}),
    )
    .tool_error("permission_denied");
    // A revoked number is never reused.
    let again = call_in(&p, &s, None, "record_plan", &json!({"plan": "1. x"}));
    assert_eq!(again.metadata()["plan"], 2);
    assert!(again.text().contains("Now unblocked"), "{}", again.text());

    // Another author's plan is left alone, and the command says whose it is.
    p.tackle(["plan", "revoke", "--session", "someone-else"])
        .run()
        .success()
        .stdout_contains(&format!("belongs to session {s} and was left alone"));
    assert_eq!(plans(&p, ".agents/plans"), ["plan-2.md"]);
}

#[test]
fn the_catalog_follows_the_plan_mode() {
    let record_plan = |p: &Project, flags: &[&str]| -> Option<String> {
        let mut argv: Vec<&str> = flags.to_vec();
        argv.extend(["tools", "--json"]);
        let specs = p.tackle(argv).run().success().json();
        specs
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == "record_plan")
            .map(|s| s["description"].as_str().unwrap().to_owned())
    };
    let p = Project::new();
    assert_eq!(record_plan(&p, &[]), None, "off by default: not registered");
    let advisory = record_plan(&p, &["--plan-mode", "advisory"]).unwrap();
    assert!(advisory.contains("record it and proceed"), "{advisory}");
    let required = record_plan(&p, &["--plan-mode", "required"]).unwrap();
    assert!(
        required.contains("call this BEFORE any mutating call (any write_file / edit_file / delete_file / bash call)"),
        "{required}"
    );
    // Descriptions follow the catalog: a dropped tool is not named.
    let without_bash =
        record_plan(&p, &["--plan-mode", "required", "--disable-tools", "bash"]).unwrap();
    assert!(!without_bash.contains("bash"), "{without_bash}");

    // Advisory holds nothing back.
    let out = p
        .tackle([
            "--plan-mode",
            "advisory",
            "--allow",
            "write:**",
            "call",
            "write_file",
            r#"{"path":"a.txt","content":"x"}"#,
            "--json",
        ])
        .run();
    out.success();
    p.tackle([
        "--plan-mode",
        "advisory",
        "call",
        "record_plan",
        r#"{"plan":"x"}"#,
    ])
    .run()
    .success()
    .stdout_contains("no tool call was ever blocked on this plan");
    p.tackle(["--plan-mode", "sometimes", "tools"])
        .run()
        .code(2)
        .stderr_contains("off, advisory, required");
}

/// An untrusted project may make plan mode stricter, never laxer.
#[test]
fn a_project_cannot_lift_the_users_plan_mode() {
    let p = Project::new();
    p.user_config("[permissions]\nplan_mode = \"required\"\n");
    p.config("[permissions]\nplan_mode = \"off\"\n");
    p.tackle([
        "--allow",
        "write:**",
        "call",
        "write_file",
        r#"{"path":"a","content":""}"#,
        "--json",
    ])
    .run()
    .tool_error("permission_denied");
}

/// Seed 003, "The bash search gate": `--task` drops bash (review: the writes too), and
/// `--enable-tools` puts it back, with the search gate still armed.
#[test]
fn task_classes_drop_tools_and_compose_with_enable_tools() {
    let p = Project::new();
    let names = |flags: &[&str]| -> Vec<String> {
        let mut argv: Vec<&str> = flags.to_vec();
        argv.extend(["tools", "--json"]);
        p.tackle(argv)
            .run()
            .success()
            .json()
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let rows: &[(&[&str], &[&str], &[&str])] = &[
        (
            &["--task", "debug"],
            &["read_file", "write_file", "grep"],
            &["bash", "bash_stdin"],
        ),
        (
            &["--task", "research"],
            &["read_file", "edit_file"],
            &["bash"],
        ),
        (
            &["--task", "review"],
            &["read_file", "grep"],
            &["bash", "write_file", "edit_file", "delete_file"],
        ),
        (
            &["--task", "debug", "--enable-tools", "bash"],
            &["bash", "grep"],
            &[],
        ),
    ];
    for (flags, present, absent) in rows {
        let got = names(flags);
        for n in *present {
            assert!(
                got.iter().any(|g| g == n),
                "{flags:?}: {n} missing from {got:?}"
            );
        }
        for n in *absent {
            assert!(
                !got.iter().any(|g| g == n),
                "{flags:?}: {n} still in {got:?}"
            );
        }
    }
    p.tackle([
        "--task",
        "debug",
        "--enable-tools",
        "bash",
        "call",
        "bash",
        r#"{"command":"grep -rn x ."}"#,
        "--json",
    ])
    .run()
    .code(1)
    .stdout_contains("search-shaped");
    p.tackle(["--task", "review", "config"])
        .run()
        .success()
        .stdout_contains("task review: drops bash, write_file, edit_file, delete_file");
    p.tackle(["--task", "debug", "--enable-tools", "bash", "config"])
        .run()
        .success()
        .stdout_contains("task debug: drops nothing; put back by --enable-tools: bash");
}

/// `tackle serve` wires the same gate: over stdio, record_plan is listed with the required
/// description and a write without a plan is an `isError` result naming the plan gate.
#[test]
fn serve_holds_writes_for_a_plan() {
    let p = required();
    let input = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"a.txt","content":"x"}}}"#,
    ]
    .join("\n")
        + "\n";
    let out = p
        .tackle(["--allow", "write:**", "serve"])
        .stdin(&input)
        .run();
    out.success();
    let replies: Vec<Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let reply = |id: u64| replies.iter().find(|r| r["id"] == id).unwrap();
    let tools = reply(2)["result"]["tools"].as_array().unwrap();
    let plan = tools.iter().find(|t| t["name"] == "record_plan").unwrap();
    assert!(
        plan["description"]
            .as_str()
            .unwrap()
            .contains("BEFORE any mutating call"),
        "{plan}"
    );
    let denied = &reply(3)["result"];
    assert_eq!(denied["isError"], true, "{denied}");
    assert!(denied.to_string().contains("call record_plan"), "{denied}");
    assert!(!p.join("a.txt").exists());
}
