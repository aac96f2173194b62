//! What killed processes left behind: write temps in the worktree, captures in the store.
//!
//! Each crate sweeps its own (`tackle_fs::Root::sweep_abandoned_writes` for the directories
//! the write intents name, `tackle_store::Janitor` for `tmp/`); this module is where the
//! binary asks for the first, at start-up (before a session's first call) and in every
//! janitor pass, since the runtime that opens the store does not know the file crate.

use std::path::Path;

use tackle_fs::{Root, SweepMode, Swept};

/// Sweeps the write temps abandoned beneath `root` (or, with [`SweepMode::Count`], counts
/// them). A root that cannot be opened has nothing this could sweep; the command that
/// follows reports that failure itself.
pub(crate) fn sweep_writes(root: &Path, mode: SweepMode) -> Swept {
    match Root::open(root) {
        Ok(root) => root.sweep_abandoned_writes(mode),
        Err(_) => Swept::default(),
    }
}
