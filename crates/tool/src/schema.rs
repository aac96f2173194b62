//! JSON Schema generation for argument types, with the strictness the catalog requires.

use serde_json::Value;

/// Why an argument type's schema cannot be published.
#[derive(Debug, Clone, PartialEq)]
pub enum SchemaError {
    NotAnObject,
    /// The type does not reject unknown fields; add `#[serde(deny_unknown_fields)]`.
    OpenObject,
}

impl std::fmt::Display for SchemaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotAnObject => write!(f, "argument schema is not an object schema"),
            Self::OpenObject => write!(
                f,
                "argument schema allows unknown fields; add #[serde(deny_unknown_fields)] so it \
                 carries additionalProperties: false"
            ),
        }
    }
}

impl std::error::Error for SchemaError {}

/// The schema a model receives for `T`: an object schema with `additionalProperties: false`,
/// without the `$schema` and `title` noise, in the keywords every major client reads
/// ([`crate::portable`]).
pub fn strict_schema_for<T: schemars::JsonSchema>() -> Result<Value, SchemaError> {
    let mut value = schemars::schema_for!(T).to_value();
    let Some(obj) = value.as_object_mut() else {
        return Err(SchemaError::NotAnObject);
    };
    obj.remove("$schema");
    obj.remove("title");
    if obj.get("type") != Some(&Value::String("object".into())) {
        return Err(SchemaError::NotAnObject);
    }
    if obj.get("additionalProperties") != Some(&Value::Bool(false)) {
        return Err(SchemaError::OpenObject);
    }
    Ok(crate::portable(&value))
}
