//! The MCP server: an `rmcp` [`ServerHandler`] over one [`Runtime`], with a [`Session`] per
//! client.
//!
//! Every `tools/call` becomes a batch of one; the request's cancellation token is the batch's,
//! so `notifications/cancelled` stops the call (and drops its task). Tool failures, bad
//! arguments and denials come back as `isError: true` results with their stable code; only
//! what is not a call at all (an unknown tool name, a bad cursor, a malformed request) is a
//! JSON-RPC error.

mod approver;
mod call_order;
mod client_confirms;
mod line_transport;
mod logging;
mod progress;
mod prompts;
mod render;
mod startup;

pub use prompts::ServedPrompt;
pub use render::{LISTING_REQUEST_KEY, RESULT_META_KEY};
pub mod stdio;

use std::sync::{Arc, Mutex};

use rmcp::ErrorData as McpError;
use rmcp::RoleServer;
use rmcp::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ElicitRequest, ElicitResult, Implementation,
    InputRequest, InputRequests, InputRequiredResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, ResourceContents, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use tackle_protocol::{ArtifactUri, CallId, ToolCall, ToolResult};
use tackle_runtime::unguessable::unguessable_id;
use tackle_runtime::{CancellationToken, Runtime, Session};

use approver::Asking;
pub use approver::ElicitationApprover;
use call_order::CallOrder;
use logging::{ClientLog, LogMessage};
use progress::ProgressHub;

/// How the server treats approvals.
#[derive(Clone, Copy, Debug)]
pub struct ServerOptions {
    /// Put `ask` decisions to the client through elicitation when it declared the capability.
    /// `false` (for `--headless`): refuse them as `approval_unavailable`, as without a client
    /// that can ask.
    pub elicitation: bool,
    /// `--approvals client`: a call the gate asks about runs when the client sent it, taking
    /// the client's own confirmation for the user's answer (see [`client_confirms`]). Denies,
    /// protected paths and read-only tools are not covered and go the usual way.
    pub client_confirms: bool,
}

/// The server. Every clone shares the one runtime; which tackle session a call runs in is
/// the client's: stdio has one client and the session given to [`McpServer::new`]; the HTTP
/// transport asks [`McpServer::for_new_client`] for each MCP session it creates, and that
/// client's calls run in a tackle session of its own (its own event log, `retrieve_raw`
/// scope, todo list and approval grants), opened at its first call. A 2026-07-28 request
/// belongs to no MCP session (that revision is stateless); it runs in the server's session,
/// where its call id, which no other client can guess, is what names its output.
#[derive(Clone)]
pub struct McpServer {
    inner: Arc<Inner>,
    client: Arc<Mutex<Option<Arc<Session>>>>,
    /// The order of this client's calls (`wait_for_previous`).
    order: CallOrder,
    /// The level this client asked its log messages at.
    log: Arc<ClientLog>,
    /// The prompts offered (`tackle serve`: the skills); none, and no prompts capability,
    /// unless [`McpServer::with_prompts`] gave some.
    prompts: Arc<Vec<ServedPrompt>>,
}

struct Inner {
    runtime: Runtime,
    /// The session of stdio's client and of stateless requests; its root is every session's.
    session: Arc<Session>,
    progress: Arc<ProgressHub>,
    tools: Vec<Tool>,
    /// Questions put to 2026-07-28 clients through `InputRequiredResult`, awaiting the retry.
    /// Server-wide, because the retry is a request of its own; its handle is unguessable.
    pending: Mutex<Vec<PendingApproval>>,
    /// Messages every client gets when it sets a log level that includes theirs.
    announcements: Mutex<Vec<LogMessage>>,
}

/// An approval asked for through `InputRequiredResult`: the retry must carry this handle as
/// its `requestState` and be the same call (tool and arguments), or the answer is refused.
struct PendingApproval {
    handle: String,
    tool: String,
    arguments: serde_json::Value,
}

/// Questions kept at most; the oldest is forgotten first (its retry is then refused).
const PENDING_APPROVALS: usize = 64;

/// The key of the approval form in `inputRequests` / `inputResponses`.
const APPROVAL_INPUT: &str = "approval";

impl McpServer {
    /// Serve `runtime`'s catalog on behalf of `session`. Installs the progress forwarder and,
    /// when `options.elicitation`, the elicitation approver on the runtime.
    pub fn new(runtime: Runtime, session: Session, options: ServerOptions) -> Self {
        let progress = Arc::new(ProgressHub::default());
        let mut runtime = runtime.with_observer(progress.clone());
        let asks: Arc<dyn tackle_runtime::Approver> = if options.elicitation {
            Arc::new(ElicitationApprover)
        } else {
            Arc::new(tackle_runtime::HeadlessApprover)
        };
        if options.client_confirms {
            runtime =
                runtime.with_approver(Arc::new(client_confirms::ClientConfirmsApprover::new(asks)));
        } else if options.elicitation {
            runtime = runtime.with_approver(asks);
        }
        let tools = published_tools(&runtime);
        let session = Arc::new(session);
        Self {
            inner: Arc::new(Inner {
                runtime,
                session: Arc::clone(&session),
                progress,
                tools,
                pending: Mutex::new(Vec::new()),
                announcements: Mutex::new(Vec::new()),
            }),
            client: Arc::new(Mutex::new(Some(session))),
            order: CallOrder::default(),
            log: Arc::default(),
            prompts: Arc::default(),
        }
    }

    /// Offer `prompts` through `prompts/list` and `prompts/get`.
    pub fn with_prompts(mut self, prompts: Vec<ServedPrompt>) -> Self {
        self.prompts = Arc::new(prompts);
        self
    }

    /// A handler for another client of the same server: same runtime and catalog, and a
    /// tackle session of its own, opened when it first calls a tool.
    pub fn for_new_client(&self) -> Self {
        Self {
            inner: Arc::clone(&self.inner),
            client: Arc::new(Mutex::new(None)),
            order: CallOrder::default(),
            log: Arc::default(),
            prompts: Arc::clone(&self.prompts),
        }
    }

    /// Tells every client `text` (at info) through MCP logging, when it sets a level that
    /// includes info: the facts `tackle serve` prints on a terminal's stderr (the posture line).
    pub fn announce(&self, text: impl Into<String>) {
        #[allow(deprecated)] // rmcp marks logging deprecated with the revision that retires it
        let level = rmcp::model::LoggingLevel::Info;
        self.inner
            .announcements
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(LogMessage {
                level,
                text: text.into(),
            });
    }

    fn announcements(&self) -> Vec<LogMessage> {
        self.inner
            .announcements
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The session a request runs in (see [`McpServer`]).
    fn session_for(&self, context: &RequestContext<RoleServer>) -> Result<Arc<Session>, McpError> {
        if is_2026(context) {
            return Ok(Arc::clone(&self.inner.session));
        }
        let mut client = self.client.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(session) = client.as_ref() {
            return Ok(Arc::clone(session));
        }
        let opened = self
            .inner
            .session
            .open_sibling(tackle_runtime::SessionOptions::default())
            .map_err(|e| {
                McpError::internal_error(
                    format!("tackle could not open a session for this client: {e}"),
                    None,
                )
            })?;
        let opened = Arc::new(opened);
        *client = Some(Arc::clone(&opened));
        Ok(opened)
    }

    /// Run one call through the runtime, forwarding progress to `peer` under `token`.
    async fn run_call(
        &self,
        name: String,
        arguments: serde_json::Value,
        context: &RequestContext<RoleServer>,
        progress_token: Option<rmcp::model::ProgressToken>,
        asking: Asking,
    ) -> Result<ToolResult, McpError> {
        let inner = &self.inner;
        let session = self.session_for(context)?;
        let id = CallId(unguessable_id("mcp"));
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
            asking,
            inner.runtime.run_batch(&session, vec![call], cancel),
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

impl McpServer {
    /// How a call from a client that does not retry with answers may ask: elicitation
    /// requests for a client that `initialize`d, nothing for a 2026-07-28 one.
    fn plain_asking(&self, context: &RequestContext<RoleServer>) -> Asking {
        if is_2026(context) {
            Asking::Unavailable(
                "the request came without a way to retry it with an answer (resources/read)",
            )
        } else {
            Asking::Elicit(context.peer.clone())
        }
    }

    /// How a `tools/call` may ask: see [`approver`]. A retry's answer is accepted only for the
    /// question it answers, once, and only for the very call that was asked about.
    fn asking(
        &self,
        name: &str,
        arguments: &serde_json::Value,
        request: &CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<Asking, McpError> {
        if !is_2026(context) {
            return Ok(Asking::Elicit(context.peer.clone()));
        }
        if let Some(state) = &request.request_state {
            let mut pending = self.inner.pending.lock().unwrap_or_else(|p| p.into_inner());
            let Some(at) = pending.iter().position(|p| &p.handle == state) else {
                return Err(McpError::invalid_params(
                    format!(
                        "unknown requestState `{state}`: the question it answers was already \
                         answered or forgotten; call the tool again without it"
                    ),
                    None,
                ));
            };
            let asked = pending.remove(at);
            if asked.tool != name || &asked.arguments != arguments {
                return Err(McpError::invalid_params(
                    format!(
                        "requestState `{state}` answers a question about another call ({}); \
                         retry exactly the call that was asked about",
                        asked.tool
                    ),
                    None,
                ));
            }
            let answer = request
                .input_responses
                .as_ref()
                .and_then(|r| r.get(APPROVAL_INPUT))
                .and_then(|v| serde_json::from_value::<ElicitResult>(v.clone()).ok());
            let approval = match answer {
                Some(a) => approver::decide(a.action, a.content.as_ref()),
                // A retry without a readable answer refuses, like a malformed form answer.
                None => tackle_runtime::Approval::Deny {
                    message: Some("the client's retry carried no approval answer".to_owned()),
                },
            };
            return Ok(Asking::Answered(Arc::new(Mutex::new(Some(approval)))));
        }
        let can_elicit = context
            .client_capabilities()
            .is_some_and(|c| c.elicitation.is_some());
        if !can_elicit {
            return Ok(Asking::Unavailable(
                "the MCP client did not declare the elicitation capability, so nobody can be asked",
            ));
        }
        Ok(Asking::Defer(Arc::new(Mutex::new(None))))
    }

    /// Answer a call that needs approval with the form, keeping the question for the retry.
    fn input_required(
        &self,
        tool: String,
        arguments: serde_json::Value,
        question: approver::Deferred,
    ) -> Result<CallToolResponse, McpError> {
        let form = approver::form_request(question.message, question.session_grant)
            .map_err(|e| McpError::internal_error(e, None))?;
        let handle = unguessable_id("tackle-approval");
        {
            let mut pending = self.inner.pending.lock().unwrap_or_else(|p| p.into_inner());
            if pending.len() >= PENDING_APPROVALS {
                pending.remove(0);
            }
            pending.push(PendingApproval {
                handle: handle.clone(),
                tool,
                arguments,
            });
        }
        let mut requests = InputRequests::new();
        requests.insert(
            APPROVAL_INPUT.to_owned(),
            InputRequest::Elicitation(ElicitRequest::new(form)),
        );
        Ok(InputRequiredResult::new(Some(requests), Some(handle)).into())
    }
}

/// Whether the request speaks the 2026-07-28 protocol (no server-to-client requests).
fn is_2026(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28)
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
    #[allow(deprecated)] // logging: see `logging`
    fn get_info(&self) -> ServerConfig {
        let mut capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .enable_logging()
            .build();
        if !self.prompts.is_empty() {
            capabilities.prompts = Some(rmcp::model::PromptsCapability::default());
        }
        ServerConfig::new(capabilities)
        .with_server_info(Implementation::new("tackle", env!("CARGO_PKG_VERSION")))
        .with_instructions(
            "tackle's tools: every call is checked by the project's permission gate, and output \
             beyond a preview is kept whole; follow a result's artifact:// link (read it with \
             read_file or resources/read) to see the rest.",
        )
    }

    #[allow(deprecated)] // logging: see `logging`
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.log.set_level(request.level);
        self.log.send(&context.peer, &self.announcements()).await;
        Ok(())
    }

    async fn on_initialized(&self, context: rmcp::service::NotificationContext<RoleServer>) {
        self.log.send(&context.peer, &self.announcements()).await;
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

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListPromptsResult, McpError> {
        prompts::list(&self.prompts, request.and_then(|r| r.cursor))
    }

    async fn get_prompt(
        &self,
        request: rmcp::model::GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetPromptResponse, McpError> {
        prompts::get(&self.prompts, &request.name).map(Into::into)
    }

    /// A request the SDK decoded as a custom one: a method tackle does not serve (-32601), or,
    /// over HTTP, a method it does serve whose params did not decode (-32602, with why). Over
    /// stdio the screen answers the second kind before the SDK sees it (see [`crate::screen`]).
    async fn on_custom_request(
        &self,
        request: rmcp::model::CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CustomResult, McpError> {
        let rmcp::model::CustomRequest { method, params, .. } = request;
        Err(match crate::screen::invalid_params(&method, params) {
            Some(message) => McpError::invalid_params(message, None),
            None => McpError::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                format!("tackle does not serve the method `{method}`"),
                None,
            ),
        })
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
        let asked_for_listing = |meta: &serde_json::Map<String, serde_json::Value>| {
            meta.get(render::LISTING_REQUEST_KEY)
                .and_then(serde_json::Value::as_bool)
                == Some(true)
        };
        let listing = if request.meta.as_ref().is_some_and(|m| asked_for_listing(m))
            || asked_for_listing(&context.meta)
        {
            render::Listing::Included
        } else {
            render::Listing::Omitted
        };
        let boundary =
            call_order::take_boundary_fields(request.arguments.clone().unwrap_or_default());
        let arguments = serde_json::Value::Object(boundary.arguments);
        let asking = self.asking(&name, &arguments, &request, &context)?;
        // Input to a running call must reach it while it runs: it neither waits for the
        // client's other calls nor holds them up, or an interactive call queued behind a
        // `wait_for_previous` could wait on its own input until its timeout.
        let _running = if name == tackle_tools::bash_stdin::NAME {
            None
        } else {
            Some(self.order.start(boundary.wait_for_previous).await)
        };
        let deferred = match &asking {
            Asking::Defer(slot) => Some(Arc::clone(slot)),
            _ => None,
        };
        let result = self
            .run_call(
                name.clone(),
                arguments.clone(),
                &context,
                progress_token,
                asking,
            )
            .await?;
        let question =
            deferred.and_then(|slot| slot.lock().unwrap_or_else(|p| p.into_inner()).take());
        if let Some(question) = question {
            return self.input_required(name, arguments, question);
        }
        let store = self.inner.session.store.clone();
        let load = move |uri: &str| {
            let id = tackle_store::ArtifactId::from_internal_uri(uri)?;
            store.read(id).ok()
        };
        Ok(render::call_tool_result(result, &load, listing).into())
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
                self.plain_asking(&context),
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
/// Nothing but MCP messages is written to stdout. Pipes and sockets are polled by the reactor
/// (see [`stdio`]); anything else goes through tokio's blocking threads. Every request is
/// answered, and nothing a client sends ends the server but the end of its input (see
/// [`line_transport`]).
pub async fn serve_stdio(server: McpServer) -> std::io::Result<()> {
    serve_io(
        server,
        stdio::StdinReader::open(),
        stdio::StdoutWriter::open(),
    )
    .await
}

/// Serve over any byte stream pair (tests and embedders), as [`serve_stdio`] does.
pub async fn serve_io<R, W>(server: McpServer, read: R, write: W) -> std::io::Result<()>
where
    R: tokio::io::AsyncRead + Send + Unpin + 'static,
    W: tokio::io::AsyncWrite + Send + Unpin + 'static,
{
    let versions = ServerHandler::supported_protocol_versions(&server);
    let transport =
        line_transport::LineTransport::new(read, write, crate::MAX_MESSAGE_BYTES, versions);
    let running = rmcp::serve_server(server, transport).await.map_err(|e| {
        std::io::Error::other(format!("mcp: the client went away during start-up: {e}"))
    })?;
    running
        .waiting()
        .await
        .map_err(|e| std::io::Error::other(format!("mcp: the server task failed: {e}")))?;
    Ok(())
}
