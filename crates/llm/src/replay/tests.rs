use std::sync::Arc;

use futures::StreamExt;
use serde_json::json;
use tackle_protocol::{Message, Part, StopReason, ToolArguments, ToolSpec};
use tokio_util::sync::CancellationToken;

use super::*;
use crate::complete;

fn request(model: &str, messages: Vec<Message>) -> TurnRequest {
    let mut r = TurnRequest::new(model, messages, 1024);
    r.tools = vec![ToolSpec {
        name: "read_file".into(),
        description: "Reads a file.".into(),
        input_schema: json!({"type": "object"}),
    }];
    r
}

fn replay(lines: &[serde_json::Value]) -> ReplayProvider {
    let mut text = String::from("{\"tackle_replay\":1}\n");
    for l in lines {
        text.push_str(&l.to_string());
        text.push('\n');
    }
    ReplayProvider::new("replay", parse("test.jsonl", &text).unwrap())
}

async fn turn(
    provider: &dyn Provider,
    r: &TurnRequest,
) -> Result<tackle_protocol::AssistantTurn, LlmError> {
    complete(provider, r, &CancellationToken::new()).await
}

#[test]
fn bad_files_name_the_line_and_the_fix() {
    let table: &[(&str, usize, &str)] = &[
        ("", 1, "the file is empty"),
        ("{\"events\":[]}\n", 1, "not a replay header"),
        ("{\"tackle_replay\":7}\n", 1, "replay version 7"),
        (
            "{\"tackle_replay\":1}\n\n{\"turn\":{\"txt\":\"hi\"}}\n",
            3,
            "unknown field `txt`",
        ),
        (
            "{\"tackle_replay\":1}\n{}\n",
            2,
            "needs `events`, a `turn` or an `error`",
        ),
        (
            "{\"tackle_replay\":1}\n{\"turn\":{\"text\":\"a\"},\"events\":[{\"text\":\"b\"}]}\n",
            2,
            "not both",
        ),
        (
            "{\"tackle_replay\":1}\n{\"error\":{\"kind\":\"ratelimit\",\"message\":\"x\"}}\n",
            2,
            "unknown error kind `ratelimit`; use one of auth,",
        ),
        (
            "{\"tackle_replay\":1}\n{\"turn\":{\"tool_calls\":[{\"name\":\"t\",\"arguments\":{},\"arguments_raw\":\"{\"}]}}\n",
            2,
            "both `arguments` and `arguments_raw`",
        ),
        (
            "{\"tackle_replay\":1}\n{\"turn\":{\"text\":\"a\"},\"error\":{\"kind\":\"server\",\"message\":\"x\"}}\n",
            2,
            "always completes",
        ),
        (
            "{\"tackle_replay\":1}\n{\"events\":[{\"text\":\"a\"}]",
            2,
            "not an exchange",
        ),
    ];
    for (text, line, want) in table {
        let e = parse("t.jsonl", text).unwrap_err();
        assert_eq!(e.line, *line, "{text:?}: {e}");
        assert!(e.to_string().contains(want), "{text:?}: {e}");
        assert!(
            e.to_string().starts_with(&format!("t.jsonl:{line}: ")),
            "{e}"
        );
    }
}

#[tokio::test]
async fn a_scripted_turn_streams_text_and_calls() {
    let p = replay(&[
        json!({"turn": {"thinking": "plan", "text": "Reading.", "tool_calls": [
            {"name": "read_file", "arguments": {"path": "a.txt"}},
            {"id": "mine", "name": "read_file", "arguments_raw": "{\"path\": "}
        ], "usage": {"input_tokens": 10, "output_tokens": 5}}}),
        json!({"turn": {"text": "Done."}}),
    ]);
    let r = request("m1", vec![Message::user_text("go")]);
    let first = turn(&p, &r).await.unwrap();
    assert_eq!(first.stop_reason, StopReason::ToolUse);
    assert_eq!(first.model, "m1");
    assert_eq!(first.usage.input_tokens, 10);
    assert_eq!(first.message.text(), "Reading.");
    assert!(matches!(&first.message.content[0], Part::Thinking { text, .. } if text == "plan"));
    let calls: Vec<_> = first.message.tool_calls().collect();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].id.0, "call_1_0");
    assert_eq!(
        calls[0].arguments,
        ToolArguments::Valid {
            value: json!({"path": "a.txt"})
        }
    );
    assert_eq!(calls[1].id.0, "mine");
    assert!(matches!(calls[1].arguments, ToolArguments::Invalid { .. }));

    let second = turn(&p, &r).await.unwrap();
    assert_eq!(
        (second.stop_reason, second.message.text().as_str()),
        (StopReason::EndTurn, "Done.")
    );
    let e = turn(&p, &r).await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::InvalidRequest);
    assert!(
        e.message
            .contains("the replay has 2 turn(s) and turn 3 was asked for"),
        "{e}"
    );
    assert_eq!(p.played(), 2);
}

#[tokio::test]
async fn errors_replay_before_and_during_a_stream() {
    let p = replay(&[
        json!({"error": {"kind": "rate_limit", "status": 429, "request_id": "req_1", "message": "slow down"}}),
        json!({"events": [{"started": {"model": "m"}}, {"text": "par"}],
               "error": {"kind": "stream_cut", "message": "cut"}}),
    ]);
    let r = request("m", vec![Message::user_text("go")]);
    let before = turn(&p, &r).await.unwrap_err();
    assert_eq!(
        (before.kind, before.status, before.request_id.as_deref()),
        (ErrorKind::RateLimit, Some(429), Some("req_1"))
    );
    let mut during = p.stream(&r).await.unwrap();
    assert!(matches!(
        during.next().await,
        Some(Ok(StreamEvent::Started { .. }))
    ));
    assert!(matches!(
        during.next().await,
        Some(Ok(StreamEvent::TextDelta { .. }))
    ));
    let cut = during.next().await.unwrap().unwrap_err();
    assert_eq!(cut.kind, ErrorKind::StreamCut);
    assert!(during.next().await.is_none());
}

#[tokio::test]
async fn a_strict_replay_refuses_a_conversation_that_is_not_the_recorded_one() {
    let recorded = RecordedRequest::of(&request("m", vec![Message::user_text("go")]));
    let line = json!({"request": recorded, "turn": {"text": "ok"}});
    let table: &[(TurnRequest, Option<&str>)] = &[
        (request("m", vec![Message::user_text("go")]), None),
        (
            request("other", vec![Message::user_text("go")]),
            Some("model `m` was recorded"),
        ),
        (
            request("m", vec![Message::user_text("stop")]),
            Some("message 1 differs"),
        ),
        (
            request("m", vec![]),
            Some("1 message(s) were recorded, 0 sent"),
        ),
        (
            TurnRequest::new("m", vec![Message::user_text("go")], 1),
            Some("tools [read_file] were recorded, [] offered"),
        ),
    ];
    for (made, refusal) in table {
        let p = replay(std::slice::from_ref(&line)).strict(true);
        match (turn(&p, made).await, refusal) {
            (Ok(t), None) => assert_eq!(t.message.text(), "ok"),
            (Err(e), Some(why)) => {
                assert_eq!(e.kind, ErrorKind::InvalidRequest);
                assert!(e.message.contains(why), "{e}");
            }
            (other, _) => panic!("{made:?}: {other:?}"),
        }
        // Lenient replay plays the turn whatever was asked.
        let lenient = replay(std::slice::from_ref(&line));
        assert_eq!(turn(&lenient, made).await.unwrap().message.text(), "ok");
    }
}

#[tokio::test]
async fn a_recording_replays_to_the_same_turns() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rec.jsonl");
    let script = Arc::new(replay(&[
        json!({"turn": {"text": "one", "tool_calls": [{"name": "read_file", "arguments": {"path": "x"}}]}}),
        json!({"error": {"kind": "overloaded", "status": 529, "message": "busy"}}),
        json!({"events": [{"started": {"model": "m"}}, {"text": "half"}], "error": {"kind": "transport", "message": "reset"}}),
        json!({"turn": {"text": "dropped"}}),
        json!({"turn": {"text": "two"}}),
    ]));
    let recorder = RecordingProvider::create(script, &path).unwrap();
    let r1 = request("m", vec![Message::user_text("go")]);
    let r2 = request(
        "m",
        vec![Message::user_text("go"), Message::user_text("again")],
    );
    let first = turn(&recorder, &r1).await.unwrap();
    assert_eq!(
        turn(&recorder, &r2).await.unwrap_err().kind,
        ErrorKind::Overloaded
    );
    assert_eq!(
        turn(&recorder, &r2).await.unwrap_err().kind,
        ErrorKind::Transport
    );
    // A stream dropped after its first event (a cancelled turn) is kept as far as it went.
    {
        let mut s = recorder.stream(&r2).await.unwrap();
        assert!(s.next().await.is_some());
    }
    let last = turn(&recorder, &r2).await.unwrap();
    drop(recorder);

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
    let exchanges = read(&path).unwrap();
    assert_eq!(exchanges.len(), 5);
    assert_eq!(exchanges[3].error.as_ref().unwrap().kind, "stream_cut");

    let again = ReplayProvider::new("replay", exchanges).strict(true);
    assert_eq!(turn(&again, &r1).await.unwrap(), first);
    let busy = turn(&again, &r2).await.unwrap_err();
    assert_eq!((busy.kind, busy.status), (ErrorKind::Overloaded, Some(529)));
    assert_eq!(
        turn(&again, &r2).await.unwrap_err().kind,
        ErrorKind::Transport
    );
    assert_eq!(
        turn(&again, &r2).await.unwrap_err().kind,
        ErrorKind::StreamCut
    );
    assert_eq!(turn(&again, &r2).await.unwrap(), last);

    // Recording again appends to the same file, after checking it is a replay file.
    let more = RecordingProvider::create(
        Arc::new(replay(&[json!({"turn": {"text": "three"}})])),
        &path,
    )
    .unwrap();
    turn(&more, &r1).await.unwrap();
    assert_eq!(read(&path).unwrap().len(), 6);
    let elsewhere = dir.path().join("notes.txt");
    std::fs::write(&elsewhere, "not a replay\n").unwrap();
    assert!(RecordingProvider::create(Arc::new(replay(&[])), &elsewhere).is_err());
    assert_eq!(
        std::fs::read_to_string(&elsewhere).unwrap(),
        "not a replay\n"
    );
}

#[tokio::test]
async fn a_resumed_replay_answers_from_the_turn_after_those_played() {
    let provider = replay(&[
        json!({"turn": {"text": "first"}}),
        json!({"turn": {"tool_calls": [{"name": "read_file", "arguments": {"path": "a"}}]}}),
    ])
    .starting_at(1);
    let t = turn(&provider, &request("m", vec![Message::user_text("go")]))
        .await
        .unwrap();
    let call = t.message.tool_calls().next().unwrap();
    assert_eq!(call.id.0, "call_2_0", "ids count the turns played before");
    assert_eq!(provider.played(), 2);
}
