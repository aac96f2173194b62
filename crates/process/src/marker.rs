//! Finding the descendants of a run that left its process group (`setsid`, a double fork into a
//! new session) by a marker in their environment, so they are ended with the group.
//!
//! Every program the runner spawns gets `TACKLE_RUN=<id>` in its environment, a random id unique
//! to the run (appended with `:` to an inherited value, so a tackle running under tackle keeps
//! both runs' ids). Descendants inherit it across `setsid`, `nohup`, double forks and `exec`.
//! Ending a run signals every live process of our own uid whose `/proc/<pid>/environ` carries the
//! id, through a pidfd opened *before* the environment is read, so a pid reused in between is
//! never signalled.
//!
//! The scan is cheap when nothing could have escaped: pids are allocated cyclically, so every
//! descendant of the run has a pid after the leader's. `/proc/sys/kernel/ns_last_pid` equal to
//! the leader's pid means no process at all was created since (the common `sh -c true` case)
//! and nothing is read; a short range is probed pid by pid; a long or wrapped range reads `/proc`.
//!
//! Limits (defence in depth, not a sandbox): a descendant that clears or rewrites its
//! environment (`env -i`, `execve` with a fresh environment) is not found, nor one of another uid
//! (a setuid program), nor one whose pid range was wrapped more than once during the run.
//! Containment that cannot be escaped needs a cgroup or a pid namespace.
//!
//! Rejected: `PR_SET_CHILD_SUBREAPER` on the tackle process. It would make orphans of *every*
//! child — MCP client servers spawned through `tokio::process` included — our children, and
//! they must then be reaped by someone without stealing `tokio::process`'s exit statuses; it
//! also only catches an escapee once its parent has died, and says nothing about which run it
//! came from.

use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::sync::atomic::{AtomicU64, Ordering};

/// The environment variable carrying run ids.
pub(crate) const MARKER_VAR: &str = "TACKLE_RUN";
/// How many times (1 ms apart) an empty environment is read again: a process in execve shows
/// none for a moment. A process really started with an empty environment costs this much.
const EXEC_RETRIES: usize = 20;
/// Ranges of new pids up to this long are probed pid by pid instead of listing `/proc`.
const PROBE_LIMIT: libc::pid_t = 256;

/// The marker of one run.
#[derive(Debug, Clone)]
pub(crate) struct RunMarker {
    id: String,
    /// The run's leader (never signalled through the marker: the group owns it).
    leader: libc::pid_t,
    /// Every descendant's pid comes after this one: the leader's, or the last pid allocated
    /// when a pre-started leader was handed its script (it ran nothing before).
    floor: libc::pid_t,
}

/// A marked process, with a pidfd when the kernel has them.
#[derive(Debug)]
pub(crate) struct Marked {
    pid: libc::pid_t,
    pidfd: Option<OwnedFd>,
}

impl RunMarker {
    /// A fresh id: 64 random bits, our pid and a counter, so two runs never share one.
    pub(crate) fn new() -> Self {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let mut random = [0u8; 8];
        // SAFETY: getrandom writes at most `len` bytes into the buffer we own.
        let got = unsafe { libc::getrandom(random.as_mut_ptr().cast(), random.len(), 0) };
        let random = if got == 8 {
            u64::from_ne_bytes(random)
        } else {
            // No getrandom: the clock still differs between tackle processes; the pid and the
            // counter keep ids unique within one.
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64)
        };
        let id = format!(
            "{random:016x}{:x}{:x}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        Self {
            id,
            leader: 0,
            floor: 0,
        }
    }

    /// The value of [`MARKER_VAR`] for the child: the inherited value, if any, then our id.
    pub(crate) fn env_value(&self, inherited: Option<&OsStr>) -> OsString {
        match inherited.filter(|v| !v.is_empty()) {
            Some(v) => {
                let mut out = v.to_owned();
                out.push(":");
                out.push(&self.id);
                out
            }
            None => OsString::from(&self.id),
        }
    }

    pub(crate) fn set_leader(&mut self, pid: libc::pid_t) {
        self.leader = pid;
        self.floor = pid;
    }

    /// The leader starts running a script only now: descendants can only have pids allocated
    /// from here on, so the scans look at those alone, however long the leader waited.
    pub(crate) fn starts_now(&mut self) {
        if let Some(last) = last_pid() {
            self.floor = last;
        }
    }

    /// Send `signal` to every live marked process; returns them (their pidfds let a caller wait
    /// for their end).
    pub(crate) fn signal(&self, signal: libc::c_int) -> Vec<Marked> {
        let marked = self.find();
        for m in &marked {
            m.signal(signal);
        }
        marked
    }

    /// The live processes carrying this run's id (the leader excluded: the group owns it).
    pub(crate) fn find(&self) -> Vec<Marked> {
        if self.leader <= 0 {
            return Vec::new();
        }
        let me = std::process::id() as libc::pid_t;
        let keep = |pid: libc::pid_t| pid != self.leader && pid != me;
        let floor = self.floor;
        let candidates: Vec<libc::pid_t> = match last_pid() {
            Some(last) if last == floor => return Vec::new(),
            Some(last) if last > floor && last - floor <= PROBE_LIMIT => {
                (floor + 1..=last).collect()
            }
            Some(last) if last > floor => proc_pids(|p| p > floor),
            // Wrapped: new pids are above the floor or at most the last one.
            Some(last) => proc_pids(|p| p > floor || p <= last),
            None => proc_pids(|_| true),
        };
        candidates
            .into_iter()
            .filter(|&p| keep(p))
            .filter_map(|p| self.check(p))
            .collect()
    }

    /// `pid` if it is alive, ours, and carries the id.
    fn check(&self, pid: libc::pid_t) -> Option<Marked> {
        let pidfd = match pidfd_open(pid) {
            Ok(fd) => Some(fd),
            // No such process, or a thread id (its process is probed on its own).
            Err(e) if matches!(e.raw_os_error(), Some(libc::ESRCH | libc::EINVAL)) => {
                return None;
            }
            Err(_) => None,
        };
        let mut file = std::fs::File::open(format!("/proc/{pid}/environ")).ok()?;
        let meta = file.metadata().ok()?;
        // SAFETY: geteuid has no preconditions.
        if std::os::unix::fs::MetadataExt::uid(&meta) != unsafe { libc::geteuid() } {
            return None;
        }
        let mut environ = Vec::new();
        file.read_to_end(&mut environ).ok()?;
        // A process in the middle of execve (an escapee's `exec sleep`) shows an empty
        // environment for a moment: its new memory is in place before its environment is
        // copied in. Read again briefly rather than take it for unmarked.
        // Kernel threads and zombies have no executable and never an environment: no retries.
        let has_exe = || std::fs::read_link(format!("/proc/{pid}/exe")).is_ok();
        let mut tries = 0;
        while environ.is_empty() && tries < EXEC_RETRIES && has_exe() {
            tries += 1;
            std::thread::sleep(std::time::Duration::from_millis(1));
            environ.clear();
            let mut again = std::fs::File::open(format!("/proc/{pid}/environ")).ok()?;
            again.read_to_end(&mut environ).ok()?;
        }
        self.carried_by(&environ).then_some(Marked { pid, pidfd })
    }

    /// Whether a NUL-separated environment block carries this run's id.
    fn carried_by(&self, environ: &[u8]) -> bool {
        let prefix = [MARKER_VAR.as_bytes(), b"="].concat();
        environ
            .split(|&b| b == 0)
            .filter_map(|entry| entry.strip_prefix(prefix.as_slice()))
            .any(|value| {
                value
                    .split(|&b| b == b':')
                    .any(|id| id == self.id.as_bytes())
            })
    }
}

impl Marked {
    fn signal(&self, signal: libc::c_int) {
        match &self.pidfd {
            Some(fd) => {
                // SAFETY: pidfd_send_signal with a pidfd we own, no siginfo, no flags.
                unsafe {
                    libc::syscall(
                        libc::SYS_pidfd_send_signal,
                        fd.as_raw_fd(),
                        signal,
                        std::ptr::null::<libc::siginfo_t>(),
                        0,
                    )
                };
            }
            // SAFETY: kill has no memory-safety preconditions.
            None => unsafe {
                libc::kill(self.pid, signal);
            },
        }
    }

    /// Whether the process has ended (exited, possibly not yet reaped by its new parent).
    pub(crate) fn ended(&self) -> bool {
        match &self.pidfd {
            Some(fd) => {
                let mut p = libc::pollfd {
                    fd: fd.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                };
                // SAFETY: one valid pollfd, zero timeout. A pidfd polls readable once the
                // process has exited.
                let n = unsafe { libc::poll(&mut p, 1, 0) };
                n != 0
            }
            None => !running(self.pid),
        }
    }
}

/// Open a pidfd for `pid` (Linux 5.3+).
pub(crate) fn pidfd_open(pid: libc::pid_t) -> std::io::Result<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and flags and returns a new fd or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the syscall returned a fresh fd that nothing else owns (fds fit in c_int).
    Ok(unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) })
}

/// The last pid allocated in our pid namespace, when the kernel tells. The file is opened once
/// per process and re-read with `pread`: this runs a few times per run, on the fast path.
fn last_pid() -> Option<libc::pid_t> {
    static FILE: std::sync::OnceLock<Option<std::fs::File>> = std::sync::OnceLock::new();
    let file = FILE
        .get_or_init(|| std::fs::File::open("/proc/sys/kernel/ns_last_pid").ok())
        .as_ref()?;
    let mut buf = [0u8; 16];
    let n = std::os::unix::fs::FileExt::read_at(file, &mut buf, 0).ok()?;
    std::str::from_utf8(&buf[..n]).ok()?.trim().parse().ok()
}

/// The pids listed in `/proc` that `keep` accepts.
fn proc_pids(keep: impl Fn(libc::pid_t) -> bool) -> Vec<libc::pid_t> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name();
            std::str::from_utf8(name.as_bytes()).ok()?.parse().ok()
        })
        .filter(|&p| keep(p))
        .collect()
}

/// Whether `pid` exists and is not a zombie.
fn running(pid: libc::pid_t) -> bool {
    match std::fs::read(format!("/proc/{pid}/stat")) {
        Ok(stat) => String::from_utf8_lossy(&stat)
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|s| s != "Z" && s != "X"),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_nest() {
        let (a, b) = (RunMarker::new(), RunMarker::new());
        assert_ne!(a.id, b.id);
        let nested = b.env_value(Some(&a.env_value(None)));
        let block = [
            b"PATH=/bin\0TACKLE_RUN=".as_slice(),
            nested.as_bytes(),
            b"\0",
        ]
        .concat();
        assert!(a.carried_by(&block));
        assert!(b.carried_by(&block));
        assert!(!RunMarker::new().carried_by(&block));
        // The id must be a whole entry of the list, not a prefix of one.
        let prefix = [b"TACKLE_RUN=".as_slice(), &a.id.as_bytes()[..8], b"\0"].concat();
        assert!(!a.carried_by(&prefix));
        assert!(!a.carried_by(format!("OTHER={}\0", a.id).as_bytes()));
    }
}
