//! Starting a pipeline's stages in one process group, wired by pipes, and reaping them; and
//! finding a program on `PATH` for a stage.

use std::ffi::{OsStr, OsString};
use std::io::{PipeReader, PipeWriter};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::error::ProcessError;
use crate::group::Group;
use crate::marker::{MARKER_VAR, RunMarker};
use crate::pipeline::{PipelineSpec, Stage, StageWaitError};
use crate::run::widen_pipe;

/// The started stages: the group, led by the first, and the later stages, which are children of
/// ours too and reaped here.
#[derive(Debug)]
pub(crate) struct Stages {
    pub(crate) group: Group,
    /// Each stage's program, for messages.
    pub(crate) names: Vec<String>,
    pub(crate) pids: Vec<u32>,
    /// Later stages not yet reaped (the group reaps the first).
    unreaped: Vec<libc::pid_t>,
}

/// The pipe ends the parent keeps: the write end of the first stage's stdin (when the caller
/// gave bytes), the read end of the last stage's stdout, and the read end of the stderr pipe
/// every stage shares.
#[derive(Debug)]
pub(crate) struct Ends {
    pub(crate) stdin: Option<PipeWriter>,
    pub(crate) stdout: PipeReader,
    pub(crate) stderr: PipeReader,
}

/// A stage could not be started; the stages started before it, to be ended.
#[derive(Debug)]
pub(crate) struct Failed {
    pub(crate) started: Option<Box<Stages>>,
    pub(crate) error: ProcessError,
}

/// Start every stage in order: the first leads a new process group, the later ones join it;
/// stage i's stdout is stage i+1's stdin. Every stage gets the filtered environment `env`, the
/// run's marker, and the write end of one shared stderr pipe. The parent keeps only [`Ends`].
pub(crate) fn spawn_stages(
    spec: &PipelineSpec,
    mut env: Vec<(OsString, OsString)>,
) -> Result<(Stages, Ends), Failed> {
    let marker = RunMarker::new();
    let inherited = env
        .iter()
        .position(|(k, _)| k == MARKER_VAR)
        .map(|i| env.swap_remove(i).1);
    env.push((MARKER_VAR.into(), marker.env_value(inherited.as_deref())));
    let failed = |started, stage: &Stage, source| Failed {
        started,
        error: ProcessError::Spawn {
            program: stage.program.display().to_string(),
            source,
        },
    };

    let (first, rest) = (&spec.stages[0], &spec.stages[1..]);
    let pipes = || -> std::io::Result<_> {
        let stderr = std::io::pipe()?;
        let stdin = spec.stdin.as_ref().map(|_| std::io::pipe()).transpose()?;
        Ok((stderr, stdin))
    };
    let ((err_read, err_write), stdin) = pipes().map_err(|e| failed(None, first, e))?;
    let (input, stdin) = match stdin {
        Some((read, write)) => (Stdio::from(read), Some(write)),
        None => (Stdio::null(), None),
    };
    let (pid, mut output) =
        spawn_stage(first, spec, &env, input, 0, &err_write).map_err(|e| failed(None, first, e))?;
    let mut stages = Stages {
        group: Group::new(pid, spec.grace, marker),
        names: vec![first.program.display().to_string()],
        pids: vec![pid],
        unreaped: Vec::new(),
    };
    for stage in rest {
        let pgid = stages.group.pid() as libc::pid_t;
        match spawn_stage(stage, spec, &env, Stdio::from(output), pgid, &err_write) {
            Ok((pid, next)) => {
                stages.names.push(stage.program.display().to_string());
                stages.pids.push(pid);
                // Linux pids fit in pid_t (at most 2^22).
                stages.unreaped.push(pid as libc::pid_t);
                output = next;
            }
            Err(source) => return Err(failed(Some(Box::new(stages)), stage, source)),
        }
    }
    // `err_write` is dropped on return: only the stages hold the stderr pipe now.
    let ends = Ends {
        stdin,
        stdout: output,
        stderr: err_read,
    };
    Ok((stages, ends))
}

/// Start `stage` reading `stdin`, in the group `pgid` (0: a new group it leads), writing its
/// stdout to a new pipe, whose read end is returned with its pid.
fn spawn_stage(
    stage: &Stage,
    spec: &PipelineSpec,
    env: &[(OsString, OsString)],
    stdin: Stdio,
    pgid: libc::pid_t,
    stderr: &PipeWriter,
) -> std::io::Result<(u32, PipeReader)> {
    let (read, write) = std::io::pipe()?;
    widen_pipe(&write);
    let mut command = Command::new(&stage.program);
    // No `pre_exec`: std spawns with posix_spawn, which sets the process group itself.
    command
        .args(&stage.args)
        .current_dir(&spec.cwd)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(stdin)
        .stdout(Stdio::from(write))
        .stderr(Stdio::from(stderr.try_clone()?))
        .process_group(pgid);
    let child = command.spawn();
    // The command holds the parent's copies of this stage's stdin and stdout; they close with
    // it, so each reader sees end-of-file once the stages writing to it have ended.
    drop(command);
    // The child is never waited on through std: the stages are reaped by pid.
    Ok((child?.id(), read))
}

impl Stages {
    /// Reap every stage, all of which have exited, then wait (bounded by `grace`) until nothing
    /// of the group or the marked processes is still running.
    pub(crate) async fn reap(&mut self, grace: Duration) {
        for pid in self.unreaped.drain(..) {
            let mut status = 0;
            // SAFETY: waitpid on our own child with a valid out-pointer.
            unsafe { libc::waitpid(pid, &mut status, 0) };
        }
        self.group.reap();
        self.group.wait_until_stopped(grace).await;
    }

    pub(crate) fn wait_err(&self, (i, source): StageWaitError) -> ProcessError {
        ProcessError::Wait {
            program: self.names.get(i).cloned().unwrap_or_default(),
            source,
        }
    }
}

impl Drop for Stages {
    /// The pipeline was abandoned mid-run: the group's own drop ends every stage; reap the later
    /// ones on a thread as they die, so no zombie outlives the call.
    fn drop(&mut self) {
        if self.unreaped.is_empty() {
            return;
        }
        let pids = std::mem::take(&mut self.unreaped);
        let reap = move || {
            for pid in pids {
                let mut status = 0;
                // SAFETY: waitpid on our own child with a valid out-pointer.
                unsafe { libc::waitpid(pid, &mut status, 0) };
            }
        };
        // Without a thread the zombies stay until tackle exits: better than blocking here.
        let _ = std::thread::Builder::new()
            .name("tackle-process-reaper".into())
            .spawn(reap);
    }
}

/// The program a bare `name` (no `/`) names on the search path `path_var` (a `PATH` value): the
/// first entry holding a regular file of that name with an execute bit, as an absolute path.
///
/// Empty entries, which a shell reads as the current directory, are skipped, and so are relative
/// ones: a stage's program never depends on a working directory. `None` for a name with a `/`
/// (it is a path, not a name to look up), an empty name, or no search path.
pub fn find_on_path(name: &OsStr, path_var: Option<&OsStr>) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    if name.is_empty() || name.as_bytes().contains(&b'/') {
        return None;
    }
    std::env::split_paths(path_var?)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .find(|candidate| {
            std::fs::metadata(candidate)
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}
