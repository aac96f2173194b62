//! The canonical bytes of an event, which its stored checksum covers.
//!
//! **Key decision:** PostgreSQL's `jsonb` keeps neither key order nor number spelling, so the
//! checksum cannot cover the bytes the caller sent. It covers a canonical form that survives
//! the round trip: object keys sorted bytewise, numbers as serde_json writes them, negative
//! zero written as zero (as `numeric` keeps it). The same function runs on the event before
//! it is stored and on the value read back, so any change in between is a mismatch. Rejected:
//! storing the payload as `text` beside the `jsonb`, which doubles every row.

use serde_json::Value;

/// `value` as the fleet stores a working copy's event: every U+0000 in a string or a key
/// (which `jsonb` cannot hold; a command's output may carry one) replaced by U+FFFD, the
/// character that says a character was lost. Borrowed when there is none.
pub fn storable(value: &Value) -> std::borrow::Cow<'_, Value> {
    fn has_nul(value: &Value) -> bool {
        match value {
            Value::String(s) => s.contains('\0'),
            Value::Array(items) => items.iter().any(has_nul),
            Value::Object(map) => map.iter().any(|(k, v)| k.contains('\0') || has_nul(v)),
            Value::Null | Value::Bool(_) | Value::Number(_) => false,
        }
    }
    fn replaced(value: &Value) -> Value {
        match value {
            Value::String(s) => Value::String(s.replace('\0', "\u{FFFD}")),
            Value::Array(items) => Value::Array(items.iter().map(replaced).collect()),
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| (k.replace('\0', "\u{FFFD}"), replaced(v)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
    if has_nul(value) {
        std::borrow::Cow::Owned(replaced(value))
    } else {
        std::borrow::Cow::Borrowed(value)
    }
}

/// The canonical bytes of `value`, or the reason PostgreSQL cannot store it.
pub(crate) fn canonical_bytes(value: &Value) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(128);
    write(value, &mut out)?;
    Ok(out)
}

/// CRC-32C of the canonical bytes.
pub(crate) fn checksum(value: &Value) -> Result<u32, String> {
    canonical_bytes(value).map(|bytes| crc32c::crc32c(&bytes))
}

fn write(value: &Value, out: &mut Vec<u8>) -> Result<(), String> {
    match value {
        Value::Null | Value::Bool(_) => {
            serde_json::to_writer(&mut *out, value).map_err(|e| e.to_string())
        }
        Value::Number(n) => {
            if n.as_f64().is_some_and(|f| f == 0.0) && n.is_f64() {
                out.extend_from_slice(b"0.0");
                Ok(())
            } else {
                serde_json::to_writer(&mut *out, n).map_err(|e| e.to_string())
            }
        }
        Value::String(s) => write_str(s, out),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write(item, out)?;
            }
            out.push(b']');
            Ok(())
        }
        Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            out.push(b'{');
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_str(key, out)?;
                out.push(b':');
                write(item, out)?;
            }
            out.push(b'}');
            Ok(())
        }
    }
}

fn write_str(s: &str, out: &mut Vec<u8>) -> Result<(), String> {
    if s.contains('\0') {
        return Err(
            "a string holds U+0000, which PostgreSQL's jsonb cannot store; encode such text (e.g. as base64) before recording it"
                .to_owned(),
        );
    }
    serde_json::to_writer(&mut *out, s).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Events reach these walks parsed by serde_json (a log line, a `jsonb` row), whose
    /// recursion limit bounds their depth: generated nesting up to that limit is walked, and
    /// text nested past it is refused by the parser, never walked.
    #[test]
    fn generated_nesting_is_walked_to_the_parsers_limit_and_refused_past_it() {
        for (kind, open, close) in [("array", "[", "]"), ("object", "{\"k\":", "}")] {
            for depth in [1usize, 16, 64, 127] {
                let text = format!("{}\"a\\u0000b\"{}", open.repeat(depth), close.repeat(depth));
                let value: Value = serde_json::from_str(&text)
                    .unwrap_or_else(|e| panic!("{kind} depth {depth}: {e}"));
                let stored = storable(&value);
                assert!(!stored.to_string().contains("\\u0000"), "{kind} {depth}");
                assert!(canonical_bytes(&stored).is_ok(), "{kind} {depth}");
                assert!(canonical_bytes(&value).is_err(), "{kind} {depth}");
            }
            let deep = format!("{}1{}", open.repeat(10_000), close.repeat(10_000));
            assert!(serde_json::from_str::<Value>(&deep).is_err(), "{kind}");
        }
    }

    #[test]
    fn a_nul_is_stored_as_the_replacement_character_and_nothing_else_changes() {
        let plain = json!({"a": ["x", 1, null]});
        assert!(matches!(storable(&plain), std::borrow::Cow::Borrowed(_)));
        let with_nul = json!({"out": "a\0b", "k\0": [{"x": "\0"}], "n": 2});
        let stored = storable(&with_nul);
        assert_eq!(
            stored.as_ref(),
            &json!({"out": "a\u{FFFD}b", "k\u{FFFD}": [{"x": "\u{FFFD}"}], "n": 2})
        );
        assert!(canonical_bytes(&stored).is_ok());
    }

    #[test]
    fn key_order_and_negative_zero_do_not_change_the_bytes() {
        let a: Value = serde_json::from_str(r#"{"b":1,"a":{"z":-0.0,"y":[1,2.5]}}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"a":{"y":[1,2.5],"z":0.0},"b":1}"#).unwrap();
        assert_eq!(canonical_bytes(&a).unwrap(), canonical_bytes(&b).unwrap());
        assert_eq!(
            String::from_utf8(canonical_bytes(&a).unwrap()).unwrap(),
            r#"{"a":{"y":[1,2.5],"z":0.0},"b":1}"#
        );
    }

    #[test]
    fn a_nul_anywhere_is_refused_with_the_fix() {
        for value in [json!("a\0b"), json!({"k\0": 1}), json!([{"x": "\0"}])] {
            let err = canonical_bytes(&value).unwrap_err();
            assert!(err.contains("U+0000") && err.contains("base64"), "{err}");
        }
        // A backslash followed by "u0000" is text, not a NUL.
        assert!(canonical_bytes(&json!("\\u0000")).is_ok());
    }
}
