//! Child processes for tools that run programs: `bash`, and `run` pipelines (seed 004).
//!
//! Owns: spawning a program in a process group of its own, with stdin/stdout/stderr as three
//! separate pipes, streaming both output streams to a caller's handler as bytes arrive, a
//! per-call timeout, cancellation, and ending the *whole group* (SIGTERM, then SIGKILL after a
//! grace) so nothing the program started outlives the call. Also: the inherited environment
//! minus a denylist of secrets ([`EnvPolicy`]), the registry through which a front end
//! feeds bytes or EOF to an interactive call's stdin ([`StdinRegistry`]), and [`Shell`], which
//! runs scripts as `bash -c` would (found at a fixed path, [`ShellProgram`]; `/bin/sh -c` where
//! there is no bash) with an environment that cannot change what the shell runs
//! ([`SHELL_ENV_REMOVED`]), in a dash started ahead of the call where that is exact. And
//! [`run_pipeline`]: programs connected stdout to stdin by pipes, without a shell, all in one
//! process group ended the same way, with both outputs captured up to a limit.
//!
//! Also, apart from children: the allocator settings a process that streams model turns
//! starts with ([`tune_allocator`]).
//!
//! Refuses to own: reading scripts, quoting, permission decisions, retention, and truncation
//! beyond the capture limit a pipeline's caller sets.
//! The caller hands over an argv, a working directory and a handler; what the bytes mean is
//! its business.
//!
//! Key decision: the child is waited for with `waitid(WNOWAIT)`, which observes its exit without
//! reaping it, so its pid (the group id) cannot be reused while the group is being signalled;
//! only after the group has been ended is the child reaped. The exit is noticed through a pidfd
//! registered with the tokio reactor (a blocking `waitid` on the blocking pool where the kernel
//! has no pidfds), and the program is started with std's posix_spawn path (no `pre_exec`), so a
//! run costs little more than a bare `Command::output`. Leftover members of the group after the
//! program exits (`sleep 100 &`) are ended too, and so are descendants that left the group with
//! `setsid`, found by a per-run marker in their environment (`marker.rs`, which also says what
//! can still escape): a call owns everything it started.
//! Rejected: `tokio::process::Child::wait`, which reaps first and leaves a window where
//! `kill(-pgid)` could hit an unrelated group.

mod allocator;
mod env;
mod error;
mod group;
mod marker;
mod pipeline;
mod pipeline_stages;
mod run;
mod shell;
mod shell_env;
mod shell_program;
mod stdin;

pub use allocator::{MMAP_THRESHOLD, TRIM_THRESHOLD, tune_allocator};
pub use env::{DEFAULT_ENV_DENY, DEFAULT_ENV_KEEP, EnvPolicy};
pub use error::ProcessError;
pub use pipeline::{Captured, PipelineOutcome, PipelineSpec, Stage, find_on_path, run_pipeline};
pub use run::{Ended, ExitStatus, OutputStream, RunOutcome, RunSpec, run};
pub use shell::{MAX_SCRIPT_BYTES, Shell, ShellRun};
pub use shell_env::{EXPORTED_FUNCTION_PREFIX, SHELL_ENV_REMOVED, removed_from_shell};
pub use shell_program::{BASH_PATHS, SH_PATH, ShellKind, ShellProgram};
pub use stdin::{CallFacts, StdinError, StdinInput, StdinRegistration, StdinRegistry};

pub use tokio_util::sync::CancellationToken;
