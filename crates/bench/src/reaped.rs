//! A child reaped with `wait4`, which gives that one process's resource usage: its peak RSS
//! (`ru_maxrss`, what `/usr/bin/time -v` prints as "Maximum resident set size"). Reaping it
//! through `Child::wait` instead would leave only `getrusage(RUSAGE_CHILDREN)`, the largest of
//! every child so far.

use std::os::unix::process::ExitStatusExt as _;
use std::process::{Child, ExitStatus};

/// How a child ended and its peak RSS.
#[derive(Clone, Copy, Debug)]
pub struct Reaped {
    pub status: ExitStatus,
    pub max_rss_kib: u64,
}

/// Waits for `child` to exit and reaps it. Take its pipes first: they are closed here.
pub fn reap(child: Child) -> std::io::Result<Reaped> {
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value for the kernel to overwrite.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our child, not yet reaped (we own its `Child`); both pointers are to
    // live locals.
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    if reaped != pid {
        return Err(std::io::Error::last_os_error());
    }
    // Dropping a `Child` neither waits nor kills; it only closes the pipes left in it.
    drop(child);
    Ok(Reaped {
        status: ExitStatus::from_raw(status),
        max_rss_kib: usage.ru_maxrss as u64,
    })
}
