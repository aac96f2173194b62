//! `tackle serve`: the configured catalog, gate and session, published over MCP.
//!
//! Standard output belongs to the protocol on stdio: the posture line and every diagnostic go
//! to standard error. The server stops when the client closes stdin (stdio) or on Ctrl-C.

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::{Context, anyhow};
use tackle_mcp::{HttpOptions, McpServer, ServerOptions};
use tackle_runtime::{PolicyGate, Runtime, Session};

use crate::commands::{Failure, catalog};
use crate::config::Config;
use crate::exit;

pub fn run(
    config: &Config,
    http: Option<SocketAddr>,
    token_env: Option<String>,
    headless: bool,
) -> Result<u8, Failure> {
    eprintln!("tackle serve: {}", crate::posture::line(config));
    let bearer_token = match &token_env {
        Some(var) => Some(std::env::var(var).map_err(|_| {
            Failure::Usage(anyhow!(
                "--token-env {var}: the variable is not set; export it with the token clients must send"
            ))
        })?)
        .filter(|t| !t.is_empty()),
        None => None,
    };
    if token_env.is_some() && bearer_token.is_none() {
        return Err(Failure::Usage(anyhow!(
            "--token-env: the token is empty; set a non-empty token"
        )));
    }
    if let Some(addr) = http
        && !addr.ip().is_loopback()
        && bearer_token.is_none()
    {
        return Err(Failure::Usage(anyhow!(
            "refusing to serve on {addr}, which is not a loopback address, without a bearer token; pass --token-env VAR with the token in VAR, or bind 127.0.0.1"
        )));
    }
    let runtime = Runtime::new(
        catalog(config)?,
        Arc::new(PolicyGate::new(config.policy.clone())),
        config.runtime.clone(),
    );
    let session = Session::open(&config.root).context("opening the session")?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let outcome = rt.block_on(async move {
        let server = McpServer::new(
            runtime,
            session,
            ServerOptions {
                elicitation: !headless,
            },
        );
        match http {
            None => tackle_mcp::serve_stdio(server)
                .await
                .context("serving MCP on stdio"),
            Some(addr) => {
                let shutdown = tokio_util::sync::CancellationToken::new();
                let on_ctrl_c = shutdown.clone();
                tokio::spawn(async move {
                    if tokio::signal::ctrl_c().await.is_ok() {
                        on_ctrl_c.cancel();
                    }
                });
                tackle_mcp::serve_http(
                    server,
                    HttpOptions { addr, bearer_token },
                    shutdown,
                    |bound| eprintln!("tackle serve: listening on http://{bound}/mcp"),
                )
                .await
                .map_err(|e| anyhow!("{e}"))
            }
        }
    });
    // Calls still running when the client left are abandoned with the runtime.
    rt.shutdown_background();
    match outcome {
        Ok(()) => Ok(exit::OK),
        Err(e) => Err(Failure::Engine(e)),
    }
}
