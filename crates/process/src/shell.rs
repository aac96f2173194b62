//! Scripts run as `bash -c` would run them (or `/bin/sh -c` where there is no bash), with a
//! shell started ahead of the call where that is exact.
//!
//! Every script runs with the [`ShellProgram`] the caller was built with, whose environment has
//! lost what would change what the shell runs (`shell_env.rs`: `BASH_ENV`, exported functions,
//! `SHELLOPTS`…). bash always gets a fresh `bash --norc --noprofile -c <script>`.
//!
//! Most of what `sh -c 'true'` costs is the shell's own start: `execve`, the dynamic loader,
//! libc's start-up — about half a millisecond, and more under a long `LD_LIBRARY_PATH`. None of
//! it depends on the script, so where `/bin/sh` is dash, after a run [`Shell`] starts the next
//! shell in the background, in the same directory with the same environment and its own
//! process group, and leaves it blocked reading its stdin. The next script is written to that
//! stdin in one write and the shell runs it at once; the call pays for neither the spawn nor the
//! start-up.
//!
//! The script reaches the shell as `sh -s` reads it, which keeps a shell's own messages exactly
//! as `sh -c` prints them (`sh: 1: foo: not found`; `eval` or `.` would add their names). What
//! makes that safe:
//! - the text is `exec 0</dev/null; ` + script + `\n{ \exit; } 2>/dev/null\n`, written in a
//!   single write of at most `PIPE_BUF` bytes, so the shell's first read takes all of it (dash
//!   reads 8 KiB at a time) and the script's stdin is `/dev/null`, as with a fresh `sh -c`;
//! - the closing `exit` ends the shell when the script does, with the script's status, so it
//!   never reads further "script" from its stdin, which the script may have redirected
//!   (`exec < data.txt`): data is never run as commands. The braces' redirection keeps `set -x`
//!   from tracing it (an EXIT trap still writes where the script left stderr), and the
//!   backslash keeps an alias named `exit` from replacing it;
//! - only scripts the caller's parser read whole qualify, with no heredoc and no trailing
//!   backslash, so the closing line can never become part of a quote, a heredoc body or a
//!   continued line; nor scripts that may turn on `set -v`, which would echo the lines read.
//!
//! Everything else takes a fresh `sh -c`: interactive calls (their stdin is the caller's
//! pipe), longer scripts, a shell other than dash (whose `-s` reading this relies on), a
//! changed environment or working directory, a pre-started shell that died. What a script can
//! observe differs only in `$-` (which carries `s`) and the shell's argv in a process listing;
//! and a file the script sources or evaluates that turns on `set -v` echoes the closing line.
//!
//! Why no bash is started ahead: no way of handing a script to a running bash runs it as `-c`
//! does. `bash -s` reads its script a byte at a time from the descriptor the script redirects,
//! so after `exec 0</dev/null` it stops reading the script, and after `exec < data.txt` it runs
//! the data as commands; it also shows `s` in `$-`, has no `BASH_EXECUTION_STRING`, and prints
//! syntax errors without `-c:`. A `bash -c` that reads the script and `eval`s it shows the
//! `eval` in `$BASH_COMMAND`, `$_`, `PIPESTATUS` and syntax errors, and traces at depth two
//! (`++`). Either would make a run differ from the `bash -c` the gate's keys describe, so bash
//! pays its start-up on every call.
//!
//! An unused shell is killed at once when it is replaced or the [`Shell`] is dropped; if tackle
//! itself dies, the shell reads end-of-file and exits having run nothing.

use std::ffi::OsString;
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::env::EnvPolicy;
use crate::error::ProcessError;
use crate::group::waitid;
use crate::run::{Limits, OutputStream, RunOutcome, Spawned, drive, spawn_group};
use crate::shell_env::scrub;
use crate::shell_program::{ShellKind, ShellProgram};
use crate::stdin::StdinInput;

/// Runs first: the script's stdin is `/dev/null`, not the pipe the script arrived on.
const PROLOGUE: &str = "exec 0</dev/null; ";
/// Ends the shell with the script's status once the script is done, untraced and unaliased
/// (see the module docs).
const EPILOGUE: &str = "\n{ \\exit; } 2>/dev/null\n";
/// The longest `-c` string the kernel passes (`MAX_ARG_STRLEN`, 32 pages, counts the NUL).
pub const MAX_SCRIPT_BYTES: usize = 32 * 4096 - 1;
/// One pipe write of at most this many bytes is atomic (`PIPE_BUF`), and fits even a pipe
/// shrunk to one page by the per-user pipe quota.
const ATOMIC_WRITE: usize = 4096;

/// One script to run.
#[derive(Debug)]
pub struct ShellRun<'a> {
    pub script: &'a str,
    /// The caller's shell parser read the whole script without error. Only such a script may
    /// use a pre-started shell (an unterminated quote could swallow the closing `exit`).
    pub parsed: bool,
    /// The working directory (the session root).
    pub cwd: &'a Path,
    /// Wall-clock limit from the start of the run; exceeded → [`crate::Ended::TimedOut`].
    pub timeout: Duration,
    /// `Some`: stdin is a pipe fed from this receiver (interactive); `None`: `/dev/null`.
    pub stdin: Option<mpsc::UnboundedReceiver<StdinInput>>,
}

/// Runs scripts with a shell ([`ShellProgram`]), keeping one started ahead when allowed and
/// exact. Cheap to clone; clones share the pre-started shell.
#[derive(Clone, Debug)]
pub struct Shell {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    program: ShellProgram,
    env: EnvPolicy,
    grace: Duration,
    /// Pre-starting was asked for and `program` is a shell whose `-s` reading is known.
    prestart: bool,
    slot: Mutex<Slot>,
    /// Woken whenever a start in the background ends (with a shell or without).
    started: tokio::sync::Notify,
}

#[derive(Debug, Default)]
struct Slot {
    ready: Option<Warm>,
    starting: bool,
}

/// A shell blocked reading its stdin, and what it was started with.
#[derive(Debug)]
struct Warm {
    child: Spawned,
    cwd: PathBuf,
    cwd_id: (u64, u64),
    env: Vec<(OsString, OsString)>,
}

impl Shell {
    /// `program` is the shell ([`ShellProgram::discover`]); `env` what scripts inherit (less
    /// what `shell_env.rs` removes); `grace` the wait between SIGTERM and SIGKILL when a run is
    /// ended. `prestart`: keep a shell started ahead (used only when `program` is an `sh` that
    /// is dash; see the module docs).
    pub fn new(program: ShellProgram, env: EnvPolicy, grace: Duration, prestart: bool) -> Self {
        let prestart = Self::starts_ahead(&program, prestart);
        Self {
            inner: Arc::new(Inner {
                program,
                env,
                grace,
                prestart,
                slot: Mutex::new(Slot::default()),
                started: tokio::sync::Notify::new(),
            }),
        }
    }

    /// Whether a `Shell` over `program` with `prestart` asked for keeps a shell started ahead:
    /// only for an `sh` that is dash.
    pub fn starts_ahead(program: &ShellProgram, prestart: bool) -> bool {
        prestart && program.kind() == ShellKind::Sh && reads_scripts_in_blocks(program.path())
    }

    /// Whether runs may use a pre-started shell.
    pub fn prestarts(&self) -> bool {
        self.inner.prestart
    }

    /// The shell scripts run with.
    pub fn program(&self) -> &ShellProgram {
        &self.inner.program
    }

    /// Make sure a shell for `cwd` is ready (when pre-starting is on): wait for one being
    /// started, or start one and wait until it has been spawned.
    pub async fn warm_up(&self, cwd: &Path) {
        let inner = &self.inner;
        if !inner.prestart {
            return;
        }
        enum Next {
            Ready,
            Wait,
            Start,
            Replace(Warm),
        }
        loop {
            let notified = inner.started.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let next = {
                let mut slot = inner.slot();
                match &slot.ready {
                    Some(w) if w.cwd == cwd => Next::Ready,
                    Some(_) => slot.ready.take().map_or(Next::Start, Next::Replace),
                    None if slot.starting => Next::Wait,
                    None => Next::Start,
                }
            };
            match next {
                Next::Ready => return,
                Next::Wait => notified.await,
                Next::Replace(stale) => stale.discard(),
                Next::Start => {
                    if let Some(task) = Arc::clone(inner).replenish(cwd) {
                        // Once: a shell that cannot be started is the next run's error.
                        let _ = task.await;
                        return;
                    }
                }
            }
        }
    }

    /// Run `job.script` like `bash -c script` (`sh -c` without bash) in `job.cwd`, streaming its
    /// output to `on_output`; everything else as [`crate::run`].
    pub async fn run<E, F>(
        &self,
        job: ShellRun<'_>,
        on_output: F,
        cancel: CancellationToken,
    ) -> Result<RunOutcome<E>, ProcessError>
    where
        F: FnMut(OutputStream, &[u8]) -> Result<(), E>,
    {
        let inner = &self.inner;
        let env = inner.child_env();
        let limits = Limits {
            timeout: job.timeout,
            grace: inner.grace,
        };
        let warm =
            if inner.prestart && job.stdin.is_none() && fits_prestarted(job.script, job.parsed) {
                inner.take(job.cwd, &env).await
            } else {
                None
            };
        let started = Instant::now();
        let outcome = match warm.and_then(|w| w.hand_over(job.script)) {
            Some(child) => drive(child, None, started, limits, on_output, cancel)
                .await
                .map(|o| RunOutcome {
                    prestarted: true,
                    ..o
                }),
            None => {
                if job.script.len() > MAX_SCRIPT_BYTES {
                    return Err(ProcessError::ScriptTooLong {
                        program: inner.program.path().display().to_string(),
                        bytes: job.script.len(),
                        limit: MAX_SCRIPT_BYTES,
                    });
                }
                let args = inner.program.args_for(job.script);
                let child = spawn_group(
                    inner.program.path().as_os_str(),
                    &args,
                    job.cwd,
                    env,
                    job.stdin.is_some(),
                    inner.grace,
                )?;
                drive(child, job.stdin, started, limits, on_output, cancel).await
            }
        };
        if inner.prestart {
            Arc::clone(inner).replenish(job.cwd);
        }
        outcome
    }
}

impl Inner {
    /// What the shell gets of tackle's environment: the policy's filter, then `shell_env.rs`.
    fn child_env(&self) -> Vec<(OsString, OsString)> {
        let mut env = self.env.filter(std::env::vars_os());
        scrub(&mut env);
        env
    }

    fn slot(&self) -> MutexGuard<'_, Slot> {
        // The slot is consistent between statements; a panic elsewhere cannot corrupt it.
        self.slot.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The ready shell (waiting for one being started: it is further along than a fresh
    /// spawn), if it was started for this directory (still the same directory) with this
    /// environment and is alive; any other is discarded.
    async fn take(&self, cwd: &Path, env: &[(OsString, OsString)]) -> Option<Warm> {
        let warm = loop {
            let notified = self.started.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let mut slot = self.slot();
                if let Some(w) = slot.ready.take() {
                    break w;
                }
                if !slot.starting {
                    return None;
                }
            }
            notified.await;
        };
        let usable = warm.cwd == cwd
            && dir_id(cwd) == Some(warm.cwd_id)
            && warm.env == env
            && matches!(
                waitid(libc::P_PID, warm.child.group.pid(), libc::WNOHANG),
                Ok(None)
            );
        if usable {
            Some(warm)
        } else {
            warm.discard();
            None
        }
    }

    /// Start the next shell on the blocking pool unless one is ready or starting.
    fn replenish(self: Arc<Self>, cwd: &Path) -> Option<tokio::task::JoinHandle<()>> {
        if !self.prestart {
            return None;
        }
        {
            let mut slot = self.slot();
            if slot.ready.is_some() || slot.starting {
                return None;
            }
            slot.starting = true;
        }
        let cwd = cwd.to_path_buf();
        let starting = Starting(self);
        Some(tokio::task::spawn_blocking(move || {
            let inner = &starting.0;
            let warm = inner.start(cwd);
            let old = warm.and_then(|w| inner.slot().ready.replace(w));
            if let Some(old) = old {
                old.discard();
            }
            // `starting` ends here, waking whoever waits for this start.
        }))
    }

    fn start(&self, cwd: PathBuf) -> Option<Warm> {
        let cwd_id = dir_id(&cwd)?;
        let env = self.child_env();
        let args = [OsString::from("-s")];
        // A failure here costs nothing: the next run spawns afresh and reports it.
        let child = spawn_group(
            self.program.path().as_os_str(),
            &args,
            &cwd,
            env.clone(),
            true,
            self.grace,
        )
        .ok()?;
        Some(Warm {
            child,
            cwd,
            cwd_id,
            env,
        })
    }
}

/// A start in progress. Dropping it, after the start or instead of it (a runtime shut down
/// before the blocking task ran), ends the start and wakes the runs waiting for it, so none
/// waits for a start that will never come.
struct Starting(Arc<Inner>);

impl Drop for Starting {
    fn drop(&mut self) {
        self.0.slot().starting = false;
        self.0.started.notify_waiters();
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Some(warm) = self.slot().ready.take() {
            warm.discard();
        }
    }
}

impl Warm {
    /// Give the shell its script; `None` (and the shell discarded) if it cannot take it.
    fn hand_over(mut self, script: &str) -> Option<Spawned> {
        let mut text = String::with_capacity(PROLOGUE.len() + script.len() + EPILOGUE.len());
        text.push_str(PROLOGUE);
        text.push_str(script);
        text.push_str(EPILOGUE);
        self.child.group.starts_now();
        let written = match self.child.stdin.take() {
            // One write of at most PIPE_BUF bytes into an empty pipe: it neither blocks nor
            // splits. Dropping the pipe then gives the shell end-of-file.
            Some(mut pipe) => pipe.write_all(text.as_bytes()).is_ok(),
            None => false,
        };
        if written {
            Some(self.child)
        } else {
            self.discard();
            None
        }
    }

    fn discard(mut self) {
        drop(self.child.stdin.take());
        self.child.group.discard();
    }
}

/// Whether `script` may run in a pre-started shell (see the module docs).
fn fits_prestarted(script: &str, parsed: bool) -> bool {
    parsed
        && PROLOGUE.len() + script.len() + EPILOGUE.len() <= ATOMIC_WRITE
        && !script.contains("<<")
        && !script.contains('\0')
        && !script.trim_end().ends_with('\\')
        && !may_set_verbose(script)
}

/// Whether `script` may run `set -v` (`set -xv`, `set -o verbose`…): dash would then echo every
/// line it reads, the closing one included. Errs towards yes: any `set` followed, before the
/// end of its command, by an option word holding a `v`, or the word `verbose` anywhere.
fn may_set_verbose(script: &str) -> bool {
    if script.contains("verbose") {
        return true;
    }
    let bytes = script.as_bytes();
    script.match_indices("set").any(|(at, _)| {
        let starts_word = at == 0 || !is_word_byte(bytes[at - 1]);
        let rest = &script[at + 3..];
        let ends_word = rest.bytes().next().is_none_or(|b| !is_word_byte(b));
        starts_word
            && ends_word
            && rest
                .split(['\n', ';', '&', '|', ')'])
                .next()
                .unwrap_or("")
                .split_whitespace()
                .any(|w| (w.starts_with('-') || w.starts_with('+')) && w.contains('v'))
    })
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// The device and inode of a directory, to notice it being replaced under the same path.
fn dir_id(dir: &Path) -> Option<(u64, u64)> {
    std::fs::metadata(dir).ok().map(|m| (m.dev(), m.ino()))
}

/// Whether `program` is dash, whose `-s` reading (8 KiB reads, the closing `exit` honoured
/// before any further read) this module relies on. Other shells read a piped script byte by
/// byte and restore their input around `exec 0<`; they get a fresh `sh -c` every time.
fn reads_scripts_in_blocks(program: &Path) -> bool {
    std::fs::canonicalize(program)
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .is_some_and(|n| n == "dash")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only an `sh` that is dash is ever started ahead, and only when asked.
    #[test]
    fn only_a_dash_sh_starts_ahead() {
        for program in crate::shell_program::BASH_PATHS {
            assert!(!Shell::starts_ahead(&ShellProgram::bash(program), true));
            // bash run as an `sh` is not dash either.
            assert!(!Shell::starts_ahead(&ShellProgram::sh(program), true));
        }
        assert!(!Shell::starts_ahead(&ShellProgram::sh("/no/such/sh"), true));
        let sh = ShellProgram::sh("/bin/sh");
        assert!(!Shell::starts_ahead(&sh, false));
        assert_eq!(
            Shell::starts_ahead(&sh, true),
            reads_scripts_in_blocks(Path::new("/bin/sh"))
        );
    }

    #[test]
    fn only_whole_short_plain_scripts_fit() {
        assert!(fits_prestarted("true", true));
        assert!(fits_prestarted("echo a # trailing comment", true));
        assert!(!fits_prestarted("true", false), "not parsed whole");
        assert!(!fits_prestarted("cat <<EOF\nx\nEOF", true), "heredoc");
        assert!(!fits_prestarted("cat <<<x", true), "here-string");
        assert!(!fits_prestarted("echo a \\", true), "continued line");
        assert!(!fits_prestarted("echo a \\\n", true), "continued line");
        assert!(!fits_prestarted("echo \0", true));
        assert!(
            !fits_prestarted("set -v; echo a", true),
            "verbose echoes the closing line"
        );
        assert!(!fits_prestarted("set -euxv", true));
        assert!(!fits_prestarted("true && set +v -o pipefail", true));
        assert!(!fits_prestarted("set -o verbose", true));
        assert!(
            fits_prestarted("set -eux; echo v", true),
            "no v among the options"
        );
        assert!(
            fits_prestarted("reset -v; offset -v", true),
            "not the set builtin"
        );
        let limit = ATOMIC_WRITE - PROLOGUE.len() - EPILOGUE.len();
        assert!(fits_prestarted(&"x".repeat(limit), true));
        assert!(!fits_prestarted(&"x".repeat(limit + 1), true));
    }
}
