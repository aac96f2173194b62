use super::*;

fn lowered(schema: Value) -> Value {
    gemini_parameters(&schema)
        .expect("lowers")
        .expect("has parameters")
}

#[test]
fn a_portable_tool_schema_loses_only_what_gemini_rejects() {
    // The shape `strict_schema_for` + `portable` publish for a built-in (read_file's).
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "path": {"type": "string", "description": "The file", "minLength": 1},
            "offset": {"type": "integer", "minimum": 0, "default": 0, "format": "uint64"},
            "mode": {"type": "string", "enum": ["text", "bytes"]},
            "globs": {"type": "array", "items": {"type": "string"}, "maxItems": 8},
            "when": {"type": "string", "format": "date-time"},
            "opts": {"type": "object", "additionalProperties": false,
                     "properties": {"deep": {"type": "boolean"}}}
        },
        "required": ["path"]
    });
    assert_eq!(
        lowered(schema),
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "The file", "minLength": 1},
                "offset": {"type": "integer", "minimum": 0, "default": 0},
                "mode": {"type": "string", "enum": ["text", "bytes"]},
                "globs": {"type": "array", "items": {"type": "string"}, "maxItems": 8},
                "when": {"type": "string", "format": "date-time"},
                "opts": {"type": "object", "properties": {"deep": {"type": "boolean"}}}
            },
            "required": ["path"]
        })
    );
}

#[test]
fn nullable_unions_refs_and_consts_are_rewritten_as_a_table() {
    let cases = [
        (
            "type array with null",
            json!({"type": ["string", "null"], "description": "d"}),
            json!({"type": "string", "description": "d", "nullable": true}),
        ),
        (
            "anyOf X or null",
            json!({"anyOf": [{"type": "integer"}, {"type": "null"}], "description": "n"}),
            json!({"type": "integer", "description": "n", "nullable": true}),
        ),
        (
            "oneOf of several",
            json!({"oneOf": [{"type": "string"}, {"type": "integer", "exclusiveMinimum": 0}]}),
            json!({"anyOf": [{"type": "string"}, {"type": "integer", "minimum": 1}]}),
        ),
        (
            "several types",
            json!({"type": ["string", "integer", "null"]}),
            json!({"anyOf": [{"type": "string", "nullable": true}, {"type": "integer", "nullable": true}]}),
        ),
        (
            "const",
            json!({"const": "only"}),
            json!({"type": "string", "enum": ["only"]}),
        ),
        (
            "enum with null and numbers",
            json!({"enum": ["a", null, 3]}),
            json!({"type": "string", "enum": ["a"], "nullable": true}),
        ),
        (
            "integer enum is dropped",
            json!({"type": "integer", "enum": [1, 2]}),
            json!({"type": "integer"}),
        ),
        (
            "untyped array gets items",
            json!({"type": "array"}),
            json!({"type": "array", "items": {"type": "string"}}),
        ),
        (
            "unknown keywords dropped",
            json!({"type": "object", "propertyNames": {"pattern": "^a"}, "patternProperties": {}, "uniqueItems": true,
                   "properties": {"a": {"type": "number", "exclusiveMaximum": 1.5, "examples": [1]}}}),
            json!({"type": "object", "properties": {"a": {"type": "number", "maximum": 1.5}}}),
        ),
        (
            "allOf merged",
            json!({"allOf": [{"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                             {"properties": {"b": {"type": "boolean"}}}]}),
            json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "boolean"}}, "required": ["a"]}),
        ),
    ];
    for (name, property, want) in cases {
        let schema = json!({"type": "object", "properties": {"p": property}});
        assert_eq!(lowered(schema)["properties"]["p"], want, "{name}");
    }
}

#[test]
fn refs_are_inlined_and_required_lists_only_known_properties() {
    let schema = json!({
        "type": "object",
        "properties": {"edit": {"$ref": "#/$defs/Edit"}, "list": {"type": "array", "items": {"$ref": "#/definitions/Item"}}},
        "required": ["edit", "ghost"],
        "$defs": {"Edit": {"type": "object", "properties": {"old": {"type": "string"}}, "required": ["old"]}},
        "definitions": {"Item": {"type": "string"}}
    });
    assert_eq!(
        lowered(schema),
        json!({
            "type": "object",
            "properties": {
                "edit": {"type": "object", "properties": {"old": {"type": "string"}}, "required": ["old"]},
                "list": {"type": "array", "items": {"type": "string"}}
            },
            "required": ["edit"]
        })
    );
}

#[test]
fn cycles_missing_and_foreign_refs_are_refused_with_what_to_do() {
    let cycle = json!({"type": "object", "properties": {"node": {"$ref": "#/$defs/Node"}},
        "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}}});
    let e = gemini_parameters(&cycle).unwrap_err();
    assert!(e.0.contains("`Node` refers to itself"), "{e}");
    let missing = json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/Gone"}}});
    assert!(
        gemini_parameters(&missing)
            .unwrap_err()
            .0
            .contains("names no definition")
    );
    let foreign = json!({"type": "object", "properties": {"a": {"$ref": "https://x.test/s.json"}}});
    assert!(
        gemini_parameters(&foreign)
            .unwrap_err()
            .0
            .contains("local definition")
    );
    // The same definition twice side by side is not a cycle.
    let twice = json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/S"}, "b": {"$ref": "#/$defs/S"}},
        "$defs": {"S": {"type": "string"}}});
    assert!(gemini_parameters(&twice).is_ok());
}

#[test]
fn a_tool_without_parameters_sends_none_and_depth_is_bounded() {
    for empty in [
        json!({}),
        json!({"type": "object"}),
        json!({"type": "object", "properties": {}}),
        json!(null),
    ] {
        assert_eq!(gemini_parameters(&empty), Ok(None), "{empty}");
    }
    let mut deep = json!({"type": "string"});
    for _ in 0..100 {
        deep = json!({"type": "object", "properties": {"x": deep}});
    }
    assert!(gemini_parameters(&deep).unwrap_err().0.contains("deeper"));
}
