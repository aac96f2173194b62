//! Running one program to its end: stream, time out or be cancelled, end the group, report.

use std::ffi::{OsStr, OsString};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::env::EnvPolicy;
use crate::error::ProcessError;
use crate::group::{ExitWatch, Group};
use crate::marker::{MARKER_VAR, RunMarker};
use crate::stdin::StdinInput;

/// Each read from a pipe takes at most this much.
const READ_CHUNK: usize = 256 * 1024;
/// The first read buffer of each stream. Most commands print little; a buffer that a read fills
/// grows (×8) up to [`READ_CHUNK`], so bulk output still moves in large reads.
const FIRST_CHUNK: usize = 8 * 1024;

/// The stdout pipe's requested capacity: the default `/proc/sys/fs/pipe-max-size`.
const PIPE_CAPACITY: libc::c_int = 1024 * 1024;

/// What to run.
#[derive(Debug)]
pub struct RunSpec {
    pub program: OsString,
    pub args: Vec<OsString>,
    /// The working directory (the session root; the runner never changes its own).
    pub cwd: PathBuf,
    pub env: EnvPolicy,
    /// Wall-clock limit from spawn; exceeded → [`Ended::TimedOut`].
    pub timeout: Duration,
    /// Between SIGTERM and SIGKILL when the group is ended.
    pub grace: Duration,
    /// `Some`: stdin is a pipe fed from this receiver (interactive); `None`: `/dev/null`.
    pub stdin: Option<mpsc::UnboundedReceiver<StdinInput>>,
}

/// Which output pipe bytes came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputStream {
    Stdout,
    Stderr,
}

impl OutputStream {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Stdout => "stdout",
            Self::Stderr => "stderr",
        }
    }
}

/// How the leader of the group ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExitStatus {
    /// The exit code, when it exited.
    pub code: Option<i32>,
    /// The signal that ended it, when one did.
    pub signal: Option<i32>,
}

impl ExitStatus {
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }
}

/// Why the run ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Ended<E> {
    /// The program exited by itself (with any status).
    Exited,
    /// The timeout passed; the group was ended.
    TimedOut,
    /// The cancellation token fired; the group was ended.
    Cancelled,
    /// The output handler returned an error; the group was ended.
    Stopped(E),
}

/// The result of a run. All output read before the end went to the handler.
#[derive(Debug)]
pub struct RunOutcome<E> {
    pub ended: Ended<E>,
    pub status: ExitStatus,
    pub duration: Duration,
    pub stdout_bytes: u64,
    pub stderr_bytes: u64,
    pub pid: u32,
    /// The program was a shell started before the run (see [`crate::Shell`]).
    pub prestarted: bool,
}

struct Pipes {
    stdout: Option<tokio::process::ChildStdout>,
    stderr: Option<tokio::process::ChildStderr>,
    out_buf: Vec<u8>,
    err_buf: Vec<u8>,
    stdout_bytes: u64,
    stderr_bytes: u64,
}

enum Step {
    Data(OutputStream, usize),
    Eof(OutputStream),
    Exit(std::io::Result<ExitStatus>),
    Deadline,
    Cancelled,
}

/// Run `spec` to its end, calling `on_output` with bytes from either stream as they arrive.
///
/// The program runs in a new process group, in `spec.cwd`, with the filtered environment. On
/// timeout, cancellation or a handler error the group gets SIGTERM and, after the grace,
/// SIGKILL; when the program exits by itself, anything it left running in its group is ended the
/// same way. Output already in the pipes is still delivered (unless the handler failed).
pub async fn run<E, F>(
    spec: RunSpec,
    on_output: F,
    cancel: CancellationToken,
) -> Result<RunOutcome<E>, ProcessError>
where
    F: FnMut(OutputStream, &[u8]) -> Result<(), E>,
{
    let env = spec.env.filter(std::env::vars_os());
    let started = Instant::now();
    let child = spawn_group(
        &spec.program,
        &spec.args,
        &spec.cwd,
        env,
        spec.stdin.is_some(),
        spec.grace,
    )?;
    let limits = Limits {
        timeout: spec.timeout,
        grace: spec.grace,
    };
    drive(child, spec.stdin, started, limits, on_output, cancel).await
}

/// A program started in a process group of its own, with its pipes, not yet driven.
#[derive(Debug)]
pub(crate) struct Spawned {
    pub(crate) program: String,
    pub(crate) group: Group,
    pub(crate) stdin: Option<std::process::ChildStdin>,
    pub(crate) stdout: Option<std::process::ChildStdout>,
    pub(crate) stderr: Option<std::process::ChildStderr>,
}

/// How long a driven run may take, and the grace between SIGTERM and SIGKILL.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    pub(crate) timeout: Duration,
    pub(crate) grace: Duration,
}

/// Start `program` in a new process group in `cwd` with the environment `env` (already
/// filtered) plus the run's marker; stdin is a pipe when `stdin_pipe`, else `/dev/null`.
/// Blocking only for as long as posix_spawn is (the child's `execve`).
pub(crate) fn spawn_group(
    program: &OsStr,
    args: &[OsString],
    cwd: &Path,
    mut env: Vec<(OsString, OsString)>,
    stdin_pipe: bool,
    grace: Duration,
) -> Result<Spawned, ProcessError> {
    let program_name = program.to_string_lossy().into_owned();
    let marker = RunMarker::new();
    let inherited = env
        .iter()
        .position(|(k, _)| k == MARKER_VAR)
        .map(|i| env.swap_remove(i).1);
    let mut command = std::process::Command::new(program);
    // No `pre_exec` and no uid/gid changes: std then spawns with posix_spawn (vfork-like),
    // much cheaper than fork + exec from a large multi-threaded process.
    command
        .args(args)
        .current_dir(cwd)
        .env_clear()
        .envs(env)
        .env(MARKER_VAR, marker.env_value(inherited.as_deref()))
        .stdin(if stdin_pipe {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = command.spawn().map_err(|source| ProcessError::Spawn {
        program: program_name.clone(),
        source,
    })?;
    let group = Group::new(child.id(), grace, marker);
    if let Some(out) = &child.stdout {
        widen_pipe(out);
    }
    // `child` is never waited on through std: the group reaps the leader itself.
    Ok(Spawned {
        program: program_name,
        group,
        stdin: child.stdin.take(),
        stdout: child.stdout.take(),
        stderr: child.stderr.take(),
    })
}

/// Drive a spawned program to its end: stream its output to `on_output`, feed `input` (if any)
/// to its stdin, observe the deadline (from `started`) and `cancel`, then end the group.
pub(crate) async fn drive<E, F>(
    child: Spawned,
    input: Option<mpsc::UnboundedReceiver<StdinInput>>,
    started: Instant,
    limits: Limits,
    mut on_output: F,
    cancel: CancellationToken,
) -> Result<RunOutcome<E>, ProcessError>
where
    F: FnMut(OutputStream, &[u8]) -> Result<(), E>,
{
    let Spawned {
        program: program_name,
        mut group,
        stdin,
        stdout,
        stderr,
    } = child;
    let read_err = |source| ProcessError::Read {
        program: program_name.clone(),
        source,
    };
    let stdout = stdout
        .map(tokio::process::ChildStdout::from_std)
        .transpose()
        .map_err(read_err)?;
    let stderr = stderr
        .map(tokio::process::ChildStderr::from_std)
        .transpose()
        .map_err(read_err)?;
    if let (Some(stdin), Some(mut input)) = (stdin, input) {
        let mut stdin = tokio::process::ChildStdin::from_std(stdin).map_err(read_err)?;
        tokio::spawn(async move {
            while let Some(msg) = input.recv().await {
                match msg {
                    StdinInput::Bytes(b) => {
                        // A child that stopped reading is not the sender's failure.
                        if stdin.write_all(&b).await.is_err() || stdin.flush().await.is_err() {
                            break;
                        }
                    }
                    StdinInput::Eof => break,
                }
            }
        });
    }
    let pid = group.pid();
    let mut exit = ExitWatch::new(pid);
    let mut exit_status: Option<ExitStatus> = None;
    let mut pipes = Pipes {
        stdout,
        stderr,
        out_buf: vec![0; FIRST_CHUNK],
        err_buf: vec![0; FIRST_CHUNK],
        stdout_bytes: 0,
        stderr_bytes: 0,
    };
    let deadline = tokio::time::sleep(limits.timeout.saturating_sub(started.elapsed()));
    tokio::pin!(deadline);

    // Run: until the program exits, the deadline passes, cancellation, or the handler fails.
    let mut ended: Option<Ended<E>> = None;
    while ended.is_none() && exit_status.is_none() {
        match next_step(
            &mut pipes,
            &mut exit,
            pid,
            exit_status.is_some(),
            &mut deadline,
            &cancel,
        )
        .await
        {
            Step::Data(stream, n) => {
                if let Err(e) = on_output(stream, pipes.buf(stream, n)) {
                    ended = Some(Ended::Stopped(e));
                }
            }
            Step::Eof(stream) => pipes.close(stream),
            Step::Exit(status) => {
                exit_status = Some(status.map_err(|source| wait_err(&program_name, source))?)
            }
            Step::Deadline => ended = Some(Ended::TimedOut),
            Step::Cancelled => ended = Some(Ended::Cancelled),
        }
    }
    let ended = ended.unwrap_or(Ended::Exited);
    let deliver = !matches!(ended, Ended::Stopped(_));

    // End the group: SIGTERM, drain until every writer is gone or the grace passes, SIGKILL.
    group.signal(libc::SIGTERM);
    let grace = tokio::time::sleep(limits.grace);
    tokio::pin!(grace);
    let never = CancellationToken::new();
    while pipes.open() || exit_status.is_none() {
        match next_step(
            &mut pipes,
            &mut exit,
            pid,
            exit_status.is_some(),
            &mut grace,
            &never,
        )
        .await
        {
            Step::Data(stream, n) if deliver => {
                // Output after the end is still the program's output; a failing handler now
                // only stops delivery.
                let _ = on_output(stream, pipes.buf(stream, n));
            }
            Step::Data(..) => {}
            Step::Eof(stream) => pipes.close(stream),
            Step::Exit(status) => {
                exit_status = Some(status.map_err(|source| wait_err(&program_name, source))?)
            }
            Step::Deadline | Step::Cancelled => break,
        }
    }
    group.signal(libc::SIGKILL);
    // Everything in the group is dead now (or about to be: see `wait_until_stopped` below); collect the leader's status and the last bytes. A
    // process that left the group (setsid) may still hold a pipe: stop after another grace.
    let last = tokio::time::sleep(limits.grace);
    tokio::pin!(last);
    while pipes.open() || exit_status.is_none() {
        match next_step(
            &mut pipes,
            &mut exit,
            pid,
            exit_status.is_some(),
            &mut last,
            &never,
        )
        .await
        {
            Step::Data(stream, n) if deliver => {
                let _ = on_output(stream, pipes.buf(stream, n));
            }
            Step::Data(..) => {}
            Step::Eof(stream) => pipes.close(stream),
            Step::Exit(status) => {
                exit_status = Some(status.map_err(|source| wait_err(&program_name, source))?)
            }
            Step::Deadline | Step::Cancelled if exit_status.is_some() => break,
            // The leader got SIGKILL; its exit is imminent, so keep waiting for it alone.
            Step::Deadline | Step::Cancelled => pipes.close_all(),
        }
    }
    group.reap();
    group.wait_until_stopped(limits.grace).await;
    let status = exit_status.unwrap_or(ExitStatus {
        code: None,
        signal: Some(libc::SIGKILL),
    });
    Ok(RunOutcome {
        ended,
        status,
        duration: started.elapsed(),
        stdout_bytes: pipes.stdout_bytes,
        stderr_bytes: pipes.stderr_bytes,
        pid,
        prestarted: false,
    })
}

/// Asks for a [`PIPE_CAPACITY`] pipe, so a program writing a lot of output fills larger reads and
/// wakes the reader less often. Best effort: past the per-user pipe quota (or on an old kernel) the
/// pipe keeps its default size, which is only slower.
pub(crate) fn widen_pipe(pipe: &impl std::os::fd::AsRawFd) {
    // SAFETY: F_SETPIPE_SZ takes an integer argument and touches no memory of ours; the
    // descriptor is open for as long as `pipe` is borrowed.
    unsafe {
        libc::fcntl(pipe.as_raw_fd(), libc::F_SETPIPE_SZ, PIPE_CAPACITY);
    }
}

fn wait_err(program: &str, source: std::io::Error) -> ProcessError {
    ProcessError::Wait {
        program: program.to_owned(),
        source,
    }
}

impl Pipes {
    fn buf(&self, stream: OutputStream, n: usize) -> &[u8] {
        match stream {
            OutputStream::Stdout => &self.out_buf[..n],
            OutputStream::Stderr => &self.err_buf[..n],
        }
    }

    fn close(&mut self, stream: OutputStream) {
        match stream {
            OutputStream::Stdout => self.stdout = None,
            OutputStream::Stderr => self.stderr = None,
        }
    }

    fn close_all(&mut self) {
        self.stdout = None;
        self.stderr = None;
    }

    fn open(&self) -> bool {
        self.stdout.is_some() || self.stderr.is_some()
    }
}

/// A read that filled the whole buffer suggests more is queued: read more at a time. Growing
/// keeps the bytes just read.
fn grow_if_full(buf: &mut Vec<u8>, n: usize) {
    if n == buf.len() && buf.len() < READ_CHUNK {
        buf.resize((buf.len() * 8).min(READ_CHUNK), 0);
    }
}

/// Wait for whichever comes first. Pipe reads are cancel-safe, so losing a race loses nothing.
async fn next_step(
    pipes: &mut Pipes,
    exit: &mut ExitWatch,
    pid: u32,
    exited: bool,
    deadline: &mut std::pin::Pin<&mut tokio::time::Sleep>,
    cancel: &CancellationToken,
) -> Step {
    let Pipes {
        stdout,
        stderr,
        out_buf,
        err_buf,
        stdout_bytes,
        stderr_bytes,
    } = pipes;
    let pipes_closed = stdout.is_none() && stderr.is_none();
    tokio::select! {
        r = async { stdout.as_mut()?.read(out_buf).await.ok() }, if stdout.is_some() => match r {
            Some(0) | None => Step::Eof(OutputStream::Stdout),
            Some(n) => { *stdout_bytes += n as u64; grow_if_full(out_buf, n); Step::Data(OutputStream::Stdout, n) }
        },
        r = async { stderr.as_mut()?.read(err_buf).await.ok() }, if stderr.is_some() => match r {
            Some(0) | None => Step::Eof(OutputStream::Stderr),
            Some(n) => { *stderr_bytes += n as u64; grow_if_full(err_buf, n); Step::Data(OutputStream::Stderr, n) }
        },
        r = exit.wait(pid, pipes_closed), if !exited => Step::Exit(r),
        () = deadline.as_mut() => Step::Deadline,
        () = cancel.cancelled() => Step::Cancelled,
    }
}
