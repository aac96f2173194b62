//! The type-erased tool the runtime holds, and the strict argument parser.

use std::any::Any;
use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;

use serde_json::Value;
use tackle_protocol::{Concurrency, ErrorCode, Label, OutputDeclaration, SessionId, Truncation};

use crate::schema::{SchemaError, strict_schema_for};
use crate::{ExecuteContext, PrepareContext, Prepared, Tool, ToolCompletion, ToolError};

/// A tool's plan with its type erased; only the tool that made it can open it.
pub type ErasedPlan = Box<dyn Any + Send>;

type ExecFuture<'a> = Pin<Box<dyn Future<Output = Result<ToolCompletion, ToolError>> + Send + 'a>>;

/// A [`Tool`] as the runtime holds it. Implemented for every `Tool`; implemented by hand only
/// for tools whose argument schema is known at run time (MCP tools wrapping a remote server).
pub trait DynTool: Send + Sync + 'static {
    fn name(&self) -> &str;
    /// The name in the tool's permission key `tool.<gate_name>`: the model-facing name unless
    /// the tool says otherwise (an MCP tool `mcp__github__create_issue` is gated as
    /// `tool.mcp.github.create_issue`).
    fn gate_name(&self) -> Cow<'_, str> {
        Cow::Borrowed(self.name())
    }
    fn description(&self) -> Cow<'static, str>;
    /// The description in one sentence ([`Tool::summary`]).
    fn summary(&self) -> Cow<'static, str> {
        crate::summary::derived(self.description())
    }
    fn input_schema(&self) -> Result<Value, SchemaError>;
    fn concurrency(&self) -> Concurrency;
    fn read_only(&self) -> bool;
    fn output(&self) -> OutputDeclaration;
    fn truncation(&self) -> Truncation;
    fn label(&self) -> Label;
    fn permission_actions(&self) -> &'static [&'static str];
    fn survey(&self) -> bool;
    /// Whether a poller (wait_and_verify) may call this tool repeatedly: by default exactly
    /// when it is read-only. A tool from a third-party server overrides it (its server may be
    /// declared read-only, or the tool listed in `poll_allow`).
    fn pollable(&self) -> bool {
        self.read_only()
    }
    /// Whether the tool calls other tools ([`Tool::calls_tools`]).
    fn calls_tools(&self) -> bool {
        false
    }
    /// Whether the tool keeps state per session ([`Tool::session_state`]).
    fn session_state(&self) -> bool {
        false
    }
    /// Rebuild `session`'s state from recorded arguments ([`Tool::restore`]); arguments that no
    /// longer parse (a log from another version) are passed over.
    fn restore_json(&self, _session: &SessionId, _calls: Vec<Value>) {}
    /// Parse `arguments` strictly, then prepare.
    fn prepare_json(
        &self,
        arguments: Value,
        cx: &PrepareContext<'_>,
    ) -> Result<Prepared<ErasedPlan>, ToolError>;
    fn execute_erased(&self, plan: ErasedPlan, cx: ExecuteContext) -> ExecFuture<'_>;
}

impl<T: Tool> DynTool for T {
    fn name(&self) -> &str {
        Tool::name(self)
    }
    fn description(&self) -> Cow<'static, str> {
        Tool::description(self)
    }
    fn summary(&self) -> Cow<'static, str> {
        Tool::summary(self)
    }
    fn input_schema(&self) -> Result<Value, SchemaError> {
        strict_schema_for::<T::Args>()
    }
    fn concurrency(&self) -> Concurrency {
        Tool::concurrency(self)
    }
    fn read_only(&self) -> bool {
        Tool::read_only(self)
    }
    fn output(&self) -> OutputDeclaration {
        Tool::output(self)
    }
    fn truncation(&self) -> Truncation {
        Tool::truncation(self)
    }
    fn label(&self) -> Label {
        Tool::label(self)
    }
    fn permission_actions(&self) -> &'static [&'static str] {
        Tool::permission_actions(self)
    }
    fn survey(&self) -> bool {
        Tool::survey(self)
    }
    fn calls_tools(&self) -> bool {
        Tool::calls_tools(self)
    }
    fn session_state(&self) -> bool {
        Tool::session_state(self)
    }
    fn restore_json(&self, session: &SessionId, calls: Vec<Value>) {
        let name = Tool::name(self);
        let parsed = calls
            .into_iter()
            .filter_map(|arguments| parse_arguments::<T::Args>(name, arguments).ok())
            .collect();
        Tool::restore(self, session, parsed);
    }

    fn prepare_json(
        &self,
        arguments: Value,
        cx: &PrepareContext<'_>,
    ) -> Result<Prepared<ErasedPlan>, ToolError> {
        let args: T::Args =
            parse_arguments(Tool::name(self), arguments).map_err(|e| ToolError {
                code: Tool::invalid_arguments_code(self),
                ..e
            })?;
        let p = Tool::prepare(self, args, cx)?;
        Ok(Prepared {
            routing: p.routing,
            serialization_key: p.serialization_key,
            plan: Box::new(p.plan),
            sources: p.sources,
            effect: p.effect,
        })
    }

    fn execute_erased(&self, plan: ErasedPlan, cx: ExecuteContext) -> ExecFuture<'_> {
        match plan.downcast::<T::Plan>() {
            Ok(plan) => Box::pin(Tool::execute(self, *plan, cx)),
            Err(_) => Box::pin(std::future::ready(Err(ToolError::new(
                ErrorCode::INTERNAL,
                format!(
                    "{}: plan of the wrong type reached execute",
                    Tool::name(self)
                ),
            )))),
        }
    }
}

/// Parse tool arguments strictly. The error names the JSON path of the first offending field
/// (`$.offset`), including the field a "missing" or "unknown" complaint is about.
pub fn parse_arguments<A: serde::de::DeserializeOwned>(
    tool: &str,
    arguments: Value,
) -> Result<A, ToolError> {
    if !arguments.is_object() {
        let got = match &arguments {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Number(_) => "a number",
            Value::String(_) => "a string",
            Value::Array(_) => "an array",
            Value::Object(_) => "an object",
        };
        return Err(ToolError::new(
            ErrorCode::INVALID_ARGUMENTS,
            format!("{tool}: arguments at $ must be a JSON object, got {got}"),
        )
        .with_metadata(serde_json::json!({ "path": "$" })));
    }
    serde_path_to_error::deserialize::<_, A>(arguments).map_err(|err| {
        let mut path = String::from("$");
        for seg in err.path().iter() {
            use serde_path_to_error::Segment;
            match seg {
                Segment::Seq { index } => path.push_str(&format!("[{index}]")),
                Segment::Map { key } | Segment::Enum { variant: key } => {
                    path.push('.');
                    path.push_str(key);
                }
                Segment::Unknown => path.push_str(".?"),
            }
        }
        let inner = err.inner().to_string();
        // serde reports a missing field at its parent object; point at the field itself.
        if let Some(field) = backticked_field(&inner, "missing field `") {
            path.push('.');
            path.push_str(field);
        }
        ToolError::new(
            ErrorCode::INVALID_ARGUMENTS,
            format!("{tool}: invalid arguments at {path}: {inner}"),
        )
        .with_metadata(serde_json::json!({ "path": path }))
    })
}

fn backticked_field<'a>(message: &'a str, prefix: &str) -> Option<&'a str> {
    let rest = message.strip_prefix(prefix)?;
    rest.split('`').next()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Deserialize, schemars::JsonSchema, Debug)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Args {
        path: String,
        offset: Option<u64>,
        nested: Option<Vec<Inner>>,
    }

    #[derive(Deserialize, schemars::JsonSchema, Debug)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Inner {
        n: u32,
    }

    fn path_of(v: Value) -> String {
        let e = parse_arguments::<Args>("t", v).unwrap_err();
        assert_eq!(e.code, ErrorCode::INVALID_ARGUMENTS);
        e.metadata["path"].as_str().unwrap().to_owned()
    }

    #[test]
    fn invalid_arguments_name_the_json_path() {
        assert_eq!(path_of(json!({})), "$.path");
        assert_eq!(path_of(json!({"path": 3})), "$.path");
        assert_eq!(path_of(json!({"path": "a", "offset": "3"})), "$.offset");
        assert_eq!(path_of(json!({"path": "a", "offset": 1.5})), "$.offset");
        assert_eq!(path_of(json!({"path": "a", "offset": -1})), "$.offset");
        assert_eq!(path_of(json!({"path": "a", "bogus": 1})), "$.bogus");
        assert_eq!(
            path_of(json!({"path": "a", "nested": [{"n": 1}, {"n": "x"}]})),
            "$.nested[1].n"
        );
        assert_eq!(
            path_of(json!({"path": "a", "nested": [{"n": 1, "m": 2}]})),
            "$.nested[0].m"
        );
        assert_eq!(path_of(json!(null)), "$");
        assert_eq!(path_of(json!(["path"])), "$");
        assert!(parse_arguments::<Args>("t", json!({"path": "a", "offset": 2})).is_ok());
    }

    #[test]
    fn schema_is_strict() {
        let s = strict_schema_for::<Args>().unwrap();
        assert_eq!(s["additionalProperties"], json!(false));
        assert!(s.get("$schema").is_none());

        #[derive(schemars::JsonSchema)]
        #[allow(dead_code)]
        struct Open {
            a: u8,
        }
        assert_eq!(strict_schema_for::<Open>(), Err(SchemaError::OpenObject));
    }
}
