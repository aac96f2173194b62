//! `sciontool_status` (seed 003, "Planning"): signal a sticky lifecycle event (ask_user,
//! blocked, task_completed, limits_exceeded) to the Scion hub the process runs under, through
//! the hub's own `sciontool` binary.
//!
//! Registered only when that binary is found (see [`discover`]): outside a Scion container the
//! tool is absent rather than a subprocess that does nothing.
//!
//! What is assumed of `sciontool`, since its interface is the hub's: it takes the event as
//! `sciontool status <status_type> <message>` (the program and its leading arguments are the
//! operator's `[tools.sciontool_status] command`, user config only), exits 0 once the hub has
//! the event, and prints at most a short line. It runs without a shell (the message is one
//! argument, never interpreted), with tackle's environment (it is the operator's binary and
//! needs the hub's credentials), stdin closed, and a 30 s limit; a non-zero exit or the limit
//! is the call's error with what it printed.
//!
//! Key decision: the binary is looked up only in absolute `PATH` entries outside the project,
//! so a repository cannot plant a `sciontool` the tool would run.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tackle_tool::protocol::{Concurrency, ErrorCode};
use tackle_tool::{
    ExecuteContext, PrepareContext, Prepared, Routing, Tool, ToolCompletion, ToolError,
};

/// The binary's name, and the default command line before the event's two arguments.
pub const BINARY: &str = "sciontool";
pub const DEFAULT_ARGS: &[&str] = &["status"];

/// How long the binary may take.
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// The longest message, in bytes (an event line, not a report).
pub const MAX_MESSAGE_BYTES: usize = 4096;

/// What the binary printed that the result keeps, in bytes.
const KEPT_OUTPUT: usize = 2048;

pub const STATUS_FAILED: ErrorCode = ErrorCode::new("status_failed");

#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum StatusType {
    /// You need the user to answer something before you can go on.
    AskUser,
    /// Something outside your reach stops the work.
    Blocked,
    /// The task is done.
    TaskCompleted,
    /// A limit (time, budget, turns) is reached.
    LimitsExceeded,
}

impl StatusType {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::AskUser => "ask_user",
            Self::Blocked => "blocked",
            Self::TaskCompleted => "task_completed",
            Self::LimitsExceeded => "limits_exceeded",
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SciontoolStatusArgs {
    /// ask_user, blocked, task_completed or limits_exceeded.
    pub status_type: StatusType,
    /// One or two sentences for the person watching the hub.
    pub message: String,
}

/// The command a call runs: the resolved program and the arguments before the event's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SciontoolCommand {
    pub program: PathBuf,
    pub args: Vec<String>,
}

/// Finds `program` (a bare name is looked up in `path`'s absolute entries; a path is taken as
/// it is) and returns the command, or `None` when it is not there. Anything under `root` is
/// refused: the project must not supply the binary.
pub fn discover(
    program: &str,
    args: Vec<String>,
    path: Option<&std::ffi::OsStr>,
    root: &Path,
) -> Option<SciontoolCommand> {
    let candidates: Vec<PathBuf> = if program.contains('/') {
        vec![PathBuf::from(program)]
    } else {
        std::env::split_paths(path?)
            .filter(|dir| dir.is_absolute())
            .map(|dir| dir.join(program))
            .collect()
    };
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    candidates.into_iter().find_map(|c| {
        let real = c.canonicalize().ok()?;
        (is_executable(&real) && !real.starts_with(&root)).then_some(SciontoolCommand {
            program: real,
            args: args.clone(),
        })
    })
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

pub struct SciontoolStatus {
    command: SciontoolCommand,
}

impl SciontoolStatus {
    pub fn new(command: SciontoolCommand) -> Self {
        Self { command }
    }
}

/// Up to [`KEPT_OUTPUT`] bytes of `bytes`, lossily, trimmed.
fn kept(bytes: &[u8]) -> String {
    let cut = &bytes[..bytes.len().min(KEPT_OUTPUT)];
    String::from_utf8_lossy(cut).trim().to_owned()
}

impl Tool for SciontoolStatus {
    type Args = SciontoolStatusArgs;
    type Plan = SciontoolStatusArgs;

    fn name(&self) -> &str {
        "sciontool_status"
    }

    fn description(&self) -> Cow<'static, str> {
        Cow::Borrowed(
            "Tell the Scion hub this agent runs under about a lifecycle event that should stay \
             visible until it changes: ask_user (you need an answer from a person), blocked \
             (something outside your reach stops you), task_completed (the task is done), \
             limits_exceeded (a time, budget or turn limit is reached). Call it once when the \
             state changes, with a short message a person can act on; it does not end your turn.",
        )
    }

    fn concurrency(&self) -> Concurrency {
        Concurrency::Exclusive
    }

    fn read_only(&self) -> bool {
        // It changes nothing in the project; the hub's state is the point.
        true
    }

    fn prepare(
        &self,
        args: SciontoolStatusArgs,
        _: &PrepareContext<'_>,
    ) -> Result<Prepared<SciontoolStatusArgs>, ToolError> {
        let message = args.message.trim();
        if message.is_empty() {
            return Err(ToolError::new(
                ErrorCode::INVALID_ARGUMENTS,
                "sciontool_status: `message` is empty; say what the person watching should know",
            ));
        }
        if message.len() > MAX_MESSAGE_BYTES {
            return Err(ToolError::new(
                ErrorCode::INVALID_ARGUMENTS,
                format!(
                    "sciontool_status: `message` is {} bytes; keep it under {MAX_MESSAGE_BYTES}",
                    message.len()
                ),
            ));
        }
        Ok(Prepared::new(
            Routing {
                resources: Vec::new(),
            },
            SciontoolStatusArgs {
                status_type: args.status_type,
                message: message.to_owned(),
            },
        ))
    }

    async fn execute(
        &self,
        args: SciontoolStatusArgs,
        cx: ExecuteContext,
    ) -> Result<ToolCompletion, ToolError> {
        let kind = args.status_type.as_str();
        let mut cmd = tokio::process::Command::new(&self.command.program);
        cmd.args(&self.command.args)
            .arg(kind)
            .arg(&args.message)
            .current_dir(&*cx.root)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let shown = self.command.program.display().to_string();
        let child = cmd.output();
        let output = tokio::select! {
            out = tokio::time::timeout(TIMEOUT, child) => match out {
                Ok(Ok(output)) => output,
                Ok(Err(e)) => return Err(ToolError::new(
                    STATUS_FAILED,
                    format!("sciontool_status: could not run {shown}: {e}"),
                )),
                Err(_) => return Err(ToolError::new(
                    ErrorCode::TIMEOUT,
                    format!("sciontool_status: {shown} did not finish within {} s", TIMEOUT.as_secs()),
                )),
            },
            () = cx.cancel.cancelled() => {
                return Err(ToolError::new(ErrorCode::CANCELLED, "sciontool_status: cancelled"));
            }
        };
        let stdout = kept(&output.stdout);
        let stderr = kept(&output.stderr);
        if !output.status.success() {
            let said = if stderr.is_empty() { &stdout } else { &stderr };
            return Err(ToolError::new(
                STATUS_FAILED,
                format!(
                    "sciontool_status: {shown} exited with {}: {said}",
                    output.status
                ),
            )
            .with_metadata(json!({"status_type": kind})));
        }
        let mut text = format!("sciontool_status: the hub has the {kind} event.");
        if !stdout.is_empty() {
            text.push_str(&format!("\nsciontool said: {stdout}"));
        }
        Ok(ToolCompletion::single(text).with_metadata(json!({"status_type": kind})))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn executable(path: &Path) {
        std::fs::write(path, "#!/bin/sh\nexit 0\n").unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn found_on_absolute_path_entries_outside_the_project_only() {
        let tmp = tempfile::tempdir().unwrap();
        let bin = tmp.path().join("bin");
        let root = tmp.path().join("proj");
        let planted = root.join("tools");
        for d in [&bin, &planted] {
            std::fs::create_dir_all(d).unwrap();
        }
        executable(&planted.join(BINARY));
        let path = std::env::join_paths([&planted]).unwrap();
        assert_eq!(
            discover(BINARY, vec![], Some(&path), &root),
            None,
            "planted"
        );
        let relative = std::env::join_paths([Path::new("proj/tools")]).unwrap();
        assert_eq!(discover(BINARY, vec![], Some(&relative), &root), None);
        assert_eq!(discover(BINARY, vec![], None, &root), None);

        executable(&bin.join(BINARY));
        let path = std::env::join_paths([&planted, &bin]).unwrap();
        let found = discover(BINARY, vec!["status".into()], Some(&path), &root).unwrap();
        assert_eq!(found.program, bin.join(BINARY).canonicalize().unwrap());
        assert_eq!(found.args, ["status"]);

        std::fs::write(bin.join("plain"), "x").unwrap();
        let path = std::env::join_paths([&bin]).unwrap();
        assert_eq!(
            discover("plain", vec![], Some(&path), &root),
            None,
            "not executable"
        );
    }
}
