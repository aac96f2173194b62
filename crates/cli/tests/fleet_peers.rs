//! The fleet's peer registry (the real servers of `scripts/start-fleet-services`): a daemon
//! started with `--name` in fleet mode registers in the database, with the variable its token
//! is in, and another fleet daemon's `call_peer` reaches it by name with no hub; once it stops
//! cleanly it is out of the registry and a call names no live peer. A row whose `token_env`
//! names another of the caller's secrets is refused before anything is sent to its URL.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use harness::Project;
use harness::daemon::{Daemon, until};
use harness::fleet::{self, call, say};
use serde_json::{Value, json};

/// Prompts `session` on `d` and returns the status and text of the call its turn made.
fn ask(d: &Daemon, session: &str, text: &str) -> (String, String) {
    let prompt = d.stream(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}),
    );
    let seen = until(&prompt, "the prompt's answer", |m| {
        m.get("result").is_some()
    });
    let ended = seen
        .iter()
        .map(|(_, m)| &m["params"]["update"])
        .find(|u| u["sessionUpdate"] == "tool_call_update" && u.get("status").is_some())
        .unwrap_or_else(|| panic!("no call ended: {seen:#?}"))
        .clone();
    let text = ended["content"][0]["content"]["text"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    (ended["status"].as_str().unwrap().to_owned(), text)
}

#[test]
fn a_named_fleet_daemon_is_found_through_the_database_and_leaves_it_when_stopped() {
    let url = fleet::fresh_schema_url();
    let config = fleet::user_config(&fleet::unique("e2e"), 5.0);
    let token = "w".repeat(40);

    let w = Project::new();
    w.user_config(&config);
    let mut worker = fleet::daemon_with_env(
        &w,
        &url,
        &[say("all 12 nodes are Ready")],
        &w.outside("w-requests.jsonl"),
        &[
            "--name",
            "worker",
            "--token-env",
            "TACKLE_PEER_TOKEN_WORKER",
            "--peer-token-env",
            "TACKLE_PEER_TOKEN_WORKER",
        ],
        &[("TACKLE_PEER_TOKEN_WORKER", &token)],
    );
    worker.token = Some(token.clone());
    let row = fleet::query(
        &url,
        "SELECT peer_id || ' ' || address || ' ' || token_env FROM peers",
    );
    assert_eq!(
        row,
        vec![format!("worker {} TACKLE_PEER_TOKEN_WORKER", worker.url())]
    );

    let c = Project::new();
    c.user_config(&format!(
        "{config}\n[tools.call_peer]\nenabled = true\ndeadline_seconds = 30\n"
    ));
    let ask_worker = call(
        "call_peer",
        json!({"peer": "worker", "prompt": "how many nodes are ready?"}),
    );
    // A row written straight into the database, pointing at a listener here and naming the
    // worker's token variable, which the caller holds, as its own.
    let rogue = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    rogue.set_nonblocking(true).unwrap();
    let inserted = fleet::query(
        &url,
        &format!(
            "INSERT INTO peers (peer_id, address, token_env, last_heartbeat, expires_at)
             VALUES ('rogue', 'http://{}', 'TACKLE_PEER_TOKEN_WORKER', clock_timestamp(),
                     clock_timestamp() + interval '1 hour') RETURNING peer_id",
            rogue.local_addr().unwrap()
        ),
    );
    assert_eq!(inserted, ["rogue"]);
    let caller = fleet::daemon_with_env(
        &c,
        &url,
        &[
            ask_worker.clone(),
            say("done"),
            call("call_peer", json!({"peer": "rogue", "prompt": "anything"})),
            say("refused"),
            ask_worker,
            say("done again"),
        ],
        &c.outside("c-requests.jsonl"),
        &["--allow", "call_peer:*"],
        &[("TACKLE_PEER_TOKEN_WORKER", &token)],
    );
    let session = caller.new_session(c.path());
    let (status, text) = ask(&caller, &session, "ask the worker");
    assert_eq!(status, "completed", "{text}");
    let answer: Value = serde_json::from_str(text.trim()).unwrap();
    assert_eq!(answer["peer"], "worker");
    assert_eq!(answer["response"], "all 12 nodes are Ready");

    let (status, text) = ask(&caller, &session, "ask the rogue");
    assert_eq!(status, "failed", "{text}");
    assert!(
        text.contains("TACKLE_PEER_TOKEN_WORKER")
            && text.contains("not peer \"rogue\"'s own variable"),
        "{text}"
    );
    assert_eq!(
        rogue.accept().map(|_| ()).unwrap_err().kind(),
        std::io::ErrorKind::WouldBlock,
        "nothing was sent to the rogue's URL"
    );
    fleet::query(&url, "DELETE FROM peers WHERE peer_id = 'rogue'");

    fleet::stop(worker);
    assert!(fleet::query(&url, "SELECT peer_id FROM peers").is_empty());
    let (status, text) = ask(&caller, &session, "ask the worker again");
    assert_eq!(status, "failed", "{text}");
    assert!(text.contains("no live peer is named worker"), "{text}");
}
