//! A spawned child that leads its own process group: observing its exit without reaping it,
//! signalling the whole group, and reaping once the group has been ended.

use std::io;
use std::time::Duration;

use crate::run::ExitStatus;

/// The leader of a process group we spawned. Until [`Group::reap`] runs, the leader is not
/// reaped, so its pid — the group id — cannot be reused by an unrelated process.
#[derive(Debug)]
pub(crate) struct Group {
    pid: libc::pid_t,
    reaped: bool,
    /// Used when the group is dropped unreaped (the caller's future was dropped mid-run).
    grace: Duration,
}

impl Group {
    pub(crate) fn new(pid: u32, grace: Duration) -> Self {
        Self {
            // Linux pids fit in pid_t (at most 2^22); the cast cannot truncate.
            pid: pid as libc::pid_t,
            reaped: false,
            grace,
        }
    }

    pub(crate) fn pid(&self) -> u32 {
        self.pid as u32
    }

    /// Send `signal` to every member of the group. A group with no live member is not an error.
    pub(crate) fn signal(&self, signal: libc::c_int) {
        signal_group(self.pid, signal);
    }

    /// After SIGKILL: wait (bounded by `limit`) until no member of the group is still running.
    /// `kill` returns before its target has died; without this a caller could see a member
    /// alive for a moment after the call "ended" it. Zombies count as gone: they run nothing.
    pub(crate) async fn wait_until_stopped(&self, limit: Duration) {
        // Fast path: once the leader is reaped, a group with no member at all is gone (ESRCH).
        // SAFETY: kill with signal 0 only checks for existence; a negative pid names the group.
        if self.reaped && unsafe { libc::kill(-self.pid, 0) } == -1 {
            return;
        }
        let deadline = tokio::time::Instant::now() + limit;
        while live_member(self.pid) && tokio::time::Instant::now() < deadline {
            tokio::task::yield_now().await;
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }

    /// Reap the leader, which must already have exited (see [`wait_exit_unreaped`]).
    pub(crate) fn reap(&mut self) {
        if !self.reaped {
            let mut status = 0;
            // SAFETY: waitpid on our own child with a valid out-pointer.
            unsafe { libc::waitpid(self.pid, &mut status, 0) };
            self.reaped = true;
        }
    }
}

impl Drop for Group {
    /// The future running the group was dropped (the runtime aborted the call): end the group
    /// from a detached thread — SIGTERM, the grace, SIGKILL — and reap the leader, so neither
    /// processes nor a zombie outlive the call.
    fn drop(&mut self) {
        if self.reaped {
            return;
        }
        let (pid, grace) = (self.pid, self.grace);
        signal_group(pid, libc::SIGTERM);
        let ended = move || {
            std::thread::sleep(grace);
            signal_group(pid, libc::SIGKILL);
            let mut status = 0;
            // SAFETY: waitpid on our own child with a valid out-pointer.
            unsafe { libc::waitpid(pid, &mut status, 0) };
        };
        if std::thread::Builder::new()
            .name("tackle-process-reaper".into())
            .spawn(ended)
            .is_err()
        {
            // No thread to wait out the grace: end the group at once rather than leave it.
            signal_group(pid, libc::SIGKILL);
            let mut status = 0;
            // SAFETY: as above.
            unsafe { libc::waitpid(pid, &mut status, 0) };
        }
    }
}

/// Whether any process of group `pgid` is alive and not a zombie (read from `/proc`).
fn live_member(pgid: libc::pid_t) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    entries.flatten().any(|e| {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
        else {
            return false;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            return false;
        };
        // Fields after the parenthesised command: state, ppid, pgrp, ...
        let Some((_, rest)) = stat.rsplit_once(')') else {
            return false;
        };
        let mut fields = rest.split_whitespace();
        let state = fields.next().unwrap_or("Z");
        let pgrp = fields.nth(1).and_then(|g| g.parse::<libc::pid_t>().ok());
        pgrp == Some(pgid) && state != "Z" && state != "X"
    })
}

fn signal_group(pid: libc::pid_t, signal: libc::c_int) {
    // SAFETY: kill has no memory-safety preconditions; a negative pid addresses the group.
    unsafe { libc::kill(-pid, signal) };
}

/// Block until the child `pid` has exited, without reaping it (`waitid(WNOWAIT)`).
pub(crate) fn wait_exit_unreaped(pid: u32) -> io::Result<ExitStatus> {
    loop {
        // SAFETY: zeroed siginfo_t is a valid out-parameter for waitid.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: P_PID with our own child's pid and a valid out-pointer.
        let rc = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if rc == 0 {
            // SAFETY: waitid succeeded with WEXITED, so si_status is initialised.
            let status = unsafe { info.si_status() };
            return Ok(match info.si_code {
                libc::CLD_EXITED => ExitStatus {
                    code: Some(status),
                    signal: None,
                },
                _ => ExitStatus {
                    code: None,
                    signal: Some(status),
                },
            });
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}
