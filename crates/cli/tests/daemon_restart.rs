//! A daemon killed with SIGKILL and started again: a session waiting on schedule_next_turn is
//! waiting again and wakes when its file appears; a session whose call waited for approval is
//! asked again and goes on when allowed; a session whose command was running has it reported
//! interrupted, and the command never runs again.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use std::path::Path;

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

fn text_is(m: &Value, kind: &str, text: &str) -> bool {
    is_update(m, kind)
        && m["params"]["update"]["content"]["text"]
            .as_str()
            .is_some_and(|t| t.contains(text))
}

/// One project, its daemon's state directory and script, and the session it hosts.
struct Hosted {
    project: Project,
    args: Vec<String>,
    session: String,
}

impl Hosted {
    fn new(turns: &[Value], extra: &[&str]) -> Hosted {
        let project = Project::new();
        let file = script(&project, "model.jsonl", turns);
        let mut args = vec!["--model".to_owned(), model(&file)];
        args.extend(extra.iter().map(|a| (*a).to_owned()));
        Hosted {
            project,
            args,
            session: String::new(),
        }
    }

    fn start(&self) -> Daemon {
        let args: Vec<&str> = self.args.iter().map(String::as_str).collect();
        daemon::start(&self.project, &self.project.outside("state"), &args, &[])
    }

    /// Starts the daemon, opens the session and sends `text`, without waiting for its answer.
    fn prompt(
        &mut self,
        text: &str,
    ) -> (Daemon, std::sync::mpsc::Receiver<(Option<String>, Value)>) {
        let d = self.start();
        self.session = d.new_session(self.project.path());
        let watcher = d.stream("_tackle/session/attach", json!({"sessionId": self.session}));
        until(&watcher, "the attach", |m| {
            m["method"] == "_tackle/attached"
        });
        // The prompt's own stream is dropped: the prompt runs on without a reader.
        drop(d.stream(
            "session/prompt",
            json!({"sessionId": self.session, "prompt": [{"type": "text", "text": text}]}),
        ));
        (d, watcher)
    }

    fn log(&self) -> String {
        let path = self.project.join(format!(
            ".agents/store/sessions/{}/events.jsonl",
            self.session
        ));
        std::fs::read_to_string(path).unwrap()
    }
}

/// Waits (at most [`daemon::PATIENCE`]) for the command on the other side of the FIFO at
/// `path` to write to it.
fn rendezvous(path: &Path) -> String {
    let (tx, rx) = std::sync::mpsc::channel();
    let path = path.to_path_buf();
    std::thread::spawn(move || {
        let _ = tx.send(std::fs::read_to_string(path).unwrap());
    });
    rx.recv_timeout(daemon::PATIENCE)
        .expect("the command never reached its rendezvous (did it run?)")
}

#[test]
fn a_killed_daemon_resumes_waits_approvals_and_interrupted_calls() {
    // Waiting for a file to appear.
    let mut waiting = Hosted::new(
        &[
            call(
                "schedule_next_turn",
                json!({"reason": "look at go.txt", "on_file_change": "go.txt"}),
            ),
            say("waiting for go.txt"),
            say("go.txt is here"),
        ],
        &[],
    );
    // A write waiting for approval; after the restart the model calls it again.
    let mut asking = Hosted::new(
        &[
            call("write_file", json!({"path": "a.txt", "content": "A\n"})),
            call("write_file", json!({"path": "a.txt", "content": "A\n"})),
            say("wrote a.txt"),
        ],
        &[],
    );
    // A command running when the daemon dies.
    let mut running = Hosted::new(
        &[
            call(
                "bash",
                json!({"command": "echo ran >> runs.txt; echo $$ > pid.txt; echo go > ready; exec sleep 300"}),
            ),
            say("the command was interrupted"),
        ],
        &["--mode", "yolo", "--allow", "tool.bash.cmd:*"],
    );
    let fifo = running.project.join("ready");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);

    let (w, w_events) = waiting.prompt("wait for go.txt");
    until(&w_events, "the wait to be armed", |m| {
        text_is(m, "agent_message_chunk", "sleeping until woken")
    });
    assert_eq!(w.state(&waiting.session), "sleeping");

    let (a, a_events) = asking.prompt("write a.txt");
    until(&a_events, "the permission request", |m| {
        m["method"] == "session/request_permission"
    });
    assert_eq!(a.state(&asking.session), "waiting");

    let (r, _r_events) = running.prompt("run the command");
    assert_eq!(rendezvous(&fifo), "go\n");
    assert_eq!(r.state(&running.session), "running");

    w.kill();
    a.kill();
    r.kill();
    // The command's process outlived its daemon; it is ended here.
    let pid: i32 = std::fs::read_to_string(running.project.join("pid.txt"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // SAFETY: sending a signal to a pid this test's command wrote.
    unsafe { libc::kill(pid, libc::SIGKILL) };

    // The wait is armed again, and the file wakes it.
    let w = waiting.start();
    assert_eq!(w.state(&waiting.session), "sleeping");
    let w_events = w.stream(
        "_tackle/session/attach",
        json!({"sessionId": waiting.session}),
    );
    until(&w_events, "the attach", |m| {
        m["method"] == "_tackle/attached"
    });
    waiting.project.write("go.txt", "go\n");
    until(&w_events, "the woken turn", |m| {
        text_is(m, "agent_message_chunk", "go.txt is here")
    });
    assert!(waiting.log().contains("\"wake_ended\""));

    // The call that waited for approval never ran; the model is told, calls again, and the
    // person is asked again.
    let a = asking.start();
    let a_events = a.stream(
        "_tackle/session/attach",
        json!({"sessionId": asking.session}),
    );
    let seen = until(&a_events, "the question asked again", |m| {
        m["method"] == "session/request_permission"
    });
    let request = seen.last().unwrap().1.clone();
    assert!(!asking.project.join("a.txt").exists());
    assert!(
        asking
            .log()
            .contains("was waiting for the user's approval when tackle stopped"),
        "{}",
        asking.log()
    );
    let allow = json!({
        "jsonrpc": "2.0",
        "id": request["id"],
        "result": {"outcome": {"outcome": "selected", "optionId": "allow_once"}},
    });
    assert_eq!(a.tell(allow), 202);
    until(&a_events, "the turn's end", |m| {
        text_is(m, "agent_message_chunk", "wrote a.txt")
    });
    assert_eq!(
        std::fs::read_to_string(asking.project.join("a.txt")).unwrap(),
        "A\n"
    );

    // The running command is reported interrupted at the next prompt, never run again.
    let r = running.start();
    assert_eq!(r.state(&running.session), "idle");
    let next = r.stream(
        "session/prompt",
        json!({"sessionId": running.session, "prompt": [{"type": "text", "text": "what happened?"}]}),
    );
    let seen = until(&next, "the answer", |m| m.get("result").is_some());
    assert!(
        seen.iter()
            .any(|(_, m)| text_is(m, "agent_message_chunk", "the command was interrupted")),
        "{seen:#?}"
    );
    assert!(
        running.log().contains("\"interrupted\":true"),
        "{}",
        running.log()
    );
    assert_eq!(
        std::fs::read_to_string(running.project.join("runs.txt")).unwrap(),
        "ran\n"
    );
}
