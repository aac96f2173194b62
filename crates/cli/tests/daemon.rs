//! `tackle daemon` over HTTP: its methods as a table of requests and answers
//! (`tests/daemon/methods.json`), a prompt whose permission request another client answers,
//! attach from a cursor, input sent to a running and an idle session, the token rules, and
//! `tackle run --daemon`, `tackle attach` and `tackle daemon status|stop` as a user runs them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;
mod mcp_venv;

use std::io::{Read, Write};
use std::net::TcpStream;

use harness::Project;
use harness::daemon::{self, Daemon, is_update, until};
use harness::replay::{model, script};
use serde_json::{Value, json};

fn call(name: &str, arguments: Value) -> Value {
    json!({"turn": {"tool_calls": [{"name": name, "arguments": arguments}]}})
}

fn say(text: &str) -> Value {
    json!({"turn": {"text": text}})
}

/// `value` with `$SESSION`, `$ROOT` and `$HOST` replaced, wherever they are in its strings.
fn filled(value: &Value, session: &str, root: &str, host: &str) -> Value {
    let text = value
        .to_string()
        .replace("$SESSION", session)
        .replace("$ROOT", root)
        .replace("$HOST", host);
    serde_json::from_str(&text).unwrap()
}

#[test]
fn every_method_answers_as_the_table_says() {
    let p = Project::new();
    let file = script(&p, "methods.jsonl", &[say("hello")]);
    let d = daemon::start(&p, &p.outside("state"), &["--model", &model(&file)], &[]);
    let session = d.new_session(p.path());
    let prompt = d.stream(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]}),
    );
    until(&prompt, "the first prompt's answer", |m| {
        m.get("result").is_some()
    });
    let root = p.path().to_str().unwrap();
    let table: Vec<Value> = serde_json::from_str(include_str!("daemon/methods.json")).unwrap();
    for case in &table {
        let case = filled(case, &session, root, &d.addr.to_string());
        let name = case["name"].as_str().unwrap();
        let answer = match case.get("rpc") {
            Some(method) => {
                let body = json!({
                    "jsonrpc": "2.0",
                    "id": 7,
                    "method": method,
                    "params": case.get("params").cloned().unwrap_or(Value::Null),
                });
                d.request("POST", "/acp", &[], body.to_string().as_bytes())
            }
            None => raw(&d, &case),
        };
        let expect = &case["expect"];
        assert_eq!(
            u64::from(answer.status),
            expect["status"].as_u64().unwrap(),
            "{name}: {answer:?}"
        );
        if let Some(fields) = expect.get("json").and_then(Value::as_object) {
            let got = answer.json();
            for (pointer, want) in fields {
                assert_eq!(
                    got.pointer(pointer),
                    Some(want),
                    "{name}: {pointer} in {got}"
                );
            }
        }
        if let Some(text) = expect.get("contains").and_then(Value::as_str) {
            assert!(answer.body.contains(text), "{name}: {text:?} in {answer:?}");
        }
    }
}

/// A case that is not a method call: its own request line, headers and body; the daemon's
/// token unless the case says `no_token`, its address as `Host` unless the case names another.
fn raw(d: &Daemon, case: &Value) -> daemon::Answer {
    let method = case["method"].as_str().unwrap();
    let path = case["path"].as_str().unwrap();
    let body: Vec<u8> = case
        .get("raw")
        .map(|text| text.as_str().unwrap().as_bytes().to_vec())
        .unwrap_or_default();
    // A length declared but never sent: the daemon must refuse it before reading.
    let length = case
        .get("declared")
        .and_then(Value::as_u64)
        .unwrap_or(body.len() as u64);
    let host = case
        .get("host")
        .and_then(Value::as_str)
        .map_or_else(|| d.addr.to_string(), str::to_owned);
    let content_type = case
        .get("content_type")
        .and_then(Value::as_str)
        .unwrap_or("application/json");
    let mut head = format!(
        "{method} {path} HTTP/1.0\r\nHost: {host}\r\nContent-Type: {content_type}\r\nContent-Length: {length}\r\n"
    );
    if let (Some(token), None) = (&d.token, case.get("no_token")) {
        head.push_str(&format!("Authorization: Bearer {token}\r\n"));
    }
    for (k, v) in case
        .get("headers")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        head.push_str(&format!("{k}: {}\r\n", v.as_str().unwrap()));
    }
    head.push_str("\r\n");
    let mut s = TcpStream::connect(d.addr).unwrap();
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(&body).unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    daemon::Answer {
        status: head.split_whitespace().nth(1).unwrap().parse().unwrap(),
        head: head.to_owned(),
        body: body.to_owned(),
    }
}

#[test]
fn a_prompt_streams_while_another_client_answers_its_approval_and_attaches_from_a_cursor() {
    let p = Project::new();
    let file = script(
        &p,
        "prompt.jsonl",
        &[
            call("write_file", json!({"path": "a.txt", "content": "A\n"})),
            say("wrote a.txt"),
            say("the next answer"),
            say("queued answer"),
        ],
    );
    let d = daemon::start(&p, &p.outside("state"), &["--model", &model(&file)], &[]);
    let session = d.new_session(p.path());
    let watcher = d.stream("_tackle/session/attach", json!({"sessionId": session}));
    until(&watcher, "the attach", |m| {
        m["method"] == "_tackle/attached"
    });
    let prompt = d.stream(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "write a.txt"}]}),
    );
    // The watcher sees the question and answers it as a JSON-RPC response.
    let seen = until(&watcher, "the permission request", |m| {
        m["method"] == "session/request_permission"
    });
    let request = &seen.last().unwrap().1;
    assert!(
        seen.iter().any(|(_, m)| is_update(m, "user_message_chunk")),
        "the watcher sees what was asked: {seen:#?}"
    );
    let cursor = seen.last().unwrap().0.clone().expect("events carry ids");
    assert_eq!(d.state(&session), "waiting");
    let answer = json!({
        "jsonrpc": "2.0",
        "id": request["id"],
        "result": {"outcome": {"outcome": "selected", "optionId": "allow_once"}},
    });
    assert_eq!(d.tell(answer.clone()), 202);
    // The prompt's own stream ends with its answer, after everything the prompt said.
    let streamed = until(&prompt, "the prompt's answer", |m| {
        m.get("result").is_some()
    });
    assert_eq!(
        streamed.last().unwrap().1["result"]["stopReason"],
        "end_turn"
    );
    assert!(
        streamed
            .iter()
            .any(|(_, m)| is_update(m, "agent_message_chunk")
                && m["params"]["update"]["content"]["text"] == "wrote a.txt"),
        "{streamed:#?}"
    );
    assert_eq!(std::fs::read_to_string(p.join("a.txt")).unwrap(), "A\n");
    // The second answer to the same request finds nothing open.
    assert_eq!(d.tell(answer), 404);
    // Attaching after the request's cursor gets only what followed: the answer's note first.
    let late = d.stream(
        "_tackle/session/attach",
        json!({"sessionId": session, "lastEventId": cursor}),
    );
    let after = until(&late, "the resolution", |m| {
        m["method"] == "_tackle/approval_resolved"
    });
    assert_eq!(after.len(), 2, "{after:#?}");
    assert_eq!(after[0].1["method"], "_tackle/attached");
    assert_eq!(after[0].1["params"]["retold"], false);
    assert_eq!(after[1].1["params"]["outcome"], "allow_once");
    // An idle session's input is its next prompt; the watcher sees it run.
    let sent = d.result(
        "_tackle/session/send",
        json!({"sessionId": session, "text": "and then?"}),
    );
    assert_eq!(sent["delivered"], "queued");
    until(&watcher, "the queued prompt's answer", |m| {
        is_update(m, "agent_message_chunk")
            && m["params"]["update"]["content"]["text"] == "the next answer"
    });
    // A cursor from another epoch (a restart) is told the stored conversation.
    let retold = d.stream(
        "_tackle/session/attach",
        json!({"sessionId": session, "lastEventId": "0000.3"}),
    );
    until(&retold, "the retold conversation", |m| {
        is_update(m, "user_message_chunk")
            && m["params"]["update"]["content"]["text"] == "and then?"
    });
    // `tackle daemon status` and `tackle attach` as a user runs them.
    let state = p.outside("state");
    let status = p
        .tackle(["daemon", "status", "--json", "--state-dir"])
        .arg(&state)
        .run();
    status.success();
    let status: Value = serde_json::from_str(&status.stdout).unwrap();
    assert_eq!(status["sessions"][0]["sessionId"], session);
    let listed = p.tackle(["attach", "--state-dir"]).arg(&state).run();
    listed.success();
    assert!(listed.stdout.contains(&session), "{}", listed.stdout);
    let stopped = p
        .tackle(["daemon", "stop", "--state-dir"])
        .arg(&state)
        .run();
    stopped.success();
    assert!(!state.join("daemon.json").exists());
}

#[test]
fn a_daemon_with_a_token_refuses_requests_without_it_and_needs_one_off_loopback() {
    let p = Project::new();
    let token = "t".repeat(40);
    let mut d = daemon::start(
        &p,
        &p.outside("state"),
        &["--token-env", "DAEMON_TOKEN"],
        &[("DAEMON_TOKEN", &token)],
    );
    assert_eq!(d.request("GET", "/health", &[], b"").status, 401);
    d.token = Some("wrong".repeat(8));
    assert_eq!(d.request("GET", "/health", &[], b"").status, 401);
    d.token = Some(token.clone());
    assert_eq!(d.request("GET", "/health", &[], b"").status, 200);
    // Status finds the token through the variable the daemon was started with.
    p.tackle(["daemon", "status", "--state-dir"])
        .arg(p.outside("state"))
        .env("DAEMON_TOKEN", &token)
        .run()
        .success();
    // Off loopback without a token, with a short one, or with a variable unset: refused.
    for (args, env, says) in [
        (
            vec!["--listen", "0.0.0.0:0"],
            vec![],
            "without a bearer token",
        ),
        (
            vec!["--listen", "0.0.0.0:0", "--token-env", "SHORT"],
            vec![("SHORT", "abc")],
            "at least 32",
        ),
        (vec!["--token-env", "UNSET_TOKEN"], vec![], "UNSET_TOKEN"),
    ] {
        let mut cmd = p.tackle(["daemon", "--state-dir"]);
        cmd.arg(p.outside("other-state")).args(&args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.run();
        out.code(2);
        assert!(out.stderr.contains(says), "{args:?}: {}", out.stderr);
    }
    // One daemon per state directory.
    let second = p
        .tackle(["daemon", "--listen", "127.0.0.1:0", "--state-dir"])
        .arg(p.outside("state"))
        .run();
    second.code(2);
    assert!(
        second.stderr.contains("another daemon"),
        "{}",
        second.stderr
    );
}

#[test]
fn tackle_run_on_a_daemon_prints_the_session_and_leaves_it_there() {
    let p = Project::new();
    let file = script(&p, "run.jsonl", &[say("done remotely")]);
    let d = daemon::start(&p, &p.outside("state"), &["--model", &model(&file)], &[]);
    let out = p
        .tackle(["run", "--json", "--daemon"])
        .arg(d.url())
        .arg("--daemon-state-dir")
        .arg(p.outside("state"))
        .arg("do it")
        .run();
    out.success();
    let lines: Vec<Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let last = lines.last().unwrap();
    assert_eq!(last["type"], "prompt_ended");
    assert_eq!(last["stopReason"], "end_turn");
    assert!(
        lines.iter().any(|m| is_update(m, "agent_message_chunk")
            && m["params"]["update"]["content"]["text"] == "done remotely"),
        "{}",
        out.stdout
    );
    let session = last["sessionId"].as_str().unwrap();
    assert_eq!(d.state(session), "idle");
    assert!(out.stderr.contains(&format!("tackle attach {session}")));
}

/// The messages a session's journal holds from the start of this daemon's epoch.
fn journal(d: &Daemon, session: &str, until_text: &str) -> Vec<Value> {
    let epoch = d.result("_tackle/health", Value::Null)["epoch"]
        .as_str()
        .unwrap()
        .to_owned();
    let rx = d.stream(
        "_tackle/session/attach",
        json!({"sessionId": session, "lastEventId": format!("{epoch}.0")}),
    );
    until(&rx, until_text, |m| {
        m["params"]["update"]["content"]["text"]
            .as_str()
            .is_some_and(|t| t.contains(until_text))
    })
    .into_iter()
    .map(|(_, m)| m)
    .collect()
}

#[test]
fn an_editors_mcp_servers_join_a_session_only_in_a_folder_the_user_trusted() {
    let p = Project::new();
    let file = script(
        &p,
        "mcp.jsonl",
        &[
            call(
                "mcp__fixture__echo",
                json!({"text": "from the editor's server"}),
            ),
            say("echoed"),
        ],
    );
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/mcp_fixture_server.py");
    let servers = json!([
        {"name": "fixture", "command": mcp_venv::venv_python(), "args": [fixture], "env": []},
        {"name": "leaky", "command": "/bin/true", "args": [], "env": [{"name": "K", "value": "${OPENAI_API_KEY}"}]},
        {"type": "http", "name": "remote", "url": "http://127.0.0.1:9/mcp", "headers": []},
    ]);
    let d = daemon::start(
        &p,
        &p.outside("state"),
        &["--model", &model(&file), "--mode", "yolo"],
        &[],
    );
    let open = |d: &Daemon| -> String {
        d.result(
            "session/new",
            json!({"cwd": p.path(), "mcpServers": servers}),
        )["sessionId"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    // An untrusted folder: none starts, and the session says why and what to do.
    let untrusted = open(&d);
    let told = journal(&d, &untrusted, "are not started");
    let text = told.last().unwrap()["params"]["update"]["content"]["text"].to_string();
    assert!(
        text.contains("fixture") && text.contains("tackle trust"),
        "{text}"
    );
    drop(d);
    // Trusted: the stdio server joins; the one reading tackle's environment and the HTTP one
    // are refused, each with its reason.
    p.trust();
    let d = daemon::start(
        &p,
        &p.outside("state2"),
        &["--model", &model(&file), "--mode", "yolo"],
        &[],
    );
    let trusted = open(&d);
    let told = journal(&d, &trusted, "stdio servers from editors");
    let all: String = told.iter().map(|m| m.to_string()).collect();
    assert!(all.contains("join this session: fixture"), "{all}");
    assert!(all.contains("${NAME}") && all.contains("leaky"), "{all}");
    assert!(
        all.contains("stdio servers from editors") && all.contains("remote"),
        "{all}"
    );
    let prompt = d.stream(
        "session/prompt",
        json!({"sessionId": trusted, "prompt": [{"type": "text", "text": "echo"}]}),
    );
    let seen = until(&prompt, "the answer", |m| m.get("result").is_some());
    let ended = seen
        .iter()
        .map(|(_, m)| &m["params"]["update"])
        .find(|u| u["sessionUpdate"] == "tool_call_update")
        .unwrap();
    assert_eq!(ended["status"], "completed", "{ended}");
    assert!(
        ended.to_string().contains("from the editor's server"),
        "{ended}"
    );
}

#[test]
fn a_daemons_token_goes_only_to_the_daemon_that_drew_it() {
    let p = Project::new();
    let d = daemon::start(&p, &p.outside("state"), &[], &[]);
    let token = d.token.clone().expect("the daemon drew a token");
    // Another server, named with --daemon beside the daemon's state directory.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let elsewhere = listener.local_addr().unwrap();
    let (heads, head) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = std::io::BufReader::new(stream);
            let mut text = String::new();
            loop {
                let mut line = String::new();
                if std::io::BufRead::read_line(&mut reader, &mut line).unwrap_or(0) == 0
                    || line == "\r\n"
                {
                    break;
                }
                text.push_str(&line);
            }
            let _ = reader
                .get_mut()
                .write_all(b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n");
            let _ = heads.send(text);
        }
    });
    let out = p
        .tackle(["run", "--daemon"])
        .arg(format!("http://{elsewhere}"))
        .arg("--daemon-state-dir")
        .arg(p.outside("state"))
        .arg("hello")
        .run();
    assert_ne!(out.code, Some(0));
    let sent = head.recv_timeout(daemon::PATIENCE).unwrap();
    assert!(!sent.contains(&token), "{sent}");
    assert!(
        !sent.to_ascii_lowercase().contains("authorization"),
        "{sent}"
    );
    // The daemon itself gets it, through the same directory.
    let file = script(&p, "hello.jsonl", &[say("hello back")]);
    drop(d);
    let d = daemon::start(&p, &p.outside("state"), &["--model", &model(&file)], &[]);
    p.tackle(["run", "--daemon"])
        .arg(d.url())
        .arg("--daemon-state-dir")
        .arg(p.outside("state"))
        .arg("hello")
        .run()
        .success();
}

#[test]
fn sessions_are_capped_and_a_closed_one_makes_room_and_can_be_loaded_again() {
    let p = Project::new();
    let file = script(&p, "cap.jsonl", &[say("first"), say("second")]);
    let state = p.outside("state");
    let d = daemon::start(
        &p,
        &state,
        &["--model", &model(&file), "--max-sessions", "1"],
        &[],
    );
    let first = d.new_session(p.path());
    let prompt = d.stream(
        "session/prompt",
        json!({"sessionId": first, "prompt": [{"type": "text", "text": "one"}]}),
    );
    until(&prompt, "the answer", |m| m.get("result").is_some());
    let refused = d.call("session/new", json!({"cwd": p.path(), "mcpServers": []}));
    assert!(
        refused["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("--max-sessions 1")),
        "{refused}"
    );
    assert_eq!(
        d.result("_tackle/session/close", json!({"sessionId": first})),
        json!({})
    );
    assert!(d.sessions().is_empty());
    let hosted = std::fs::read_to_string(state.join("sessions.json")).unwrap();
    assert!(!hosted.contains(&first), "{hosted}");
    let closed_again = d.call("_tackle/session/close", json!({"sessionId": first}));
    assert!(closed_again.get("error").is_some(), "{closed_again}");
    // Loaded again from its log, it goes on where it was.
    d.result(
        "session/load",
        json!({"sessionId": first, "cwd": p.path(), "mcpServers": []}),
    );
    let prompt = d.stream(
        "session/prompt",
        json!({"sessionId": first, "prompt": [{"type": "text", "text": "two"}]}),
    );
    let seen = until(&prompt, "the answer", |m| m.get("result").is_some());
    assert!(
        seen.iter().any(|(_, m)| is_update(m, "agent_message_chunk")
            && m["params"]["update"]["content"]["text"] == "second"),
        "{seen:#?}"
    );
}

#[test]
fn generated_nesting_in_a_body_is_refused_and_the_daemon_goes_on() {
    let p = Project::new();
    let d = daemon::start(&p, &p.outside("state"), &[], &[]);
    for depth in [64usize, 1_000, 100_000] {
        let body = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"_tackle/health\",\"params\":{}{}}}",
            "[".repeat(depth),
            "]".repeat(depth)
        );
        let answer = d.request("POST", "/acp", &[], body.as_bytes());
        if depth <= 64 {
            assert_eq!(answer.status, 200, "{depth}: {answer:?}");
        } else {
            assert_eq!(answer.status, 400, "{depth}: {answer:?}");
            assert_eq!(answer.json()["error"]["code"], -32700, "{depth}");
        }
    }
    assert_eq!(d.request("GET", "/health", &[], b"").status, 200);
}
