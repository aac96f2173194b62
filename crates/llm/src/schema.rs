//! Tool input schemas lowered per family, from the one JSON Schema the catalog holds.
//!
//! - [`object_root`]: what Anthropic's `input_schema` and OpenAI's non-strict `parameters` need —
//!   a root of `"type": "object"` with `properties` (an empty or typeless root is rejected by
//!   both), without the `$schema` marker some compatible servers refuse.
//! - [`openai_strict`]: OpenAI's strict mode (Structured Outputs subset): every object closed
//!   with `additionalProperties: false` and every property listed in `required`, the ones that
//!   were optional made nullable so the model can still leave them out by sending `null`.
//!   Applied only when strict mode is on; a schema is otherwise sent as the catalog wrote it.
//! - [`gemini_parameters`] (`schema/gemini.rs`): Gemini's OpenAPI subset, definitions inlined,
//!   nullable unions as `nullable`, the keywords it rejects dropped.

use serde_json::{Map, Value, json};

mod gemini;

pub use gemini::{SchemaError, gemini_parameters};

/// The schema with an object root.
pub fn object_root(schema: &Value) -> Value {
    let mut root = match schema {
        Value::Object(map) => map.clone(),
        _ => Map::new(),
    };
    root.remove("$schema");
    root.insert("type".into(), json!("object"));
    root.entry("properties").or_insert_with(|| json!({}));
    Value::Object(root)
}

/// The schema rewritten for OpenAI strict mode.
pub fn openai_strict(schema: &Value) -> Value {
    let mut root = object_root(schema);
    close(&mut root);
    root
}

fn close(schema: &mut Value) {
    let Value::Object(map) = schema else {
        return;
    };
    for key in ["anyOf", "oneOf", "allOf", "prefixItems"] {
        if let Some(Value::Array(branches)) = map.get_mut(key) {
            branches.iter_mut().for_each(close);
        }
    }
    for key in ["$defs", "definitions"] {
        if let Some(Value::Object(defs)) = map.get_mut(key) {
            defs.values_mut().for_each(close);
        }
    }
    if let Some(items) = map.get_mut("items") {
        close(items);
    }
    let is_object = map.get("type") == Some(&json!("object")) || map.contains_key("properties");
    if !is_object {
        return;
    }
    let required: Vec<String> = match map.get("required") {
        Some(Value::Array(names)) => names
            .iter()
            .filter_map(|n| n.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    };
    let mut properties = match map.remove("properties") {
        Some(Value::Object(p)) => p,
        _ => Map::new(),
    };
    for (name, property) in properties.iter_mut() {
        close(property);
        if !required.contains(name) {
            make_nullable(property);
        }
    }
    let all: Vec<Value> = properties.keys().map(|k| json!(k)).collect();
    map.insert("properties".into(), Value::Object(properties));
    map.insert("required".into(), Value::Array(all));
    map.insert("additionalProperties".into(), json!(false));
}

fn make_nullable(schema: &mut Value) {
    let Value::Object(map) = schema else {
        return;
    };
    match map.get_mut("type") {
        Some(Value::String(t)) if t == "null" => {}
        Some(Value::String(t)) => {
            let t = std::mem::take(t);
            map.insert("type".into(), json!([t, "null"]));
        }
        Some(Value::Array(types)) => {
            if !types.contains(&json!("null")) {
                types.push(json!("null"));
            }
        }
        _ => {
            let inner = std::mem::take(map);
            map.insert(
                "anyOf".into(),
                json!([Value::Object(inner), {"type": "null"}]),
            );
        }
    }
    if let Some(Value::Array(values)) = map.get_mut("enum")
        && !values.contains(&Value::Null)
    {
        values.push(Value::Null);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_root_cases() {
        let cases = [
            (json!({}), json!({"type":"object","properties":{}})),
            (json!(null), json!({"type":"object","properties":{}})),
            (
                json!({"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"a":{"type":"string"}}}),
                json!({"type":"object","properties":{"a":{"type":"string"}}}),
            ),
        ];
        for (input, want) in cases {
            assert_eq!(object_root(&input), want, "{input}");
        }
    }

    #[test]
    fn strict_mode_requires_everything_and_makes_optional_nullable() {
        let input = json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "offset": {"type": "integer", "minimum": 0},
                "mode": {"type": "string", "enum": ["a", "b"]},
                "either": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
                "maybe": {"type": ["string", "null"]},
                "nested": {"type": "object", "properties": {"x": {"type": "boolean"}}},
                "list": {"type": "array", "items": {"type": "object", "properties": {"k": {"type": "string"}}, "required": ["k"]}}
            },
            "required": ["path", "list"]
        });
        let want = json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "offset": {"type": ["integer", "null"], "minimum": 0},
                "mode": {"type": ["string", "null"], "enum": ["a", "b", null]},
                "either": {"anyOf": [{"anyOf": [{"type": "string"}, {"type": "integer"}]}, {"type": "null"}]},
                "maybe": {"type": ["string", "null"]},
                "nested": {"type": ["object", "null"], "properties": {"x": {"type": ["boolean", "null"]}}, "required": ["x"], "additionalProperties": false},
                "list": {"type": "array", "items": {"type": "object", "properties": {"k": {"type": "string"}}, "required": ["k"], "additionalProperties": false}}
            },
            "required": ["path", "offset", "mode", "either", "maybe", "nested", "list"],
            "additionalProperties": false
        });
        let mut got = openai_strict(&input);
        // `required` follows the map's key order, which depends on serde_json's features.
        if let Some(Value::Array(names)) = got.get_mut("required") {
            names.sort_by_key(|n| n.as_str().map(str::to_owned));
        }
        let mut want = want;
        if let Some(Value::Array(names)) = want.get_mut("required") {
            names.sort_by_key(|n| n.as_str().map(str::to_owned));
        }
        assert_eq!(got, want);
    }

    #[test]
    fn strict_mode_closes_an_empty_object_and_definitions() {
        assert_eq!(
            openai_strict(&json!({"type": "object"})),
            json!({"type":"object","properties":{},"required":[],"additionalProperties":false})
        );
        let with_defs = json!({"type":"object","properties":{"p":{"$ref":"#/$defs/P"}},"required":["p"],
            "$defs":{"P":{"type":"object","properties":{"q":{"type":"string"}}}}});
        let out = openai_strict(&with_defs);
        assert_eq!(out["$defs"]["P"]["additionalProperties"], json!(false));
        assert_eq!(
            out["$defs"]["P"]["properties"]["q"]["type"],
            json!(["string", "null"])
        );
        assert_eq!(out["properties"]["p"], json!({"$ref":"#/$defs/P"}));
    }
}
