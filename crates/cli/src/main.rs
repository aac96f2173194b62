//! The `tackle` binary: arguments become a validated [`config::Config`], then one command runs.

mod approve;
mod args;
mod artifacts;
mod commands;
mod config;
mod exit;
mod goal;
mod leftovers;
mod mcp;
mod models;
mod plan;
mod posture;
mod root;
mod run;
mod serve;
mod settings;
mod show_config;
mod task;
mod trust;
mod wait_settings;

fn main() -> std::process::ExitCode {
    let cli = <args::Cli as clap::Parser>::parse();
    // Before any HTTPS client is built (MCP servers, logins): see tackle_mcp::client::tls.
    tackle_mcp::client::tls::ensure_crypto_provider();
    commands::run(cli)
}
