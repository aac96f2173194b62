//! `tackle sessions replay`: every record of a session's log in order, as it was written.

use std::fmt::Write as _;

use serde_json::Value;
use tackle_runtime::visible::visible;
use tackle_store::Record;

/// One line per record: seq, time, kind, and the fields that say what happened.
pub fn line(record: &Record) -> String {
    let e = &record.event;
    let kind = e["type"].as_str().unwrap_or("?");
    let at = e["at_ms"]
        .as_u64()
        .map(|ms| tackle_tool::time::compact_utc((ms / 1000) as i64))
        .unwrap_or_default();
    let mut out = format!("{:>5} {at} {kind}", record.seq);
    let detail = match kind {
        "session_started" => format!("{} ({})", field(e, "session"), field(e, "posture")),
        "user_input" => first_line(&field(e, "text")),
        "run_started" => field(e, "model"),
        "model_turn" => format!(
            "turn {} · {} · {} in / {} out",
            e["turn"],
            field(e, "stop_reason"),
            e["usage"]["input_tokens"],
            e["usage"]["output_tokens"]
        ),
        "model_turn_cancelled" => format!("turn {}", e["turn"]),
        "tool_batch_started" => format!(
            "turn {} · {} call(s)",
            e["turn"],
            e["calls"].as_array().map_or(0, Vec::len)
        ),
        "tool_batch_finished" => format!(
            "turn {} · {} result(s){}{}",
            e["turn"],
            e["results"].as_array().map_or(0, Vec::len),
            if e["cancelled"] == true {
                " · cancelled"
            } else {
                ""
            },
            if e["interrupted"] == true {
                " · interrupted"
            } else {
                ""
            }
        ),
        "call_started" => format!("{} {}", field(e, "tool"), field(e, "call_id")),
        "approval_asked" => format!("{} waits for a person's answer", field(e, "call_id")),
        "call_finished" => {
            let code = field(e, "code");
            let code = if code.is_empty() {
                String::new()
            } else {
                format!(" ({code})")
            };
            format!(
                "{} {} {}{code}",
                field(e, "tool"),
                field(e, "call_id"),
                field(e, "status")
            )
        }
        "checkpoint" => format!("summary of messages before {}", e["through"]),
        "run_finished" => format!(
            "{}: {}",
            field(e, "outcome"),
            first_line(&field(e, "reason"))
        ),
        _ => String::new(),
    };
    if !detail.is_empty() {
        let _ = write!(out, " · {}", visible(&detail));
    }
    out
}

fn field(e: &Value, name: &str) -> String {
    match &e[name] {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or("");
    if line.chars().count() > 100 {
        format!("{}…", line.chars().take(100).collect::<String>())
    } else {
        line.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_says_what_happened() {
        let record = |seq, event: Value| Record { seq, event };
        let finished = line(&record(
            7,
            serde_json::json!({"type": "call_finished", "call_id": "c1", "tool": "bash",
                "status": "error", "code": "timeout", "at_ms": 0, "label": {}}),
        ));
        assert!(
            finished.ends_with("call_finished · bash c1 error (timeout)"),
            "{finished}"
        );
        let input = line(&record(
            2,
            serde_json::json!({"type": "user_input", "text": "one\ntwo", "at_ms": 0}),
        ));
        assert!(input.ends_with("user_input · one"), "{input}");
    }
}
