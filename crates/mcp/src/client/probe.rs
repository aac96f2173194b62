//! Reaching each configured server once, to say how it stands (`tackle mcp list`).
//!
//! Key decision: a probe is the same start-up the catalog does (the same environment, the
//! same start-up timeout, the same error text), run for every server at once on the client
//! runtime, and nothing else: no catalog is built, so listing servers never starts them twice.

use std::path::Path;

use tackle_process::EnvPolicy;

use super::config::ServerConfig;
use super::connection::{self, ConnectError};
use super::oauth::TokenDir;

/// How one server answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProbeOutcome {
    /// It completed `initialize` and listed these tools (their remote names).
    Connected { tools: Vec<String> },
    /// It could not be reached; the cause as the catalog would report it.
    Failed { cause: String },
    /// It answered 401 and no stored token satisfied it: `tackle mcp login <name>` is the fix.
    NeedsLogin { cause: String },
}

/// Start every server in `servers` concurrently, list its tools, and let it go. The outcomes
/// are in the order of `servers`; each server is bounded by its own start-up timeout.
pub fn probe_servers(
    servers: &[ServerConfig],
    root: &Path,
    env: &EnvPolicy,
    tokens: &TokenDir,
) -> Vec<ProbeOutcome> {
    let handle = connection::client_runtime();
    let pending: Vec<_> = servers
        .iter()
        .map(|cfg| {
            let server = connection::Server::new(cfg.clone(), root, env.clone(), tokens.clone());
            let (tx, rx) = std::sync::mpsc::channel();
            handle.spawn(async move {
                let listed = server.start_and_list().await;
                // The connection ends with this task: the server was started to be asked only.
                drop(server);
                let _ = tx.send(listed);
            });
            rx
        })
        .collect();
    pending
        .into_iter()
        .map(|rx| {
            let listed = rx.recv().unwrap_or_else(|_| {
                Err(ConnectError::List(
                    "the start-up task ended without an answer".into(),
                ))
            });
            match listed {
                Ok(tools) => ProbeOutcome::Connected {
                    tools: tools.iter().map(|t| t.name.to_string()).collect(),
                },
                Err(e @ (ConnectError::NeedsLogin { .. } | ConnectError::NeedsScope { .. })) => {
                    ProbeOutcome::NeedsLogin {
                        cause: e.to_string(),
                    }
                }
                Err(e) => ProbeOutcome::Failed {
                    cause: e.to_string(),
                },
            }
        })
        .collect()
}
