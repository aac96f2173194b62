//! `tackle attach SESSION` on a terminal: the chat's screen over a session a daemon hosts, in
//! a detached tmux pane against a daemon on a scripted model, with a second client over HTTP.
//! What the screen shows is checked against what the daemon and the session's log hold.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use harness::Project;
use harness::daemon::{self, until};
use harness::replay::{model, script};
use harness::tmux::Tmux;
use serde_json::{Value, json};

fn call(name: &str, arguments: Value) -> Value {
    json!({"turn": {"tool_calls": [{"name": name, "arguments": arguments}]}})
}

fn say(text: &str) -> Value {
    json!({"turn": {"text": text}})
}

/// `tackle attach <session>` for the daemon of `state`, in a pane that stays after it leaves.
fn attach(p: &Project, state: &std::path::Path, session: &str) -> Tmux {
    Tmux::start_keeping(&format!(
        "cd '{root}' && env XDG_CONFIG_HOME='{xdg}' XDG_CACHE_HOME='{cache}' '{bin}' attach {session} --state-dir '{state}'",
        root = p.path().display(),
        xdg = p.xdg().display(),
        cache = p.cache_home().display(),
        bin = harness::tackle_binary().display(),
        state = state.display(),
    ))
}

#[test]
fn attach_is_the_chat_over_a_daemon_approvals_answered_here_or_elsewhere_cancel_and_leave() {
    let p = Project::new();
    let file = script(
        &p,
        "attach.jsonl",
        &[
            // The first prompt, typed in the attached chat.
            call("write_file", json!({"path": "a.txt", "content": "A\n"})),
            say("wrote a.txt"),
            // The second, from another client, whose approval that client answers.
            call("write_file", json!({"path": "b.txt", "content": "B\n"})),
            say("wrote b.txt"),
            // The third: denied here, with words for the model.
            call("write_file", json!({"path": "c.txt", "content": "C\n"})),
            say("understood, c.txt stays unwritten"),
            // The fourth: a command allowed for the session, then cancelled with Ctrl-C.
            call("bash", json!({"command": "sleep 300"})),
        ],
    );
    let state = p.outside("state");
    let d = daemon::start(&p, &state, &["--model", &model(&file)], &[]);
    let session = d.new_session(p.path());
    let chat = attach(&p, &state, &session);
    let screen = chat.wait_for(&[
        "tackle attach · session",
        &format!("attached to session {session} (idle)"),
        "· ready",
    ]);
    assert!(
        screen.contains(&format!("attached to {}", d.url())),
        "the status line names the daemon:\n{screen}"
    );

    // A line typed is the session's next prompt; its approval is answered on this screen.
    chat.type_line("write a.txt");
    let screen = chat.wait_for(&["write_file needs approval", "+A", "allow [o]nce"]);
    assert!(screen.contains("waiting for approval"), "{screen}");
    assert!(
        screen.contains("write a.txt"),
        "the prompt, as the daemon told it:\n{screen}"
    );
    chat.keys(&["o"]);
    chat.wait_for(&["wrote a.txt", "the model ended its turn", "· ready"]);
    assert_eq!(std::fs::read_to_string(p.join("a.txt")).unwrap(), "A\n");

    // Another client's prompt shows here as it runs; that client answers its approval, and
    // the question is taken down here.
    let other = d.stream("_tackle/session/attach", json!({"sessionId": session}));
    d.result(
        "_tackle/session/send",
        json!({"sessionId": session, "text": "now b.txt"}),
    );
    chat.wait_for(&["now b.txt", "write_file needs approval", "+B"]);
    let asked = until(&other, "the permission request", |m| {
        m["method"] == "session/request_permission"
            && m["params"]["toolCall"]["rawInput"]["path"] == "b.txt"
    });
    let request = asked.last().unwrap().1["id"].as_str().unwrap().to_owned();
    d.result(
        "_tackle/approval/answer",
        json!({"sessionId": session, "requestId": request, "optionId": "allow_once"}),
    );
    let screen = chat.wait_for(&[
        &format!("approval {request} decided elsewhere: allow_once"),
        "wrote b.txt",
    ]);
    assert!(!screen.contains("needs approval"), "taken down:\n{screen}");
    assert_eq!(std::fs::read_to_string(p.join("b.txt")).unwrap(), "B\n");

    // Denied here with a message: the model is told the person's words.
    chat.wait_for(&["· ready"]);
    chat.type_line("and c.txt");
    chat.wait_for(&["write_file needs approval", "+C"]);
    chat.keys(&["d"]);
    chat.keys(&["-l", "not today"]);
    chat.keys(&["Enter"]);
    chat.wait_for(&["understood, c.txt stays unwritten", "· ready"]);
    assert!(!p.join("c.txt").exists());
    let log =
        std::fs::read_to_string(p.join(format!(".agents/store/sessions/{session}/events.jsonl")))
            .unwrap();
    assert!(
        log.contains("the user rejected this call: not today"),
        "the refusal the model got carries the words typed"
    );

    // Allowed for the session, then Ctrl-C cancels the daemon's turn; the session stays.
    chat.type_line("sleep");
    chat.wait_for(&["bash needs approval", "$ sleep 300", "[s]ession"]);
    chat.keys(&["s"]);
    chat.wait_for(&["bash sleep 300", "working"]);
    chat.keys(&["C-c"]);
    chat.wait_for(&["the turn was cancelled", "· ready"]);
    assert_eq!(d.state(&session), "idle");

    // Unknown commands are said; Ctrl-D leaves, and the session is still the daemon's.
    chat.type_line("/model other");
    chat.wait_for(&["unknown command `/model`; attached to a daemon the commands are"]);
    chat.keys(&["C-d"]);
    chat.wait_for(&["tackle exited 0"]);
    assert!(
        d.sessions()
            .iter()
            .any(|s| s["sessionId"] == session.as_str())
    );
}

#[test]
fn attach_to_a_session_the_daemon_does_not_host_says_so_before_taking_the_screen() {
    let p = Project::new();
    let file = script(&p, "none.jsonl", &[say("unused")]);
    let state = p.outside("state");
    let _d = daemon::start(&p, &state, &["--model", &model(&file)], &[]);
    let chat = attach(&p, &state, "no-such-session");
    chat.wait_for(&[
        "hosts no session no-such-session",
        "`tackle attach` without a session lists those it does",
        "tackle exited 2",
    ]);
}
