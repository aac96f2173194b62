//! Two daemons on one PostgreSQL database and one bucket (the real servers of
//! `scripts/start-fleet-services`), each in a project directory of its own: a session started
//! on the first continues on the second after the first is killed with SIGKILL, with its whole
//! conversation, and reads on the second machine the tool output the first one stored.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use harness::Project;
use harness::daemon::{self, Daemon, until};
use harness::fleet;
use harness::replay::{model, recorded_requests, script};
use serde_json::{Value, json};

fn call(name: &str, arguments: Value) -> Value {
    json!({"turn": {"tool_calls": [{"name": name, "arguments": arguments}]}})
}

fn say(text: &str) -> Value {
    json!({"turn": {"text": text}})
}

/// A fleet daemon for `project` playing `turns`, recording what its model is sent.
fn start(project: &Project, url: &str, turns: &[Value], record: &std::path::Path) -> Daemon {
    let file = script(project, "model.jsonl", turns);
    let mut env = fleet::env(url);
    env.push(("TACKLE_REPLAY_RECORD", record.display().to_string()));
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    daemon::start(
        project,
        &project.outside("state"),
        &[
            "--model",
            &model(&file),
            "--mode",
            "yolo",
            "--allow",
            "tool.bash.cmd:*",
        ],
        &env,
    )
}

/// Sends `text` to `session` and waits for its turn to end.
fn prompt(d: &Daemon, session: &str, text: &str) {
    let watcher = d.stream("_tackle/session/attach", json!({"sessionId": session}));
    until(&watcher, "the attach", |m| {
        m["method"] == "_tackle/attached"
    });
    drop(d.stream(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}),
    ));
    until(&watcher, "the end of the turn", |m| {
        m["method"] == "_tackle/turn_ended"
    });
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
