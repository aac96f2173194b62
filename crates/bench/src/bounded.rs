//! A child process run to completion within a wall-clock bound, in a process group of its own,
//! with its output in a file.
//!
//! The group is what a bound has to end: an agent's shell commands and the servers they start
//! are its descendants, and killing only the agent would leave them holding the project (and
//! the CPU the next run measures). So the child leads a new group, the group is killed with
//! `SIGKILL` when the bound passes, and killed again once the child has exited, for whatever it
//! left running. The wait is a thread blocked in `wait` and a channel received with the bound
//! as its timeout, so the run ends the moment the child does. The child is also killed when
//! the thread that started it ends (`PR_SET_PDEATHSIG`), so a benchmark stopped with Ctrl-C,
//! which the child's own group does not receive, does not leave it running.
//!
//! Output goes to a file rather than a pipe: a descendant that outlives the child would keep a
//! pipe open and a reader waiting.

use std::fs::File;
use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How a bounded child ended.
#[derive(Clone, Copy, Debug)]
pub struct Ended {
    /// The child's exit status (after `SIGKILL` when the bound passed).
    pub status: ExitStatus,
    /// Whether the bound passed before the child exited.
    pub timed_out: bool,
    /// From spawn to exit.
    pub wall: Duration,
}

/// Runs `cmd` with stdin closed and stdout and stderr both appended to `log`, for at most
/// `bound`.
pub fn run_bounded(mut cmd: Command, bound: Duration, log: &Path) -> std::io::Result<Ended> {
    let out = File::options().create(true).append(true).open(log)?;
    let err = out.try_clone()?;
    let started = Instant::now();
    cmd.stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .process_group(0);
    // SAFETY: prctl is async-signal-safe and touches no memory of the parent's.
    unsafe {
        cmd.pre_exec(|| {
            // The child dies with the thread that started it; its descendants lose the
            // parent they talk to.
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn()?;
    let group = child.id() as libc::pid_t;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        // The receiver outlives this send: it waits for it after a kill too.
        let _ = tx.send(child.wait());
    });
    let (status, timed_out) = match rx.recv_timeout(bound) {
        Ok(status) => (status?, false),
        Err(_) => {
            kill_group(group);
            let status = rx.recv().map_err(|_| {
                std::io::Error::other("the waiting thread ended without a status")
            })??;
            (status, true)
        }
    };
    let wall = started.elapsed();
    kill_group(group);
    Ok(Ended {
        status,
        timed_out,
        wall,
    })
}

/// `SIGKILL` to every process of the group; a group already gone is not an error.
fn kill_group(group: libc::pid_t) {
    // SAFETY: kill has no memory-safety preconditions; a negative pid names the process group
    // this module created for the child (its pid), which no other process can lead while the
    // child is unreaped or its group has members.
    unsafe {
        libc::kill(-group, libc::SIGKILL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_within_its_bound_exits_with_its_own_status() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log");
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "echo out; echo err >&2; exit 3"]);
        let ended = run_bounded(cmd, Duration::from_secs(60), &log).unwrap();
        assert!(!ended.timed_out);
        assert_eq!(ended.status.code(), Some(3));
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "out\nerr\n");
    }

    #[test]
    fn a_child_past_its_bound_is_killed_with_its_group() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log");
        let marker = dir.path().join("grandchild-pid");
        // The grandchild writes its pid and waits on a FIFO no one opens, so it lives until
        // it is killed; the child waits for it.
        let fifo = dir.path().join("never");
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(r#"mkfifo "$1"; sh -c 'echo $$ > "$2"; exec cat "$1"' _ "$1" "$2" & wait"#)
            .arg("sh")
            .arg(&fifo)
            .arg(&marker);
        // The bound leaves the shell ample time to start the grandchild.
        let ended = run_bounded(cmd, Duration::from_secs(2), &log).unwrap();
        assert!(ended.timed_out);
        let pid: libc::pid_t = std::fs::read_to_string(&marker)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // SIGKILL is delivered asynchronously: wait for the grandchild's exit on a pidfd
        // (readable once the process has exited), bounded so a survivor fails the test.
        // SAFETY: pidfd_open takes a pid and flags, no pointers.
        let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) } as libc::c_int;
        if pidfd < 0 {
            // Already gone and reaped.
            assert_eq!(
                std::io::Error::last_os_error().raw_os_error(),
                Some(libc::ESRCH)
            );
            return;
        }
        let mut poll = libc::pollfd {
            fd: pidfd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one live pollfd, counted as one; the fd is ours and closed once.
        let ready = unsafe { libc::poll(&mut poll, 1, 10_000) };
        unsafe { libc::close(pidfd) };
        assert_eq!(ready, 1, "the grandchild {pid} outlived the bound");
    }
}
