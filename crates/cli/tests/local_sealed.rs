//! The sealed posture against the real local model (Qwen2.5-Coder-1.5B behind llama.cpp's
//! server, `crates/llm/tests/local_server`): as the planner, it reads a file the user vouched
//! for and sees its content; as the processor (`--agentic-small-model`), it rewrites a file
//! nobody vouched for, whose bytes the planner never receives, and the rewrite is written back
//! once the person at the terminal approves the diff.
//!
//! A 1.5B model does not chain the three steps of a processed write by itself, so the second
//! test scripts the planner and leaves the processing to the real model. Times are printed,
//! never asserted.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

#[path = "../../llm/tests/local_server/mod.rs"]
mod local_server;

use std::time::{Duration, Instant};

use harness::replay::{json_lines, model, script};
use harness::tmux::Tmux;
use harness::{Project, tackle_binary};
use serde_json::{Value, json};

/// A project whose user config names the local server, with a vouched `src/`.
fn project(base_url: &str) -> Project {
    let p = Project::new();
    p.write("src/readme.txt", "The number is 7316.\n");
    p.write("notes/todo.md", "buy milk\nfix the bike\n");
    p.user_config(&format!(
        "[providers.local-chat]\nkind = \"openai-chat\"\nbase_url = \"{base_url}/v1\"\n\n\
         [models.\"local-chat:local-qwen\"]\ncontext_window = 16384\nmax_output = 600\n"
    ));
    p.tackle(["trust", "--sealed", "src"]).run().success();
    p
}

#[test]
fn the_local_model_as_planner_reads_a_vouched_file() {
    let Some(server) = local_server::server(16384, 2) else {
        return;
    };
    let p = project(&server.base_url);
    let started = Instant::now();
    let out = p
        .tackle(["--posture", "sealed", "--model", "local-chat:local-qwen"])
        .args(["run", "--json", "--max-turns", "4"])
        .arg("Read src/readme.txt and tell me the number written in it.")
        .timeout(Duration::from_secs(600))
        .run();
    out.success();
    let events = json_lines(&out.stdout);
    assert!(
        events.iter().any(|e| e["type"] == "tool_call_finished"
            && e["tool"] == "read_file"
            && e["status"] == "ok"),
        "no read_file that ran ok: {}",
        out.stdout
    );
    let shown: String = p
        .sessions()
        .concat()
        .iter()
        .filter(|l| l["event"]["type"] == "tool_batch_finished")
        .map(|l| l["event"]["results"].to_string())
        .collect();
    assert!(
        shown.contains("7316"),
        "the vouched content was shown: {shown}"
    );
    assert_eq!(events.last().unwrap()["outcome"], "finished");
    eprintln!(
        "sealed planner on the local model: {:.1?}",
        started.elapsed()
    );
}

#[test]
fn the_local_model_as_processor_rewrites_an_unvouched_file_written_back_on_approval() {
    let Some(server) = local_server::server(16384, 2) else {
        return;
    };
    let p = project(&server.base_url);
    let call = |id: &str, name: &str, arguments: Value| json!({"turn": {"tool_calls": [{"id": id, "name": name, "arguments": arguments}]}});
    let planner = script(
        &p,
        "planner.jsonl",
        &[
            call("c0", "read_file", json!({"path": "notes/todo.md"})),
            call(
                "c1",
                "spawn_processor",
                json!({"reads": ["ref:0"], "instruction": "Rewrite the document with every line in uppercase."}),
            ),
            call(
                "c2",
                "write_file",
                json!({"path": "notes/todo.md", "contents_ref": "ref:1"}),
            ),
            json!({"turn": {"text": "done"}}),
        ],
    );
    let line = format!(
        "cd '{root}' && env -u TACKLE_HEADLESS NO_COLOR=1 XDG_CONFIG_HOME='{xdg}' HOME='{home}' '{bin}' --root '{root}' --posture sealed --model '{planner}' --agentic-small-model local-chat:local-qwen run 'uppercase the notes'",
        root = p.path().display(),
        xdg = p.xdg().display(),
        home = p.home().display(),
        bin = tackle_binary().display(),
        planner = model(&planner),
    );
    let started = Instant::now();
    let pane = Tmux::start_keeping(&line);
    // On a terminal, reading a file nobody vouched for first offers to vouch for it: no.
    pane.wait_for_within(
        &["sealed.vouch:notes/todo.md", "allow [o]nce or [d]eny?"],
        Duration::from_secs(120),
    );
    pane.type_line("d");
    pane.wait_for(&["message for the model"]);
    pane.type_line("");
    pane.wait_for_within(
        &[
            "tackle: write_file needs approval",
            "write notes/todo.md",
            "which the planner has not seen",
            "+BUY MILK",
            "allow [o]nce or [d]eny?",
        ],
        Duration::from_secs(600),
    );
    pane.type_line("o");
    pane.wait_for_within(&["tackle exited 0"], Duration::from_secs(120));
    let written = std::fs::read_to_string(p.join("notes/todo.md")).unwrap();
    assert!(
        written.contains("BUY MILK") && written.contains("FIX THE BIKE"),
        "the processor's rewrite was written back: {written:?}"
    );
    // The planner's requests never held the file's words, in either case.
    let log = p.sessions().concat();
    let turns: String = log
        .iter()
        .filter(|l| l["event"]["type"] == "tool_batch_finished")
        .map(|l| l["event"]["results"].to_string())
        .collect();
    assert!(!turns.to_lowercase().contains("buy milk"), "{turns}");
    eprintln!(
        "sealed processor on the local model, approved write: {:.1?}",
        started.elapsed()
    );
}
