//! `tackle acp`: the agent for editors that speak the Agent Client Protocol (Zed, JetBrains
//! IDEs, Neovim's plugins), on standard input and output.
//!
//! - [`wire`] is the protocol's side, and the only file that knows its messages; [`rpc`] is
//!   JSON-RPC over standard input and output.
//! - [`host`] holds the editor's sessions: each a project root with its configuration (folder
//!   trust decides without asking), its runtime, a gate in the session's mode ([`modes`]) and
//!   its agent.
//! - [`observe`] turns the agent's events into [`update::Update`]s; [`replay`] retells a
//!   stored conversation for `session/load`; [`approve`] turns the gate's asks into the
//!   editor's permission requests.
//!
//! tackle runs its own confined tools even where the editor offers file system or terminal
//! methods: the gate and the session's log see every effect.

pub(crate) mod approve;
mod editor_mcp;
pub(crate) mod host;
mod modes;
mod observe;
pub(crate) mod replay;
pub(crate) mod rpc;
pub(crate) mod update;
pub(crate) mod wire;

use anyhow::Context;

use crate::commands::Failure;
use crate::exit;
use crate::settings::Flags;

/// Serves the protocol until the editor closes standard input.
pub fn run(flags: Flags, models: crate::run::ModelFlags) -> Result<u8, Failure> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    rt.block_on(wire::serve_stdio(host::HostOptions {
        flags,
        models,
        queue_prompts: false,
        wakes: false,
        peers: None,
    }));
    // Sessions kept in a fleet database are let go, for a daemon or another editor to take at
    // once.
    if let Some(backend) = tackle_store::backend::backend() {
        backend.close();
    }
    // A prompt still running when the editor left is cancelled with the host; its processes
    // go with it.
    rt.shutdown_background();
    Ok(exit::OK)
}
