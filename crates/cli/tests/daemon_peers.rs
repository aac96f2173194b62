//! Two daemons on loopback, one the hub, the other registered with it, and call_peer between
//! them: a peer whose token is set, one whose token variable is configured but unset, a name
//! nobody registered, a peer that never finishes (the deadline), one that hosts one session
//! only (501), one whose answer is longer than the cap, and a deny rule on `call_peer:prod-*`.
//! The peers that misbehave are small servers here, on loopback.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::mpsc;

use harness::Project;
use harness::daemon::{self, until};
use harness::replay::{model, script};
use serde_json::{Value, json};

/// How a stand-in peer behaves.
#[derive(Clone, Copy)]
enum Stand {
    /// 501 to everything: it hosts one session only.
    SingleSession,
    /// Opens sessions, then never finishes a prompt.
    Silent,
    /// Answers every prompt with a kilobyte of text.
    Verbose,
}

/// A stand-in peer on loopback; every `session/cancel` it receives is reported on the channel.
fn stand_in(kind: Stand) -> (SocketAddr, mpsc::Receiver<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (cancels, cancelled) = mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let cancels = cancels.clone();
            std::thread::spawn(move || serve(stream, kind, &cancels));
        }
    });
    (addr, cancelled)
}

fn serve(stream: TcpStream, kind: Stand, cancels: &mpsc::Sender<String>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':')
            && k.eq_ignore_ascii_case("content-length")
        {
            length = v.trim().parse().unwrap();
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let mut out = stream;
    let json = |out: &mut TcpStream, value: Value| {
        let text = value.to_string();
        let _ = write!(
            out,
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
            text.len()
        );
    };
    match (kind, message["method"].as_str().unwrap_or("")) {
        (Stand::SingleSession, _) => {
            let _ = out.write_all(
                b"HTTP/1.1 501 Not Implemented\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
        }
        (_, "session/new") => json(
            &mut out,
            json!({"jsonrpc": "2.0", "id": message["id"], "result": {"sessionId": "stand-in-1"}}),
        ),
        (_, "session/cancel") => {
            let _ = out.write_all(
                b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
            let _ = cancels.send(
                message["params"]["sessionId"]
                    .as_str()
                    .unwrap_or("")
                    .to_owned(),
            );
        }
        (Stand::Silent, "session/prompt") => {
            let _ = out.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n",
            );
            // Holds the stream open until the caller gives up on it.
            let mut rest = Vec::new();
            let _ = reader.read_to_end(&mut rest);
        }
        (Stand::Verbose, "session/prompt") => {
            let _ = out.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n",
            );
            let chunk = json!({"jsonrpc": "2.0", "method": "session/update", "params": {
                "sessionId": "stand-in-1",
                "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x".repeat(1000)}},
            }});
            let end = json!({"jsonrpc": "2.0", "id": message["id"], "result": {"stopReason": "end_turn"}});
            let _ = write!(out, "data: {chunk}\n\ndata: {end}\n\n");
        }
        _ => {
            let _ = out.write_all(
                b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
        }
    }
}

fn call_peer(peer: &str) -> Value {
    json!({"turn": {"tool_calls": [{"name": "call_peer", "arguments": {"peer": peer, "prompt": "how many nodes are ready?"}}]}})
}

fn say(text: &str) -> Value {
    json!({"turn": {"text": text}})
}

#[test]
fn call_peer_reaches_registered_peers_only_with_their_tokens_and_within_its_bounds() {
    let token = "b".repeat(40);
    // The hub, whose model calls its peers.
    let hub_project = Project::new();
    hub_project.user_config(
        "[tools.call_peer]\nenabled = true\ndeadline_seconds = 3\nmax_response_bytes = 64\n",
    );
    let peers = ["b", "c", "nobody", "silent", "single", "verbose", "prod-1"];
    let mut turns = Vec::new();
    for peer in peers {
        turns.push(call_peer(peer));
        turns.push(say(&format!("done with {peer}")));
    }
    let hub_script = script(&hub_project, "hub.jsonl", &turns);
    let hub = daemon::start(
        &hub_project,
        &hub_project.outside("state"),
        &[
            "--peer-hub",
            "--model",
            &model(&hub_script),
            "--allow",
            "call_peer:*",
            "--deny",
            "call_peer:prod-*",
        ],
        &[("TACKLE_PEER_TOKEN_B", &token)],
    );
    // The peer, which requires its token, registered under the variable callers find it in.
    let peer_project = Project::new();
    let peer_script = script(
        &peer_project,
        "peer.jsonl",
        &[say("all 12 nodes are Ready")],
    );
    let mut peer = daemon::start(
        &peer_project,
        &peer_project.outside("state"),
        &[
            "--model",
            &model(&peer_script),
            "--token-env",
            "TACKLE_PEER_TOKEN_B",
            "--hub",
            &hub.url(),
            "--name",
            "b",
            "--peer-token-env",
            "TACKLE_PEER_TOKEN_B",
            "--hub-token-env",
            "HUB_TOKEN",
        ],
        &[
            ("TACKLE_PEER_TOKEN_B", &token),
            ("HUB_TOKEN", hub.token.as_deref().unwrap()),
        ],
    );
    peer.token = Some(token.clone());
    let (silent, silent_cancels) = stand_in(Stand::Silent);
    let (single, _) = stand_in(Stand::SingleSession);
    let (verbose, verbose_cancels) = stand_in(Stand::Verbose);
    for (name, url, env) in [
        ("c", peer.url(), Some("TACKLE_PEER_TOKEN_C")),
        ("silent", format!("http://{silent}"), None),
        ("single", format!("http://{single}"), None),
        ("verbose", format!("http://{verbose}"), None),
        ("prod-1", peer.url(), Some("TACKLE_PEER_TOKEN_PROD_1")),
    ] {
        let body = json!({"name": name, "url": url, "token_env": env}).to_string();
        let registered = hub.request("POST", "/peers", &[], body.as_bytes());
        assert_eq!(registered.status, 200, "{registered:?}");
    }
    let bad = hub.request(
        "POST",
        "/peers",
        &[],
        br#"{"name": "x", "url": "file:///etc"}"#,
    );
    assert_eq!(bad.status, 400, "{bad:?}");
    // A registration chooses the URL its token goes to, so it may not name another secret.
    let greedy = hub.request(
        "POST",
        "/peers",
        &[],
        br#"{"name": "x", "url": "http://127.0.0.1:9", "token_env": "OPENAI_API_KEY"}"#,
    );
    assert_eq!(greedy.status, 400, "{greedy:?}");
    assert!(
        greedy.body.contains("not a peer token variable"),
        "{greedy:?}"
    );
    // Nor another peer's variable: b's token would go to this URL.
    let thief = hub.request(
        "POST",
        "/peers",
        &[],
        br#"{"name": "x", "url": "http://127.0.0.1:9", "token_env": "TACKLE_PEER_TOKEN_B"}"#,
    );
    assert_eq!(thief.status, 400, "{thief:?}");
    assert!(
        thief.body.contains("not peer \"x\"'s own variable"),
        "{thief:?}"
    );
    let listed = hub.request("GET", "/peers", &[], b"").json();
    assert_eq!(listed["peers"].as_array().unwrap().len(), 6, "{listed}");

    let session = hub.new_session(hub_project.path());
    let mut results = Vec::new();
    for peer in peers {
        let prompt = hub.stream(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": format!("ask {peer}")}]}),
        );
        let seen = until(&prompt, "the prompt's answer", |m| {
            m.get("result").is_some()
        });
        let ended = seen
            .iter()
            .map(|(_, m)| &m["params"]["update"])
            .find(|u| u["sessionUpdate"] == "tool_call_update")
            .unwrap_or_else(|| panic!("{peer}: no call ended: {seen:#?}"))
            .clone();
        let text = ended["content"][0]["content"]["text"]
            .as_str()
            .unwrap_or("")
            .to_owned();
        results.push((peer, ended["status"].as_str().unwrap().to_owned(), text));
    }
    let result = |peer: &str| results.iter().find(|r| r.0 == peer).unwrap().clone();

    let (_, status, text) = result("b");
    assert_eq!(status, "completed", "{text}");
    let answer: Value = serde_json::from_str(text.trim()).unwrap();
    assert_eq!(answer["peer"], "b");
    assert_eq!(answer["response"], "all 12 nodes are Ready");
    assert_eq!(answer["truncated"], false);
    assert!(answer["duration_ms"].is_u64());
    // The delegated turn stays in the peer's own log, under the session id returned.
    let peer_session = answer["session_id"].as_str().unwrap();
    let peer_log = peer_project.join(format!(
        ".agents/store/sessions/{peer_session}/events.jsonl"
    ));
    let log = std::fs::read_to_string(&peer_log).unwrap();
    assert!(log.contains("how many nodes are ready?"), "{log}");

    let (_, status, text) = result("c");
    assert_eq!(status, "failed");
    assert!(
        text.contains("TACKLE_PEER_TOKEN_C") && text.contains("not set"),
        "{text}"
    );

    let (_, status, text) = result("nobody");
    assert_eq!(status, "failed");
    assert!(text.contains("no live peer is named nobody"), "{text}");
    assert!(
        text.contains("b, c, prod-1, silent, single, verbose"),
        "{text}"
    );

    let (_, status, text) = result("silent");
    assert_eq!(status, "failed");
    assert!(text.contains("deadline of 3 s"), "{text}");
    assert_eq!(
        silent_cancels.recv_timeout(daemon::PATIENCE).unwrap(),
        "stand-in-1",
        "the peer's session is cancelled when the deadline passes"
    );

    let (_, status, text) = result("single");
    assert_eq!(status, "failed");
    assert!(
        text.contains("501") && text.contains("more than one session"),
        "{text}"
    );

    let (_, status, text) = result("verbose");
    assert_eq!(status, "completed", "{text}");
    let answer: Value = serde_json::from_str(text.trim()).unwrap();
    assert_eq!(answer["truncated"], true);
    assert_eq!(answer["response"].as_str().unwrap().len(), 64);
    assert_eq!(
        verbose_cancels.recv_timeout(daemon::PATIENCE).unwrap(),
        "stand-in-1"
    );

    let (_, status, text) = result("prod-1");
    assert_eq!(status, "failed");
    assert!(text.contains("call_peer:prod-1"), "{text}");

    // Each call let its session on the peer go; the turns stay in the peer's logs.
    assert!(peer.sessions().is_empty(), "{:?}", peer.sessions());

    // No token reached the hub's transcript.
    for log in hub_project.sessions() {
        for record in log {
            assert!(!record.to_string().contains(&token), "{record}");
        }
    }
}

#[test]
fn call_peer_enabled_where_no_hub_is_refuses_to_start() {
    let p = Project::new();
    p.user_config("[tools.call_peer]\nenabled = true\n");
    let daemon = p
        .tackle(["daemon", "--listen", "127.0.0.1:0", "--state-dir"])
        .arg(p.outside("state"))
        .run();
    daemon.code(2);
    assert!(daemon.stderr.contains("--peer-hub"), "{}", daemon.stderr);
    let file = script(&p, "run.jsonl", &[say("hi")]);
    let run = p.tackle(["run", "--model", &model(&file), "hi"]).run();
    assert_ne!(run.code, Some(0));
    assert!(
        run.stderr
            .contains("call_peer runs only in sessions of `tackle daemon`"),
        "{}",
        run.stderr
    );
    // A project's own configuration does not enable it while the folder is untrusted.
    let q = Project::new();
    q.config("[tools.call_peer]\nenabled = true\n");
    let file = script(&q, "run.jsonl", &[say("hi")]);
    q.tackle(["run", "--model", &model(&file), "hi"])
        .run()
        .success();
}
