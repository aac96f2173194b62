//! `tackle daemon` as the ACP transport RFD ("Streamable HTTP & WebSocket") has a server: a
//! client written on Node's own WebSocket and fetch (undici, in the Node the conformance suite
//! installs; `tests/fixtures/acp_rfd_client.mjs`) runs the same conversation over each profile:
//! initialize, a new session, a prompt whose permission request it answers, a prompt it cancels
//! while its command runs, then closing the connection. The refusals the RFD names are cases
//! of `tests/daemon/methods.json`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;
#[path = "agents/installed.rs"]
mod installed;

use harness::Project;
use harness::daemon;
use harness::replay::{model, script};
use installed::{CONFORMANCE, Installed};
use serde_json::{Value, json};

fn call(name: &str, arguments: Value) -> Value {
    json!({"turn": {"tool_calls": [{"name": name, "arguments": arguments}]}})
}

fn say(text: &str) -> Value {
    json!({"turn": {"text": text}})
}

fn client_script() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/acp_rfd_client.mjs")
}

/// Runs the client over `profile` against a fresh daemon; what it printed, and the project.
fn converse(node: &std::path::Path, profile: &str) -> (Value, Project) {
    let p = Project::new();
    let file = script(
        &p,
        "rfd.jsonl",
        &[
            call("write_file", json!({"path": "a.txt", "content": "A\n"})),
            say("wrote a.txt"),
            call("bash", json!({"command": "sleep 300"})),
        ],
    );
    let state = p.outside("state");
    // bash is allowed, so the cancelled prompt's command is running when the client cancels.
    let d = daemon::start(
        &p,
        &state,
        &["--model", &model(&file), "--allow", "tool.bash.cmd:sleep *"],
        &[],
    );
    let out = std::process::Command::new(node)
        .arg(client_script())
        .args([
            profile,
            &d.url(),
            d.token.as_deref().unwrap(),
            p.path().to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the {profile} client failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(std::fs::read_to_string(p.join("a.txt")).unwrap(), "A\n");
    // The connection is gone; the session is still the daemon's, idle.
    let sessions = d.sessions();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    assert_eq!(sessions[0]["state"], "idle");
    (printed, p)
}

/// The order the RFD promises and the prompts' outcomes, the same over either profile.
fn check(printed: &Value) {
    let seen: Vec<&str> = printed["seen"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    let at = |what: &str| {
        seen.iter()
            .position(|s| *s == what)
            .unwrap_or_else(|| panic!("no {what} in {seen:?}"))
    };
    assert!(at("response 1") < at("response 2"), "{seen:?}");
    // The first prompt: its call asks, is allowed, runs, and its text precedes its answer.
    let asked = at("session/request_permission");
    assert!(
        at("response 2") < asked && asked < at("response 3"),
        "{seen:?}"
    );
    let last_update_before = seen[..at("response 3")]
        .iter()
        .rposition(|s| *s == "agent_message_chunk")
        .unwrap();
    assert!(last_update_before > asked, "{seen:?}");
    assert_eq!(printed["stops"]["3"], "end_turn", "{printed}");
    assert_eq!(printed["stops"]["4"], "cancelled", "{printed}");
    assert!(
        printed["connectionId"]
            .as_str()
            .is_some_and(|c| !c.is_empty()),
        "{printed}"
    );
}

#[test]
fn a_third_party_client_converses_over_the_websocket_profile() {
    let Some(node) = Installed::find_pins(&CONFORMANCE) else {
        return;
    };
    let (printed, _p) = converse(&node.bin("node"), "ws");
    check(&printed);
}

#[test]
fn a_third_party_client_converses_over_the_streamable_http_profile_on_http1() {
    let Some(node) = Installed::find_pins(&CONFORMANCE) else {
        return;
    };
    streamable(&node, "http", "http/1.1");
}

/// The RFD requires HTTP/2 of this profile: h2c (prior knowledge) through node:http2, every
/// request a stream of one connection, the `:authority` checked as `Host` is.
#[test]
fn a_third_party_client_converses_over_the_streamable_http_profile_on_http2() {
    let Some(node) = Installed::find_pins(&CONFORMANCE) else {
        return;
    };
    streamable(&node, "h2", "h2");
}

fn streamable(node: &Installed, profile: &str, protocol: &str) {
    let (printed, _p) = converse(&node.bin("node"), profile);
    check(&printed);
    // Every POST after initialize was answered 202 at once; the stream opened 200; DELETE 202
    // and it ended the stream.
    let statuses: Vec<u64> = printed["statuses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_u64().unwrap())
        .collect();
    assert_eq!(statuses[0], 200, "{statuses:?}");
    assert!(statuses.contains(&200), "{statuses:?}");
    assert_eq!(*statuses.last().unwrap(), 202, "{statuses:?}");
    assert!(
        statuses[1..].iter().all(|s| *s == 202 || *s == 200),
        "{statuses:?}"
    );
    let seen = printed["seen"].as_array().unwrap();
    assert_eq!(seen[seen.len() - 2], "stream ended", "{seen:?}");
    assert_eq!(
        seen[seen.len() - 1],
        format!("protocol {protocol}"),
        "{seen:?}"
    );
}
