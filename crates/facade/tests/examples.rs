//! The examples, run: each example file is compiled here as a module and its `run` called, so
//! the test goes through exactly the code the example shows (its `main` only prints).

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../examples/agent.rs"]
#[allow(dead_code)]
mod agent;
#[path = "../examples/custom_tool.rs"]
#[allow(dead_code)]
mod custom_tool;
#[path = "../examples/embed_runtime.rs"]
#[allow(dead_code)]
mod embed_runtime;
#[cfg(feature = "mcp")]
#[path = "../examples/mcp_server.rs"]
#[allow(dead_code)]
mod mcp_server;
#[path = "../examples/subtask_tool.rs"]
#[allow(dead_code)]
mod subtask_tool;

use std::sync::Arc;

use tackle::protocol::{CallStatus, ErrorCode, Event, RunOutcome};
use tackle::runtime::{AllowAll, CancellationToken, Catalog, EventLog, Runtime, Session};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn embed_runtime_reads_a_file_through_read_file() {
    let dir = tempfile::tempdir().unwrap();
    let result = embed_runtime::run(dir.path()).await.unwrap();
    assert_eq!(result.status, CallStatus::Ok, "{}", result.text());
    assert!(
        result.text().contains("hello from tackle"),
        "{}",
        result.text()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn custom_tool_runs_under_the_gate_and_is_recorded_with_its_permission_key() {
    let dir = tempfile::tempdir().unwrap();
    let outcome = custom_tool::run(dir.path()).await.unwrap();

    assert_eq!(outcome.counted.status, CallStatus::Ok);
    assert_eq!(outcome.counted.text().trim_end(), "notes.txt: 5 words");
    // The policy's deny on read:secrets/** holds for the custom tool's own key.
    assert_eq!(
        outcome.denied.code,
        Some(ErrorCode::PERMISSION_DENIED),
        "{}",
        outcome.denied.text()
    );
    // The refusal names the program that wrote the rule.
    assert!(
        outcome
            .denied
            .text()
            .contains("deny rule \"read:secrets/**\" set by the custom_tool example"),
        "{}",
        outcome.denied.text()
    );

    let [Event::CallStarted(started), Event::CallFinished(finished)] = &outcome.records[..] else {
        panic!("expected one start and one end: {:?}", outcome.records);
    };
    assert_eq!(started.tool, "word_count");
    assert_eq!(started.arguments["path"], "notes.txt");
    assert_eq!(finished.status, CallStatus::Ok);
    assert_eq!(finished.read_keys, vec!["read:notes.txt".to_owned()]);
    // Its output is retained in the session's store as a built-in's is: one artifact, whole.
    let [retained] = &finished.retained_output[..] else {
        panic!(
            "expected one retained output: {:?}",
            finished.retained_output
        );
    };
    assert!(
        retained.artifact.starts_with("artifact://sha256/"),
        "{retained:?}"
    );
    assert_eq!(
        retained.bytes,
        "notes.txt: 5 words".len() as u64,
        "{retained:?}"
    );
    assert!(!retained.truncated, "{retained:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_calls_the_custom_tool_and_finishes() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    std::fs::create_dir(&project).unwrap();
    let (end, session) = agent::run(&project, &dir.path().join("script.jsonl"))
        .await
        .unwrap();
    assert_eq!(end.outcome, RunOutcome::Finished, "{}", end.reason);
    assert_eq!(end.last_message.as_deref(), Some("notes.txt has 5 words."));

    // The tool ran as the model asked, and the model was shown its result.
    let records: Vec<Event> = EventLog::read_records(&session.event_log_path())
        .unwrap()
        .into_iter()
        .filter_map(|r| serde_json::from_value(r.event).ok())
        .collect();
    let finished = records.iter().find_map(|e| match e {
        Event::CallFinished(f) if f.call_id.0 == "wc-1" => Some(f),
        _ => None,
    });
    assert_eq!(finished.map(|f| f.status), Some(CallStatus::Ok));
    let shown = records.iter().find_map(|e| match e {
        Event::ToolBatchFinished(b) => Some(serde_json::to_string(&b.results).unwrap()),
        _ => None,
    });
    assert!(
        shown.as_deref().is_some_and(|s| s.contains("5")),
        "{shown:?}"
    );
}

/// Every event of the log at `path`.
fn events(path: &std::path::Path) -> Vec<Event> {
    EventLog::read_records(path)
        .unwrap()
        .into_iter()
        .filter_map(|r| serde_json::from_value(r.event).ok())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_late_bound_tool_runs_a_child_subtask_whose_answer_reaches_the_parent() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    std::fs::create_dir(&project).unwrap();
    let (end, session) = subtask_tool::run(&project, &dir.path().join("script.jsonl"))
        .await
        .unwrap();
    assert_eq!(end.outcome, RunOutcome::Finished, "{}", end.reason);
    assert_eq!(end.last_message.as_deref(), Some("The colour is brown."));

    // The parent's log: the tool call succeeded and the model was shown the child's answer.
    let parent = events(&session.event_log_path());
    let finished = parent.iter().find_map(|e| match e {
        Event::CallFinished(f) if f.call_id.0 == "aside-1" => Some(f),
        _ => None,
    });
    assert_eq!(finished.map(|f| f.status), Some(CallStatus::Ok));
    let shown = parent.iter().find_map(|e| match e {
        Event::ToolBatchFinished(b) => Some(serde_json::to_string(&b.results).unwrap()),
        _ => None,
    });
    assert!(
        shown.as_deref().is_some_and(|s| s.contains("brown")),
        "{shown:?}"
    );

    // The child's own log: a session under the parent's, named after the tool, whose model
    // gave that answer and whose run finished.
    let sessions = session
        .event_log_path()
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .to_owned();
    let children: Vec<Vec<Event>> = std::fs::read_dir(&sessions)
        .unwrap()
        .map(|d| events(&d.unwrap().path().join("events.jsonl")))
        .filter(|log| {
            log.iter().any(|e| {
                matches!(e, Event::SessionStarted(s)
                    if s.parent.as_ref() == Some(session.id())
                        && s.agent.as_deref() == Some("ask_aside"))
            })
        })
        .collect();
    let [child] = &children[..] else {
        panic!("expected one child session, found {}", children.len());
    };
    let answered = child.iter().any(|e| match e {
        Event::ModelTurn(t) => serde_json::to_string(&t.message).unwrap().contains("brown"),
        _ => false,
    });
    assert!(answered, "{child:?}");
    let outcome = child.iter().find_map(|e| match e {
        Event::RunFinished(r) => Some(r.outcome),
        _ => None,
    });
    assert_eq!(outcome, Some(RunOutcome::Finished));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_custom_tools_arguments_are_parsed_strictly_against_its_schema() {
    let catalog = Catalog::new(vec![custom_tool::word_count()]).unwrap();
    let spec = &catalog.specs()[0];
    assert_eq!(spec.input_schema["additionalProperties"], false);
    assert!(
        spec.input_schema["properties"]["path"]["description"]
            .as_str()
            .is_some_and(|d| d.contains("relative to the project root")),
        "{}",
        spec.input_schema
    );

    let dir = tempfile::tempdir().unwrap();
    let runtime = Runtime::new(catalog, Arc::new(AllowAll), Default::default());
    let session = Session::open(dir.path()).unwrap();
    let call = tackle::protocol::ToolCall {
        id: tackle::protocol::CallId("bad".into()),
        name: "word_count".into(),
        arguments: serde_json::json!({ "path": "notes.txt", "verbose": true }),
    };
    let results = runtime
        .run_batch(&session, vec![call], CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(results[0].code, Some(ErrorCode::INVALID_ARGUMENTS));
    assert!(
        results[0].text().contains("verbose"),
        "{}",
        results[0].text()
    );
}

#[test]
fn an_unknown_name_left_out_of_the_builtins_fails_with_the_nearest() {
    let err = tackle::tools::builtins_except(&["grpe"]).err().unwrap();
    assert_eq!(err.nearest.first().map(String::as_str), Some("grep"));
    assert!(err.to_string().contains("did you mean `grep`"), "{err}");
}

#[cfg(feature = "mcp")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_server_lists_and_calls_the_custom_tool() {
    let dir = tempfile::tempdir().unwrap();
    let (names, result) = mcp_server::run(dir.path()).await.unwrap();
    assert!(names.iter().any(|n| n == "word_count"), "{names:?}");
    assert!(names.iter().any(|n| n == "read_file"), "{names:?}");
    assert!(!names.iter().any(|n| n == "bash"), "{names:?}");
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(
        result["content"][0]["text"].as_str().map(str::trim_end),
        Some("5 words"),
        "{result}"
    );
}
