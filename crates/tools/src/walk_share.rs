//! How one walk uses the machine: how many walker threads it may start, and how long it first
//! walks alone on the calling thread before it starts any.
//!
//! Threads: the machine's cores shared among the walks and the other tools' blocking work
//! running at once ([`tackle_tool::tool_work_running`]). Under `tackle serve` many calls run
//! concurrently and keep every core busy; a walk per call that starts a thread per core would
//! only add threads to start, join and switch between. A walk alone still gets every core (up to
//! 12).
//!
//! Solo first: `ignore`'s parallel walk ends no sooner than about a millisecond after its work
//! does (a walker thread that finds no work sleeps a millisecond at a time before it looks
//! again), and starts and joins a thread per core. A survey of a small directory does its work in
//! a fraction of that: 20 files are searched in about 50 µs. So every walk starts on the calling
//! thread and goes parallel only when it has not ended within [`SOLO_WALK`]; the parallel walk
//! then skips the files already visited and does not list again the directories whose whole
//! subtree the solo walk got through. A long walk lists again only the directories the solo
//! walk was inside when it stopped; a short one never pays for threads.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// How long a walk runs on the calling thread before walker threads take over: about what
/// the parallel walk's own ending costs.
pub const SOLO_WALK: Duration = Duration::from_millis(1);

/// A walk's share of the machine, held while it runs.
pub(crate) struct WalkShare {
    /// The walker threads the walk may use once it goes parallel; 1 walks alone throughout.
    pub threads: usize,
    /// How long it walks alone before going parallel.
    pub solo: Duration,
}

/// Walks running now, across every session of the process.
static ACTIVE_WALKS: AtomicUsize = AtomicUsize::new(0);

impl WalkShare {
    pub fn take() -> WalkShare {
        // The core count is read once: `available_parallelism` reads cgroup files each time.
        static CORES: OnceLock<usize> = OnceLock::new();
        let cores = *CORES.get_or_init(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
                .min(12)
        });
        let walks = ACTIVE_WALKS.fetch_add(1, Ordering::Relaxed) + 1;
        let running = walks.max(tackle_tool::tool_work_running());
        WalkShare {
            threads: (cores / running).max(1),
            solo: SOLO_WALK,
        }
    }

    /// A share with the given threads and solo budget, whatever else is running.
    #[cfg(test)]
    pub fn forced(threads: usize, solo: Duration) -> WalkShare {
        ACTIVE_WALKS.fetch_add(1, Ordering::Relaxed);
        WalkShare { threads, solo }
    }
}

impl Drop for WalkShare {
    fn drop(&mut self) {
        ACTIVE_WALKS.fetch_sub(1, Ordering::Relaxed);
    }
}
