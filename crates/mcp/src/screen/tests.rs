//! The screening corpus: one message per row and what becomes of it. Every class of message the
//! JSON-RPC fuzz target (`crates/cli/tests/mcp_fuzz.rs`) found answered wrongly is a row here.

use super::*;

/// What a row expects.
#[derive(Debug)]
enum Want {
    /// Handed to the SDK.
    Deliver,
    /// Answered with this id (`null` for [`ReplyTo::Null`]) and code.
    Answer(Value, i32),
    /// Not answered (a notification or a response), with this code over HTTP.
    Silent(i32),
}

use Want::{Answer, Deliver, Silent};

const PARSE: i32 = -32700;
const INVALID: i32 = -32600;
const NO_METHOD: i32 = -32601;
const PARAMS: i32 = -32602;

fn corpus() -> Vec<(&'static str, Want)> {
    vec![
        // Valid messages go to the SDK unchanged.
        (r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#, Deliver),
        (r#"{"jsonrpc":"2.0","id":"a","method":"ping"}"#, Deliver),
        (r#"{"jsonrpc":"2.0","id":1.0,"method":"ping"}"#, Deliver),
        (
            r#"{"jsonrpc":"2.0","id":-9223372036854775808,"method":"ping"}"#,
            Deliver,
        ),
        (
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            Deliver,
        ),
        (
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
            Deliver,
        ),
        (r#"{"jsonrpc":"2.0","id":1,"result":{}}"#, Deliver),
        (
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"x"}}"#,
            Deliver,
        ),
        (
            "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}",
            Deliver,
        ),
        // An unknown method with no params: the SDK answers -32601 with the id itself.
        (
            r#"{"jsonrpc":"2.0","id":3,"method":"no/such/method"}"#,
            Deliver,
        ),
        (
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"stat","arguments":{"path":"."}}}"#,
            Deliver,
        ),
        // Params that do not decode (issue 18 §3).
        (
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":[1,2]}"#,
            Answer(json!(7), PARAMS),
        ),
        (
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":1.5}"#,
            Answer(json!(7), PARAMS),
        ),
        (
            r#"{"jsonrpc":"2.0","id":"s","method":"tools/list","params":[1]}"#,
            Answer(json!("s"), PARAMS),
        ),
        (
            r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":5}}"#,
            Answer(json!(8), PARAMS),
        ),
        (
            r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"x","arguments":[1]}}"#,
            Answer(json!(8), PARAMS),
        ),
        (
            r#"{"jsonrpc":"2.0","id":8,"method":"tools/call"}"#,
            Answer(json!(8), PARAMS),
        ),
        (
            r#"{"jsonrpc":"2.0","id":9,"method":"initialize","params":{}}"#,
            Answer(json!(9), PARAMS),
        ),
        (
            r#"{"jsonrpc":"2.0","id":9,"method":"resources/read","params":{"uri":7}}"#,
            Answer(json!(9), PARAMS),
        ),
        // An unknown method whose params the SDK cannot take either.
        (
            r#"{"jsonrpc":"2.0","id":4,"method":"no/such","params":[1]}"#,
            Answer(json!(4), NO_METHOD),
        ),
        (
            r#"{"jsonrpc":"2.0","id":4,"method":"no/such","params":1}"#,
            Answer(json!(4), NO_METHOD),
        ),
        // Found by the fuzz target: an empty method, a notification's method as a request's,
        // a huge negative float id.
        (
            r#"{"jsonrpc":"2.0","id":30,"method":"","params":[1]}"#,
            Answer(json!(30), NO_METHOD),
        ),
        (
            r#"{"jsonrpc":"2.0","id":31,"method":"notifications/progress"}"#,
            Deliver,
        ),
        (
            r#"{"jsonrpc":"2.0","id":-1.29e33,"method":"tools/list"}"#,
            Answer(json!(-1.29e33), INVALID),
        ),
        (
            r#"{"jsonrpc":"2.0","id":32,"method":"initialize","params":{"arguments":{"path":"."},"name":"list_dir"}}"#,
            Answer(json!(32), PARAMS),
        ),
        // The envelope.
        (
            r#"{"jsonrpc":2.0,"id":1,"method":"tools/list"}"#,
            Answer(json!(1), INVALID),
        ),
        (
            r#"{"jsonrpc":"1.0","id":1,"method":"tools/list"}"#,
            Answer(json!(1), INVALID),
        ),
        (
            r#"{"id":1,"method":"tools/list"}"#,
            Answer(json!(1), INVALID),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":5}"#,
            Answer(json!(1), INVALID),
        ),
        (r#"{"jsonrpc":"2.0","id":1}"#, Answer(json!(1), INVALID)),
        (r#"{"jsonrpc":"2.0"}"#, Answer(Value::Null, INVALID)),
        (r#"{}"#, Answer(Value::Null, INVALID)),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}"#,
            Answer(json!(1), INVALID),
        ),
        // Ids the SDK cannot carry: answered with the id as written, or null.
        (
            r#"{"jsonrpc":"2.0","id":9223372036854775808,"method":"tools/list"}"#,
            Answer(json!(9223372036854775808u64), INVALID),
        ),
        (
            r#"{"jsonrpc":"2.0","id":18446744073709551615,"method":"ping"}"#,
            Answer(json!(18446744073709551615u64), INVALID),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
            Answer(json!(1.5), INVALID),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1e300,"method":"ping"}"#,
            Answer(json!(1e300), INVALID),
        ),
        (
            r#"{"jsonrpc":"2.0","id":true,"method":"tools/list"}"#,
            Answer(Value::Null, INVALID),
        ),
        (
            r#"{"jsonrpc":"2.0","id":null,"method":"tools/list"}"#,
            Answer(Value::Null, INVALID),
        ),
        (
            r#"{"jsonrpc":"2.0","id":[1],"method":"tools/list"}"#,
            Answer(Value::Null, INVALID),
        ),
        (
            r#"{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}"#,
            Answer(Value::Null, INVALID),
        ),
        // Not objects.
        (
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
            Answer(Value::Null, INVALID),
        ),
        ("[]", Answer(Value::Null, INVALID)),
        ("42", Answer(Value::Null, INVALID)),
        (r#""ping""#, Answer(Value::Null, INVALID)),
        ("null", Answer(Value::Null, INVALID)),
        // Not JSON: the id is read from the start when it can be.
        ("not json", Answer(Value::Null, PARSE)),
        (
            r#"{"jsonrpc":"2.0","id":12,"method":"ping""#,
            Answer(json!(12), PARSE),
        ),
        (
            r#"{"jsonrpc":"2.0","id":12,"method":"ping",}"#,
            Answer(json!(12), PARSE),
        ),
        (
            r#"{"jsonrpc":"2.0","method":"ping","id":"#,
            Answer(Value::Null, PARSE),
        ),
        (
            "{\"jsonrpc\":\"2.0\",\"id\":13,\"method\":\"p\u{0}\"}",
            Answer(json!(13), PARSE),
        ),
        // Notifications that do not decode: no answer on stdio.
        (
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":[1]}"#,
            Silent(INVALID),
        ),
        (
            r#"{"jsonrpc":"2.0","method":"notifications/bogus","params":[1]}"#,
            Silent(INVALID),
        ),
        (
            r#"{"jsonrpc":2.0,"method":"notifications/initialized"}"#,
            Silent(INVALID),
        ),
        (r#"{"jsonrpc":"2.0","method":7}"#, Silent(INVALID)),
        // Responses that do not decode: never answered.
        (
            r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{}}"#,
            Silent(INVALID),
        ),
        (r#"{"jsonrpc":"2.0","id":1,"error":"x"}"#, Silent(INVALID)),
    ]
}

#[test]
fn every_message_is_delivered_or_answered_with_its_id_and_code() {
    let mut failures = Vec::new();
    for (line, want) in corpus() {
        let got = screen(line.as_bytes());
        let ok = match (&got, &want) {
            (Screened::Deliver(_), Deliver) => true,
            (Screened::Reject(r), Answer(id, code)) => {
                r.code.0 == *code
                    && match (&r.reply_to, id) {
                        (ReplyTo::Id(got), want) => got == want,
                        (ReplyTo::Null, Value::Null) => true,
                        _ => false,
                    }
            }
            (Screened::Reject(r), Silent(code)) => {
                r.reply_to == ReplyTo::Nobody && r.code.0 == *code
            }
            _ => false,
        };
        if !ok {
            failures.push(format!("{line}\n  want {want:?}\n  got  {got:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn deep_nesting_is_a_parse_error_that_keeps_the_id() {
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{{"name":"x","arguments":{{"a":{}1{}}}}}}}"#,
        "[".repeat(5000),
        "]".repeat(5000)
    );
    let Screened::Reject(r) = screen(deep.as_bytes()) else {
        panic!("a message nested 5,000 deep was delivered");
    };
    assert_eq!(
        (r.reply_to, r.code),
        (ReplyTo::Id(json!(21)), ErrorCode::PARSE_ERROR)
    );
}

#[test]
fn rejections_are_json_rpc_errors_that_name_the_problem() {
    let Screened::Reject(r) =
        screen(br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":[1,2]}"#)
    else {
        panic!("delivered");
    };
    let body: Value = serde_json::from_slice(&r.to_json()).unwrap();
    assert_eq!(body["jsonrpc"], "2.0");
    assert_eq!(body["id"], 7);
    assert_eq!(body["error"]["code"], -32602);
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("invalid params for `tools/call`: "),
        "{message}"
    );

    let big = Rejection::too_large(
        br#"{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"#,
        4096,
    );
    let body: Value = serde_json::from_slice(&big.to_json()).unwrap();
    assert_eq!(body["id"], "big");
    assert_eq!(body["error"]["code"], -32600);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("over 4096 bytes")
    );
}

/// Every method the SDK knows as a typed request is in the table that tells -32602 from
/// -32601: a request for it with array params must not come back as "method not found".
#[test]
fn the_known_methods_are_the_sdks() {
    for (method, _) in KNOWN_REQUESTS {
        let line = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":[0]}}"#);
        match screen(line.as_bytes()) {
            Screened::Reject(r) => assert_eq!(r.code, ErrorCode::INVALID_PARAMS, "{method}"),
            Screened::Deliver(m) => panic!("{method} with array params was delivered: {m:?}"),
        }
    }
}
