//! The `tackle` binary: arguments become a validated [`config::Config`], then one command runs.

mod acp;
mod agents;
mod approval_view;
mod approve;
mod args;
mod artifacts;
mod chat;
mod commands;
mod daemon;
mod diff;
mod exit;
mod goal;
mod leftovers;
mod mcp;
mod models;
mod own_sessions;
mod plan;
mod run;
mod safe_text;
mod serve;
mod serve_token;
mod sessions;
mod show_config;
mod skill_prompts;
mod skills;
mod storage;
mod store_migrate;
mod trust;

// The configuration crate's modules, under the names the commands use.
use tackle_config::{load as config, posture, root, settings, task};

/// The system allocator, counting what json_query's filters hold so their memory budget is
/// measured, not estimated (`tackle_tools::json_query::memory`).
#[global_allocator]
static ALLOC: tackle_tools::json_query::memory::MeteredAlloc =
    tackle_tools::json_query::memory::MeteredAlloc;

fn main() -> std::process::ExitCode {
    let cli = <args::Cli as clap::Parser>::parse();
    if cli.command.streams_model_turns() {
        tackle_process::tune_allocator();
    }
    // Before any HTTPS client is built (MCP servers, logins): see tackle_mcp::client::tls.
    tackle_mcp::client::tls::ensure_crypto_provider();
    commands::run(cli)
}
