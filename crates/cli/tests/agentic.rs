//! The agentic tools through the real binary, with replay scripts for the run's model
//! (`--model replay:<file>`) and the small model (`--agentic-small-model replay:<file>`):
//! `tackle run` calling agentic_read_file on a 5,000-line file, where the subtask's session
//! holds the read_file calls and the whole file as the small model's input while the root's
//! log holds only the answer and the reference; the catalog the run's model is offered, with
//! and without a small model and with `--disable-tools`; and the flag's errors.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

use harness::Project;
use harness::replay::{json_lines, model, recorded_requests, script};
use serde_json::{Value, json};

fn big_file(p: &Project) {
    let mut text = String::new();
    for n in 1..=5000 {
        if n == 3817 {
            text.push_str("NEEDLE=4242 is the value asked about\n");
        } else {
            text.push_str(&format!("filler line {n}: lorem ipsum dolor sit amet\n"));
        }
    }
    p.write("big.txt", text);
}

fn records<'a>(log: &'a [Value], kind: &str) -> Vec<&'a Value> {
    log.iter()
        .map(|l| &l["event"])
        .filter(|e| e["type"] == kind)
        .collect()
}

#[test]
fn the_small_model_reads_the_file_and_the_run_only_the_answer() {
    let p = Project::new();
    big_file(&p);
    let parent = script(
        &p,
        "parent.jsonl",
        &[
            json!({"turn": {"tool_calls": [{"id": "a1", "name": "agentic_read_file", "arguments": {
                "path": "big.txt", "question": "Which line holds NEEDLE, and what value?"}}]}}),
            json!({"turn": {"text": "Line 3817 holds 4242."}}),
        ],
    );
    let small = script(
        &p,
        "small.jsonl",
        &[json!({"turn": {"text": "NEEDLE=4242 is on line 3817.",
            "usage": {"input_tokens": 61000, "output_tokens": 12}}})],
    );
    let out = p
        .tackle(["--model", &model(&parent)])
        .args(["--agentic-small-model", &model(&small)])
        .args(["run", "--json", "find the needle"])
        .run();
    out.success();
    let events = json_lines(&out.stdout);
    let started: Vec<&str> = events
        .iter()
        .filter(|e| e["type"] == "tool_call_started")
        .map(|e| e["tool"].as_str().unwrap())
        .collect();
    // The wrapper, and the pages it read in its subtask (the front end sees every call).
    assert_eq!(
        started,
        ["agentic_read_file", "read_file", "read_file", "read_file"]
    );
    let usage = events
        .iter()
        .find(|e| e["type"] == "usage" && !e["subtask"].is_null())
        .expect("a usage event for the subtask");
    assert_eq!(usage["subtask"]["tool"], "agentic_read_file");
    assert_eq!(usage["usage"]["input_tokens"], 61000);
    assert_eq!(events.last().unwrap()["outcome"], "finished");

    let logs = p.sessions();
    assert_eq!(logs.len(), 2, "the root's log and the subtask's");
    let (root, subtask): (Vec<_>, Vec<_>) =
        logs.iter().partition(|l| l[0]["event"]["parent"].is_null());
    let (root, subtask) = (&root[0], &subtask[0]);
    assert_eq!(subtask[0]["event"]["agent"], "agentic_read_file");
    assert_eq!(subtask[0]["event"]["parent"], root[0]["event"]["session"]);
    assert_eq!(subtask[0]["event"]["tools"], json!(["read_file"]));

    // What the run's model was shown: the answer and the reference, not the file.
    let shown = records(root, "tool_batch_finished")[0]["results"].to_string();
    assert!(shown.contains("NEEDLE=4242 is on line 3817."), "{shown}");
    assert!(shown.contains("big.txt lines 1–5000"), "{shown}");
    assert!(!shown.contains("filler line 2500"), "{shown}");
    assert!(records(root, "call_started").len() == 1);

    // What the small model was sent: the whole file, its lines numbered.
    let input = records(subtask, "user_input")[0]["text"].as_str().unwrap();
    assert!(input.contains("2500\tfiller line 2500") && input.contains("3817\tNEEDLE=4242"));
    assert!(input.contains("5000\tfiller line 5000"));
    assert_eq!(records(subtask, "call_started").len(), 3);
    assert_eq!(records(subtask, "model_turn").len(), 1);

    // `sessions ls` lists the subtask under its parent, named by the wrapper it served.
    let ls = p.tackle(["sessions", "ls"]).run();
    ls.success();
    assert!(
        ls.stdout
            .lines()
            .any(|l| l.starts_with("  └ agentic_read_file ")),
        "{}",
        ls.stdout
    );
}

/// The names of the tools the run's model was offered in its first request.
fn offered(p: &Project, flags: &[&str]) -> Vec<String> {
    let parent = script(p, "one.jsonl", &[json!({"turn": {"text": "ok"}})]);
    let record = p.outside(format!("asked-{}.jsonl", flags.len()));
    let _ = std::fs::remove_file(&record);
    p.tackle(flags)
        .args(["--model", &model(&parent), "run", "go"])
        .env("TACKLE_REPLAY_RECORD", &record)
        .run()
        .success();
    let requests = recorded_requests(&record);
    requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn the_tools_are_offered_with_a_small_model_each_beside_its_tool() {
    let p = Project::new();
    let small = script(&p, "small.jsonl", &[json!({"turn": {"text": "x"}})]);
    let small = model(&small);
    let agentic = |tools: &[String]| -> Vec<String> {
        tools
            .iter()
            .filter(|t| t.starts_with("agentic_"))
            .cloned()
            .collect()
    };
    assert!(agentic(&offered(&p, &[])).is_empty());
    // fetch_url is not in the catalog without a URL scope, so neither is its wrapper.
    assert_eq!(
        agentic(&offered(&p, &["--agentic-small-model", &small])),
        ["agentic_read_file", "agentic_grep", "agentic_research"]
    );
    assert_eq!(
        agentic(&offered(
            &p,
            &[
                "--agentic-small-model",
                &small,
                "--disable-tools",
                "agentic_grep,read_file"
            ]
        )),
        ["agentic_research"]
    );
}

#[test]
fn a_small_model_that_names_no_configured_provider_is_refused_naming_the_models() {
    let p = Project::new();
    let parent = script(&p, "one.jsonl", &[json!({"turn": {"text": "ok"}})]);
    let out = p
        .tackle([
            "--agentic-small-model",
            "nowhere:tiny",
            "--model",
            &model(&parent),
        ])
        .args(["run", "go"])
        .run();
    assert_ne!(out.code, Some(0));
    out.stderr_contains("[model] small (--agentic-small-model): no provider `nowhere`")
        .stderr_contains("configured models: ");
}

#[test]
fn a_small_model_without_its_key_is_refused_when_asked_for_by_flag() {
    let p = Project::new();
    let parent = script(&p, "one.jsonl", &[json!({"turn": {"text": "ok"}})]);
    p.tackle(["--agentic-small-model", "anthropic:claude-haiku-4-5"])
        .args(["--model", &model(&parent), "run", "go"])
        .env_remove("ANTHROPIC_API_KEY")
        .run()
        .code(2)
        .stderr_contains("--agentic-small-model anthropic:claude-haiku-4-5")
        .stderr_contains("ANTHROPIC_API_KEY");
}

/// A loopback server answering every request with `body` as text/plain.
fn serve(body: &'static str) -> u16 {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && conn.read(&mut byte).unwrap_or(0) == 1 {
                head.push(byte[0]);
            }
            let _ = write!(
                conn,
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    port
}

#[test]
fn a_fetched_page_is_read_by_the_small_model_and_its_answer_is_untrusted() {
    let port = serve("Release notes\nversion 9.4.1 removed the legacy flag --frobnicate\n");
    let p = Project::new();
    p.config(&format!(
        "[url_scope]\nallow = [\"http://127.0.0.1:{port}/*\"]\n[permissions]\nallow = \
         [\"fetch:http://127.0.0.1:{port}/*\"]\n[fetch]\nallow_private_hosts = \
         [\"127.0.0.1:{port}\"]\n"
    ));
    p.trust();
    let url = format!("http://127.0.0.1:{port}/notes");
    let parent = script(
        &p,
        "parent.jsonl",
        &[
            json!({"turn": {"tool_calls": [{"id": "f1", "name": "agentic_fetch_url", "arguments": {
                "url": url, "question": "Which version removed --frobnicate?"}}]}}),
            json!({"turn": {"text": "9.4.1"}}),
        ],
    );
    let small = script(
        &p,
        "small.jsonl",
        &[json!({"turn": {"text": "Version 9.4.1 removed --frobnicate."}})],
    );
    p.tackle(["--model", &model(&parent)])
        .args(["--agentic-small-model", &model(&small)])
        .args(["run", "--json", "which version?"])
        .run()
        .success();
    let logs = p.sessions();
    let root = logs
        .iter()
        .find(|l| l[0]["event"]["parent"].is_null())
        .unwrap();
    let subtask = logs
        .iter()
        .find(|l| l[0]["event"]["agent"] == "agentic_fetch_url")
        .unwrap();
    let input = records(subtask, "user_input")[0]["text"].as_str().unwrap();
    assert!(
        input.contains("version 9.4.1 removed the legacy flag"),
        "{input}"
    );
    let finished = records(root, "call_finished")[0];
    assert_eq!(finished["tool"], "agentic_fetch_url");
    assert_eq!(finished["status"], "ok", "{finished}");
    assert_eq!(finished["label"]["trust"], "untrusted", "{finished}");
    let shown = records(root, "tool_batch_finished")[0]["results"].to_string();
    assert!(
        shown.contains("Version 9.4.1 removed --frobnicate."),
        "{shown}"
    );
    assert!(shown.contains("raw output: artifact://"), "{shown}");
}
