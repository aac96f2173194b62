//! Bedrock's binary frames for the mock server, encoded with the AWS SDK's own encoder from
//! readable fixtures: one JSON object per line, `{"event": <type>, "payload": {…}}`,
//! `{"exception": <type>, "payload": {…}}`, or `"raw"` text in place of a payload (for
//! malformed JSON).

use aws_smithy_eventstream::frame::write_message_to;
use aws_smithy_types::event_stream::{Header, HeaderValue, Message};

use super::{Scripted, fixture};

/// One frame with the given headers and payload.
pub fn frame(headers: &[(&str, &str)], payload: &[u8]) -> Vec<u8> {
    let mut message = Message::new(payload.to_vec());
    for (name, value) in headers {
        message = message.add_header(Header::new(
            name.to_string(),
            HeaderValue::String(value.to_string().into()),
        ));
    }
    let mut bytes = Vec::new();
    write_message_to(&message, &mut bytes).expect("encode frame");
    bytes
}

/// The frames of `<path>.frames.jsonl`, concatenated.
pub fn frames(path: &str) -> Vec<u8> {
    let text = String::from_utf8(fixture(&format!("{path}.frames.jsonl"))).expect("utf-8");
    let mut body = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value = serde_json::from_str(line).expect("fixture line is json");
        let payload = match v.get("raw").and_then(|r| r.as_str()) {
            Some(raw) => raw.as_bytes().to_vec(),
            None => v["payload"].to_string().into_bytes(),
        };
        let headers: Vec<(&str, &str)> = match (v["event"].as_str(), v["exception"].as_str()) {
            (Some(event), _) => vec![
                (":message-type", "event"),
                (":event-type", event),
                (":content-type", "application/json"),
            ],
            (None, Some(exception)) => vec![
                (":message-type", "exception"),
                (":exception-type", exception),
                (":content-type", "application/json"),
            ],
            _ => panic!("{path}: a line needs event or exception: {line}"),
        };
        body.extend(frame(&headers, &payload));
    }
    body
}

/// A 200 event-stream response of raw frame bytes.
pub fn eventstream(body: Vec<u8>) -> Scripted {
    Scripted {
        headers: vec![(
            "content-type".into(),
            "application/vnd.amazon.eventstream".into(),
        )],
        ..Scripted::stream(body)
    }
}

/// The frames of a fixture as a 200 event-stream response.
pub fn eventstream_fixture(path: &str) -> Scripted {
    eventstream(frames(path))
}
