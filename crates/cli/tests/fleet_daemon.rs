//! Two daemons on one PostgreSQL database and one bucket (the real servers of
//! `scripts/start-fleet-services`), each in a project directory of its own: a session started
//! on the first continues on the second after the first is killed with SIGKILL, with its whole
//! conversation, and reads on the second machine the tool output the first one stored; a
//! paused daemon fenced, the database cut mid-run, a clean stop letting sessions go, `tackle
//! run` resumed on another machine and forked on a third from the database, and an editor's
//! `tackle acp` keeping its sessions there.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use harness::Project;
use harness::daemon::{Daemon, until};
use harness::fleet;
use harness::fleet::{call, prompt, say};
use harness::replay::{model, recorded_requests, script};
use serde_json::{Value, json};

/// A fleet daemon for `project` playing `turns`, recording what its model is sent.
fn start(project: &Project, url: &str, turns: &[Value], record: &std::path::Path) -> Daemon {
    fleet::daemon(project, url, turns, record, &[])
}

#[test]
fn a_session_started_on_one_daemon_continues_on_another_after_a_sigkill() {
    let url = fleet::fresh_schema_url();
    let prefix = fleet::unique("e2e");
    let config = fleet::user_config(&prefix, 2.0);

    let a = Project::new();
    a.user_config(&config);
    let a_record = a.outside("a-requests.jsonl");
    let first = start(
        &a,
        &url,
        &[
            call("bash", json!({"command": "echo alpha-from-machine-a"})),
            say("read the notes on A"),
        ],
        &a_record,
    );
    let session = first.new_session(a.path());
    prompt(&first, &session, "first prompt, on A");
    first.kill();

    // What A acknowledged is in the database: the session's events and the artifacts they name.
    let events = fleet::query(
        &url,
        &format!("SELECT count(*) FROM events WHERE session_id = '{session}'"),
    );
    assert!(events[0].parse::<u64>().unwrap() >= 4, "{events:?}");
    let refs = fleet::query(
        &url,
        &format!("SELECT DISTINCT sha256 FROM artifact_refs WHERE session_id = '{session}'"),
    );
    assert!(!refs.is_empty(), "A's tool output is referenced");

    // B has no copy of the session: it takes it from the database once A's lease expires,
    // and reads A's stored output from the bucket.
    let b = Project::new();
    b.user_config(&config);
    assert!(!b.join(".agents/store/sessions").join(&session).exists());
    let b_record = b.outside("b-requests.jsonl");
    let reads: Vec<Value> = refs
        .iter()
        .map(|hex| json!({"name": "read_file", "arguments": {"path": format!("artifact://{hex}")}}))
        .collect();
    let second = start(
        &b,
        &url,
        &[
            // A replay counts the conversation's turns: A played the first two.
            say("(played on A)"),
            say("(played on A)"),
            json!({"turn": {"tool_calls": reads}}),
            say("continued on B"),
        ],
        &b_record,
    );
    let loaded = second.call(
        "session/load",
        json!({"sessionId": session, "cwd": b.path(), "mcpServers": []}),
    );
    assert!(loaded.get("error").is_none(), "{loaded}");
    prompt(&second, &session, "second prompt, on B");

    let requests = recorded_requests(&b_record);
    let first_on_b = requests.first().expect("B's model was asked").to_string();
    for earlier in [
        "first prompt, on A",
        "read the notes on A",
        "alpha-from-machine-a",
    ] {
        assert!(
            first_on_b.contains(earlier),
            "B's model lacks {earlier:?}: {first_on_b}"
        );
    }
    assert_eq!(requests.len(), 2, "{requests:#?}");
    let last_on_b = requests[1].to_string();
    assert!(
        last_on_b.matches("alpha-from-machine-a").count() >= 2,
        "the artifact read on B holds A's output: {last_on_b}"
    );
    for hex in &refs {
        assert!(
            b.join(format!(".agents/store/artifacts/{hex}")).is_file(),
            "artifact {hex} fetched into B's store"
        );
    }
    // B's events went to the database after A's, under a later lease.
    let after = fleet::query(
        &url,
        &format!("SELECT count(*) FROM events WHERE session_id = '{session}'"),
    );
    assert!(after[0].parse::<u64>().unwrap() > events[0].parse::<u64>().unwrap());
    let epoch = fleet::query(
        &url,
        &format!("SELECT lease_epoch FROM sessions WHERE id = '{session}'"),
    );
    assert_eq!(epoch, vec!["2".to_owned()], "A claimed once, B once");
}

#[test]
fn a_daemon_paused_past_its_lease_is_fenced_when_it_comes_back() {
    let url = fleet::fresh_schema_url();
    let config = fleet::user_config(&fleet::unique("e2e"), 1.0);
    let a = Project::new();
    a.user_config(&config);
    let first = start(
        &a,
        &url,
        &[say("one on A"), say("two on A")],
        &a.outside("a-requests.jsonl"),
    );
    let session = first.new_session(a.path());
    prompt(&first, &session, "first prompt, on A");
    // Paused (a machine cut off, a process stopped) past its lease: it renews nothing.
    let pid = first.child.0.id().to_string();
    assert!(
        std::process::Command::new("kill")
            .args(["-STOP", &pid])
            .status()
            .unwrap()
            .success()
    );
    let b = Project::new();
    b.user_config(&config);
    let second = start(
        &b,
        &url,
        &[say("(played on A)"), say("taken over on B")],
        &b.outside("b-requests.jsonl"),
    );
    let loaded = second.call(
        "session/load",
        json!({"sessionId": session, "cwd": b.path(), "mcpServers": []}),
    );
    assert!(loaded.get("error").is_none(), "{loaded}");
    prompt(&second, &session, "second prompt, on B");
    assert!(
        std::process::Command::new("kill")
            .args(["-CONT", &pid])
            .status()
            .unwrap()
            .success()
    );
    // Back, A still thinks it runs the session; its first write is refused and said.
    let watcher = first.stream("_tackle/session/attach", json!({"sessionId": session}));
    until(&watcher, "the attach", |m| {
        m["method"] == "_tackle/attached"
    });
    drop(first.stream(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "third, on A"}]}),
    ));
    let seen = until(&watcher, "the refusal", |m| {
        m.to_string().contains("taken over by")
    });
    assert!(!seen.is_empty());
    // Nothing of A's third prompt reached the database; B's turn is there whole.
    let texts = fleet::query(
        &url,
        &format!(
            "SELECT payload->>'text' FROM events WHERE session_id = '{session}' AND payload->>'type' = 'user_input' ORDER BY seq"
        ),
    );
    assert_eq!(texts, vec!["first prompt, on A", "second prompt, on B"]);
}

#[test]
fn the_database_going_away_fails_the_turn_clearly_and_loses_nothing_acknowledged() {
    let direct = fleet::fresh_schema_url();
    let proxy = fleet::Proxy::start();
    let url = proxy.url(&direct);
    let p = Project::new();
    p.user_config(&fleet::user_config(&fleet::unique("e2e"), 5.0));
    let record = p.outside("requests.jsonl");
    let d = start(&p, &url, &[say("one"), say("three")], &record);
    let session = d.new_session(p.path());
    prompt(&d, &session, "first prompt");

    proxy.cut();
    let watcher = d.stream("_tackle/session/attach", json!({"sessionId": session}));
    until(&watcher, "the attach", |m| {
        m["method"] == "_tackle/attached"
    });
    let answer: Vec<Value> = d
        .stream(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "second prompt"}]}),
        )
        .iter()
        .map(|(_, m)| m)
        .collect();
    let said = format!("{answer:?}");
    assert!(
        said.contains("fleet:") && said.contains("session"),
        "the failure names the database: {said}"
    );
    // The daemon still answers what needs no database.
    assert!(!d.sessions().is_empty());

    proxy.restore();
    // The session is reopened from what the database acknowledged.
    d.result("_tackle/session/close", json!({"sessionId": session}));
    let loaded = d.call(
        "session/load",
        json!({"sessionId": session, "cwd": p.path(), "mcpServers": []}),
    );
    assert!(loaded.get("error").is_none(), "{loaded}");
    prompt(&d, &session, "third prompt");
    let texts = fleet::query(
        &direct,
        &format!(
            "SELECT payload->>'text' FROM events WHERE session_id = '{session}' AND payload->>'type' = 'user_input' ORDER BY seq"
        ),
    );
    assert_eq!(texts, vec!["first prompt", "third prompt"]);
    let last = recorded_requests(&record).last().unwrap().to_string();
    assert!(
        last.contains("first prompt") && last.contains("one"),
        "{last}"
    );
}

#[test]
fn a_daemon_stopped_cleanly_lets_its_sessions_go_at_once() {
    let url = fleet::fresh_schema_url();
    let p = Project::new();
    // A lease far longer than the test: only a release frees the session in time.
    p.user_config(&fleet::user_config(&fleet::unique("e2e"), 600.0));
    let d = start(&p, &url, &[say("one")], &p.outside("requests.jsonl"));
    let session = d.new_session(p.path());
    prompt(&d, &session, "first prompt");
    let owner = fleet::query(
        &url,
        &format!("SELECT coalesce(owner, '') FROM sessions WHERE id = '{session}'"),
    );
    assert_ne!(owner, vec![String::new()], "held while the daemon runs");
    fleet::stop(d);
    let owner = fleet::query(
        &url,
        &format!("SELECT coalesce(owner, '') FROM sessions WHERE id = '{session}'"),
    );
    assert_eq!(
        owner,
        vec![String::new()],
        "released when the daemon stopped"
    );
}

#[test]
fn tackle_run_keeps_its_session_in_the_fleet_and_another_machine_resumes_it() {
    let url = fleet::fresh_schema_url();
    let config = fleet::user_config(&fleet::unique("e2e"), 5.0);
    let run = |p: &Project, turns: &[Value], args: &[&str]| {
        let file = script(p, "run.jsonl", turns);
        let record = p.outside("run-requests.jsonl");
        let mut cmd = p.tackle([
            "--mode",
            "yolo",
            "--allow",
            "tool.bash.cmd:*",
            "--model",
            &model(&file),
            "run",
            "--json",
        ]);
        cmd.args(args).env("TACKLE_REPLAY_RECORD", &record);
        fleet::set_env(&mut cmd, &url);
        let out = cmd.run();
        out.success();
        (harness::replay::json_lines(&out.stdout), record)
    };
    let a = Project::new();
    a.user_config(&config);
    // The command's output holds a NUL, which the database cannot keep as it is.
    let (lines, _) = run(
        &a,
        &[
            call("bash", json!({"command": "printf 'nul\\000here'"})),
            say("noted on A"),
        ],
        &["remember the word heron"],
    );
    let session = lines[0]["session"].as_str().unwrap().to_owned();
    let b = Project::new();
    b.user_config(&config);
    let (_, record) = run(
        &b,
        &[say("(played on A)"), say("(played on A)"), say("heron")],
        &["--resume", &session, "which word?"],
    );
    let asked = recorded_requests(&record).last().unwrap().to_string();
    assert!(
        asked.contains("remember the word heron") && asked.contains("noted on A"),
        "{asked}"
    );
    assert!(
        asked.contains("nul\u{FFFD}here"),
        "the NUL kept as U+FFFD: {asked}"
    );

    // A third machine forks it at A's last turn from the database (it has no copy), and the
    // fork goes on there without B's turn.
    let c = Project::new();
    c.user_config(&config);
    let mut fork = c.tackle(["sessions", "fork", &session, "--turn", "2", "--json"]);
    fleet::set_env(&mut fork, &url);
    let forked = fork.run();
    forked.success();
    let forked: Value = serde_json::from_str(forked.stdout.trim()).unwrap();
    let fork_id = forked["session"].as_str().unwrap().to_owned();
    let rows = fleet::query(
        &url,
        &format!("SELECT count(*) FROM events WHERE session_id = '{fork_id}'"),
    );
    assert_eq!(
        rows,
        vec![(forked["records"].as_u64().unwrap() + 1).to_string()],
        "the fork's session_started and every copied record are in the database"
    );
    let (_, record) = run(
        &c,
        &[say("(played on A)"), say("(played on A)"), say("forked")],
        &["--resume", &fork_id, "and now?"],
    );
    let asked = recorded_requests(&record).last().unwrap().to_string();
    assert!(
        asked.contains("noted on A") && asked.contains("and now?"),
        "{asked}"
    );
    assert!(
        !asked.contains("which word?"),
        "B's turn is not in the fork: {asked}"
    );
}

#[test]
fn an_editors_tackle_acp_keeps_its_sessions_in_the_fleet_and_lets_them_go_when_it_exits() {
    use std::io::{BufRead, BufReader, Write};
    let url = fleet::fresh_schema_url();
    let p = Project::new();
    p.user_config(&fleet::user_config(&fleet::unique("e2e"), 600.0));
    let file = script(&p, "acp.jsonl", &[say("hello from the editor's agent")]);
    let mut cmd = p.tackle(["--model", &model(&file), "acp"]);
    fleet::set_env(&mut cmd, &url);
    let mut acp = cmd.spawn();
    let mut stdin = acp.0.stdin.take().unwrap();
    let mut lines = BufReader::new(acp.0.stdout.take().unwrap()).lines();
    let mut ask = move |id: u64, method: &str, params: Value| -> Value {
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(stdin, "{line}").unwrap();
        loop {
            let message: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
            if message["id"] == id {
                assert!(message.get("error").is_none(), "{message}");
                return message["result"].clone();
            }
        }
    };
    ask(
        1,
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": {}}),
    );
    let session = ask(2, "session/new", json!({"cwd": p.path(), "mcpServers": []}))["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    let owner = format!("SELECT coalesce(owner, '') FROM sessions WHERE id = '{session}'");
    assert_ne!(
        fleet::query(&url, &owner),
        vec![String::new()],
        "held while the editor runs"
    );
    let ended = ask(
        3,
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "greet me"}]}),
    );
    assert_eq!(ended["stopReason"], "end_turn");
    let said = fleet::query(
        &url,
        &format!(
            "SELECT count(*) FROM events WHERE session_id = '{session}' AND payload::text LIKE '%hello from the editor%'"
        ),
    );
    assert_ne!(said, vec!["0".to_owned()], "the turn is in the database");
    // The editor goes away: the session is let go for another process to take at once.
    drop(ask);
    acp.0.wait().unwrap();
    assert_eq!(fleet::query(&url, &owner), vec![String::new()]);
}
