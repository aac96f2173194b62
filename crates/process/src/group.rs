//! A spawned child that leads its own process group: observing its exit without reaping it,
//! signalling the whole group, and reaping once the group has been ended.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::time::Duration;

use tokio::io::Interest;
use tokio::io::unix::AsyncFd;

use crate::marker::{Marked, RunMarker, pidfd_open};
use crate::run::ExitStatus;

/// The leader of a process group we spawned, and the marker its descendants carry. Until
/// [`Group::reap`] runs, the leader is not reaped, so its pid — the group id — cannot be reused
/// by an unrelated process.
#[derive(Debug)]
pub(crate) struct Group {
    pid: libc::pid_t,
    reaped: bool,
    /// Used when the group is dropped unreaped (the caller's future was dropped mid-run).
    grace: Duration,
    marker: RunMarker,
    /// Marked processes outside the group that were signalled, to wait for their end. One
    /// dying of SIGTERM no longer shows its environment once its memory is gone, so the scan
    /// before SIGKILL would miss it: it is waited for from the first signal on.
    signalled: Vec<Marked>,
}

impl Group {
    pub(crate) fn new(pid: u32, grace: Duration, mut marker: RunMarker) -> Self {
        // Linux pids fit in pid_t (at most 2^22); the cast cannot truncate.
        let pid = pid as libc::pid_t;
        marker.set_leader(pid);
        Self {
            pid,
            reaped: false,
            grace,
            marker,
            signalled: Vec::new(),
        }
    }

    pub(crate) fn pid(&self) -> u32 {
        self.pid as u32
    }

    /// A pre-started leader is handed its work now (see [`RunMarker::starts_now`]).
    pub(crate) fn starts_now(&mut self) {
        self.marker.starts_now();
    }

    /// Send `signal` to every member of the group and to every process outside it that carries
    /// the run's marker (it left the group with `setsid`). A group with no live member is not an
    /// error.
    pub(crate) fn signal(&mut self, signal: libc::c_int) {
        signal_group(self.pid, signal);
        let marked = self.marker.signal(signal);
        self.signalled.extend(marked);
    }

    /// After SIGKILL: wait (bounded by `limit`) until no member of the group and no marked
    /// process that was signalled is still running. `kill` returns before its target has died;
    /// without this a caller could see a process alive for a moment after the call "ended" it.
    /// Zombies count as gone: they run nothing.
    pub(crate) async fn wait_until_stopped(&mut self, limit: Duration) {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            // Fast path: once the leader is reaped, a group with no member at all is gone
            // (ESRCH).
            // SAFETY: kill with signal 0 only checks for existence; a negative pid names the
            // group.
            let group_gone = (self.reaped && unsafe { libc::kill(-self.pid, 0) } == -1)
                || !live_member(self.pid);
            self.signalled.retain(|m| !m.ended());
            if group_gone && self.signalled.is_empty() {
                // A marked process may have forked while it was being killed.
                let late = self.marker.signal(libc::SIGKILL);
                if late.is_empty() {
                    return;
                }
                self.signalled.extend(late);
            }
            if tokio::time::Instant::now() >= deadline {
                return;
            }
            tokio::task::yield_now().await;
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }

    /// End a group that never ran anything for a caller (a pre-started shell nobody used):
    /// SIGKILL at once, no grace, and reap the leader on a thread of its own, so the caller
    /// never blocks on the leader's death.
    pub(crate) fn discard(mut self) {
        signal_group(self.pid, libc::SIGKILL);
        let pid = self.pid;
        self.reaped = true;
        let reap = move || {
            let mut status = 0;
            // SAFETY: waitpid on our own child with a valid out-pointer.
            unsafe { libc::waitpid(pid, &mut status, 0) };
        };
        if std::thread::Builder::new()
            .name("tackle-process-reaper".into())
            .spawn(reap)
            .is_err()
        {
            reap();
        }
    }

    /// Reap the leader, which must already have exited (see [`ExitWatch`]).
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
    /// and the marked processes from a detached thread — SIGTERM, the grace, SIGKILL — and reap
    /// the leader, so neither processes nor a zombie outlive the call.
    fn drop(&mut self) {
        if self.reaped {
            return;
        }
        let (pid, grace, marker) = (self.pid, self.grace, self.marker.clone());
        signal_group(pid, libc::SIGTERM);
        marker.signal(libc::SIGTERM);
        let end = move |wait: bool| {
            if wait {
                std::thread::sleep(grace);
            }
            signal_group(pid, libc::SIGKILL);
            marker.signal(libc::SIGKILL);
            let mut status = 0;
            // SAFETY: waitpid on our own child with a valid out-pointer.
            unsafe { libc::waitpid(pid, &mut status, 0) };
        };
        let detached = end.clone();
        if std::thread::Builder::new()
            .name("tackle-process-reaper".into())
            .spawn(move || detached(true))
            .is_err()
        {
            // No thread to wait out the grace: end the group at once rather than leave it.
            end(false);
        }
    }
}

/// Observes the leader's exit without reaping it: through a pidfd registered with the tokio
/// reactor (no thread per run), or, on kernels without pidfds, a blocking `waitid` on the
/// blocking pool.
#[derive(Debug)]
pub(crate) enum ExitWatch {
    Pidfd(AsyncFd<OwnedFd>),
    Thread(tokio::task::JoinHandle<io::Result<ExitStatus>>),
}

impl ExitWatch {
    /// Watch our unreaped child `pid` (its pid cannot be reused, so the pidfd names it).
    pub(crate) fn new(pid: u32) -> Self {
        let registered = pidfd_open(pid as libc::pid_t).and_then(|fd| {
            // SAFETY: an `OwnedFd` is a valid open descriptor that stays open, unchanged, until
            // the `AsyncFd` that owns it is dropped.
            unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) }
                .map_err(io::Error::from)
        });
        match registered {
            Ok(fd) => Self::Pidfd(fd),
            Err(_) => Self::Thread(tokio::task::spawn_blocking(move || {
                loop {
                    match waitid(libc::P_PID, pid, 0)? {
                        Some(status) => return Ok(status),
                        // Without WNOHANG waitid only returns once the child has exited.
                        None => continue,
                    }
                }
            })),
        }
    }

    /// The leader's exit status, once it has exited. Cancel-safe. `eager`: check before waiting
    /// for the reactor (the output pipes have closed, so the exit is probably a moment away and
    /// one more trip through the reactor would cost more than a `waitid`).
    pub(crate) async fn wait(&mut self, pid: u32, eager: bool) -> io::Result<ExitStatus> {
        if eager
            && let Self::Pidfd(_) = self
            && let Ok(Some(status)) = waitid(libc::P_PID, pid, libc::WNOHANG)
        {
            return Ok(status);
        }
        match self {
            Self::Pidfd(fd) => loop {
                let mut ready = fd.readable().await?;
                let id = fd.get_ref().as_raw_fd() as libc::id_t;
                let status = match waitid(libc::P_PIDFD, id, libc::WNOHANG) {
                    // P_PIDFD needs Linux 5.4; the pid itself is as good while unreaped.
                    Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                        waitid(libc::P_PID, pid, libc::WNOHANG)?
                    }
                    other => other?,
                };
                match status {
                    Some(status) => return Ok(status),
                    None => ready.clear_ready(),
                }
            },
            Self::Thread(handle) => match handle.await {
                Ok(status) => status,
                Err(join) => Err(io::Error::other(join.to_string())),
            },
        }
    }
}

/// `waitid(WEXITED | WNOWAIT | extra)`: the exit of a child without reaping it; `None` when
/// `WNOHANG` is given and it has not exited yet.
pub(crate) fn waitid(
    idtype: libc::idtype_t,
    id: impl TryInto<libc::id_t>,
    extra: libc::c_int,
) -> io::Result<Option<ExitStatus>> {
    let id = id
        .try_into()
        .map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
    loop {
        // SAFETY: zeroed siginfo_t is a valid out-parameter for waitid.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: a valid id type and id of our own child, and a valid out-pointer.
        let rc =
            unsafe { libc::waitid(idtype, id, &mut info, libc::WEXITED | libc::WNOWAIT | extra) };
        if rc == 0 {
            // SAFETY: waitid succeeded; si_pid is 0 when WNOHANG found nothing to report.
            if unsafe { info.si_pid() } == 0 {
                return Ok(None);
            }
            // SAFETY: waitid reported an exit with WEXITED, so si_status is initialised.
            let status = unsafe { info.si_status() };
            return Ok(Some(match info.si_code {
                libc::CLD_EXITED => ExitStatus {
                    code: Some(status),
                    signal: None,
                },
                _ => ExitStatus {
                    code: None,
                    signal: Some(status),
                },
            }));
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
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

pub(crate) fn signal_group(pid: libc::pid_t, signal: libc::c_int) {
    // SAFETY: kill has no memory-safety preconditions; a negative pid addresses the group.
    unsafe { libc::kill(-pid, signal) };
}
