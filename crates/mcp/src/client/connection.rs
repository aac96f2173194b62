//! One configured server's live connection: start, list tools, call, restart after a crash.
//!
//! Every connection runs on one process-wide client runtime ([`client_runtime`]), not on the
//! runtime of whoever calls: the catalog is built before any runtime exists (`tackle tools`
//! never starts one) and the connection must outlive it. Calls hop onto the client runtime and
//! back; dropping the caller's future aborts the hop.
//!
//! The service mutex serializes calls to one server (seed 000, "Execution concurrency"); the
//! batch scheduler already orders a batch's calls to one server by their serialization key,
//! and the mutex extends that to calls from concurrent batches. A child's stderr is discarded
//! (a server that floods it can never block), and a transport error marks the connection dead
//! so the next call starts the server again.
//!
//! A stdio child's environment is built, never inherited: tackle's environment through the
//! front end's [`EnvPolicy`] (provider keys and every configured secret withheld), then exactly
//! the entry's `env`, a `${NAME}` value read from tackle's environment at each start.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation,
    ProtocolVersion, Tool as RemoteTool,
};
use rmcp::service::{ClientInitializeError, RunningService, ServiceError};
use rmcp::transport::{
    StreamableHttpClientTransport, TokioChildProcess,
    streamable_http_client::{StreamableHttpClientTransportConfig, StreamableHttpError},
};
use rmcp::{RoleClient, ServiceExt};
use tackle_process::EnvPolicy;
use tokio::sync::Mutex;

use super::config::{ServerConfig, Transport, env_reference};
use super::oauth::{self, TokenDir};

/// The runtime every MCP client connection lives on, created on first use and kept for the
/// life of the process (a runtime cannot be dropped from inside another one, which is where
/// the last tool handle may be released).
pub fn client_runtime() -> &'static tokio::runtime::Handle {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        super::tls::ensure_crypto_provider();
        match tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("tackle-mcp-client")
            .enable_all()
            .build()
        {
            Ok(rt) => rt,
            // Building a runtime fails only when the OS refuses threads; nothing can work then.
            #[allow(clippy::panic)]
            Err(e) => panic!("cannot start the MCP client runtime: {e}"),
        }
    })
    .handle()
}

type Service = RunningService<RoleClient, ClientConfig>;

/// What tackle says of itself in `initialize`: its own name and version, no optional
/// capabilities (it answers no sampling, roots or elicitation requests from servers), and the
/// newest protocol version that still has an `initialize` handshake. rmcp's default is its
/// `LATEST`, a revision that replaced the handshake, so naming it in `initialize` asks for a
/// protocol the handshake itself does not belong to (the conformance suite's `initialize`
/// scenario refuses it).
fn client_info() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("tackle", env!("CARGO_PKG_VERSION")),
    )
    .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
}

/// Why a server could not be reached or a call did not get an answer.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error("cannot start `{command}`: {source}")]
    Spawn {
        command: String,
        source: std::io::Error,
    },
    #[error("header {header}: environment variable {var} is not set")]
    MissingEnv { header: String, var: String },
    #[error("env {name}: environment variable {var} is not set; export it or drop the entry")]
    MissingChildEnv { name: String, var: String },
    #[error("header {header}: {message}")]
    BadHeader { header: String, message: String },
    #[error("the server did not complete the MCP handshake: {0}")]
    Handshake(String),
    #[error("the server refused the credentials ({0}); check the variables named in headers_env")]
    Unauthorized(String),
    /// The server answered 401 and no stored token (or refresh) satisfied it.
    #[error("needs login: the server asks for authorization; run `tackle mcp login {server}`")]
    NeedsLogin { server: String },
    /// The server answered 403 `insufficient_scope`: the login holds too little.
    #[error(
        "needs login: the server asks for scope `{scope}` beyond what the login holds; run `tackle mcp login {server}` to grant it"
    )]
    NeedsScope { server: String, scope: String },
    #[error("the stored OAuth login cannot be used: {0}")]
    Token(String),
    #[error("the server did not start within {0} ms")]
    StartTimeout(u128),
    #[error("listing tools failed: {0}")]
    List(String),
}

/// How a call failed short of a result.
#[derive(Debug)]
pub enum CallFailure {
    /// The server is gone (exited, closed its stdout, connection refused); it will be started
    /// again on the next call.
    Unavailable(String),
    /// The server answered with a JSON-RPC error (unknown tool, invalid params).
    Protocol(String),
    Timeout(Duration),
}

/// A configured server and, while it is up, its connection.
pub struct Server {
    pub config: ServerConfig,
    root: PathBuf,
    /// What a stdio child inherits of tackle's environment.
    env: EnvPolicy,
    /// Where `tackle mcp login` keeps the tokens an HTTP server is sent.
    tokens: TokenDir,
    service: Mutex<Option<Service>>,
}

impl Server {
    pub fn new(config: ServerConfig, root: &Path, env: EnvPolicy, tokens: TokenDir) -> Arc<Self> {
        Arc::new(Self {
            config,
            root: root.to_owned(),
            env,
            tokens,
            service: Mutex::new(None),
        })
    }

    /// Where the server is, for messages: the URL of an HTTP server (without any user
    /// information it carries), the command of a stdio one.
    pub fn endpoint(&self) -> String {
        self.config.endpoint()
    }

    /// Start the server (within its start-up timeout) and list its tools. Runs on the client
    /// runtime; the connection stays up for calls.
    pub async fn start_and_list(self: &Arc<Self>) -> Result<Vec<RemoteTool>, ConnectError> {
        let limit = self.config.startup_timeout;
        let this = self.clone();
        let work = async move {
            let service = this.connect().await?;
            let tools = service
                .list_all_tools()
                .await
                .map_err(|e| ConnectError::List(e.to_string()))?;
            *this.service.lock().await = Some(service);
            Ok(tools)
        };
        match tokio::time::timeout(limit, work).await {
            Ok(r) => r,
            Err(_) => Err(ConnectError::StartTimeout(limit.as_millis())),
        }
    }

    async fn connect(&self) -> Result<Service, ConnectError> {
        match &self.config.transport {
            Transport::Stdio { command, args, env } => {
                let mut cmd = tokio::process::Command::new(command);
                cmd.args(args)
                    .current_dir(&self.root)
                    .env_clear()
                    .envs(self.env.filter(std::env::vars_os()));
                for (name, value) in env {
                    match env_reference(value) {
                        Some(var) => {
                            let from = std::env::var_os(var).ok_or_else(|| {
                                ConnectError::MissingChildEnv {
                                    name: name.clone(),
                                    var: var.to_owned(),
                                }
                            })?;
                            cmd.env(name, from);
                        }
                        None => {
                            cmd.env(name, value);
                        }
                    }
                }
                let (transport, _stderr) = TokioChildProcess::builder(cmd)
                    .stderr(Stdio::null())
                    .spawn()
                    .map_err(|source| ConnectError::Spawn {
                        command: command.clone(),
                        source,
                    })?;
                client_info()
                    .serve(transport)
                    .await
                    .map_err(|e| self.handshake_error(e))
            }
            Transport::Http {
                url, headers_env, ..
            } => {
                let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
                let mut custom = HashMap::new();
                for (header, var) in headers_env {
                    let value = std::env::var(var).map_err(|_| ConnectError::MissingEnv {
                        header: header.clone(),
                        var: var.clone(),
                    })?;
                    if header.eq_ignore_ascii_case("authorization") {
                        let token = value.strip_prefix("Bearer ").unwrap_or(&value);
                        config = config.auth_header(token);
                        continue;
                    }
                    let bad = |message: String| ConnectError::BadHeader {
                        header: header.clone(),
                        message,
                    };
                    let name = http::HeaderName::from_bytes(header.as_bytes())
                        .map_err(|e| bad(e.to_string()))?;
                    let value =
                        http::HeaderValue::from_str(&value).map_err(|e| bad(e.to_string()))?;
                    custom.insert(name, value);
                }
                let config = config.custom_headers(custom);
                // Never follow a redirect with a token on the request; the pool is off as in
                // rmcp's own client (a half-read body stalls a reused connection).
                super::tls::ensure_crypto_provider();
                let http = reqwest::Client::builder()
                    .redirect(reqwest::redirect::Policy::none())
                    .pool_max_idle_per_host(0)
                    .build()
                    .map_err(|e| ConnectError::Handshake(error_chain(&e)))?;
                let authorized = oauth::authorized_client(&self.config, &self.tokens, http)
                    .await
                    .map_err(ConnectError::Token)?;
                let served = match authorized {
                    Some(client) => {
                        client_info()
                            .serve(StreamableHttpClientTransport::with_client(client, config))
                            .await
                    }
                    None => {
                        client_info()
                            .serve(StreamableHttpClientTransport::from_config(config))
                            .await
                    }
                };
                served.map_err(|e| self.handshake_error(e))
            }
        }
    }

    /// Call `tool`, starting the server first if it is down. One call at a time per server.
    pub async fn call(
        &self,
        tool: &str,
        arguments: serde_json::Map<String, serde_json::Value>,
    ) -> Result<CallToolResult, CallFailure> {
        let mut guard = self.service.lock().await;
        if guard.as_ref().is_none_or(|s| s.is_closed()) {
            *guard = None;
            let started = tokio::time::timeout(self.config.startup_timeout, self.connect()).await;
            match started {
                Ok(Ok(service)) => *guard = Some(service),
                Ok(Err(e)) => return Err(CallFailure::Unavailable(e.to_string())),
                Err(_) => {
                    return Err(CallFailure::Unavailable(format!(
                        "the server did not start within {} ms",
                        self.config.startup_timeout.as_millis()
                    )));
                }
            }
        }
        let Some(service) = guard.as_ref() else {
            return Err(CallFailure::Unavailable("the server is not running".into()));
        };
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = Some(arguments);
        let limit = self.config.call_timeout;
        match tokio::time::timeout(limit, service.call_tool(params)).await {
            Ok(Ok(result)) => Ok(result),
            Ok(Err(ServiceError::McpError(e))) => Err(CallFailure::Protocol(e.message.into())),
            Ok(Err(e)) => {
                // The transport is broken: drop the connection so the next call restarts it.
                *guard = None;
                let why = match &e {
                    ServiceError::TransportSend(t)
                        if self.oauth_applies() && is_auth_refusal(t.error.as_ref()) =>
                    {
                        self.login_needed(t.error.as_ref()).to_string()
                    }
                    ServiceError::TransportSend(t) => transport_error(t.error.as_ref()),
                    other => other.to_string(),
                };
                Err(CallFailure::Unavailable(why))
            }
            Err(_) => Err(CallFailure::Timeout(limit)),
        }
    }
}

impl Server {
    /// Whether a refusal of this server is for OAuth to answer: an HTTP server whose entry
    /// sends no credential header of its own (one that does is told to check those headers).
    fn oauth_applies(&self) -> bool {
        match &self.config.transport {
            Transport::Http { headers_env, .. } => headers_env.is_empty(),
            Transport::Stdio { .. } => false,
        }
    }

    /// What a refusal asks of the person: a login, or a login with more scope (remembered
    /// with the stored tokens, so that login requests it).
    fn login_needed(&self, e: &(dyn std::error::Error + Send + Sync + 'static)) -> ConnectError {
        let server = self.config.name.clone();
        let Some(StreamableHttpError::InsufficientScope(insufficient)) =
            e.downcast_ref::<StreamableHttpError<reqwest::Error>>()
        else {
            return ConnectError::NeedsLogin { server };
        };
        let Some(scope) = insufficient.required_scope.clone() else {
            return ConnectError::NeedsLogin { server };
        };
        if let Transport::Http { url, .. } = &self.config.transport {
            let scopes: Vec<String> = scope.split_whitespace().map(str::to_owned).collect();
            // Failing to remember costs only the hint; the message still names the fix.
            let _ = self.tokens.note_required_scopes(&server, url, &scopes);
        }
        ConnectError::NeedsScope { server, scope }
    }

    /// A failed handshake as a person reads it: the transport's own error and its causes,
    /// without the Rust type names rmcp puts in front; a 401 or 403 points at `headers_env`
    /// when the entry sends its own credential, else at `tackle mcp login`.
    fn handshake_error(&self, e: ClientInitializeError) -> ConnectError {
        let ClientInitializeError::TransportError { error, .. } = &e else {
            return ConnectError::Handshake(e.to_string());
        };
        let message = transport_error(error.error.as_ref());
        if !is_auth_refusal(error.error.as_ref()) {
            ConnectError::Handshake(message)
        } else if self.oauth_applies() {
            self.login_needed(error.error.as_ref())
        } else {
            ConnectError::Unauthorized(message)
        }
    }
}

/// A transport's error as text. rmcp's HTTP client wraps reqwest's error without marking it as
/// the source, which would hide the cause (connection refused, DNS failure); it is unwrapped here.
fn transport_error(e: &(dyn std::error::Error + Send + Sync + 'static)) -> String {
    match e.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
        Some(StreamableHttpError::Client(inner)) => error_chain(inner),
        _ => error_chain(e),
    }
}

/// Whether the HTTP server answered 401 or 403 (with or without a `WWW-Authenticate` challenge).
fn is_auth_refusal(e: &(dyn std::error::Error + Send + Sync + 'static)) -> bool {
    match e.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
        Some(StreamableHttpError::AuthRequired(_) | StreamableHttpError::InsufficientScope(_)) => {
            true
        }
        Some(StreamableHttpError::HttpStatus(s)) => matches!(s.status, 401 | 403),
        Some(StreamableHttpError::UnexpectedServerResponse(text)) => {
            text.starts_with("HTTP 401") || text.starts_with("HTTP 403")
        }
        _ => false,
    }
}

/// An error and its sources joined with `: `, skipping a source whose text the previous
/// message already holds (reqwest repeats itself).
pub(crate) fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::config::redact_userinfo;
    use super::client_info;
    use rmcp::model::ProtocolVersion;

    /// `initialize` names a revision that has the handshake, and tackle by name.
    #[test]
    fn initialize_names_a_protocol_version_with_a_handshake() {
        let hello = client_info();
        assert!(hello.protocol_version.has_initialize());
        assert_eq!(
            hello.protocol_version,
            ProtocolVersion::LATEST_WITH_INITIALIZE
        );
        assert_eq!(hello.client_info.name, "tackle");
    }

    #[test]
    fn urls_lose_their_user_information() {
        let cases = [
            ("http://127.0.0.1:9/mcp", "http://127.0.0.1:9/mcp"),
            (
                "https://u:p@h.example/mcp?q=a@b",
                "https://h.example/mcp?q=a@b",
            ),
            ("http://h/a@b", "http://h/a@b"),
            ("not a url", "not a url"),
        ];
        for (input, want) in cases {
            assert_eq!(redact_userinfo(input), want, "{input}");
        }
    }
}
