//! `tackle agents`: agent type files from the user's config directory and the project's
//! `.claude/agents/` and `.agents/agents/`, layered by name, narrowed while the folder is
//! untrusted, applied whole once `tackle trust` accepts them; a refused file named on stderr
//! with exit 1 while the others still load, and every other command unaffected by it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use harness::{Output, Project};
use serde_json::Value;

/// A file as Claude Code writes one: its tool names, a model alias, a colour.
const CLAUDE_REVIEWER: &str = "---
name: code-reviewer
description: Reviews a change for correctness and style.
tools: Read, Grep, Glob
model: sonnet
color: purple
---
Review the change and report problems by file and line.
";

/// A project type that widens: a model of its own, an allow rule, and the user's type's name.
const PROJECT_DOCS: &str = "---
name: docs
description: Writes the project's documentation.
tools: [read_file, write_file, grep]
model: anthropic:claude-sonnet-4-5
maxTurns: 8
permissions:
  allow: [\"write:docs/**\"]
  ask: [\"write:**\"]
  deny: [\"read:.env\"]
---
Write documentation.
";

const USER_DOCS: &str = "---
name: docs
description: The user's own documentation writer.
---
";

fn setup() -> Project {
    let p = Project::new();
    std::fs::create_dir_all(p.xdg().join("tackle/agents")).unwrap();
    std::fs::write(p.xdg().join("tackle/agents/docs.md"), USER_DOCS).unwrap();
    std::fs::write(
        p.xdg().join("tackle/agents/mine.md"),
        "---\nname: mine\ndescription: A user type.\nmodel: opus\n---\n",
    )
    .unwrap();
    p.write(".claude/agents/code-reviewer.md", CLAUDE_REVIEWER);
    p.write(
        ".claude/agents/shared.md",
        "---\nname: shared\ndescription: The .claude one.\n---\n",
    );
    p.write(
        ".agents/agents/shared.md",
        "---\nname: shared\ndescription: The .agents one.\n---\n",
    );
    p.write(".agents/agents/docs.md", PROJECT_DOCS);
    p.write(
        ".agents/agents/broken.md",
        "---\nname: broken\ndescription: d\nmaxTurns: ten\n---\n",
    );
    p
}

fn agents(p: &Project) -> (Output, Value) {
    let out = p.tackle(["agents", "--json"]).run();
    let v = out.json();
    (out, v)
}

fn of<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["types"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no type {name} in {v:#}"))
}

fn messages(v: &Value, list: &str) -> Vec<String> {
    v[list]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            format!(
                "{}:{}: {}",
                n["path"].as_str().unwrap(),
                n["line"],
                n["message"].as_str().unwrap()
            )
        })
        .collect()
}

#[test]
fn scopes_layer_by_name_and_an_untrusted_project_only_narrows() {
    let p = setup();
    let (out, v) = agents(&p);
    out.code(1)
        .stderr_contains("tackle: refused .agents/agents/broken.md:4: maxTurns must be a positive whole number, such as maxTurns: 10")
        .stderr_contains("1 agent type file(s) refused");
    let names: Vec<&str> = v["types"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "code-reviewer",
            "docs",
            "explore",
            "general",
            "mine",
            "shared"
        ]
    );

    let reviewer = of(&v, "code-reviewer");
    assert_eq!(reviewer["scope"], "project");
    assert_eq!(reviewer["path"], ".claude/agents/code-reviewer.md");
    assert_eq!(
        reviewer["tools"],
        serde_json::json!(["read_file", "grep", "glob"])
    );
    assert_eq!(reviewer["model"], "inherit");
    assert_eq!(of(&v, "shared")["path"], ".agents/agents/shared.md");
    assert_eq!(of(&v, "mine")["scope"], "user");
    assert_eq!(of(&v, "explore")["scope"], "built-in");
    // Untrusted, the project's docs may not replace the user's.
    assert_eq!(of(&v, "docs")["scope"], "user");
    assert_eq!(
        of(&v, "docs")["description"],
        "The user's own documentation writer."
    );

    let notes = messages(&v, "notes");
    for want in [
        ".claude/agents/code-reviewer.md:5: model: `sonnet` is a Claude Code alias",
        ".claude/agents/code-reviewer.md:6: `color` is not a field tackle reads",
        ".claude/agents/shared.md:null: is not used: .agents/agents/shared.md defines `shared` too",
        ".agents/agents/docs.md:5: model anthropic:claude-sonnet-4-5 is ignored until this folder is trusted",
        ".agents/agents/docs.md:8: permissions.allow write:docs/** is ignored until this folder is trusted",
        ".agents/agents/docs.md:2: `docs` does not replace the user type at",
    ] {
        assert!(
            notes.iter().any(|n| n.starts_with(want)),
            "no note {want:?} in {notes:#?}"
        );
    }
    assert_eq!(
        messages(&v, "refused"),
        [
            ".agents/agents/broken.md:4: maxTurns must be a positive whole number, such as maxTurns: 10"
        ]
    );

    // The text form says the same, and a refused file fails no other command.
    let text = p.tackle(["agents"]).run();
    text.code(1)
        .stdout_contains("code-reviewer  (project .claude/agents/code-reviewer.md)")
        .stdout_contains("  tools: read_file, grep, glob\n")
        .stdout_contains("docs  (user ")
        .stdout_contains("notes:\n")
        .stderr_contains("refused .agents/agents/broken.md:4");
    p.tackle(["tools"]).run().success();
    let config = p.tackle(["config", "--json"]).run();
    config.success();
    let ignored: Vec<String> = config.json()["trust"]["ignored"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["key"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        ignored,
        [
            "agent_types.model",
            "agent_types.permissions.allow",
            "agent_types.replace"
        ]
    );
}

#[test]
fn trusted_the_project_types_apply_whole() {
    let p = setup();
    p.trust();
    let (out, v) = agents(&p);
    out.code(1);
    let docs = of(&v, "docs");
    assert_eq!(docs["scope"], "project");
    assert_eq!(docs["path"], ".agents/agents/docs.md");
    assert_eq!(docs["model"], "anthropic:claude-sonnet-4-5");
    assert_eq!(docs["max_turns"], 8);
    assert_eq!(
        docs["permissions"],
        serde_json::json!({"allow": ["write:docs/**"], "ask": ["write:**"], "deny": ["read:.env"]})
    );
    assert_eq!(docs["prompt"], "Write documentation.");
    let notes = messages(&v, "notes");
    assert!(
        !notes
            .iter()
            .any(|n| n.contains("until this folder is trusted")),
        "{notes:#?}"
    );

    // A later file that widens further drops the folder back to narrowing until trusted again.
    p.write(
        ".agents/agents/more.md",
        "---\nname: more\ndescription: d\npermissions:\n  allow: [\"tool.bash.cmd:*\"]\n---\n",
    );
    let (_, v) = agents(&p);
    assert_eq!(of(&v, "docs")["scope"], "user");
    assert_eq!(
        of(&v, "more")["permissions"]["allow"],
        serde_json::json!([])
    );
}

#[test]
fn a_clean_listing_exits_zero_and_works_outside_a_project() {
    let p = Project::bare();
    std::fs::create_dir_all(p.xdg().join("tackle/agents")).unwrap();
    std::fs::write(
        p.xdg().join("tackle/agents/mine.md"),
        "---\nname: mine\ndescription: Mine.\nmodel: local:qwen\n---\n",
    )
    .unwrap();
    let out = p.tackle_in(".", ["agents", "--json"]).run();
    out.code(1).stderr_contains(
        "model local:qwen names the provider `local`, which your configuration does not have",
    );
    std::fs::write(
        p.xdg().join("tackle/config.toml"),
        "[providers.local]\nkind = \"openai-chat\"\nbase_url = \"http://127.0.0.1:9/v1\"\n[models.\"local:qwen\"]\ncontext_window = 8192\nmax_output = 1024\n",
    )
    .unwrap();
    let out = p.tackle_in(".", ["agents", "--json"]).run();
    out.success();
    assert_eq!(of(&out.json(), "mine")["model"], "local:qwen");
}
