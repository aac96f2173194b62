//! A pipeline of programs run without a shell: each stage's stdout feeds the next stage's stdin.
//!
//! There is no command line to parse: every stage is a program (already resolved to an absolute
//! path, see [`find_on_path`]) and its arguments, handed to `execve` as they are. A `;`, `|`,
//! `&&` or `$(...)` inside an argument is part of that argument.
//!
//! Every stage runs in one process group, led by the first stage; the later stages join it. So
//! the pipeline ends as a `run` does: on timeout or cancellation the whole group gets SIGTERM,
//! then SIGKILL after the grace, and descendants that left it with `setsid` are found by the
//! run's marker (`marker.rs`), which every stage carries. The stages are connected by OS pipes of
//! which the parent keeps no copy, so a stage sees end-of-file as soon as the one before it ends.
//! The first stage reads the caller's bytes, written by a task that closes the pipe after them,
//! or `/dev/null`: a stage is never handed the terminal. The last stage's stdout and every
//! stage's stderr (one pipe shared by all stages, so lines keep their arrival order) are read
//! concurrently and captured up to a limit; bytes past it are counted.
//!
//! The first stage's exit is observed without reaping it (as in `run`), so the group id cannot
//! be reused while the group is signalled; the later stages are reaped once the group has been
//! ended, or by a thread if the caller drops the future mid-run.

use std::convert::Infallible;
use std::ffi::OsString;
use std::io::PipeReader;
use std::path::PathBuf;
use std::pin::Pin;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::unix::pipe::{Receiver, Sender};
use tokio_util::sync::CancellationToken;

use crate::env::EnvPolicy;
use crate::error::ProcessError;
use crate::group::ExitWatch;
use crate::pipeline_stages::{Stages, spawn_stages};
use crate::run::{Ended, ExitStatus, OutputStream};

pub use crate::pipeline_stages::find_on_path;

/// Each read from an output pipe takes at most this much.
const READ_CHUNK: usize = 64 * 1024;

/// One program of a pipeline.
#[derive(Clone, Debug)]
pub struct Stage {
    /// An absolute path (see [`find_on_path`]); a relative one is refused.
    pub program: PathBuf,
    pub args: Vec<OsString>,
}

/// What to run: the stages in order, where, and within which limits.
#[derive(Debug)]
pub struct PipelineSpec {
    /// At least one.
    pub stages: Vec<Stage>,
    /// The working directory of every stage.
    pub cwd: PathBuf,
    pub env: EnvPolicy,
    /// Wall-clock limit from the start; exceeded → [`Ended::TimedOut`].
    pub timeout: Duration,
    /// Between SIGTERM and SIGKILL when the group is ended.
    pub grace: Duration,
    /// The first stage's input, followed by end-of-file; `None`: `/dev/null`.
    pub stdin: Option<Vec<u8>>,
    /// The most bytes kept of each captured stream; the rest are counted.
    pub capture_limit: usize,
}

/// The bytes kept of one output stream.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Captured {
    /// The first bytes, at most the capture limit.
    pub bytes: Vec<u8>,
    /// Every byte the stream carried, kept or not.
    pub total: u64,
    /// Some bytes were not kept (`total > bytes.len()`).
    pub truncated: bool,
}

/// How a pipeline ended.
#[derive(Debug)]
pub struct PipelineOutcome {
    /// Exited (every stage ended by itself), timed out or cancelled.
    pub ended: Ended<Infallible>,
    /// One per stage, in order.
    pub statuses: Vec<ExitStatus>,
    /// One per stage, in order; the first is the process group's id.
    pub pids: Vec<u32>,
    /// The last stage's stdout.
    pub stdout: Captured,
    /// Every stage's stderr, in the order it arrived.
    pub stderr: Captured,
    pub duration: Duration,
}

/// Run the pipeline to its end and report every stage's status and the captured output.
///
/// An empty pipeline, a relative program and a program that cannot be started are errors (the
/// stages already started are ended first); a stage that runs and fails is a status.
pub async fn run_pipeline(
    spec: PipelineSpec,
    cancel: CancellationToken,
) -> Result<PipelineOutcome, ProcessError> {
    if spec.stages.is_empty() {
        return Err(ProcessError::EmptyPipeline);
    }
    if let Some(stage) = spec.stages.iter().find(|s| !s.program.is_absolute()) {
        return Err(ProcessError::RelativeProgram {
            program: stage.program.display().to_string(),
        });
    }
    let env = spec.env.filter(std::env::vars_os());
    let started = Instant::now();
    let (mut stages, ends) = match spawn_stages(&spec, env) {
        Ok(spawned) => spawned,
        Err(failed) => {
            if let Some(mut stages) = failed.started {
                // Nothing of theirs is read: end them and report why the pipeline never ran
                // (a failure to watch them ending is not news beside that; dropping them
                // still reaps them).
                let mut streams = Streams::closed(spec.capture_limit);
                let exits = wait_all(stages.pids.clone());
                tokio::pin!(exits);
                let _ = settle(&mut stages, &mut streams, exits, None, spec.grace).await;
            }
            return Err(failed.error);
        }
    };
    // An error from here on drops `stages`, which ends and reaps them.
    let mut streams = Streams::reading(ends.stdout, ends.stderr, spec.capture_limit, &stages)?;
    let first = stages.names[0].clone();
    let feeder = match (ends.stdin, spec.stdin) {
        (Some(pipe), Some(bytes)) => {
            let mut pipe =
                Sender::from_owned_fd(pipe.into()).map_err(|source| ProcessError::Write {
                    program: first.clone(),
                    source,
                })?;
            Some(tokio::spawn(async move {
                // A stage that stops reading (`head -c1`) is not a failure; dropping the pipe
                // is the end-of-file.
                let _ = pipe.write_all(&bytes).await;
            }))
        }
        _ => None,
    };
    let exits = wait_all(stages.pids.clone());
    tokio::pin!(exits);

    // Run: until every stage has exited, the deadline passes, or cancellation.
    let deadline = tokio::time::sleep(spec.timeout.saturating_sub(started.elapsed()));
    tokio::pin!(deadline);
    let mut statuses = None;
    let mut ended = None;
    while ended.is_none() && statuses.is_none() {
        match next_step(
            &mut streams,
            exits.as_mut(),
            false,
            deadline.as_mut(),
            &cancel,
        )
        .await
        {
            Step::Read => {}
            Step::Eof(stream) => streams.close(stream),
            Step::Exited(r) => statuses = Some(r.map_err(|e| stages.wait_err(e))?),
            Step::Deadline => ended = Some(Ended::TimedOut),
            Step::Cancelled => ended = Some(Ended::Cancelled),
        }
    }
    let statuses = settle(&mut stages, &mut streams, exits, statuses, spec.grace).await?;
    if let Some(feeder) = feeder {
        feeder.abort();
    }
    Ok(PipelineOutcome {
        ended: ended.unwrap_or(Ended::Exited),
        statuses,
        pids: stages.pids.clone(),
        stdout: streams.out.finish(),
        stderr: streams.err.finish(),
        duration: started.elapsed(),
    })
}

/// End the group as `run` does (SIGTERM; drain until every writer is gone or the grace passes;
/// SIGKILL; drain for another grace), then collect every stage's status and reap them all.
async fn settle<F>(
    stages: &mut Stages,
    streams: &mut Streams,
    mut exits: Pin<&mut F>,
    mut statuses: Option<Vec<ExitStatus>>,
    grace: Duration,
) -> Result<Vec<ExitStatus>, ProcessError>
where
    F: Future<Output = Result<Vec<ExitStatus>, StageWaitError>>,
{
    let never = CancellationToken::new();
    for signal in [libc::SIGTERM, libc::SIGKILL] {
        stages.group.signal(signal);
        let limit = tokio::time::sleep(grace);
        tokio::pin!(limit);
        while streams.open() || statuses.is_none() {
            let exited = statuses.is_some();
            match next_step(streams, exits.as_mut(), exited, limit.as_mut(), &never).await {
                Step::Read => {}
                Step::Eof(stream) => streams.close(stream),
                Step::Exited(r) => statuses = Some(r.map_err(|e| stages.wait_err(e))?),
                Step::Deadline | Step::Cancelled => break,
            }
        }
    }
    // A process that left the group may still hold a pipe: stop reading. Every stage has had
    // SIGKILL, so any exit still owed is a moment away.
    streams.close_all();
    let statuses = match statuses {
        Some(statuses) => statuses,
        None => exits.await.map_err(|e| stages.wait_err(e))?,
    };
    stages.reap(grace).await;
    Ok(statuses)
}

/// A stage whose exit could not be observed: its index and why.
pub(crate) type StageWaitError = (usize, std::io::Error);

/// Every stage's exit status, in order, once all have exited (none is reaped).
async fn wait_all(pids: Vec<u32>) -> Result<Vec<ExitStatus>, StageWaitError> {
    let mut statuses = Vec::with_capacity(pids.len());
    for (i, pid) in pids.into_iter().enumerate() {
        let status = ExitWatch::new(pid).wait(pid, false).await;
        statuses.push(status.map_err(|e| (i, e))?);
    }
    Ok(statuses)
}

/// A captured stream: the first `limit` bytes and the count of all.
struct Capture {
    limit: usize,
    bytes: Vec<u8>,
    total: u64,
}

impl Capture {
    fn new(limit: usize) -> Self {
        Self {
            limit,
            bytes: Vec::new(),
            total: 0,
        }
    }

    fn push(&mut self, chunk: &[u8]) {
        self.total += chunk.len() as u64;
        let room = self.limit.saturating_sub(self.bytes.len());
        self.bytes
            .extend_from_slice(&chunk[..room.min(chunk.len())]);
    }

    fn finish(self) -> Captured {
        Captured {
            truncated: self.total > self.bytes.len() as u64,
            bytes: self.bytes,
            total: self.total,
        }
    }
}

/// The two pipes the parent reads, while they are open, and what they carried.
struct Streams {
    stdout: Option<Receiver>,
    stderr: Option<Receiver>,
    out: Capture,
    err: Capture,
    out_buf: Vec<u8>,
    err_buf: Vec<u8>,
}

impl Streams {
    fn closed(limit: usize) -> Self {
        Self {
            stdout: None,
            stderr: None,
            out: Capture::new(limit),
            err: Capture::new(limit),
            out_buf: Vec::new(),
            err_buf: Vec::new(),
        }
    }

    fn reading(
        stdout: PipeReader,
        stderr: PipeReader,
        limit: usize,
        stages: &Stages,
    ) -> Result<Self, ProcessError> {
        let read_err = |i: usize| {
            let program = stages.names[i].clone();
            move |source| ProcessError::Read { program, source }
        };
        let last = stages.names.len() - 1;
        let stdout = Receiver::from_owned_fd(stdout.into()).map_err(read_err(last))?;
        let stderr = Receiver::from_owned_fd(stderr.into()).map_err(read_err(0))?;
        Ok(Self {
            stdout: Some(stdout),
            stderr: Some(stderr),
            out_buf: vec![0; READ_CHUNK],
            err_buf: vec![0; READ_CHUNK],
            ..Self::closed(limit)
        })
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

enum Step {
    /// Bytes were read and captured.
    Read,
    Eof(OutputStream),
    Exited(Result<Vec<ExitStatus>, StageWaitError>),
    Deadline,
    Cancelled,
}

/// Wait for whichever comes first. Pipe reads are cancel-safe and the exits future is kept
/// across calls, so losing a race loses nothing.
async fn next_step<F>(
    streams: &mut Streams,
    exits: Pin<&mut F>,
    exited: bool,
    deadline: Pin<&mut tokio::time::Sleep>,
    cancel: &CancellationToken,
) -> Step
where
    F: Future<Output = Result<Vec<ExitStatus>, StageWaitError>>,
{
    let Streams {
        stdout,
        stderr,
        out,
        err,
        out_buf,
        err_buf,
    } = streams;
    tokio::select! {
        r = async { stdout.as_mut()?.read(out_buf).await.ok() }, if stdout.is_some() => match r {
            Some(0) | None => Step::Eof(OutputStream::Stdout),
            Some(n) => { out.push(&out_buf[..n]); Step::Read }
        },
        r = async { stderr.as_mut()?.read(err_buf).await.ok() }, if stderr.is_some() => match r {
            Some(0) | None => Step::Eof(OutputStream::Stderr),
            Some(n) => { err.push(&err_buf[..n]); Step::Read }
        },
        r = exits, if !exited => Step::Exited(r),
        () = deadline => Step::Deadline,
        () = cancel.cancelled() => Step::Cancelled,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn stage(program: &str) -> Stage {
        Stage {
            program: PathBuf::from(program),
            args: Vec::new(),
        }
    }

    #[tokio::test]
    async fn each_stage_status_in_order() {
        let dir = std::env::temp_dir();
        let spec = |stages| PipelineSpec {
            stages,
            cwd: dir.clone(),
            env: EnvPolicy::default(),
            timeout: Duration::from_secs(30),
            grace: Duration::from_millis(200),
            stdin: None,
            capture_limit: 0,
        };
        for (stages, codes) in [
            (vec!["/usr/bin/false", "/usr/bin/true"], vec![1, 0]),
            (vec!["/usr/bin/true", "/usr/bin/false"], vec![0, 1]),
            (
                vec!["/usr/bin/true", "/usr/bin/false", "/usr/bin/false"],
                vec![0, 1, 1],
            ),
        ] {
            let stages = stages.into_iter().map(stage).collect();
            let out = run_pipeline(spec(stages), CancellationToken::new())
                .await
                .unwrap();
            assert_eq!(out.ended, Ended::Exited);
            let got: Vec<_> = out.statuses.iter().map(|s| s.code).collect();
            let want: Vec<_> = codes.into_iter().map(Some).collect();
            assert_eq!(got, want);
        }
    }

    #[test]
    fn capture_keeps_the_first_bytes_and_counts_all() {
        let mut c = Capture::new(5);
        c.push(b"abc");
        c.push(b"defg");
        c.push(b"h");
        assert_eq!(
            c.finish(),
            Captured {
                bytes: b"abcde".to_vec(),
                total: 8,
                truncated: true,
            }
        );
        let mut c = Capture::new(5);
        c.push(b"abcde");
        assert!(!c.finish().truncated);
    }
}
