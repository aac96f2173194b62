//! `tackle run` and `tackle chat` against a real model: Qwen2.5-Coder-1.5B behind llama.cpp's
//! server (`crates/llm/tests/local_server`, the one launcher), through each endpoint family it
//! offers: OpenAI Chat Completions, OpenAI Responses and Anthropic Messages, configured as a
//! user would, as providers of the user config with no key.
//!
//! A 1.5B model at temperature 0 is reliable for one tool step, so the tests assert structure,
//! never wording: a read_file call that ran ok, a run that finished, a last message. The
//! catalog is cut to read_file (`--disable-tools`) so the request fits a small context slot and
//! the model has one obvious tool. Times are printed, never asserted.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

#[path = "../../llm/tests/local_server/mod.rs"]
mod local_server;

use std::time::{Duration, Instant};

use harness::Project;
use harness::replay::json_lines;
use serde_json::Value;

/// Every tool but read_file, so the model sees one.
const OTHERS: &str = "read_many_files,write_file,edit_file,delete_file,stat,list_dir,glob,grep,\
view_file_outline,json_query,todo,wait_and_verify,bash,bash_stdin,retrieve_raw,mark_task_done,\
delegate_subagent,get_subagent_result,cancel_subagent";

const TASK: &str =
    "Use the read_file tool to read notes.txt, then tell me the number written in it.";

/// A project whose user config names the local server under three providers.
fn project(base_url: &str) -> Project {
    let p = Project::new();
    p.write("notes.txt", "The number is 7316.\n");
    let mut config = format!(
        "[providers.local-chat]\nkind = \"openai-chat\"\nbase_url = \"{base_url}/v1\"\n\n\
         [providers.local-responses]\nkind = \"openai-responses\"\nbase_url = \"{base_url}/v1\"\n\n\
         [providers.local-anthropic]\nkind = \"anthropic\"\nbase_url = \"{base_url}\"\n"
    );
    for provider in ["local-chat", "local-responses", "local-anthropic"] {
        config.push_str(&format!(
            "\n[models.\"{provider}:local-qwen\"]\ncontext_window = 8192\nmax_output = 400\n"
        ));
    }
    p.user_config(&config);
    p
}

#[test]
fn tackle_run_completes_a_one_tool_task_through_each_family() {
    let Some(server) = local_server::server(16384, 2) else {
        return;
    };
    let p = project(&server.base_url);
    for provider in ["local-chat", "local-responses", "local-anthropic"] {
        let started = Instant::now();
        let out = p
            .tackle(["--disable-tools", OTHERS])
            .args(["--model", &format!("{provider}:local-qwen")])
            .args(["run", "--json", "--max-turns", "4", TASK])
            .timeout(Duration::from_secs(600))
            .run();
        out.success();
        let events = json_lines(&out.stdout);
        let of =
            |kind: &str| -> Vec<&Value> { events.iter().filter(|e| e["type"] == kind).collect() };
        let started_calls = of("tool_call_started");
        assert!(
            started_calls.iter().any(|c| c["tool"] == "read_file"),
            "{provider}: no read_file call: {}",
            out.stdout
        );
        let finished = of("tool_call_finished");
        assert!(
            finished
                .iter()
                .any(|c| c["tool"] == "read_file" && c["status"] == "ok"),
            "{provider}: no read_file that ran ok: {}",
            out.stdout
        );
        let end = events.last().unwrap();
        assert_eq!(end["type"], "run_finished", "{provider}");
        assert_eq!(end["outcome"], "finished", "{provider}: {end}");
        let text: String = of("text_delta")
            .iter()
            .map(|d| d["text"].as_str().unwrap())
            .collect();
        assert!(
            !text.trim().is_empty(),
            "{provider}: no answer: {}",
            out.stdout
        );
        eprintln!(
            "{provider}: tackle run finished in {:.1?} ({} turn(s))",
            started.elapsed(),
            of("turn_started").len()
        );
    }
}

#[test]
fn tackle_chat_completes_a_one_tool_task_in_a_terminal() {
    let Some(server) = local_server::server(16384, 2) else {
        return;
    };
    let p = project(&server.base_url);
    p.user_config(&format!(
        "{}\n[tools]\ndisable = [{}]\n",
        std::fs::read_to_string(p.xdg().join("tackle/config.toml")).unwrap(),
        OTHERS
            .split(',')
            .map(|t| format!("\"{t}\""))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    let started = Instant::now();
    let chat = harness::tmux::Tmux::chat(&p, "local-chat:local-qwen");
    chat.wait_for(&["new session"]);
    chat.type_line(TASK);
    let limit = Duration::from_secs(600);
    chat.wait_for_within(&["read_file notes.txt"], limit);
    chat.wait_for_within(&["the model ended its turn", "· ready"], limit);
    chat.type_line("/quit");
    chat.wait_gone();
    eprintln!("tackle chat: one tool step in {:.1?}", started.elapsed());

    let log: Vec<Value> = p
        .sessions()
        .concat()
        .iter()
        .map(|l| l["event"].clone())
        .collect();
    assert!(
        log.iter().any(|e| e["type"] == "call_finished"
            && e["tool"] == "read_file"
            && e["status"] == "ok"),
        "the session log records the read_file call: {log:#?}"
    );
}

/// A request longer than the server's window, sent as a new user would (the model's window
/// configured larger than the server's): llama-server refuses it, tackle learns the window the
/// answer names, sees that the task alone does not fit it, and ends with exit 5 after that one
/// request, giving both sizes and the fixes, instead of compacting and asking again.
#[test]
fn an_over_long_request_ends_with_exit_5_after_one_refusal() {
    let Some(server) = local_server::server(16384, 2) else {
        return;
    };
    let p = Project::new();
    p.user_config(&format!(
        "[providers.local-chat]\nkind = \"openai-chat\"\nbase_url = \"{}/v1\"\n\n\
         [models.\"local-chat:local-qwen\"]\ncontext_window = 32768\nmax_output = 400\n",
        server.base_url
    ));
    // Twice the 8,192 tokens of one of the server's two slots, in words the model's
    // tokenizer does not merge.
    let task = format!(
        "Summarise these numbers: {}",
        (0..6000)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(" ")
    );
    let started = Instant::now();
    let out = p
        .tackle(["--disable-tools", OTHERS])
        .args(["--model", "local-chat:local-qwen"])
        .args(["run", "--json", &task])
        .timeout(Duration::from_secs(300))
        .run();
    out.code(5);
    let events = json_lines(&out.stdout);
    let turns = events
        .iter()
        .filter(|e| e["type"] == "turn_started")
        .count();
    assert_eq!(
        turns, 1,
        "one request, never the same one again: {}",
        out.stdout
    );
    let windows: Vec<&Value> = events.iter().filter(|e| e["type"] == "window").collect();
    assert_eq!(windows[0]["context"], 32768, "{}", out.stdout);
    assert_eq!(windows.last().unwrap()["context"], 8192, "{}", out.stdout);
    assert_eq!(
        windows.last().unwrap()["source"],
        "the server's answer to an over-long request"
    );
    let end = events.last().unwrap();
    assert_eq!(end["outcome"], "provider_failed", "{end}");
    let reason = end["reason"].as_str().unwrap();
    for part in [
        "the window is 8,192 tokens",
        "llama-server -c",
        "last message",
    ] {
        assert!(reason.contains(part), "{part:?} missing: {reason}");
    }
    eprintln!(
        "over-long request refused and ended in {:.1?}",
        started.elapsed()
    );
}

/// `tackle models --probe` against the real server: each family's provider learns the context
/// of one of its two slots, and the config's table, which wins, is named beside it.
#[test]
fn tackle_models_probe_learns_the_real_servers_window() {
    let Some(server) = local_server::server(16384, 2) else {
        return;
    };
    let p = project(&server.base_url);
    let out = p.tackle(["models", "--probe", "--json"]).run();
    out.success();
    let v = out.json();
    let probes = v["probes"].as_array().unwrap();
    let ids: Vec<&str> = probes.iter().map(|p| p["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        [
            "local-anthropic:local-qwen",
            "local-chat:local-qwen",
            "local-responses:local-qwen"
        ],
        "{v:#}"
    );
    for probe in probes {
        assert_eq!(probe["server"], "llama.cpp", "{probe:#}");
        assert_eq!(probe["served_model"], "local-qwen", "{probe:#}");
        // -c 16384 shared by -np 2 slots.
        assert_eq!(probe["window"], 8192, "{probe:#}");
        assert_eq!(probe["catalog_window"], 8192, "{probe:#}");
    }
}

/// The parent is offered delegate_subagent and read_file; the explore child, read_file.
const DELEGATING_OTHERS: &str = "read_many_files,write_file,edit_file,delete_file,stat,list_dir,\
glob,grep,view_file_outline,json_query,todo,wait_and_verify,bash,bash_stdin,retrieve_raw,\
mark_task_done,get_subagent_result,cancel_subagent";

const DELEGATED: &str = "Call the delegate_subagent tool with agent_type \"explore\" and the \
prompt \"Use the read_file tool to read notes.txt, then tell me the number written in it.\" \
Then tell me the number the subagent found.";

#[test]
fn tackle_run_delegates_a_question_to_explore_and_uses_its_answer() {
    let Some(server) = local_server::server(16384, 2) else {
        return;
    };
    let p = project(&server.base_url);
    let started = Instant::now();
    let out = p
        .tackle(["--disable-tools", DELEGATING_OTHERS])
        .args(["--model", "local-chat:local-qwen"])
        .args(["run", "--json", "--max-turns", "6", DELEGATED])
        .timeout(Duration::from_secs(900))
        .run();
    out.success();
    let events = json_lines(&out.stdout);
    let of = |kind: &str| -> Vec<&Value> { events.iter().filter(|e| e["type"] == kind).collect() };
    assert!(
        of("tool_call_finished")
            .iter()
            .any(|c| c["tool"] == "delegate_subagent" && c["status"] == "ok"),
        "no delegate_subagent call that ran ok: {}",
        out.stdout
    );
    let subagents = of("subagent");
    assert!(
        subagents
            .iter()
            .any(|s| s["agent_type"] == "explore" && s["status"] == "completed"),
        "no explore subagent completed: {}",
        out.stdout
    );
    // The child read the file in its own session, and its answer reached the parent.
    let logs = p.sessions();
    let child = logs
        .iter()
        .find(|l| !l[0]["event"]["parent"].is_null())
        .expect("a child session");
    assert!(
        child.iter().any(|r| r["event"]["type"] == "call_finished"
            && r["event"]["tool"] == "read_file"
            && r["event"]["status"] == "ok"),
        "the child read nothing: {child:?}"
    );
    let root = logs
        .iter()
        .find(|l| l[0]["event"]["parent"].is_null())
        .unwrap();
    assert!(
        root.iter().any(|r| {
            r["event"]["type"] == "message_consumed"
                && r["event"]["text"].as_str().is_some_and(|t| {
                    t.starts_with("[subagent session explore_") && t.contains("7316")
                })
        }),
        "the child's answer did not reach the parent: {root:?}"
    );
    let end = events.last().unwrap();
    assert_eq!(end["outcome"], "finished", "{end}");
    eprintln!(
        "delegation: tackle run finished in {:.1?} ({} parent turn(s))",
        started.elapsed(),
        of("turn_started").len()
    );
}

/// agentic_read_file with the real model as the small model (the run's own model scripted, so
/// the wrapper is called for sure): the model reads the 300-line file in its subtask and the
/// run's model is shown only its answer and the reference. Structure is asserted; the answer
/// and the time are printed.
#[test]
fn agentic_read_file_answers_with_the_local_model_as_the_small_model() {
    let Some(server) = local_server::server(16384, 2) else {
        return;
    };
    let p = project(&server.base_url);
    let mut settings = String::new();
    for n in 1..=300 {
        if n == 217 {
            settings.push_str("server_port = 7316\n");
        } else {
            settings.push_str(&format!("option_{n} = \"value {n}\"\n"));
        }
    }
    p.write("settings.toml", settings);
    let parent = harness::replay::script(
        &p,
        "parent.jsonl",
        &[
            serde_json::json!({"turn": {"tool_calls": [{"id": "a1", "name": "agentic_read_file",
                "arguments": {"path": "settings.toml",
                    "question": "What is server_port set to, and on which line?"}}]}}),
            serde_json::json!({"turn": {"text": "done"}}),
        ],
    );
    let started = Instant::now();
    let out = p
        .tackle(["--model", &harness::replay::model(&parent)])
        .args(["--agentic-small-model", "local-chat:local-qwen"])
        .args(["run", "--json", "find the port"])
        .timeout(Duration::from_secs(600))
        .run();
    out.success();
    let took = started.elapsed();
    let events = json_lines(&out.stdout);
    assert!(
        events.iter().any(|e| e["type"] == "tool_call_finished"
            && e["tool"] == "agentic_read_file"
            && e["status"] == "ok"),
        "{}",
        out.stdout
    );
    let logs = p.sessions();
    let subtask = logs
        .iter()
        .find(|l| l[0]["event"]["agent"] == "agentic_read_file")
        .expect("the subtask's session");
    let turn = subtask
        .iter()
        .map(|l| &l["event"])
        .find(|e| e["type"] == "model_turn")
        .expect("the small model's turn");
    assert!(
        turn["usage"]["input_tokens"].as_u64().unwrap() > 1000,
        "{turn}"
    );
    let root = logs
        .iter()
        .find(|l| l[0]["event"]["parent"].is_null())
        .unwrap();
    let shown = root
        .iter()
        .map(|l| &l["event"])
        .find(|e| e["type"] == "tool_batch_finished")
        .unwrap()["results"]
        .to_string();
    assert!(
        shown.contains("answered by local-chat:local-qwen"),
        "{shown}"
    );
    assert!(!shown.contains("option_150"), "{shown}");
    eprintln!(
        "agentic_read_file on the local model in {took:.1?}: {}",
        turn["message"]
    );
}
