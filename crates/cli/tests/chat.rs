//! `tackle chat` end to end: the real binary in a detached tmux session against a scripted
//! model (`--model replay:<file>`), driven with `send-keys` and read with `capture-pane`,
//! polled until the expected text is on screen or a deadline passes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use std::path::Path;

use harness::Project;
use harness::routes::{Reply, Route, RoutedServer};
use harness::tmux::Tmux;

/// A chat on a scripted model.
fn start(project: &Project, replay: &Path) -> Tmux {
    Tmux::chat(project, &format!("replay:{}", replay.display()))
}

/// The session id the chat's first line names.
fn session_id(screen: &str) -> String {
    screen
        .split("new session ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap()
        .to_owned()
}

fn replay(project: &Project, turns: &[serde_json::Value]) -> std::path::PathBuf {
    let mut text = String::from("{\"tackle_replay\":1}\n");
    for t in turns {
        text.push_str(&serde_json::json!({ "turn": t }).to_string());
        text.push('\n');
    }
    project.write_outside("replay.jsonl", text)
}

#[test]
fn a_chat_edits_with_approval_denies_with_a_message_cancels_and_quits() {
    let project = Project::new();
    project.write("notes.txt", "alpha\n");
    let script = replay(
        &project,
        &[
            serde_json::json!({
                "text": "# Plan\n\nI will **edit** `notes.txt`:\n\n- first\n- second\n",
                "tool_calls": [{"name": "edit_file", "arguments":
                    {"path": "notes.txt", "old_string": "alpha", "new_string": "beta"}}],
                "usage": {"input_tokens": 1200, "output_tokens": 30},
            }),
            serde_json::json!({
                "text": "Done: notes.txt now says beta.",
                "usage": {"input_tokens": 1300, "output_tokens": 12},
            }),
            serde_json::json!({
                "tool_calls": [{"name": "write_file", "arguments":
                    {"path": "new.txt", "content": "hello\u{1b}[2J\n"}}],
            }),
            serde_json::json!({
                "text": "Understood.",
                "tool_calls": [{"name": "bash", "arguments": {"command": "sleep 60"}}],
            }),
        ],
    );
    let chat = start(&project, &script);
    let screen = chat.wait_for(&["new session", "/help for commands", "context 0/200.0k"]);
    assert!(
        screen.contains("replay:"),
        "the status line names the model:\n{screen}"
    );
    assert!(
        screen.contains("mode "),
        "the status line shows the posture:\n{screen}"
    );
    assert!(screen.contains("· ready"), "{screen}");

    chat.type_line("/help");
    chat.wait_for(&[
        "/model [provider:model]",
        "/compact",
        "/todo",
        "/stats",
        "/resume [id]",
        "/quit",
    ]);
    chat.type_line("/frob");
    chat.wait_for(&["unknown command `/frob`; the commands are /help, /model"]);

    // An edit asks, showing its diff; answered once, it applies.
    chat.type_line("edit the notes");
    let screen = chat.wait_for(&[
        "edit_file needs approval",
        "-alpha",
        "+beta",
        "allow [o]nce",
    ]);
    assert!(
        screen.contains("# Plan"),
        "a heading keeps its marks:\n{screen}"
    );
    assert!(
        screen.contains("I will edit notes.txt:"),
        "emphasis is styled, not starred:\n{screen}"
    );
    assert!(screen.contains("• first"), "lists get bullets:\n{screen}");
    assert!(screen.contains("waiting for approval"), "{screen}");
    chat.keys(&["o"]);
    let screen = chat.wait_for(&["Done: notes.txt now says beta.", "the model ended its turn"]);
    assert!(screen.contains("edit_file notes.txt  ok in"), "{screen}");
    assert!(screen.contains("context 1.3k/200.0k (0%)"), "{screen}");
    assert_eq!(
        std::fs::read_to_string(project.join("notes.txt")).unwrap(),
        "beta\n"
    );

    chat.type_line("/stats");
    chat.wait_for(&["2 model turn(s) · input 2500 tokens", "output 42 tokens"]);

    // A write is denied with a message for the model; then a bash call, approved for the
    // session, is cancelled with Ctrl-C while it runs.
    chat.type_line("write a file, then wait");
    let screen = chat.wait_for(&[
        "write_file needs approval",
        "(a new file)",
        "+hello\\x1b[2J",
    ]);
    assert!(
        !screen.contains('\u{1b}'),
        "no raw escape reaches the screen"
    );
    chat.keys(&["d"]);
    chat.wait_for(&["message for the model"]);
    chat.type_line("not that file");
    let screen = chat.wait_for(&["bash needs approval", "$ sleep 60", "[s]ession"]);
    assert!(screen.contains("write_file new.txt  denied"), "{screen}");
    chat.keys(&["s"]);
    chat.wait_for(&["bash sleep 60  running…", "steer (queued"]);
    chat.type_line("use a shorter wait");
    chat.wait_for(&[
        "› use a shorter wait",
        "(queued: joins the conversation at the next safe point)",
    ]);
    chat.keys(&["C-c"]);
    let screen = chat.wait_for(&["cancelled the running tool calls", "· ready"]);
    assert!(screen.contains("bash sleep 60  cancelled"), "{screen}");
    assert!(!project.join("new.txt").exists());
    let log = project.sessions().concat();
    let denial = log.iter().any(|e| e.to_string().contains("not that file"));
    assert!(denial, "the model is told the denial's message");

    chat.type_line("/quit");
    chat.wait_gone();
}

#[test]
fn slash_commands_when_idle_then_ctrl_c_quits() {
    let project = Project::new();
    let script = replay(
        &project,
        &[
            serde_json::json!({"text": "hi"}),
            serde_json::json!({"text": "## Task\ngreet\n## Done so far\ngreeted\n## Current state\nidle\n## Open questions\nnone\n## Next steps\nwait"}),
            serde_json::json!({"text": "hello again"}),
        ],
    );
    let chat = start(&project, &script);
    let screen = chat.wait_for(&["new session"]);
    let id = session_id(&screen);
    chat.type_line("hello");
    chat.wait_for(&["hi", "the model ended its turn", "· ready"]);
    chat.type_line("/todo");
    chat.wait_for(&["no todo list yet"]);
    // The model summarises what is before its last turn; nothing more is left to compact.
    chat.type_line("/compact");
    chat.wait_for(&[
        "the conversation was compacted: a summary stands for its first 1 message(s)",
        "· ready",
    ]);
    chat.type_line("/compact");
    chat.wait_for(&["nothing to summarise"]);
    chat.type_line("/model");
    chat.wait_for(&["· model replay:", "(window 200000 tokens)"]);
    chat.type_line("/resume");
    chat.wait_for(&[
        "recent sessions (/resume <id> continues one):",
        &format!("  {id}"),
    ]);
    // Resumed from its log, the conversation goes on where the replay left it.
    chat.type_line(&format!("/resume {id}"));
    chat.wait_for(&[&format!("session {id} with model replay:")]);
    chat.type_line("once more");
    // Idle again once the run's end is on screen: a Ctrl-C then quits.
    chat.wait_for(&["hello again", "· ready"]);
    chat.keys(&["C-c"]);
    chat.wait_gone();
}

#[test]
fn the_model_asks_the_user_and_done_marks_the_task() {
    let project = Project::new();
    let ask = |id: &str, question: &str| {
        serde_json::json!({"tool_calls": [{"id": id, "name": "ask_user",
            "arguments": {"question": question, "default": "small"}}]})
    };
    let script = replay(
        &project,
        &[
            ask("q1", "Which colour?"),
            ask("q2", "Which size?"),
            serde_json::json!({"text": "blue and small, then"}),
            serde_json::json!({"text": "## Completed task\npicked\n## Task\npick\n## Done so far\npicked\n## Current state\nidle\n## Open questions\nnone\n## Next steps\nwait"}),
        ],
    );
    let chat = start(&project, &script);
    chat.wait_for(&["new session"]);
    chat.type_line("pick a colour and a size");
    chat.wait_for(&["the model asks: Which colour?", "waiting for your answer"]);
    chat.type_line("blue");
    chat.wait_for(&[
        "the model asks: Which size?",
        "Enter alone answers \"small\"",
    ]);
    chat.keys(&["Enter"]);
    chat.wait_for(&["blue and small, then", "· ready"]);
    chat.type_line("/done");
    chat.wait_for(&["say what was finished: /done <"]);
    chat.type_line("/done picked the colour and size");
    chat.wait_for(&["task done: picked the colour and size", "· ready"]);
    chat.type_line("/quit");
    chat.wait_gone();

    let log: Vec<serde_json::Value> = project
        .sessions()
        .concat()
        .into_iter()
        .map(|e| e["event"].clone())
        .collect();
    let text = |call: &str| {
        log.iter()
            .filter(|e| e["type"] == "tool_batch_finished")
            .flat_map(|b| b["results"].as_array().unwrap().clone())
            .find(|r| r["result"]["call_id"] == call)
            .map(|r| r["result"]["content"][0]["text"].clone())
    };
    assert_eq!(text("q1").unwrap(), "The user answered: blue");
    assert_eq!(
        text("q2").unwrap(),
        "The user gave no answer; the default applies: small"
    );
    let done = log.iter().find(|e| e["type"] == "checkpoint").unwrap();
    assert_eq!(done["task_done"], "picked the colour and size");
}

#[test]
fn replan_closes_the_plan_gate_and_goal_controls_name_what_was_seen() {
    let project = Project::new();
    project.config("[permissions]\nplan_mode = \"required\"\n");
    let script = replay(
        &project,
        &[
            serde_json::json!({"tool_calls": [{"id": "p1", "name": "record_plan",
                "arguments": {"plan": "1. write a.txt"}}]}),
            serde_json::json!({"text": "planned"}),
            serde_json::json!({"tool_calls": [{"id": "w1", "name": "write_file",
                "arguments": {"path": "a.txt", "content": "x\n"}}]}),
            serde_json::json!({"text": "held back"}),
            serde_json::json!({"tool_calls": [{"id": "g1", "name": "goal_get", "arguments": {}}]}),
            serde_json::json!({"text": "goal read"}),
        ],
    );
    let chat = start(&project, &script);
    let screen = chat.wait_for(&["new session"]);
    let id = session_id(&screen);
    chat.type_line("plan it");
    chat.wait_for(&["planned", "· ready"]);
    assert!(project.join(".agents/plans/plan-1.md").exists());
    chat.type_line("/replan");
    chat.wait_for(&[
        "archived .agents/plans/plan-1.md to .agents/plans/archive/;",
        "has no plan on file now",
    ]);
    assert!(!project.join(".agents/plans/plan-1.md").exists());
    assert!(project.join(".agents/plans/archive/plan-1.md").exists());
    // With the plan archived, the gate holds the write back again: no approval is asked.
    chat.type_line("now write it");
    chat.wait_for(&["held back", "· ready"]);
    assert!(!project.join("a.txt").exists());
    chat.type_line("/replan");
    chat.wait_for(&["no plan is on file in .agents/plans/;"]);

    chat.type_line("/goal");
    chat.wait_for(&["no goal is set; set one with `/goal set \"<objective>\"`"]);
    chat.type_line("/goal pause");
    chat.wait_for(&["type /goal to see it, then /goal pause"]);
    chat.type_line("/goal set ship the parser");
    chat.wait_for(&[
        "goal-1 (active, revision 1): ship the parser",
        "checklist: empty",
    ]);
    // The next run is admitted with the goal open: the goal tools are offered to it.
    chat.type_line("read the goal");
    chat.wait_for(&[
        "the goal is open: the model is offered goal_get and goal_update",
        "goal read",
        "· ready",
    ]);
    chat.type_line("/goal pause");
    chat.wait_for(&["goal-1 (paused, revision 2): ship the parser"]);
    // The goal changes behind the chat's back: a bare control acts on what was seen, and is
    // refused.
    project
        .tackle([
            "goal",
            "resume",
            "--goal-id",
            "goal-1",
            "--expected-revision",
            "2",
        ])
        .run()
        .success();
    chat.type_line("/goal cancel");
    chat.wait_for(&[
        "goal: goal goal-1 is at revision 3, not 2",
        "(in chat, /goal shows it as it is now)",
    ]);
    chat.type_line("/goal frob");
    chat.wait_for(&["`/goal frob` is not a goal command"]);
    chat.type_line("/goal cancel goal-1 3");
    chat.wait_for(&["goal-1 (canceled, revision 4): ship the parser"]);
    chat.type_line("/quit");
    chat.wait_gone();

    let log: Vec<serde_json::Value> = project
        .sessions()
        .concat()
        .into_iter()
        .map(|e| e["event"].clone())
        .collect();
    let denied = log
        .iter()
        .filter(|e| e["type"] == "tool_batch_finished")
        .flat_map(|b| b["results"].as_array().unwrap().clone())
        .find(|r| r["result"]["call_id"] == "w1")
        .unwrap();
    let text = denied["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("call record_plan"), "{text}");
    let goal = log
        .iter()
        .filter(|e| e["type"] == "tool_batch_finished")
        .flat_map(|b| b["results"].as_array().unwrap().clone())
        .find(|r| r["result"]["call_id"] == "g1")
        .unwrap();
    assert_eq!(goal["status"], "ok", "{goal}");
    let text = goal["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("ship the parser"), "{text}");
    let plan = std::fs::read_to_string(project.join(".agents/plans/archive/plan-1.md")).unwrap();
    assert!(plan.contains(&format!("session: \"{id}\"")), "{plan}");
}

/// A model the catalog does not know: chat chooses it as `tackle run` does, so it gets the window
/// its server names, and the note saying so is on screen (not printed over it).
#[test]
fn an_unknown_local_model_gets_its_servers_window() {
    let props = r#"{"default_generation_settings":{"n_ctx":6144},"total_slots":1,"model_alias":"local-qwen"}"#;
    let server = RoutedServer::start(
        vec![Route::new("GET", "/props", Reply::json(200, props))],
        Reply::json(
            404,
            r#"{"error":{"message":"File Not Found","type":"not_found_error","code":404}}"#,
        ),
    );
    let project = Project::new();
    project.user_config(&format!(
        "[providers.local]\nkind = \"openai-chat\"\nbase_url = \"{}/v1\"\n",
        server.url()
    ));
    let chat = Tmux::chat(&project, "local:local-qwen");
    chat.wait_for(&["new session", "llama.cpp at", "is not in the model catalog"]);
    chat.type_line("/model");
    chat.wait_for(&["· model local:local-qwen", "(window 6144 tokens)"]);
    chat.keys(&["C-c"]);
    chat.wait_gone();
    assert_eq!(
        server
            .requests()
            .iter()
            .filter(|r| r.path == "/props")
            .count(),
        1
    );
}
