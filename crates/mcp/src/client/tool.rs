//! A remote MCP tool as a tackle [`DynTool`].
//!
//! Implemented by hand rather than through `Tool`, because the argument schema arrives at run
//! time. Arguments must be a JSON object and are otherwise passed through: the server validates
//! them against the schema it published (tackle cannot parse them into a type it does not
//! have).
//!
//! Schemas are accepted as the server wrote them (an MCP tool need not say
//! `additionalProperties: false`, and adding it would change what the tool accepts), with the
//! repairs model APIs need: `$schema` dropped, a missing `type: "object"` or `properties`
//! added. A schema that is not an object schema at all cannot be repaired and the tool is
//! left out.

use std::borrow::Cow;
use std::sync::Arc;

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents, Tool as RemoteTool};
use serde_json::{Map, Value};
use tackle_protocol::{Concurrency, ErrorCode, Label, OutputDeclaration, Truncation};
use tackle_tool::{
    DynTool, ErasedPlan, ExecuteContext, PrepareContext, Prepared, Routing, SchemaError,
    SerializationKey, ToolCompletion, ToolError,
};

use super::connection::{CallFailure, Server, client_runtime};

/// The code of a result the server marked `isError`.
pub const MCP_ERROR: ErrorCode = ErrorCode::new("mcp_error");
/// The code of a call whose server is gone; the next call starts it again.
pub const MCP_SERVER_UNAVAILABLE: ErrorCode = ErrorCode::new("mcp_server_unavailable");

/// One tool of one server.
pub struct McpTool {
    server: Arc<Server>,
    remote_name: String,
    name: String,
    gate_name: String,
    description: String,
    schema: Value,
    read_only: bool,
    pollable: bool,
}

impl McpTool {
    /// An error (the reason) when the schema cannot be repaired into an object schema.
    pub fn new(server: Arc<Server>, remote: &RemoteTool, name: String) -> Result<Self, String> {
        let (schema, repairs) = repair_schema(Value::Object((*remote.input_schema).clone()))?;
        let server_name = server.config.name.clone();
        let hint = remote
            .annotations
            .as_ref()
            .and_then(|a| a.read_only_hint)
            .unwrap_or(false);
        let read_only = server.config.read_only || hint;
        let pollable = read_only || server.config.poll_allow.iter().any(|t| *t == remote.name);
        let mut description = format!(
            "[MCP server `{server_name}`] {}",
            remote
                .description
                .as_deref()
                .or(remote.title.as_deref())
                .unwrap_or("(no description)")
        );
        if !repairs.is_empty() {
            description.push_str(&format!(
                "\n(tackle repaired this tool's argument schema: {})",
                repairs.join("; ")
            ));
        }
        Ok(Self {
            gate_name: format!("mcp.{server_name}.{}", remote.name),
            server,
            remote_name: remote.name.to_string(),
            name,
            description,
            schema,
            read_only,
            pollable,
        })
    }

    /// The tool's name on its server.
    pub fn remote_name(&self) -> &str {
        &self.remote_name
    }
}

/// Make a remote schema acceptable to model APIs; returns what was changed.
pub fn repair_schema(mut schema: Value) -> Result<(Value, Vec<String>), String> {
    let mut repairs = Vec::new();
    let Some(obj) = schema.as_object_mut() else {
        return Err("the argument schema is not a JSON object".into());
    };
    // Some model APIs reject `$schema`; dropping it changes nothing a model would notice.
    obj.remove("$schema");
    match obj.get("type") {
        Some(Value::String(t)) if t == "object" => {}
        None => {
            obj.insert("type".into(), Value::String("object".into()));
            repairs.push("added type: object".into());
        }
        Some(other) => {
            return Err(format!(
                "the argument schema has type {other}, not object; model APIs accept only object schemas"
            ));
        }
    }
    if !obj.contains_key("properties") {
        obj.insert("properties".into(), Value::Object(Map::new()));
        repairs.push("added empty properties".into());
    }
    Ok((schema, repairs))
}

struct Plan(Map<String, Value>);

impl DynTool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }
    fn gate_name(&self) -> Cow<'_, str> {
        Cow::Borrowed(&self.gate_name)
    }
    fn description(&self) -> Cow<'static, str> {
        Cow::Owned(self.description.clone())
    }
    fn input_schema(&self) -> Result<Value, SchemaError> {
        Ok(self.schema.clone())
    }
    fn concurrency(&self) -> Concurrency {
        Concurrency::Parallel
    }
    fn read_only(&self) -> bool {
        self.read_only
    }
    /// Whether `wait_and_verify` may poll this tool (seed 003): the server is declared
    /// `read_only`, the tool says `readOnlyHint`, or it is named in `poll_allow`.
    fn pollable(&self) -> bool {
        self.pollable
    }
    fn output(&self) -> OutputDeclaration {
        OutputDeclaration::Single
    }
    fn truncation(&self) -> Truncation {
        Truncation::Bounded
    }
    fn label(&self) -> Label {
        Label::REMOTE
    }
    fn permission_actions(&self) -> &'static [&'static str] {
        &[]
    }
    /// MCP responses get the structural digest when large (seed 003, "Digested survey tools").
    fn survey(&self) -> bool {
        true
    }

    fn prepare_json(
        &self,
        arguments: Value,
        _cx: &PrepareContext<'_>,
    ) -> Result<Prepared<ErasedPlan>, ToolError> {
        let Value::Object(arguments) = arguments else {
            return Err(ToolError::new(
                ErrorCode::INVALID_ARGUMENTS,
                format!("{}: arguments at $ must be a JSON object", self.name),
            )
            .with_metadata(serde_json::json!({ "path": "$" })));
        };
        let plan: ErasedPlan = Box::new(Plan(arguments));
        Ok(Prepared::new(Routing::default(), plan)
            .serialized_by(SerializationKey(format!("mcp:{}", self.server.config.name))))
    }

    fn execute_erased(
        &self,
        plan: ErasedPlan,
        cx: ExecuteContext,
    ) -> std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<ToolCompletion, ToolError>> + Send + '_>,
    > {
        Box::pin(async move {
            let Ok(plan) = plan.downcast::<Plan>() else {
                return Err(ToolError::new(
                    ErrorCode::INTERNAL,
                    format!("{}: plan of the wrong type reached execute", self.name),
                ));
            };
            let server = self.server.clone();
            let remote = self.remote_name.clone();
            let mut task = AbortOnDrop(
                client_runtime().spawn(async move { server.call(&remote, plan.0).await }),
            );
            let outcome = tokio::select! {
                r = task.wait() => r,
                () = cx.cancel.cancelled() => {
                    return Err(ToolError::new(ErrorCode::CANCELLED, format!("{}: cancelled", self.name)));
                }
            };
            let server_name = &self.server.config.name;
            match outcome {
                Ok(result) => render(&self.name, result),
                Err(CallFailure::Unavailable(why)) => Err(ToolError::new(
                    MCP_SERVER_UNAVAILABLE,
                    format!(
                        "{}: MCP server `{server_name}` ({}) is unavailable ({why}); it will be \
                         started again on the next call, which may be retried",
                        self.name,
                        self.server.endpoint()
                    ),
                )),
                Err(CallFailure::Protocol(why)) => Err(ToolError::new(
                    MCP_ERROR,
                    format!(
                        "{}: MCP server `{server_name}` refused the call: {why}",
                        self.name
                    ),
                )),
                Err(CallFailure::Timeout(limit)) => Err(ToolError::new(
                    ErrorCode::TIMEOUT,
                    format!(
                        "{}: MCP server `{server_name}` did not answer within {} ms; raise \
                         timeout_ms in .agents/mcp.json if the tool is slow",
                        self.name,
                        limit.as_millis()
                    ),
                )),
            }
        })
    }
}

/// Aborts the spawned call when the caller stops waiting.
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> AbortOnDrop<Result<T, CallFailure>> {
    async fn wait(&mut self) -> Result<T, CallFailure> {
        match (&mut self.0).await {
            Ok(r) => r,
            Err(e) => Err(CallFailure::Unavailable(format!(
                "the call task ended: {e}"
            ))),
        }
    }
}

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Turn a remote result into a completion: text blocks become the output, structured content
/// goes to metadata, and media (image, audio, blob resources) passes the same sniffing and
/// validation as media reads before it becomes an attachment; anything that fails is named in
/// the text instead, never passed on unchecked.
pub fn render(tool: &str, result: CallToolResult) -> Result<ToolCompletion, ToolError> {
    let mut parts: Vec<String> = Vec::new();
    let mut attachments = Vec::new();
    for block in &result.content {
        match block {
            ContentBlock::Text(t) => parts.push(t.text.clone()),
            ContentBlock::Image(i) => parts.push(media_part(
                "image",
                Some(&i.mime_type),
                &i.data,
                &mut attachments,
            )),
            ContentBlock::Audio(a) => parts.push(media_part(
                "audio",
                Some(&a.mime_type),
                &a.data,
                &mut attachments,
            )),
            ContentBlock::Resource(r) => match &r.resource {
                ResourceContents::TextResourceContents { uri, text, .. } => {
                    parts.push(format!("[resource {uri}]\n{text}"));
                }
                ResourceContents::BlobResourceContents {
                    uri,
                    mime_type,
                    blob,
                    ..
                } => {
                    let what = format!("resource {uri}");
                    parts.push(media_part(
                        &what,
                        mime_type.as_deref(),
                        blob,
                        &mut attachments,
                    ));
                }
                _ => parts.push("[resource content of an unknown kind, not shown]".into()),
            },
            ContentBlock::ResourceLink(l) => {
                parts.push(format!("[resource link: {}]", l.uri));
            }
            _ => parts.push("[content of an unknown kind, not shown]".into()),
        }
    }
    if parts.is_empty()
        && let Some(s) = &result.structured_content
    {
        parts.push(s.to_string());
    }
    let text = parts.join("\n");
    if result.is_error == Some(true) {
        let mut err = ToolError::new(MCP_ERROR, format!("{tool}: the MCP tool failed: {text}"));
        if let Some(s) = result.structured_content {
            err = err.with_metadata(serde_json::json!({ "structured_content": s }));
        }
        return Err(err);
    }
    let mut completion = ToolCompletion::single(text);
    for a in attachments {
        completion = completion.with_attachment(a);
    }
    if let Some(s) = result.structured_content {
        completion = completion.with_metadata(serde_json::json!({ "structured_content": s }));
    }
    Ok(completion)
}

/// One media block: decoded, sniffed by content, validated whole and bounded like a media read.
/// Returns the line the model reads; pushes the attachment when the bytes are sound. A declared
/// MIME type that disagrees with the content loses: the sniffed type is what is attached.
fn media_part(
    what: &str,
    declared: Option<&str>,
    base64_data: &str,
    attachments: &mut Vec<tackle_tool::Attachment>,
) -> String {
    use base64::Engine as _;
    let declared = declared.unwrap_or("no declared type");
    let data = match base64::engine::general_purpose::STANDARD.decode(base64_data) {
        Ok(d) => d,
        Err(e) => return format!("[{what} ({declared}) is not valid base64 ({e}); not attached]"),
    };
    let limit = tackle_tools::media::DEFAULT_MEDIA_MAX_BYTES;
    if data.len() as u64 > limit {
        return format!(
            "[{what} ({declared}, {} bytes) is over the {limit}-byte media limit; not attached]",
            data.len()
        );
    }
    let Some(format) = tackle_tools::media::sniff(&data) else {
        return format!(
            "[{what} ({declared}, {} bytes) is not a media format tackle recognises; not attached]",
            data.len()
        );
    };
    match tackle_tools::media::validate(format, &data) {
        Ok(mime) => {
            let line = format!("[{what}: {mime} attachment, {} bytes]", data.len());
            attachments.push(tackle_tool::Attachment {
                mime_type: mime.to_owned(),
                data,
            });
            line
        }
        Err(e) => format!("[{what} ({declared}) is damaged: {e}; not attached]"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::CallToolResult;
    use serde_json::json;

    #[test]
    fn schemas_are_accepted_or_repaired() {
        type Want = Result<(Value, usize), &'static str>;
        let cases: Vec<(Value, Want)> = vec![
            (
                json!({"type": "object", "properties": {"a": {"type": "string"}}}),
                Ok((
                    json!({"type": "object", "properties": {"a": {"type": "string"}}}),
                    0,
                )),
            ),
            // additionalProperties is kept as the server wrote it (absent here).
            (
                json!({"$schema": "x", "type": "object", "properties": {}}),
                Ok((json!({"type": "object", "properties": {}}), 0)),
            ),
            (
                json!({}),
                Ok((json!({"type": "object", "properties": {}}), 2)),
            ),
            (json!({"type": "array"}), Err("not object")),
            (json!(3), Err("not a JSON object")),
        ];
        for (input, want) in cases {
            match (repair_schema(input.clone()), want) {
                (Ok((got, repairs)), Ok((schema, n))) => {
                    assert_eq!(got, schema, "{input}");
                    assert_eq!(repairs.len(), n, "{input}: {repairs:?}");
                }
                (Err(e), Err(needle)) => assert!(e.contains(needle), "{input}: {e}"),
                (got, want) => panic!("{input}: got {got:?}, want {want:?}"),
            }
        }
    }

    fn result(v: Value) -> CallToolResult {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn results_render_text_structure_media_and_errors() {
        let ok = render(
            "t",
            result(json!({
                "content": [
                    {"type": "text", "text": "one"},
                    {"type": "image", "data": "aGk=", "mimeType": "image/png"},
                ],
                "structuredContent": {"n": 1},
            })),
        )
        .unwrap();
        // "hi" is not an image: named, never attached.
        assert_eq!(
            ok.output,
            tackle_tool::CompletionOutput::Single(
                "one\n[image (image/png, 2 bytes) is not a media format tackle recognises; not attached]".into()
            )
        );
        assert!(ok.attachments.is_empty());
        assert_eq!(ok.metadata, json!({"structured_content": {"n": 1}}));

        let only_structured = render("t", result(json!({"structuredContent": {"n": 2}}))).unwrap();
        assert_eq!(
            only_structured.output,
            tackle_tool::CompletionOutput::Single("{\"n\":2}".into())
        );

        let err = render(
            "t",
            result(json!({"content": [{"type": "text", "text": "bad"}], "isError": true})),
        )
        .unwrap_err();
        assert_eq!(err.code, MCP_ERROR);
        assert!(err.message.contains("bad"), "{}", err.message);
    }

    /// A minimal valid GIF (1x1, one colour), the smallest format the validator accepts whole.
    const GIF: &[u8] = b"GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;";

    #[test]
    fn sound_media_becomes_an_attachment_with_its_sniffed_type() {
        use base64::Engine as _;
        let b64 = base64::engine::general_purpose::STANDARD.encode(GIF);
        let truncated = base64::engine::general_purpose::STANDARD.encode(&GIF[..GIF.len() - 1]);
        let out = render(
            "t",
            result(json!({
                "content": [
                    // Declared as PNG, but the bytes are a GIF: the content decides.
                    {"type": "image", "data": b64, "mimeType": "image/png"},
                    {"type": "resource", "resource": {"uri": "blob://x", "blob": b64}},
                    {"type": "image", "data": truncated, "mimeType": "image/gif"},
                    {"type": "audio", "data": "%%%", "mimeType": "audio/wav"},
                ],
            })),
        )
        .unwrap();
        assert_eq!(out.attachments.len(), 2);
        assert!(
            out.attachments
                .iter()
                .all(|a| a.mime_type == "image/gif" && a.data == GIF)
        );
        let tackle_tool::CompletionOutput::Single(text) = &out.output else {
            panic!("single output expected");
        };
        assert!(text.contains("[image: image/gif attachment"), "{text}");
        assert!(
            text.contains("[resource blob://x: image/gif attachment"),
            "{text}"
        );
        assert!(text.contains("is damaged"), "{text}");
        assert!(text.contains("not valid base64"), "{text}");
    }
}
