//! The `tackle` binary: arguments become a validated [`config::Config`], then one command runs.

mod args;
mod commands;
mod config;
mod exit;
mod root;
mod settings;

fn main() -> std::process::ExitCode {
    let cli = <args::Cli as clap::Parser>::parse();
    commands::run(cli)
}
