//! Exit codes, documented in `tackle --help`.

use std::process::ExitCode;

/// The command did what was asked.
pub const OK: u8 = 0;
/// The call ran and its result is an error (denied, invalid arguments, tool failure…); the
/// result was printed.
pub const TOOL_ERROR: u8 = 1;
/// The command line or its input is malformed (clap also uses 2).
pub const USAGE: u8 = 2;
/// tackle itself could not work: no project root, unreadable config, store or event log failure.
pub const ENGINE: u8 = 3;

/// `tackle agents`: an agent type file was refused (named on stderr).
pub const REFUSED_FILES: u8 = 1;

/// `tackle run`: the run ended on an error (the same code as a tool error of `tackle call`).
pub const RUN_ERROR: u8 = 1;
/// `tackle run`: a bound (turns, tokens, cost, wall clock) ended the run.
pub const BOUND: u8 = 4;
/// `tackle run`: the model provider failed in a way that cannot be retried.
pub const PROVIDER: u8 = 5;
/// `tackle run`: cancelled with Ctrl-C.
pub const CANCELLED: u8 = 130;

pub fn code(c: u8) -> ExitCode {
    ExitCode::from(c)
}
