//! The MCP client: third-party MCP servers declared in `.agents/mcp.json` (or the user's own
//! file of the same format), their tools offered as tackle tools.
//!
//! Owns: the configuration file, starting servers (stdio children and Streamable HTTP
//! endpoints) with a start-up timeout, naming (`mcp__<server>__<tool>` for the model,
//! `tool.mcp.<server>.<tool>` for the gate), schema repair, calls with a per-call timeout,
//! restarting a crashed server, and rendering results.
//!
//! Refuses: policy (every call goes through the runtime's gate like a built-in; with no rule
//! an MCP tool key asks), output shaping (results are retained and truncated by the runtime),
//! and trust (results are labelled [`tackle_protocol::Label::REMOTE`], untrusted).
//!
//! Key decision: a server that cannot start costs its own tools and nothing else: the failure
//! is reported (to stderr by the binary) and the catalog is built without them. Which servers
//! may start at all is the caller's decision (folder trust, in the binary): this crate reads
//! `.agents/mcp.json` ([`config::load`]) but starts only the servers it is handed.

pub mod config;
mod connection;
mod names;
pub mod oauth;
mod probe;
pub mod tls;
mod tool;

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use tackle_process::EnvPolicy;
use tackle_tool::DynTool;

pub use config::{ConfigError, SecretUse, ServerConfig, Transport};
pub use connection::client_runtime;
pub use names::model_name;
pub use oauth::TokenDir;
pub use probe::{ProbeOutcome, probe_servers};
pub use tool::{MCP_ERROR, MCP_SERVER_UNAVAILABLE, McpTool, render, repair_schema};

/// Start `servers` concurrently and collect their tools in configuration order, with a line
/// per problem (a server that did not start, a tool whose schema could not be used). `taken`
/// holds the names already registered (built-ins), so a remote tool can never shadow one;
/// `env` is what stdio children inherit of tackle's environment (their entry's `env` is added);
/// `tokens` is where `tackle mcp login` kept the tokens HTTP servers are sent.
pub fn start_servers(
    servers: Vec<ServerConfig>,
    root: &Path,
    taken: &[&str],
    env: &EnvPolicy,
    tokens: &TokenDir,
) -> (Vec<Arc<McpTool>>, Vec<String>) {
    if servers.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let handle = client_runtime();
    let started: Vec<_> = servers
        .into_iter()
        .map(|cfg| {
            let server = connection::Server::new(cfg, root, env.clone(), tokens.clone());
            let s = server.clone();
            let (tx, rx) = std::sync::mpsc::channel();
            handle.spawn(async move {
                let _ = tx.send(s.start_and_list().await);
            });
            (server, rx)
        })
        .collect();
    let mut names: BTreeSet<String> = taken.iter().map(|t| (*t).to_owned()).collect();
    let mut tools = Vec::new();
    let mut problems = Vec::new();
    for (server, rx) in started {
        let name = server.config.name.clone();
        let listed = rx.recv().unwrap_or_else(|_| {
            Err(connection::ConnectError::List(
                "the start-up task ended without an answer".into(),
            ))
        });
        match listed {
            Ok(remote_tools) => {
                for remote in &remote_tools {
                    let model = model_name(&name, &remote.name, &mut names);
                    match McpTool::new(server.clone(), remote, model) {
                        Ok(t) => tools.push(Arc::new(t)),
                        Err(why) => problems.push(format!(
                            "MCP server `{name}`: tool `{}` left out: {why}",
                            remote.name
                        )),
                    }
                }
            }
            Err(e) => problems.push(format!(
                "MCP server `{name}` ({}) is unavailable, its tools are not offered: {e}",
                server.endpoint()
            )),
        }
    }
    (tools, problems)
}

/// Erase to what the catalog holds.
pub fn as_dyn(tools: Vec<Arc<McpTool>>) -> Vec<Arc<dyn DynTool>> {
    tools.into_iter().map(|t| t as Arc<dyn DynTool>).collect()
}
