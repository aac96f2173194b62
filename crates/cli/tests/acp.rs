//! `tackle acp` driven by a published ACP client (the Python `agent-client-protocol` package,
//! pinned in scripts/install-test-deps; `tests/acp/client.py`): a whole session with tool
//! calls, a permission request allowed once and one rejected, a prompt cancelled while its
//! command runs, plan mode refusing a write, a prompt cancelled while its permission request
//! is open, and the session loaded again by a new process.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;
mod mcp_venv;

use std::path::Path;
use std::process::Command;

use harness::Project;
use harness::replay::{model, script};
use serde_json::{Value, json};

fn client(phase: &[&str], p: &Project, model_flag: &str) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/acp/client.py");
    let out = Command::new(mcp_venv::venv_python())
        .arg(script)
        .arg(phase[0])
        .arg(harness::tackle_binary())
        .arg(p.path())
        .args(&phase[1..])
        .args(["--model", model_flag])
        .env("XDG_CONFIG_HOME", p.xdg())
        .env("XDG_CACHE_HOME", p.cache_home())
        .env("HOME", p.home())
        .output()
        .expect("running the ACP client");
    assert!(
        out.status.success(),
        "the ACP client failed:\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn updates<'a>(out: &'a Value, kind: &str) -> Vec<&'a Value> {
    out["updates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| &u["update"])
        .filter(|u| u["sessionUpdate"] == kind)
        .collect()
}

fn call(name: &str, arguments: Value) -> Value {
    json!({"turn": {"tool_calls": [{"name": name, "arguments": arguments}]}})
}

fn say(text: &str) -> Value {
    json!({"turn": {"text": text}})
}

#[test]
fn an_editor_runs_a_whole_session_and_loads_it_again() {
    let p = Project::new();
    p.write("README.md", "a project\n");
    let turns = vec![
        // "write a.txt": allowed once.
        call("write_file", json!({"path": "a.txt", "content": "A\n"})),
        json!({"turn": {"thinking": "the file is written", "text": "wrote a.txt"}}),
        // "write b.txt": rejected; the model is told and says so.
        call("write_file", json!({"path": "b.txt", "content": "B\n"})),
        say("the write was rejected"),
        // "wait": a command that records its pid and sleeps until the prompt is cancelled.
        call(
            "bash",
            json!({"command": "echo $$ > pid.txt; exec sleep 120"}),
        ),
        // "write c.txt" in plan mode: refused by the gate, never asked.
        call("write_file", json!({"path": "c.txt", "content": "C\n"})),
        say("plan mode refused the write"),
        // "write d.txt": cancelled while its permission request is open.
        call("write_file", json!({"path": "d.txt", "content": "D\n"})),
    ];
    let file = script(&p, "acp.jsonl", &turns);
    let out = client(&["first"], &p, &model(&file));

    // What tackle declares.
    let caps = &out["initialize"]["agentCapabilities"];
    assert_eq!(caps["loadSession"], true, "{caps}");
    assert_eq!(out["initialize"]["protocolVersion"], 1);
    let modes = &out["new_session"]["modes"];
    assert_eq!(modes["currentModeId"], "ask", "{modes}");
    let ids: Vec<&str> = modes["availableModes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["ask", "accept-edits", "plan"]);
    let session = out["new_session"]["sessionId"].as_str().unwrap().to_owned();

    // Prompts ended as they should: two turns, a cancel, then plan mode's turn.
    assert_eq!(
        out["stops"],
        json!(["end_turn", "end_turn", "cancelled", "end_turn", "cancelled"])
    );
    assert!(!p.join("d.txt").exists());
    // The write allowed once happened; the rejected one and plan mode's did not.
    assert_eq!(std::fs::read_to_string(p.join("a.txt")).unwrap(), "A\n");
    assert!(!p.join("b.txt").exists());
    assert!(!p.join("c.txt").exists());
    // The cancel ended the command's process.
    assert_eq!(out["sleeper_alive_after_cancel"], false);
    // yolo is not on an editor's menu when the configuration does not run in it.
    assert!(
        out["yolo_refused"]
            .as_str()
            .is_some_and(|e| e.contains("not a mode")),
        "{}",
        out["yolo_refused"]
    );

    // Four permission requests (none in plan mode), each offering once, the session and
    // reject; the last was never answered.
    let asks = out["asks"].as_array().unwrap();
    assert_eq!(asks.len(), 4, "{asks:#?}");
    assert_eq!(asks[3]["answer"], "cancel-while-asked");
    for ask in &asks[..3] {
        assert_eq!(ask["session"], session.as_str());
        assert_eq!(
            ask["options"],
            json!(["allow_once", "allow_session", "reject"])
        );
        assert_eq!(
            ask["kinds"],
            json!(["allow_once", "allow_always", "reject_once"])
        );
    }

    // The editor saw each call: its kind, its location, an edit as a diff, and how it ended.
    let started = updates(&out, "tool_call");
    let a = started
        .iter()
        .find(|u| u["rawInput"]["path"] == "a.txt")
        .expect("the write of a.txt as a tool call");
    assert_eq!(a["kind"], "edit");
    assert_eq!(a["locations"][0]["path"], p.join("a.txt").to_str().unwrap());
    assert_eq!(a["content"][0]["type"], "diff");
    assert_eq!(a["content"][0]["newText"], "A\n");
    assert!(started.iter().any(|u| u["kind"] == "execute"));
    let ended = updates(&out, "tool_call_update");
    let statuses: Vec<&str> = ended.iter().filter_map(|u| u["status"].as_str()).collect();
    assert!(statuses.contains(&"completed"), "{statuses:?}");
    assert!(statuses.contains(&"failed"), "{statuses:?}");
    // The rejected call's result reached the model and the editor.
    assert!(
        ended
            .iter()
            .any(|u| u["content"].to_string().contains("rejected")),
        "{ended:#?}"
    );
    // The answer streamed as message chunks; the mode change was told.
    let said: String = updates(&out, "agent_message_chunk")
        .iter()
        .map(|u| u["content"]["text"].as_str().unwrap_or(""))
        .collect();
    assert!(said.contains("wrote a.txt"), "{said}");
    assert!(said.contains("plan mode refused the write"), "{said}");
    assert_eq!(
        updates(&out, "current_mode_update")[0]["currentModeId"],
        "plan"
    );
    // The reasoning streamed apart from the answer.
    let thought: String = updates(&out, "agent_thought_chunk")
        .iter()
        .map(|u| u["content"]["text"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(thought, "the file is written");

    // A new process loads the session: the conversation is told again, in order.
    let loaded = client(&["load", &session], &p, &model(&file));
    let listed = loaded["list_sessions"]["sessions"].as_array().unwrap();
    assert_eq!(listed.len(), 1, "{listed:#?}");
    assert_eq!(listed[0]["sessionId"], session.as_str());
    assert_eq!(listed[0]["title"], "write a.txt");
    assert_eq!(listed[0]["cwd"], p.path().to_str().unwrap());
    let users: Vec<&str> = updates(&loaded, "user_message_chunk")
        .iter()
        .filter_map(|u| u["content"]["text"].as_str())
        .collect();
    for prompt in [
        "write a.txt",
        "write b.txt",
        "wait",
        "write c.txt",
        "write d.txt",
    ] {
        assert!(
            users.iter().any(|u| u.contains(prompt)),
            "{prompt}: {users:?}"
        );
    }
    assert!(
        updates(&loaded, "tool_call")
            .iter()
            .any(|u| u["rawInput"]["path"] == "a.txt")
    );
    assert_eq!(
        updates(&loaded, "agent_thought_chunk")[0]["content"]["text"],
        "the file is written"
    );
    assert!(
        loaded["unknown_session"]
            .as_str()
            .is_some_and(|e| !e.is_empty()),
        "{}",
        loaded["unknown_session"]
    );
}

/// The editor closes the connection while a prompt runs: tackle ends the turn, the command
/// it started and itself, instead of waiting for the turn to finish.
#[test]
fn an_editor_that_goes_away_ends_the_running_turn_and_its_processes() {
    use std::io::{BufRead, BufReader, Write};
    use std::time::{Duration, Instant};

    let p = Project::new();
    let turns = vec![call(
        "bash",
        json!({"command": "echo $$ > pid.txt; exec sleep 120"}),
    )];
    let file = script(&p, "gone.jsonl", &turns);
    let mut child = Command::new(harness::tackle_binary())
        .args(["--mode", "yolo", "--model", &model(&file), "acp"])
        .current_dir(p.path())
        .env("XDG_CONFIG_HOME", p.xdg())
        .env("XDG_CACHE_HOME", p.cache_home())
        .env("HOME", p.home())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let cwd = serde_json::Value::String(p.path().display().to_string());
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":1}}}}"#
    )
    .unwrap();
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":2,"method":"session/new","params":{{"cwd":{cwd},"mcpServers":[]}}}}"#).unwrap();
    let session = loop {
        let line = lines.next().unwrap().unwrap();
        let message: Value = serde_json::from_str(&line).unwrap();
        if message["id"] == 2 {
            break message["result"]["sessionId"].as_str().unwrap().to_owned();
        }
    };
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{{"sessionId":"{session}","prompt":[{{"type":"text","text":"wait"}}]}}}}"#).unwrap();
    let pid_file = p.join("pid.txt");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !std::fs::read_to_string(&pid_file).is_ok_and(|t| t.ends_with('\n')) {
        assert!(Instant::now() < deadline, "the command never started");
        std::thread::yield_now();
    }
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    drop(stdin);
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "tackle acp still runs 30 s after the editor went"
        );
        std::thread::yield_now();
    };
    assert!(status.success(), "{status}");
    // The sleeper went with the turn (a zombie of nobody's counts as gone).
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    assert!(
        stat.is_empty() || stat.split_whitespace().nth(2) == Some("Z"),
        "the command's process is still running: {stat}"
    );
}
