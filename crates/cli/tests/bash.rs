//! bash end to end: command keys through the gate, the two streams, timeouts, the denylist,
//! the bash search gate and its modes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use harness::Project;
use serde_json::json;

fn bash(p: &Project, flags: &[&str], args: serde_json::Value) -> harness::Output {
    let mut cmd = p.tackle(flags);
    cmd.args(["--headless", "call", "bash", &args.to_string(), "--json"]);
    cmd.run()
}

#[test]
fn an_allowed_command_runs_and_shows_its_streams_and_exit_code() {
    let p = Project::new();
    let out = p
        .tackle([
            "--allow",
            "tool.bash.cmd:echo *",
            "call",
            "bash",
            r#"{"command":"echo hi"}"#,
        ])
        .run();
    out.success()
        .stdout_contains("exit 0")
        .stdout_contains("[stdout]\nhi\n");
    let out = bash(
        &p,
        &["--allow", "tool.bash.cmd:*"],
        json!({"command": "echo out; echo err >&2; exit 3"}),
    );
    out.success();
    assert_eq!(out.metadata()["exit_code"], 3);
    let text = out.text();
    assert!(
        text.starts_with("exit 3")
            && text.contains("[stdout]\nout\n")
            && text.contains("[stderr]\nerr\n"),
        "{text}"
    );
}

#[test]
fn the_command_runs_in_the_project_root() {
    let p = Project::new();
    p.mkdir("sub");
    let out = bash(
        &p,
        &["--allow", "tool.bash.cmd:*"],
        json!({"command": "pwd"}),
    );
    out.success();
    assert!(
        out.text().contains(&format!("{}\n", p.path().display())),
        "{}",
        out.text()
    );
}

#[test]
fn a_denied_command_anywhere_in_the_line_is_refused() {
    let p = Project::new();
    let out = bash(
        &p,
        &[
            "--allow",
            "tool.bash.cmd:*",
            "--deny",
            "tool.bash.cmd:curl *",
        ],
        json!({"command": "echo ok && c\\url http://example.invalid"}),
    );
    out.tool_error("permission_denied");
    assert_eq!(
        out.metadata()["tool_denied"]["key"],
        "tool.bash.cmd:curl http://example.invalid"
    );
}

#[test]
fn an_ask_is_approval_unavailable_headless() {
    let p = Project::new();
    let out = bash(&p, &[], json!({"command": "git status"}));
    out.tool_error("approval_unavailable");
    assert!(
        out.text().contains("tool.bash.cmd:git status"),
        "{}",
        out.text()
    );
    // An unparseable line falls to ask whatever is allowed.
    let out = bash(
        &p,
        &["--allow", "tool.bash.cmd:*"],
        json!({"command": "$(printf curl) x"}),
    );
    out.tool_error("approval_unavailable");
    assert!(out.text().contains("tool.bash.cmd:?"), "{}", out.text());
}

#[test]
fn redirections_are_write_keys() {
    let p = Project::new();
    let out = bash(
        &p,
        &[
            "--allow",
            "tool.bash.cmd:echo *",
            "--deny",
            "write:protected/**",
        ],
        json!({"command": "echo x > protected/../protected/f.txt"}),
    );
    out.tool_error("permission_denied");
    assert_eq!(
        out.metadata()["tool_denied"]["key"],
        "write:protected/f.txt"
    );
    let out = bash(
        &p,
        &[
            "--allow",
            "tool.bash.cmd:echo *",
            "--allow",
            "write:out.txt",
        ],
        json!({"command": "echo x > out.txt 2>/dev/null"}),
    );
    out.success();
    assert_eq!(std::fs::read_to_string(p.join("out.txt")).unwrap(), "x\n");
}

#[test]
fn a_timeout_keeps_the_output_and_says_how_to_raise_the_limit() {
    let p = Project::new();
    let out = bash(
        &p,
        &["--allow", "tool.bash.cmd:*"],
        json!({"command": "echo started; exec sleep 30", "timeout": 300}),
    );
    out.tool_error("timeout");
    let text = out.text();
    assert!(text.contains("started"), "{text}");
    assert!(
        text.contains("\"timeout\"") && text.contains("600000"),
        "{text}"
    );
    let result = out.json();
    assert_eq!(result["status"], "timed_out");
    let out = bash(
        &p,
        &["--allow", "tool.bash.cmd:*"],
        json!({"command": "true", "timeout": 0}),
    );
    out.tool_error("invalid_arguments");
}

#[test]
fn destructive_commands_are_refused_even_in_yolo() {
    let p = Project::new();
    for command in [
        "rm -rf /",
        "sudo rm -rf ~",
        ":(){ :|:& };:",
        "dd if=/dev/zero of=/dev/sda",
    ] {
        let out = bash(
            &p,
            &["--mode", "yolo", "--allow", "tool.bash.cmd:*"],
            json!({ "command": command }),
        );
        out.tool_error("command_refused");
    }
}

#[test]
fn secrets_in_the_environment_do_not_reach_commands() {
    let p = Project::new();
    let mut cmd = p.tackle([
        "--headless",
        "--allow",
        "tool.bash.cmd:*",
        "call",
        "bash",
        r#"{"command":"env"}"#,
    ]);
    cmd.env("ANTHROPIC_API_KEY", "sk-secret-1")
        .env("MY_SERVICE_TOKEN", "tok-secret-2")
        .env("TACKLE_VISIBLE", "plain");
    let out = cmd.run();
    out.success()
        .stdout_lacks("sk-secret-1")
        .stdout_lacks("tok-secret-2")
        .stdout_contains("TACKLE_VISIBLE=plain");
    // An operator can withhold more, or pass one through.
    // In the project's config, the deny applies at once; the pass (it moves a secret) only
    // once the folder is trusted.
    p.config("[bash]\nenv_deny = [\"TACKLE_VIS*\"]\nenv_pass = [\"MY_SERVICE_TOKEN\"]\n");
    let env = || {
        let mut cmd = p.tackle([
            "--headless",
            "--allow",
            "tool.bash.cmd:*",
            "call",
            "bash",
            r#"{"command":"env"}"#,
        ]);
        cmd.env("MY_SERVICE_TOKEN", "tok-secret-2")
            .env("TACKLE_VISIBLE", "plain");
        cmd.run()
    };
    env()
        .success()
        .stdout_lacks("tok-secret-2")
        .stdout_lacks("TACKLE_VISIBLE")
        .stderr_contains("bash.env_pass MY_SERVICE_TOKEN")
        .stderr_contains("tackle trust");
    p.trust();
    env()
        .success()
        .stdout_contains("tok-secret-2")
        .stdout_lacks("TACKLE_VISIBLE");
}

/// Whether this build registers a tool (the grep and glob tools land separately).
fn registered(p: &Project, tool: &str) -> bool {
    let out = p.tackle(["tools", "--json"]).run();
    out.success();
    out.json()
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["name"] == tool)
}

#[test]
fn search_gate_refuses_bash_grep_when_the_grep_tool_exists_and_is_inert_otherwise() {
    let p = Project::new();
    p.write("a.txt", "needle\n");
    let flags = ["--mode", "yolo", "--allow", "tool.bash.cmd:*"];
    let out = bash(&p, &flags, json!({"command": "grep -rn needle ."}));
    let posture = p.tackle(["config"]).run();
    if registered(&p, "grep") {
        // Refused before the permission mode is consulted: yolo does not wave it through.
        out.tool_error("search_gate_refused");
        assert!(
            out.text().contains("use the native `grep` tool"),
            "{}",
            out.text()
        );
        posture
            .success()
            .stdout_contains("bash search gate: enforce (covers grep");
        // Piped searches are not gated.
        bash(&p, &flags, json!({"command": "cat a.txt | grep needle"})).success();
        // warn runs it with the advice attached; allow runs it plainly.
        let mut warn_flags = flags.to_vec();
        warn_flags.extend(["--bash-search-gate", "warn"]);
        let out = bash(&p, &warn_flags, json!({"command": "grep -rn needle ."}));
        out.success();
        assert!(
            out.text().contains("notice: bash refused"),
            "{}",
            out.text()
        );
        assert!(out.metadata()["notice"].is_string());
        p.config("[safety]\nbash_search_gate = \"allow\"\n");
        // A laxer gate from the project applies once the folder is trusted.
        bash(&p, &flags, json!({"command": "grep -n needle a.txt"}))
            .tool_error("search_gate_refused");
        p.trust();
        // Searching one file keeps the project's own store (which holds the earlier notice)
        // out of the output.
        let out = bash(&p, &flags, json!({"command": "grep -n needle a.txt"}));
        out.success();
        assert!(!out.text().contains("notice"), "{}", out.text());
        assert!(out.metadata()["notice"].is_null());
    } else {
        // Nothing to redirect to: the gate refuses nothing and says so.
        out.success().stdout_contains("needle");
        posture
            .success()
            .stdout_contains("bash search gate: enforce but INERT (no grep or glob tool)");
    }
}

#[test]
fn bad_search_gate_modes_name_their_origin() {
    let p = Project::new();
    p.tackle(["--bash-search-gate", "strict", "config"])
        .run()
        .code(3)
        .stderr_contains("--bash-search-gate");
    p.config("[safety]\nbash_search_gate = \"off\"\n");
    p.tackle(["config"])
        .run()
        .code(3)
        .stderr_contains("config.toml:2");
}

#[test]
fn the_bash_description_follows_the_gate() {
    let p = Project::new();
    let out = p.tackle(["tools", "--json"]).run();
    out.success();
    let tools = out.json();
    let bash = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "bash")
        .expect("bash is offered");
    let description = bash["description"].as_str().unwrap();
    assert_eq!(
        description.contains("REFUSED"),
        registered(&p, "grep") || registered(&p, "glob"),
        "{description}"
    );
}

#[test]
fn starting_a_shell_ahead_is_on_by_default_and_can_be_turned_off() {
    let p = Project::new();
    let out = p.tackle(["config", "--json"]).run();
    out.success();
    assert_eq!(out.json()["bash"]["prestart"]["value"], true);
    p.config("[bash]\nprestart = false\n");
    let out = p.tackle(["config", "--json"]).run();
    out.success();
    let prestart = &out.json()["bash"]["prestart"];
    assert_eq!(prestart["value"], false);
    assert!(
        prestart["from"].as_str().unwrap().contains("config.toml"),
        "{prestart}"
    );
    let out = p.tackle(["config"]).run();
    out.success().stdout_contains("bash.prestart");
    // A wrong type names the file and line.
    p.config("[bash]\nprestart = \"yes\"\n");
    p.tackle(["config"])
        .run()
        .code(3)
        .stderr_contains("config.toml:2: invalid type: string \"yes\", expected a boolean");
}
