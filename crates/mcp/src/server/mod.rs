//! The MCP server: an `rmcp` [`ServerHandler`] over one [`Runtime`] and one [`Session`].
//!
//! Every `tools/call` becomes a batch of one; the request's cancellation token is the batch's,
//! so `notifications/cancelled` stops the call (and drops its task). Tool failures, bad
//! arguments and denials come back as `isError: true` results with their stable code; only
//! what is not a call at all (an unknown tool name, a bad cursor, a malformed request) is a
//! JSON-RPC error.

mod approver;
mod progress;
mod render;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rmcp::ErrorData as McpError;
use rmcp::RoleServer;
use rmcp::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    ResourceContents, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::transport::async_rw::AsyncRwTransport;
use tackle_protocol::{ArtifactUri, CallId, ToolCall, ToolResult};
use tackle_runtime::{CancellationToken, Runtime, Session};

pub use approver::ElicitationApprover;
use progress::ProgressHub;

/// How the server treats approvals.
#[derive(Clone, Copy, Debug)]
pub struct ServerOptions {
    /// Put `ask` decisions to the client through elicitation when it declared the capability.
    /// `false` (for `--headless`): refuse them as `approval_unavailable`, as without a client
    /// that can ask.
    pub elicitation: bool,
}

/// The server. Cheap to clone (the HTTP transport makes one handler per connection); every
/// clone shares the one runtime and the one session.
#[derive(Clone)]
pub struct McpServer {
    inner: Arc<Inner>,
}

struct Inner {
    runtime: Runtime,
    session: Session,
    progress: Arc<ProgressHub>,
    tools: Vec<Tool>,
    next_call: AtomicU64,
}

impl McpServer {
    /// Serve `runtime`'s catalog on behalf of `session`. Installs the progress forwarder and,
    /// when `options.elicitation`, the elicitation approver on the runtime.
    pub fn new(runtime: Runtime, session: Session, options: ServerOptions) -> Self {
        let progress = Arc::new(ProgressHub::default());
        let mut runtime = runtime.with_observer(progress.clone());
        if options.elicitation {
            runtime = runtime.with_approver(Arc::new(ElicitationApprover));
        }
        let tools = published_tools(&runtime);
        Self {
            inner: Arc::new(Inner {
                runtime,
                session,
                progress,
                tools,
                next_call: AtomicU64::new(1),
            }),
        }
    }

    /// Run one call through the runtime, forwarding progress to `peer` under `token`.
    async fn run_call(
        &self,
        name: String,
        arguments: serde_json::Value,
        context: &RequestContext<RoleServer>,
        progress_token: Option<rmcp::model::ProgressToken>,
    ) -> Result<ToolResult, McpError> {
        let inner = &self.inner;
        let id = CallId(format!(
            "mcp-{}",
            inner.next_call.fetch_add(1, Ordering::Relaxed)
        ));
        if let Some(token) = progress_token {
            inner
                .progress
                .register(id.clone(), context.peer.clone(), token);
        }
        let call = ToolCall {
            id: id.clone(),
            name,
            arguments,
        };
        let cancel: CancellationToken = context.ct.clone();
        let outcome = approver::with_caller(
            context.peer.clone(),
            inner.runtime.run_batch(&inner.session, vec![call], cancel),
        )
        .await;
        // Progress sent before the result, never after it.
        inner.progress.finish(&id).await;
        let results = outcome.map_err(|e| {
            McpError::internal_error(format!("tackle could not record the call: {e}"), None)
        })?;
        results
            .into_iter()
            .next()
            .ok_or_else(|| McpError::internal_error("the runtime returned no result", None))
    }
}

/// The catalog as MCP tools, annotated from each tool's declaration.
fn published_tools(runtime: &Runtime) -> Vec<Tool> {
    let catalog = runtime.catalog();
    catalog
        .specs()
        .into_iter()
        .filter_map(|spec| {
            let tool = catalog.get(&spec.name)?;
            let h = crate::annotations::hints(tool.as_ref());
            let schema = match spec.input_schema {
                serde_json::Value::Object(map) => map,
                // The catalog only admits object schemas; anything else is published empty
                // rather than dropped, so the tool stays visible.
                _ => serde_json::Map::new(),
            };
            let annotations = ToolAnnotations::new()
                .read_only(h.read_only)
                .destructive(h.destructive)
                .idempotent(h.idempotent)
                .open_world(h.open_world);
            Some(
                Tool::new(spec.name.clone(), spec.description, Arc::new(schema))
                    .with_annotations(annotations),
            )
        })
        .collect()
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new("tackle", env!("CARGO_PKG_VERSION")))
        .with_instructions(
            "tackle's tools: every call is checked by the project's permission gate, and output \
             beyond a preview is kept whole; follow a result's artifact:// link (read it with \
             read_file or resources/read) to see the rest.",
        )
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        if let Some(cursor) = request.and_then(|r| r.cursor) {
            return Err(McpError::invalid_params(
                format!(
                    "invalid cursor `{cursor}`: tackle lists every tool on one page; call tools/list without a cursor"
                ),
                None,
            ));
        }
        Ok(ListToolsResult::with_all_items(self.inner.tools.clone()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.inner.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        if self.inner.runtime.catalog().get(&name).is_none() {
            let near = self.inner.runtime.catalog().closest(&name, 3);
            let hint = if near.is_empty() {
                "call tools/list for the available tools".to_owned()
            } else {
                format!("did you mean {}?", near.join(", "))
            };
            return Err(McpError::invalid_params(
                format!("unknown tool `{name}`; {hint}"),
                Some(serde_json::json!({ "closest": near })),
            ));
        }
        let progress_token = request
            .meta
            .as_ref()
            .and_then(|m| m.get_progress_token())
            .or_else(|| context.meta.get_progress_token());
        let arguments = serde_json::Value::Object(request.arguments.unwrap_or_default());
        let result = self
            .run_call(name, arguments, &context, progress_token)
            .await?;
        let store = self.inner.session.store.clone();
        let load = move |uri: &str| {
            let id = tackle_store::ArtifactId::from_internal_uri(uri)?;
            store.read(id).ok()
        };
        Ok(render::call_tool_result(&result, &load).into())
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        if let Some(cursor) = request.and_then(|r| r.cursor) {
            return Err(McpError::invalid_params(
                format!("invalid cursor `{cursor}`; call resources/list without a cursor"),
                None,
            ));
        }
        // Retained output is addressed by the links in results, not enumerated.
        Ok(ListResourcesResult::default())
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let uri = request.uri;
        if !ArtifactUri::claims(&uri) {
            return Err(McpError::resource_not_found(
                format!(
                    "`{uri}` is not a tackle resource; only artifact:// links from results can be read"
                ),
                None,
            ));
        }
        if self.inner.runtime.catalog().get("read_file").is_none() {
            return Err(McpError::resource_not_found(
                format!("`{uri}` cannot be read: read_file is not in this catalog"),
                None,
            ));
        }
        // Through read_file, so the read is gated and recorded like any other.
        let result = self
            .run_call(
                "read_file".to_owned(),
                serde_json::json!({ "path": uri }),
                &context,
                None,
            )
            .await?;
        if result.is_error {
            return Err(McpError::resource_not_found(result.text(), None));
        }
        Ok(
            ReadResourceResult::new(vec![ResourceContents::TextResourceContents {
                uri,
                mime_type: Some("text/plain".to_owned()),
                text: result.text(),
                meta: None,
            }])
            .into(),
        )
    }
}

/// Serve over this process's standard input and output until the client closes stdin.
/// Nothing but MCP messages is written to stdout.
pub async fn serve_stdio(server: McpServer) -> std::io::Result<()> {
    let (read, write) = rmcp::transport::stdio();
    let transport =
        AsyncRwTransport::new_server(read, write).with_max_line_length(crate::MAX_MESSAGE_BYTES);
    let running = rmcp::serve_server(server, transport).await.map_err(|e| {
        std::io::Error::other(format!("mcp: the client went away during start-up: {e}"))
    })?;
    running
        .waiting()
        .await
        .map_err(|e| std::io::Error::other(format!("mcp: the server task failed: {e}")))?;
    Ok(())
}

/// Serve over any byte stream pair (tests and embedders).
pub async fn serve_io<R, W>(server: McpServer, read: R, write: W) -> std::io::Result<()>
where
    R: tokio::io::AsyncRead + Send + Unpin + 'static,
    W: tokio::io::AsyncWrite + Send + Unpin + 'static,
{
    let transport =
        AsyncRwTransport::new_server(read, write).with_max_line_length(crate::MAX_MESSAGE_BYTES);
    let running = rmcp::serve_server(server, transport).await.map_err(|e| {
        std::io::Error::other(format!("mcp: the client went away during start-up: {e}"))
    })?;
    running
        .waiting()
        .await
        .map_err(|e| std::io::Error::other(format!("mcp: the server task failed: {e}")))?;
    Ok(())
}
