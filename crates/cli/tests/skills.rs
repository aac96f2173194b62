//! Skills through the real binary: `tackle skills` over the user's and the project's scopes
//! (shadowing, invalid skills named with their rule, exit 1), and `tackle run` with a scripted
//! model that loads a skill, reads a bundled file and runs a command the skill pre-approves,
//! which the next run, without the skill, may not; `--disable-tools skill` offers neither the
//! tool nor the list; `tackle serve` offers the skills as MCP prompts to the Python SDK.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;
mod mcp_venv;

use harness::Project;
use harness::replay::{json_lines as lines, model, recorded_requests, script};
use serde_json::{Value, json};

const HELPER: &str = "---
name: echo-helper
description: Greets by running echo. Use when asked to greet.
allowed-tools: Bash(echo:*)
---
Run `echo hello` and report what it printed.
";

fn write_user_skill(p: &Project, name: &str, text: &str) {
    let path = p.home().join(format!(".agents/skills/{name}/SKILL.md"));
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn finished(p: &Project) -> Vec<Value> {
    p.sessions()
        .concat()
        .iter()
        .map(|l| l["event"].clone())
        .filter(|e| e["type"] == "call_finished")
        .collect()
}

#[test]
fn tackle_skills_lists_scopes_shadowing_and_invalid_skills_with_their_rule() {
    let p = Project::new();
    write_user_skill(
        &p,
        "notes",
        "---\nname: notes\ndescription: The user's notes skill.\n---\n",
    );
    write_user_skill(
        &p,
        "mine",
        "---\nname: mine\ndescription: Only mine.\n---\n",
    );
    p.write(
        ".agents/skills/notes/SKILL.md",
        "---\nname: notes\ndescription: The project's notes skill.\n---\n",
    );
    p.write(".agents/skills/echo-helper/SKILL.md", HELPER);
    p.write(
        ".agents/skills/echo-helper/references/greeting.md",
        "say hello\n",
    );
    p.write(
        ".claude/skills/Bad/SKILL.md",
        "---\nname: Bad\ndescription: d\n---\n",
    );

    let out = p.tackle(["skills", "--json"]).run();
    out.code(1);
    assert!(
        out.stderr
            .contains("invalid .claude/skills/Bad/SKILL.md:2:")
            && out.stderr.contains("[name-characters]"),
        "{}",
        out.stderr
    );
    let v = out.json();
    let names: Vec<&str> = v["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["echo-helper", "mine", "notes"]);
    let skill = |n: &str| {
        v["skills"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == n)
            .unwrap()
            .clone()
    };
    // Untrusted: the user's notes stays, and the helper pre-approves nothing.
    assert_eq!(skill("notes")["scope"], "user");
    assert_eq!(skill("echo-helper")["pre_approved"], json!([]));
    assert_eq!(
        skill("echo-helper")["files"],
        json!(["references/greeting.md"])
    );

    let trusted = p.tackle(["trust"]).run();
    trusted.success();
    assert!(
        trusted.stdout.contains(
            ".agents/skills/echo-helper/SKILL.md (echo-helper): the `echo-helper` skill pre-approves"
        ) && trusted.stdout.contains(".agents/skills/notes/SKILL.md (notes): the project's `notes` skill replaces"),
        "{}",
        trusted.stdout
    );
    let v = p.tackle(["skills", "--json"]).run().json();
    let skill = |n: &str| {
        v["skills"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == n)
            .unwrap()
            .clone()
    };
    assert_eq!(skill("notes")["scope"], "project");
    assert_eq!(
        skill("echo-helper")["pre_approved"],
        json!(["tool.bash.cmd:echo", "tool.bash.cmd:echo *"])
    );
    assert_eq!(v["shadowed"][0]["name"], "notes");

    let check = p.tackle(["skills", "--check"]).run();
    check.code(1);
    assert!(
        check
            .stdout
            .starts_with("3 skill(s) valid, 1 invalid, 0 warning(s)"),
        "{}",
        check.stdout
    );
}

#[test]
fn a_run_loads_a_skill_whose_allowed_tools_last_for_that_run_only() {
    let p = Project::new();
    p.write(".agents/skills/echo-helper/SKILL.md", HELPER);
    p.write(
        ".agents/skills/echo-helper/references/greeting.md",
        "say hello\n",
    );
    p.tackle(["trust"]).run().success();
    let call = |id: &str, name: &str, arguments: Value| json!({"turn": {"tool_calls": [{"id": id, "name": name, "arguments": arguments}]}});
    let file = script(
        &p,
        "s.jsonl",
        &[
            call("k0", "skill", json!({"name": "../echo-helper"})),
            call("k1", "skill", json!({"name": "echo-helpr"})),
            call("k2", "skill", json!({"name": "echo-helper"})),
            call(
                "k3",
                "skill",
                json!({"name": "echo-helper", "file": "references/greeting.md"}),
            ),
            call("b1", "bash", json!({"command": "echo hello"})),
            json!({"turn": {"text": "It printed hello."}}),
            call("b2", "bash", json!({"command": "echo again"})),
            json!({"turn": {"text": "Not allowed this time."}}),
        ],
    );
    let record = p.outside("requests.jsonl");
    let out = p
        .tackle(["--model", &model(&file), "run", "--json", "greet"])
        .env("TACKLE_REPLAY_RECORD", &record)
        .run();
    out.success();
    assert_eq!(lines(&out.stdout).last().unwrap()["outcome"], "finished");
    let requests = recorded_requests(&record);
    let system = requests[0]["system"].as_str().unwrap();
    assert!(
        system.contains("provider=\"builtin.skills\"")
            && system.contains("- echo-helper — Greets by running echo. Use when asked to greet."),
        "{system}"
    );
    assert!(
        requests[0]["tools"]
            .as_array()
            .unwrap()
            .contains(&json!("skill"))
    );

    let calls = finished(&p);
    let code = |id: &str| {
        let c = calls.iter().find(|c| c["call_id"] == id).unwrap();
        c["code"].as_str().unwrap_or("ok").to_owned()
    };
    assert_eq!(code("k0"), "invalid_arguments");
    assert_eq!(code("k1"), "not_found");
    assert_eq!(code("k2"), "ok");
    assert_eq!(code("k3"), "ok");
    assert_eq!(code("b1"), "ok", "the skill pre-approved echo for this run");
    let text = serde_json::to_string(&requests.last().unwrap()["messages"]).unwrap();
    assert!(text.contains("the nearest are `echo-helper`"), "{text}");
    assert!(text.contains("never a path"), "{text}");
    assert!(
        text.contains("<skill_content name=\\\"echo-helper\\\">"),
        "{text}"
    );
    assert!(text.contains("- references/greeting.md"), "{text}");
    assert!(text.contains("say hello"), "{text}");
    assert!(text.contains("hello\\n"), "{text}");

    // The next run did not load the skill: echo asks again, and nobody can answer.
    let out = p
        .tackle([
            "--model",
            &model(&file),
            "run",
            "--continue",
            "--json",
            "again",
        ])
        .run();
    out.success();
    let calls = finished(&p);
    let b2 = calls.iter().find(|c| c["call_id"] == "b2").unwrap();
    assert_ne!(b2["code"].as_str().unwrap_or("ok"), "ok", "{b2}");
}

#[test]
fn disable_tools_skill_offers_neither_the_tool_nor_the_list() {
    let p = Project::new();
    p.write(".agents/skills/echo-helper/SKILL.md", HELPER);
    let file = script(&p, "s.jsonl", &[json!({"turn": {"text": "done"}})]);
    let record = p.outside("requests.jsonl");
    p.tackle([
        "--disable-tools",
        "skill",
        "--model",
        &model(&file),
        "run",
        "go",
    ])
    .env("TACKLE_REPLAY_RECORD", &record)
    .run()
    .success();
    let requests = recorded_requests(&record);
    assert!(
        !requests[0]["system"]
            .as_str()
            .unwrap()
            .contains("echo-helper")
    );
    assert!(
        !requests[0]["tools"]
            .as_array()
            .unwrap()
            .contains(&json!("skill"))
    );
}

#[test]
fn serve_offers_the_skills_as_mcp_prompts_to_a_real_client() {
    let p = Project::new();
    p.write(".agents/skills/echo-helper/SKILL.md", HELPER);
    p.write(
        ".agents/skills/echo-helper/references/greeting.md",
        "say hello\n",
    );
    p.write(
        ".agents/skills/hidden/SKILL.md",
        "---\nname: hidden\ndescription: Not for users.\nuser-invocable: false\n---\n",
    );
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp_prompts.py");
    let out = std::process::Command::new(mcp_venv::venv_python())
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_tackle"))
        .args(["--root", p.path().to_str().unwrap(), "serve"])
        .env("XDG_CONFIG_HOME", p.xdg())
        .env("HOME", p.home())
        .env("TACKLE_HEADLESS", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(v["capability"], true, "{v:#}");
    assert_eq!(
        v["prompts"],
        json!({"echo-helper": "Greets by running echo. Use when asked to greet."}),
        "a skill that is not user-invocable is not offered: {v:#}"
    );
    assert_eq!(v["get"]["roles"], json!(["user"]));
    let text = v["get"]["text"].as_str().unwrap();
    assert!(
        text.contains("Run `echo hello`") && text.contains("- references/greeting.md"),
        "{text}"
    );
    assert!(
        v["unknown"]
            .as_str()
            .unwrap()
            .contains("unknown prompt `echo-helpr`; did you mean echo-helper?"),
        "{v:#}"
    );
}
