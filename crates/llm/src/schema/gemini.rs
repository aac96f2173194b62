//! Gemini's `parameters`: an OpenAPI 3.0 subset that fails the whole request on one keyword it
//! does not know ("Invalid JSON payload received. Unknown name …").
//!
//! The lowering keeps what the subset can say and rewrites what it can say another way:
//! `$ref` is inlined from `$defs`/`definitions` (a cycle cannot be, and is refused); a type
//! array or a `null` branch becomes `type` plus `nullable: true`; `oneOf` becomes `anyOf`,
//! which is then the only keyword of its schema; `const` becomes a one-value `enum`; exclusive
//! bounds become inclusive ones; `required` keeps only names it lists. Everything else
//! (`additionalProperties`, `$schema`, `propertyNames`, `uniqueItems`, formats Gemini does not
//! read, …) is dropped, which loosens the schema; the tool's strict parser still refuses what
//! the schema no longer says.

use std::fmt;

use serde_json::{Map, Value, json};

/// The keywords Gemini's `Schema` has that are copied after lowering their values.
const COPIED: &[&str] = &[
    "description",
    "title",
    "default",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "minProperties",
    "maxProperties",
    "minimum",
    "maximum",
    "pattern",
    "propertyOrdering",
];

/// How deep a schema may nest (inlined definitions included).
const MAX_DEPTH: usize = 64;

/// A schema that cannot be lowered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaError(pub String);

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SchemaError {}

/// The schema as Gemini's `parameters`; `None` for a tool without parameters (Gemini wants the
/// field left out rather than an object without properties).
pub fn gemini_parameters(schema: &Value) -> Result<Option<Value>, SchemaError> {
    let defs = ["$defs", "definitions"]
        .iter()
        .filter_map(|key| schema.get(*key).and_then(Value::as_object))
        .fold(Map::new(), |mut all, defs| {
            all.extend(defs.clone());
            all
        });
    let mut lowering = Lowering {
        defs,
        expanding: Vec::new(),
    };
    let lowered = lowering.lower(schema, 0)?;
    let has_properties = lowered
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| !p.is_empty());
    Ok(has_properties.then_some(lowered))
}

struct Lowering {
    defs: Map<String, Value>,
    /// The definitions being inlined, outermost first: meeting one again is a cycle.
    expanding: Vec<String>,
}

impl Lowering {
    fn lower(&mut self, schema: &Value, depth: usize) -> Result<Value, SchemaError> {
        if depth > MAX_DEPTH {
            return Err(SchemaError(format!(
                "the schema nests deeper than {MAX_DEPTH} levels; flatten it"
            )));
        }
        let Value::Object(map) = schema else {
            // `true`, `{}` and other schemas that admit anything: Gemini needs a shape.
            return Ok(json!({}));
        };
        if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
            return self.inline(reference, depth);
        }
        let mut out = Map::new();
        let mut nullable = map.get("nullable") == Some(&Value::Bool(true));
        match map.get("type") {
            Some(Value::String(t)) if t == "null" => nullable = true,
            Some(Value::String(t)) => {
                out.insert("type".into(), json!(t));
            }
            Some(Value::Array(types)) => {
                let named: Vec<&str> = types.iter().filter_map(Value::as_str).collect();
                nullable |= named.contains(&"null");
                let rest: Vec<&str> = named.into_iter().filter(|t| *t != "null").collect();
                match rest.as_slice() {
                    [] => {}
                    [one] => {
                        out.insert("type".into(), json!(one));
                    }
                    several => {
                        // One value of several types: an `anyOf` of each, the rest per branch.
                        let mut branches = Vec::new();
                        for t in several {
                            let mut branch = map.clone();
                            branch.insert("type".into(), json!(t));
                            branches.push(self.lower(&Value::Object(branch), depth + 1)?);
                        }
                        return Ok(any_of(branches, nullable));
                    }
                }
            }
            _ => {}
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = map.get(key) {
                let mut lowered = Vec::new();
                for branch in branches {
                    if branch.get("type") == Some(&json!("null")) {
                        nullable = true;
                        continue;
                    }
                    lowered.push(self.lower(branch, depth + 1)?);
                }
                if let [only] = lowered.as_slice() {
                    // `X or null`: X itself, nullable, with this schema's description.
                    let mut only = only.clone();
                    if let (Some(d), Value::Object(o)) = (map.get("description"), &mut only) {
                        o.entry("description").or_insert_with(|| d.clone());
                    }
                    return Ok(with_nullable(only, nullable));
                }
                if !lowered.is_empty() {
                    return Ok(any_of(lowered, nullable));
                }
            }
        }
        if let Some(Value::Array(parts)) = map.get("allOf") {
            let mut merged = Map::new();
            for part in parts {
                if let Value::Object(lowered) = self.lower(part, depth + 1)? {
                    merge(&mut merged, lowered);
                }
            }
            merge(&mut out, merged);
        }
        for key in COPIED {
            if let Some(value) = map.get(*key) {
                out.insert((*key).into(), value.clone());
            }
        }
        self.bounds(map, &mut out);
        if let Some(Value::Object(properties)) = map.get("properties") {
            let mut lowered = Map::new();
            for (name, property) in properties {
                lowered.insert(name.clone(), self.lower(property, depth + 1)?);
            }
            out.insert("type".into(), json!("object"));
            if let Some(Value::Array(required)) = map.get("required") {
                let listed: Vec<Value> = required
                    .iter()
                    .filter(|r| r.as_str().is_some_and(|r| lowered.contains_key(r)))
                    .cloned()
                    .collect();
                if !listed.is_empty() {
                    out.insert("required".into(), Value::Array(listed));
                }
            }
            out.insert("properties".into(), Value::Object(lowered));
        }
        if let Some(items) = map.get("items").filter(|i| i.is_object()) {
            out.insert("items".into(), self.lower(items, depth + 1)?);
        } else if out.get("type") == Some(&json!("array")) {
            // Gemini requires the items of an array; an untyped one admits strings.
            out.insert("items".into(), json!({"type": "string"}));
        }
        enumeration(map, &mut out, &mut nullable);
        format(map, &mut out);
        Ok(with_nullable(Value::Object(out), nullable))
    }

    fn inline(&mut self, reference: &str, depth: usize) -> Result<Value, SchemaError> {
        let name = reference
            .strip_prefix("#/$defs/")
            .or_else(|| reference.strip_prefix("#/definitions/"))
            .ok_or_else(|| {
                SchemaError(format!(
                    "`$ref` {reference} does not name a local definition; inline it"
                ))
            })?;
        if self.expanding.iter().any(|n| n == name) {
            return Err(SchemaError(format!(
                "definition `{name}` refers to itself, which Gemini's schemas cannot express; make the recursion shallow"
            )));
        }
        let target = self.defs.get(name).cloned().ok_or_else(|| {
            SchemaError(format!(
                "`$ref` {reference} names no definition in the schema"
            ))
        })?;
        self.expanding.push(name.to_owned());
        let lowered = self.lower(&target, depth + 1);
        self.expanding.pop();
        lowered
    }

    /// Exclusive bounds as inclusive ones (one step inward for integers).
    fn bounds(&self, map: &Map<String, Value>, out: &mut Map<String, Value>) {
        let integer = map.get("type") == Some(&json!("integer"));
        for (key, into, step) in [
            ("exclusiveMinimum", "minimum", 1),
            ("exclusiveMaximum", "maximum", -1),
        ] {
            let Some(bound) = map.get(key) else { continue };
            let inclusive = match (integer, bound.as_i64()) {
                (true, Some(n)) => json!(n + step),
                _ => bound.clone(),
            };
            if bound.is_number() {
                out.insert(into.into(), inclusive);
            }
        }
    }
}

/// `enum` (strings only, as Gemini takes it) or `const` as a one-value `enum`.
fn enumeration(map: &Map<String, Value>, out: &mut Map<String, Value>, nullable: &mut bool) {
    let values: Vec<Value> = match (map.get("enum"), map.get("const")) {
        (Some(Value::Array(values)), _) => values.clone(),
        (None, Some(value)) => vec![value.clone()],
        _ => return,
    };
    *nullable |= values.contains(&Value::Null);
    let strings: Vec<Value> = values.into_iter().filter(Value::is_string).collect();
    if strings.is_empty() {
        return;
    }
    if out.get("type").is_none_or(|t| t == "string") {
        out.insert("type".into(), json!("string"));
        out.insert("enum".into(), Value::Array(strings));
    }
}

/// The formats Gemini reads, per type; others are dropped.
fn format(map: &Map<String, Value>, out: &mut Map<String, Value>) {
    let Some(format) = map.get("format").and_then(Value::as_str) else {
        return;
    };
    let kept = match out.get("type").and_then(Value::as_str) {
        Some("string") => matches!(format, "date-time" | "enum"),
        Some("integer") => matches!(format, "int32" | "int64"),
        Some("number") => matches!(format, "float" | "double"),
        _ => false,
    };
    if kept {
        out.insert("format".into(), json!(format));
    }
}

fn with_nullable(mut schema: Value, nullable: bool) -> Value {
    if nullable && let Value::Object(map) = &mut schema {
        if let Some(Value::Array(branches)) = map.get_mut("anyOf") {
            for branch in branches {
                if let Value::Object(b) = branch {
                    b.insert("nullable".into(), json!(true));
                }
            }
        } else {
            map.insert("nullable".into(), json!(true));
        }
    }
    schema
}

/// An `anyOf` is the only keyword of its schema on Gemini; nullability goes into the branches.
fn any_of(branches: Vec<Value>, nullable: bool) -> Value {
    with_nullable(json!({"anyOf": branches}), nullable)
}

/// `from` into `into`: properties and required names joined, other keywords kept from `into`.
fn merge(into: &mut Map<String, Value>, from: Map<String, Value>) {
    for (key, value) in from {
        match (into.get_mut(&key), value) {
            (Some(Value::Object(have)), Value::Object(more)) if key == "properties" => {
                have.extend(more);
            }
            (Some(Value::Array(have)), Value::Array(more)) if key == "required" => {
                have.extend(more);
            }
            (Some(_), _) => {}
            (None, value) => {
                into.insert(key, value);
            }
        }
    }
}

#[cfg(test)]
#[path = "gemini_tests.rs"]
mod tests;
