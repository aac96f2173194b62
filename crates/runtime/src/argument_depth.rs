//! Arguments nested too deeply for the recursive code after the dispatcher (the event log's
//! serializer, strict parsing, every tool's own walk over them).
//!
//! serde_json refuses text nested past 128 levels, but a `Value` an embedder builds (or one
//! decoded by a laxer reader) has no such bound, and serializing one 5,000 deep for the
//! `call_started` event overflowed the stack. [`bound`] measures depth without recursion; a
//! call past [`MAX_ARGUMENT_DEPTH`] keeps a small marker object in its place, which the
//! strict parser refuses as `invalid_arguments`, and the deep value is taken apart without
//! recursion.

use serde_json::{Value, json};

/// Deepest nesting of a call's arguments (serde_json's limit when it parses text).
pub const MAX_ARGUMENT_DEPTH: usize = 128;

/// The field the marker object carries; no tool has a field of that name.
pub const UNREADABLE_FIELD: &str = "arguments_nested_too_deeply";

/// `arguments`, or the marker when they nest deeper than [`MAX_ARGUMENT_DEPTH`].
pub fn bound(arguments: Value) -> Value {
    if depth_at_most(&arguments, MAX_ARGUMENT_DEPTH) {
        return arguments;
    }
    drop_flat(arguments);
    json!({ UNREADABLE_FIELD: format!("more than {MAX_ARGUMENT_DEPTH} levels; pass flatter arguments") })
}

fn depth_at_most(value: &Value, limit: usize) -> bool {
    let mut stack: Vec<(&Value, usize)> = vec![(value, 1)];
    while let Some((v, depth)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match v {
            Value::Array(a) => Box::new(a.iter()),
            Value::Object(m) => Box::new(m.values()),
            _ => continue,
        };
        if depth > limit {
            return false;
        }
        stack.extend(children.map(|c| (c, depth + 1)));
    }
    true
}

/// Drop a value without recursing into it.
fn drop_flat(value: Value) {
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::Array(a) => stack.extend(a),
            Value::Object(m) => stack.extend(m.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(n: usize) -> Value {
        (0..n).fold(Value::Null, |inner, i| {
            if i % 2 == 0 {
                Value::Array(vec![inner])
            } else {
                Value::Object([("a".to_owned(), inner)].into_iter().collect())
            }
        })
    }

    #[test]
    fn deep_arguments_become_the_marker() {
        assert_eq!(bound(json!({"a": 1})), json!({"a": 1}));
        assert_eq!(
            bound(nested(MAX_ARGUMENT_DEPTH)),
            nested(MAX_ARGUMENT_DEPTH)
        );
        for n in [MAX_ARGUMENT_DEPTH + 1, 5_000, 200_000] {
            let got = bound(nested(n));
            assert!(got.get(UNREADABLE_FIELD).is_some(), "{n}");
        }
    }
}
