//! The JSON Schema subset every major client accepts, and the rewrite into it.
//!
//! A tool's argument schema reaches models through clients that each read a different subset:
//! Gemini CLI warns on every `format` it does not know (schemars writes `"format": "uint64"`)
//! and rewrites type arrays, Codex drops `format`, `minimum` and `maximum`, and several reject or
//! misread `$ref`, `oneOf` and `const`. [`portable`] rewrites a schema into [`PORTABLE_KEYWORDS`]
//! without loosening what it admits beyond what the tool's strict parser still refuses:
//!
//! - `$ref` is replaced by the definition it names and `$defs` goes;
//! - a `oneOf` / `anyOf` of `const` strings becomes one `enum` (a branch's description is
//!   dropped; the property's own description names the choices);
//! - an optional property's `null` (`["integer", "null"]`, `anyOf [X, {"type": "null"}]`,
//!   `"default": null`) goes: leaving the field out means the same, and the parser still
//!   accepts an explicit `null`;
//! - `format` goes unless it is one JSON Schema defines for strings; bounds stay.
//!
//! What the rewrite cannot express in the subset is left as it is, and the catalog test
//! (`every_published_schema_is_portable`) fails, so a new tool cannot publish it unnoticed.

use serde_json::{Map, Value};

/// The keywords a published schema may use.
pub const PORTABLE_KEYWORDS: &[&str] = &[
    "type",
    "description",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "default",
    "minimum",
    "maximum",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "format",
];

/// String formats JSON Schema defines, which clients pass on or ignore quietly.
const STANDARD_FORMATS: &[&str] = &["date-time", "date", "time", "email", "uri", "uuid"];

/// `schema` rewritten into [`PORTABLE_KEYWORDS`] (see the module docs).
pub fn portable(schema: &Value) -> Value {
    let defs = schema
        .get("$defs")
        .or_else(|| schema.get("definitions"))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    rewrite(schema, &defs, 0)
}

/// The first keyword of `schema`, at any depth, that is not portable; `None` when all are.
pub fn first_unportable(schema: &Value) -> Option<String> {
    let Value::Object(map) = schema else {
        return None;
    };
    for (key, value) in map {
        if !PORTABLE_KEYWORDS.contains(&key.as_str()) {
            return Some(key.clone());
        }
        if key == "type" && !value.is_string() {
            return Some(format!("type {value}"));
        }
        if key == "format"
            && !value
                .as_str()
                .is_some_and(|f| STANDARD_FORMATS.contains(&f))
        {
            return Some(format!("format {value}"));
        }
        let nested = match key.as_str() {
            "properties" => value
                .as_object()
                .and_then(|p| p.values().find_map(first_unportable)),
            "items" | "additionalProperties" => first_unportable(value),
            _ => None,
        };
        if nested.is_some() {
            return nested;
        }
    }
    None
}

/// References followed at most this deep; a cycle stops there and keeps its `$ref`.
const MAX_REF_DEPTH: usize = 16;

fn rewrite(schema: &Value, defs: &Map<String, Value>, depth: usize) -> Value {
    let Value::Object(map) = schema else {
        return schema.clone();
    };
    let mut out = Map::new();
    let mut resolved = false;
    // A `$ref` beside a description: the definition, with the referring description kept.
    if let Some(target) = map
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.rsplit('/').next())
        .and_then(|name| defs.get(name))
        && depth < MAX_REF_DEPTH
        && let Value::Object(definition) = rewrite(target, defs, depth + 1)
    {
        out.extend(definition);
        resolved = true;
    }
    for (key, value) in map {
        match key.as_str() {
            "$defs" | "definitions" | "$schema" | "title" => {}
            "$ref" if resolved => {}
            "properties" => {
                let props = value
                    .as_object()
                    .map(|p| {
                        p.iter()
                            .map(|(name, prop)| (name.clone(), rewrite(prop, defs, depth)))
                            .collect::<Map<_, _>>()
                    })
                    .unwrap_or_default();
                out.insert(key.clone(), Value::Object(props));
            }
            "items" | "additionalProperties" => {
                out.insert(key.clone(), rewrite(value, defs, depth));
            }
            "oneOf" | "anyOf" => merge_alternatives(&mut out, key, value, defs, depth),
            "type" => {
                out.insert(key.clone(), without_null_type(value));
            }
            "default" if value.is_null() => {}
            "format"
                if !value
                    .as_str()
                    .is_some_and(|f| STANDARD_FORMATS.contains(&f)) => {}
            _ => {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    Value::Object(out)
}

/// `["integer", "null"]` → `"integer"`; anything else unchanged.
fn without_null_type(value: &Value) -> Value {
    match value {
        Value::Array(types) => {
            let kept: Vec<&Value> = types
                .iter()
                .filter(|t| t.as_str() != Some("null"))
                .collect();
            match kept.as_slice() {
                [one] => (*one).clone(),
                _ => Value::Array(kept.into_iter().cloned().collect()),
            }
        }
        other => other.clone(),
    }
}

/// A `oneOf`/`anyOf` without its `null` branch: one branch is merged in; branches that are all
/// `const` strings become an `enum`; anything else is kept as it was.
fn merge_alternatives(
    out: &mut Map<String, Value>,
    key: &str,
    value: &Value,
    defs: &Map<String, Value>,
    depth: usize,
) {
    let Some(branches) = value.as_array() else {
        out.insert(key.to_owned(), value.clone());
        return;
    };
    let branches: Vec<Value> = branches
        .iter()
        .map(|b| rewrite(b, defs, depth + 1))
        .filter(|b| b.get("type").and_then(Value::as_str) != Some("null"))
        .collect();
    if let [one] = branches.as_slice()
        && let Value::Object(one) = one
    {
        for (k, v) in one {
            if k == "description" && out.contains_key("description") {
                continue;
            }
            out.insert(k.clone(), v.clone());
        }
        return;
    }
    let consts: Option<Vec<Value>> = branches
        .iter()
        .map(|b| b.get("const").filter(|c| c.is_string()).cloned())
        .collect();
    match consts {
        Some(values) if !values.is_empty() => {
            out.insert("type".to_owned(), Value::String("string".to_owned()));
            out.insert("enum".to_owned(), Value::Array(values));
        }
        _ => {
            out.insert(key.to_owned(), Value::Array(branches));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn schemars_output_becomes_portable() {
        let todo = json!({
            "$defs": {
                "Action": {"oneOf": [
                    {"const": "list", "description": "Show.", "type": "string"},
                    {"const": "add", "description": "Add.", "type": "string"}
                ]},
                "Status": {"enum": ["pending", "done"], "type": "string"}
            },
            "additionalProperties": false,
            "properties": {
                "action": {"$ref": "#/$defs/Action", "description": "list or add."},
                "id": {"format": "uint64", "minimum": 0, "type": ["integer", "null"], "default": null},
                "status": {"anyOf": [{"$ref": "#/$defs/Status"}, {"type": "null"}], "description": "pending or done."}
            },
            "required": ["action"],
            "type": "object"
        });
        let out = portable(&todo);
        assert_eq!(
            out,
            json!({
                "additionalProperties": false,
                "properties": {
                    "action": {"description": "list or add.", "type": "string", "enum": ["list", "add"]},
                    "id": {"minimum": 0, "type": "integer"},
                    "status": {"description": "pending or done.", "enum": ["pending", "done"], "type": "string"}
                },
                "required": ["action"],
                "type": "object"
            })
        );
        assert_eq!(first_unportable(&out), None);
        assert_eq!(first_unportable(&todo), Some("$defs".to_owned()));
    }

    #[test]
    fn unportable_keywords_are_named() {
        for (schema, named) in [
            (
                json!({"type": "object", "properties": {"a": {"const": 1}}}),
                "const",
            ),
            (
                json!({"type": ["string", "null"]}),
                "type [\"string\",\"null\"]",
            ),
            (
                json!({"type": "integer", "format": "uint64"}),
                "format \"uint64\"",
            ),
            (json!({"type": "array", "items": {"oneOf": []}}), "oneOf"),
        ] {
            assert_eq!(
                first_unportable(&schema).as_deref(),
                Some(named),
                "{schema}"
            );
        }
        assert_eq!(
            first_unportable(&json!({"type": "string", "format": "uri"})),
            None
        );
    }

    #[test]
    fn a_reference_cycle_stops() {
        let schema = json!({
            "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}},
            "$ref": "#/$defs/Node"
        });
        // Terminates; the innermost reference is kept and named as unportable.
        let out = portable(&schema);
        assert!(first_unportable(&out).is_some());
    }
}
