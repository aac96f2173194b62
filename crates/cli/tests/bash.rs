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
    // A bad flag is a command-line error (exit 2) naming the flag and its values.
    p.tackle(["--bash-search-gate", "strict", "config"])
        .run()
        .code(2)
        .stderr_contains("--bash-search-gate")
        .stderr_contains("enforce, warn, allow");
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

/// Whether this machine has a bash that tackle runs lines with (else `/bin/sh` does, and the
/// bash-only cases below do not apply).
fn runs_bash() -> bool {
    tackle_process::ShellProgram::discover().kind() == tackle_process::ShellKind::Bash
}

/// Lines whose meaning differs between bash and `sh`, and what bash prints for them: each
/// runs as bash reads it (what the permission keys describe), not as dash would.
const BASH_ONLY: &[(&str, &str)] = &[
    ("[[ a == a ]] && echo yes", "yes\n"),
    ("echo $'a\\tb'", "a\tb\n"),
    // dash ends the word at the quote and runs `echo injected`.
    (
        "echo $'a\\' ; echo injected ; #'",
        "a' ; echo injected ; #\n",
    ),
    // dash runs a command `2 > 1` in nested subshells, or `touch x`.
    ("((2 > 1)) && echo arithmetic", "arithmetic\n"),
    ("((touch x)); test -e x || echo no-x", "no-x\n"),
    // dash redirects: `[[ x > victim ]]` truncates a file `victim`.
    (
        "[[ x > victim ]]; test -e victim || echo no-victim",
        "no-victim\n",
    ),
    ("a=(x y z); echo ${a[2]} ${#a[@]}", "z 3\n"),
    ("cat <<< here-string", "here-string\n"),
    ("echo \"$-\"", "hBc\n"),
    ("echo {1..3}", "1 2 3\n"),
];

#[test]
fn bash_only_constructs_run_as_bash_reads_them() {
    if !runs_bash() {
        return;
    }
    let p = Project::new();
    for &(command, stdout) in BASH_ONLY {
        // yolo: whatever the keys of the line, it runs, so what is checked is how it runs.
        let out = bash(
            &p,
            &[
                "--mode",
                "yolo",
                "--allow",
                "tool.bash.cmd:*",
                "--allow",
                "write:**",
            ],
            json!({ "command": command }),
        );
        out.success();
        let text = out.text();
        assert!(
            text.starts_with("exit 0") && text.contains(&format!("[stdout]\n{stdout}")),
            "{command:?}: {text}"
        );
        assert!(
            !p.join("x").exists() && !p.join("victim").exists(),
            "{command:?}"
        );
    }
    p.tackle(["config"])
        .run()
        .success()
        .stdout_contains("bash runs lines with /")
        .stdout_contains("bash --norc --noprofile -c");
}

/// tackle's own environment cannot change what a line runs: no `BASH_ENV` file, no exported
/// function standing in for a command, no shell options, no `PS4` code, no `CDPATH`, no
/// `~/.bashrc` (which Debian's bash reads under `-c` when `SSH_CLIENT` is set), and none of them
/// passed on to the line's commands.
#[test]
fn the_environment_cannot_change_what_a_line_runs() {
    let p = Project::new();
    let home = p.outside("home");
    std::fs::create_dir_all(&home).unwrap();
    let touch = |name: &str| format!("/usr/bin/touch {}\n", p.join(name).display());
    std::fs::write(home.join(".bashrc"), touch("pwned-bashrc")).unwrap();
    std::fs::write(home.join(".bash_profile"), touch("pwned-profile")).unwrap();
    let bash_env = p.write_outside("bash_env.sh", touch("pwned-bash-env"));
    let env_file = p.write_outside("env.sh", touch("pwned-env"));
    p.mkdir("sub");
    let command = "echo plain; git status; \
                   [[ -o xtrace || -o noglob || -o posix ]] && echo opts-on || echo opts-off; \
                   shopt -q expand_aliases && echo aliases-on || echo aliases-off; \
                   set -x; cd tmp 2>/dev/null && echo cd-moved || echo cd-stayed; set +x; \
                   env | grep -E '^(BASH_ENV|ENV|BASH_FUNC_|SHELLOPTS|BASHOPTS|PS4|CDPATH|POSIXLY_CORRECT)' \
                   || echo env-clean";
    let mut cmd = p.tackle([
        "--headless",
        "--mode",
        "yolo",
        "--allow",
        "tool.bash.cmd:*",
        "call",
        "bash",
        &json!({ "command": command }).to_string(),
        "--json",
    ]);
    cmd.env("HOME", &home)
        .env("SSH_CLIENT", "192.0.2.1 50000 22")
        // bash reads `~/.bashrc` for ssh only in a shell of level below 2.
        .env("SHLVL", "0")
        .env("BASH_ENV", &bash_env)
        .env("ENV", &env_file)
        .env("BASH_FUNC_echo%%", "() { /usr/bin/touch pwned-func-echo; }")
        .env("BASH_FUNC_git%%", "() { /usr/bin/touch pwned-func-git; }")
        .env("SHELLOPTS", "noglob:xtrace")
        .env("BASHOPTS", "expand_aliases")
        .env("POSIXLY_CORRECT", "1")
        .env("PS4", "$(/usr/bin/touch pwned-ps4)+ ")
        .env("CDPATH", "/");
    let out = cmd.run();
    out.success();
    let text = out.text();
    if runs_bash() {
        for want in [
            "plain\n",
            "opts-off\n",
            "aliases-off\n",
            "cd-stayed\n",
            "env-clean\n",
        ] {
            assert!(text.contains(want), "{want:?} missing: {text}");
        }
    }
    let pwned: Vec<String> = std::fs::read_dir(p.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("pwned"))
        .collect();
    assert!(
        pwned.is_empty(),
        "ran code from the environment: {pwned:?}\n{text}"
    );
}

/// One `tackle serve` session of bash calls, with `[bash] prestart` on or off: every call's
/// result text (duration cut), by request id.
fn serve_bash_session(prestart: bool, commands: &[&str]) -> Vec<String> {
    let p = Project::new();
    p.config(&format!("[bash]\nprestart = {prestart}\n"));
    let mut input = vec![
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned(),
    ];
    for (i, command) in commands.iter().enumerate() {
        input.push(
            json!({"jsonrpc":"2.0","id":i + 1,"method":"tools/call",
                   "params":{"name":"bash","arguments":{"command":command}}})
            .to_string(),
        );
    }
    let out = p
        .tackle(["--mode", "yolo", "--allow", "tool.bash.cmd:*", "serve"])
        .stdin(input.join("\n") + "\n")
        .run();
    out.success();
    let mut results = vec![String::new(); commands.len()];
    for line in out.stdout.lines() {
        let msg: serde_json::Value = serde_json::from_str(line).unwrap();
        let Some(id) = msg["id"].as_u64().filter(|&id| id > 0) else {
            continue;
        };
        // The first block is the result's text; the metadata follows in a block of its own.
        let text = msg["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| out.fail(&format!("no text: {line}")))
            .to_owned();
        // "exit 0 · 3 ms": the duration is the one thing allowed to differ.
        let text = match text.split_once(" · ") {
            Some((status, rest)) => {
                format!("{status}{}", rest.split_once('\n').map_or("", |(_, r)| r))
            }
            None => text,
        };
        results[id as usize - 1] = text;
    }
    results
}

/// `[bash] prestart` changes how fast a line starts, never what it does: a served session
/// gives the same results either way, bash's own (`$-` is `hBc`, data after `exec <` is
/// never run) where bash runs lines.
#[test]
fn served_bash_calls_give_the_same_results_with_prestart_on_and_off() {
    let commands = [
        "echo \"$-\"",
        "echo \"[$BASH_EXECUTION_STRING]\"",
        "no_such_command_here; echo after",
        "printf 'echo PWNED\\n' > data; exec < data; read x; echo \"read $x\"; echo last",
        "echo out; echo err >&2; exit 3",
        "[[ a == a ]] && echo yes",
    ];
    let on = serve_bash_session(true, &commands);
    let off = serve_bash_session(false, &commands);
    assert_eq!(on, off);
    for text in &on {
        assert!(!text.contains("[stdout]\nPWNED"), "{text}");
    }
    // The data after `exec <` was read, not run.
    assert!(
        on[3].contains("[stdout]\nread echo PWNED\nlast\n"),
        "{}",
        on[3]
    );
    if runs_bash() {
        assert!(on[0].contains("[stdout]\nhBc\n"), "{}", on[0]);
        assert!(on[5].contains("[stdout]\nyes\n"), "{}", on[5]);
    }
}

/// The shell is found at a fixed path, never through `PATH`: a `bash` (or `sh`) first on
/// `PATH`, as a repository's `./bin` would be, does not run lines.
#[test]
fn a_shell_first_on_path_is_not_the_shell_that_runs_lines() {
    use std::os::unix::fs::PermissionsExt;
    let p = Project::new();
    p.mkdir("bin");
    for name in ["bash", "sh"] {
        let fake = p.write(
            format!("bin/{name}"),
            format!(
                "#!/bin/sh\n/usr/bin/touch {}\n",
                p.join("pwned-path").display()
            ),
        );
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let path = format!(
        "{}:{}",
        p.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = p.tackle([
        "--headless",
        "--allow",
        "tool.bash.cmd:echo *",
        "call",
        "bash",
        r#"{"command":"echo ran"}"#,
        "--json",
    ]);
    cmd.env("PATH", &path);
    let out = cmd.run();
    out.success();
    assert!(out.text().contains("[stdout]\nran\n"), "{}", out.text());
    assert!(!p.join("pwned-path").exists());
    let mut config = p.tackle(["config", "--json"]);
    config.env("PATH", &path);
    let out = config.run();
    out.success();
    let program = out.json()["bash"]["shell"]["path"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        ["/bin/bash", "/usr/bin/bash", "/bin/sh"].contains(&program.as_str()),
        "{program}"
    );
}

/// A line longer than one argument may be is refused as a bad argument that says what to do.
#[test]
fn a_line_too_long_for_one_argument_is_refused_with_the_way_out() {
    let p = Project::new();
    let command = format!("echo ok #{}", "x".repeat(tackle_process::MAX_SCRIPT_BYTES));
    let out = p
        .tackle([
            "--headless",
            "--mode",
            "yolo",
            "--allow",
            "tool.bash.cmd:*",
            "call",
            "bash",
            "-",
            "--json",
        ])
        .stdin(json!({ "command": command }).to_string())
        .run();
    out.tool_error("invalid_arguments");
    assert!(out.text().contains("write it to a file"), "{}", out.text());
}

/// Issue 14: through the real `tackle serve`, an interactive bash call reports its call id as
/// progress, `bash_stdin` feeds it a line by that id, and the result has the command's answer.
#[test]
fn served_interactive_bash_is_fed_through_bash_stdin() {
    use std::io::{BufRead, BufReader, Write};
    let p = Project::new();
    let mut child = p.tackle(["--allow", "tool.bash.cmd:*", "serve"]).spawn();
    let mut stdin = child.0.stdin.take().unwrap();
    let stderr = child.0.stderr.take().unwrap();
    // Keep draining stderr so the server never blocks on a full pipe.
    std::thread::spawn(move || for _ in BufReader::new(stderr).lines() {});
    let mut lines = BufReader::new(child.0.stdout.take().unwrap()).lines();
    let mut send = |msg: serde_json::Value| {
        writeln!(stdin, "{msg}").unwrap();
        stdin.flush().unwrap();
    };
    send(
        json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}),
    );
    send(json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
    send(
        json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{
        "name":"bash","arguments":{"command":"read line; echo got:$line","interactive":true},
        "_meta":{"progressToken":"p1"}}}),
    );
    let mut next = || -> serde_json::Value {
        let line = lines
            .next()
            .unwrap_or_else(|| panic!("tackle serve closed stdout"))
            .unwrap();
        serde_json::from_str(&line).unwrap()
    };
    let call_id = loop {
        let msg = next();
        assert!(msg["id"] != 1, "bash ended before it was fed: {msg}");
        if msg["method"] == "notifications/progress"
            && let Some(rest) = msg["params"]["message"]
                .as_str()
                .and_then(|m| m.strip_prefix("stdin open: call_id="))
        {
            break rest.split(';').next().unwrap().to_owned();
        }
    };
    send(
        json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{
        "name":"bash_stdin","arguments":{"call_id":call_id,"data":"hello\n"}}}),
    );
    let mut results = std::collections::BTreeMap::new();
    while results.len() < 2 {
        let msg = next();
        if let Some(id) = msg["id"].as_u64().filter(|id| *id > 0) {
            results.insert(id, msg["result"].clone());
        }
    }
    assert_ne!(results[&2]["isError"], true, "{}", results[&2]);
    let text = results[&1]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("got:hello"), "{}", results[&1]);
    drop(child);
}
