//! The terminal approval prompt end to end: `tackle call` in a detached tmux session, so it has
//! a controlling terminal to ask on, answered with `send-keys` and read with `capture-pane`,
//! polled until the expected text is on screen or a deadline passes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use harness::tmux::Tmux;
use harness::{Project, tackle_binary};

/// The shell line that runs `tackle call <tool> <arguments>` in `project`, asking on the pane;
/// `env` is put before it (`NO_COLOR=1`, `-u NO_COLOR`).
fn call_line(project: &Project, env: &str, tool: &str, arguments: &serde_json::Value) -> String {
    format!(
        "cd '{root}' && env -u TACKLE_HEADLESS {env} XDG_CONFIG_HOME='{xdg}' '{bin}' --root '{root}' call {tool} '{arguments}'",
        root = project.path().display(),
        xdg = project.xdg().display(),
        bin = tackle_binary().display(),
    )
}

#[test]
fn call_shows_the_edit_diff_and_applies_it_once_approved() {
    let project = Project::new();
    project.write("src/notes.txt", "alpha\nbeta\ngamma\n");
    let args = serde_json::json!({
        "path": "./src/notes.txt", "old_string": "beta", "new_string": "BETA\u{1b}[2J"
    });
    let pane = Tmux::start_keeping(&call_line(&project, "NO_COLOR=1", "edit_file", &args));
    let screen = pane.wait_for(&[
        "tackle: edit_file needs approval",
        "--- a/src/notes.txt",
        "+++ b/src/notes.txt",
        "allow [o]nce, for this [s]ession, or [d]eny?",
    ]);
    for line in ["   alpha", "  -beta", "  +BETA\\x1b[2J", "   gamma"] {
        assert!(
            screen.lines().any(|l| l == line),
            "{line:?} is not a line of:\n{screen}"
        );
    }
    assert!(screen.contains("  why:  "), "{screen}");
    assert!(
        !screen.contains("  call: "),
        "the diff stands for the call:\n{screen}"
    );
    pane.type_line("o");
    pane.wait_for(&["tackle exited 0"]);
    assert_eq!(
        std::fs::read_to_string(project.join("src/notes.txt")).unwrap(),
        "alpha\nBETA\u{1b}[2J\ngamma\n"
    );
}

#[test]
fn call_shows_a_new_file_in_colour_and_a_denial_leaves_it_unwritten() {
    let project = Project::new();
    let args = serde_json::json!({"path": "new.txt", "content": "hello\nworld\n"});
    let pane = Tmux::start_keeping(&call_line(&project, "-u NO_COLOR", "write_file", &args));
    let screen = pane.wait_for(&[
        "tackle: write_file needs approval",
        "--- /dev/null",
        "+++ b/new.txt",
        "(a new file)",
        "+hello",
        "+world",
    ]);
    assert!(screen.contains("@@ -0,0 +1,2 @@"), "{screen}");
    let coloured = pane.screen_escaped();
    let green = coloured
        .lines()
        .find(|l| l.contains("+hello"))
        .unwrap_or_default();
    assert!(green.contains("\u{1b}[32m"), "{coloured:?}");
    pane.type_line("d");
    pane.wait_for(&["message for the model"]);
    pane.type_line("not now");
    let screen = pane.wait_for(&["tackle exited"]);
    assert!(
        !screen.contains("tackle exited 0"),
        "a denied call fails:\n{screen}"
    );
    assert!(
        screen.contains("refused by the user: not now"),
        "the result carries the message:\n{screen}"
    );
    assert!(!project.join("new.txt").exists());
    let log = project.sessions().concat();
    assert!(
        log.iter().any(|e| e["event"]["status"] == "denied"),
        "the call is recorded as denied: {log:?}"
    );
}

#[test]
fn run_shows_the_models_edit_and_a_bash_command_and_applies_them_once_approved() {
    let project = Project::new();
    project.write("notes.txt", "one\ntwo\n");
    let mut replay = String::from("{\"tackle_replay\":1}\n");
    for turn in [
        serde_json::json!({"tool_calls": [{"name": "edit_file", "arguments":
            {"path": "notes.txt", "old_string": "two", "new_string": "three"}}]}),
        serde_json::json!({"tool_calls": [{"name": "bash", "arguments":
            {"command": "echo done > out.txt && cat notes.txt"}}]}),
        serde_json::json!({"text": "Edited."}),
    ] {
        replay.push_str(&serde_json::json!({ "turn": turn }).to_string());
        replay.push('\n');
    }
    let replay = project.write_outside("replay.jsonl", replay);
    let line = format!(
        "cd '{root}' && env -u TACKLE_HEADLESS NO_COLOR=1 XDG_CONFIG_HOME='{xdg}' '{bin}' --root '{root}' run --model 'replay:{replay}' 'edit the notes'",
        root = project.path().display(),
        xdg = project.xdg().display(),
        bin = tackle_binary().display(),
        replay = replay.display(),
    );
    let pane = Tmux::start_keeping(&line);
    let screen = pane.wait_for(&[
        "tackle: edit_file needs approval",
        "--- a/notes.txt",
        "allow [o]nce",
    ]);
    assert!(
        screen.lines().any(|l| l == "  -two") && screen.lines().any(|l| l == "  +three"),
        "{screen}"
    );
    pane.type_line("o");
    let screen = pane.wait_for(&["tackle: bash needs approval", "  $ echo done"]);
    assert!(screen.contains("  $ cat notes.txt"), "{screen}");
    pane.type_line("o");
    pane.wait_for(&["Edited.", "tackle exited 0"]);
    assert_eq!(
        std::fs::read_to_string(project.join("notes.txt")).unwrap(),
        "one\nthree\n"
    );
    assert_eq!(
        std::fs::read_to_string(project.join("out.txt")).unwrap(),
        "done\n"
    );
}
