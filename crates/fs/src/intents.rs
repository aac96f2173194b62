//! Write intents: which directories an interrupted commit may have left a temp in.
//!
//! A commit sweeps the directory it writes into (`temp.rs`), but a temp left in a directory
//! that is never written again would stay forever, and walking the whole worktree to find it
//! is out of the question. So before a commit creates its temp it records the directory in an
//! *intent*: `.agents/store/writes/write-<pid>-<n>`, a file holding the in-root real path of
//! the directory, created `O_EXCL` and locked like a temp, removed after the temp is published
//! or discarded. [`Root::sweep_abandoned_writes`] (start-up, the server's janitor, `tackle
//! artifacts gc`) reads the intents whose lock is free, sweeps the directories they name, and
//! removes them.
//!
//! **Key decision:** the intents live in the project's store directory, not in this crate's
//! own place in the worktree and not behind a callback to the store. The store is where
//! tackle keeps its state, it is already a protected path (no tool may write
//! `.agents/store/**`), and it exists exactly when a tackle session does; this crate does not
//! depend on the store crate, it only knows this one directory name ([`INTENTS_DIR`]). Where
//! there is no store (a `Root` used on a plain tree), nothing is recorded and the sweep on the
//! next commit into the directory is the only cleanup. Rejected: a callback the runtime
//! installs on every `Root` (every tool opens its own shared root, so each would need it
//! wired), and one append-only journal (it would need compaction and a lock of its own).
//!
//! Confined and bounded: `.agents`, `store` and `writes` are opened one component at a time
//! without following a link, and so is every directory an intent names (a symlink anywhere on
//! the way and the intent is dropped unswept); an intent is read only up to
//! [`crate::MAX_PATH_BYTES`]; a pass reads at most [`MAX_INTENTS_PER_PASS`] of them. A
//! repository may commit intents of its own: they can point a sweep at any directory inside
//! the root, where it removes no more than a sweep ever does (see `temp.rs`). An
//! intent is not synced: a SIGKILL loses nothing that reached the page cache, and after a
//! power loss the next commit into the directory still sweeps what the lost intent named.
//! Recording is best effort: a store directory that cannot be written makes a commit skip its
//! intent, never fail (the temp is still locked and swept by that next commit).

use std::io::{Read, Write};

use cap_std::fs::{Dir, DirBuilder};

use crate::temp::{Created, SweepMode, Swept, create_locked, digits, next_suffix, open_abandoned};
use crate::{MAX_COMPONENT_BYTES, MAX_PATH_BYTES, Root};

/// Where intents live, beneath the root, one component at a time.
pub const INTENTS_DIR: [&str; 3] = [".agents", "store", "writes"];

/// Most intents one sweep reads; the rest wait for the next pass.
pub const MAX_INTENTS_PER_PASS: usize = 4096;

/// An intent name: `write-<pid>-<n>`.
fn is_intent_name(name: &str) -> bool {
    name.strip_prefix("write-")
        .and_then(|rest| rest.split_once('-'))
        .is_some_and(|(pid, n)| digits(pid, 10) && digits(n, 20))
}

/// A recorded intent, locked while its commit runs.
pub(crate) struct WriteIntent {
    dir: Dir,
    name: String,
    /// Holds the lock; closed (unlocked) when the intent is dropped.
    _file: std::fs::File,
}

impl Drop for WriteIntent {
    /// The commit is over (published or discarded): the intent goes, before its lock does.
    /// A commit that panicked may have left its temp, so its intent stays for the next sweep.
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = self.dir.remove_file(&self.name);
        }
    }
}

impl Root {
    /// Records that a temp is about to be created in `real_dir` (the in-root real path of the
    /// target's directory); `None` when there is no store to record it in.
    pub(crate) fn record_intent(&self, real_dir: &str) -> Option<WriteIntent> {
        let dir = self.intents_dir(true)?;
        for _ in 0..16 {
            let name = format!("write-{}", next_suffix());
            match create_locked(&dir, &name, 0o600).ok()? {
                Created::File(mut file) => {
                    if file.write_all(format!("{real_dir}\n").as_bytes()).is_err() {
                        let _ = dir.remove_file(&name);
                        return None;
                    }
                    return Some(WriteIntent {
                        dir,
                        name,
                        _file: file,
                    });
                }
                Created::Taken | Created::Lost => continue,
            }
        }
        None
    }

    /// Sweeps the directories named by intents whose commit is gone (their lock is free), then
    /// removes those intents; counting only, with [`SweepMode::Count`]. What it reports is the
    /// abandoned temps found in those directories.
    pub fn sweep_abandoned_writes(&self, mode: SweepMode) -> Swept {
        let mut swept = Swept::default();
        let Some(intents) = self.intents_dir(false) else {
            return swept;
        };
        let Ok(entries) = intents.entries() else {
            return swept;
        };
        let names: Vec<String> = entries
            .flatten()
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| is_intent_name(n))
            .take(MAX_INTENTS_PER_PASS)
            .collect();
        for name in names {
            let Some(file) = open_abandoned(&intents, &name, is_intent_name) else {
                continue;
            };
            let mut text = Vec::new();
            let read = (&file)
                .take(MAX_PATH_BYTES as u64 + 2)
                .read_to_end(&mut text)
                .is_ok();
            if read
                && let Some(dir) = std::str::from_utf8(&text)
                    .ok()
                    .and_then(|t| t.strip_suffix('\n'))
                    .and_then(|real_dir| self.open_dir_nofollow(real_dir))
            {
                swept.add(crate::temp::sweep_dir(&dir, mode));
            }
            if mode == SweepMode::Remove {
                let _ = intents.remove_file(&name);
            }
            drop(file);
        }
        swept
    }

    /// `.agents/store/writes`, each level a real directory; `writes` is created if `create`.
    fn intents_dir(&self, create: bool) -> Option<Dir> {
        use cap_fs_ext::DirExt;
        let [agents, store, writes] = INTENTS_DIR;
        let store = self
            .dir
            .open_dir_nofollow(agents)
            .ok()?
            .open_dir_nofollow(store)
            .ok()?;
        if create {
            let mut builder = DirBuilder::new();
            cap_std::fs::DirBuilderExt::mode(&mut builder, 0o700);
            // Already there is the common case; anything else shows in the open below.
            let _ = store.create_dir_with(writes, &builder);
        }
        store.open_dir_nofollow(writes).ok()
    }

    /// Opens the in-root directory `rel` (`.` for the root) one component at a time, following
    /// no link; `None` for anything else, including a path that is not in normal form.
    pub(crate) fn open_dir_nofollow(&self, rel: &str) -> Option<Dir> {
        use cap_fs_ext::DirExt;
        let mut dir = self.dir.try_clone().ok()?;
        if rel == "." {
            return Some(dir);
        }
        if rel.len() > MAX_PATH_BYTES {
            return None;
        }
        for part in rel.split('/') {
            let normal = !part.is_empty()
                && part != "."
                && part != ".."
                && part.len() <= MAX_COMPONENT_BYTES
                && !part.contains('\0');
            if !normal {
                return None;
            }
            dir = dir.open_dir_nofollow(part).ok()?;
        }
        Some(dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_intent_name_grammar_is_exact() {
        let cases = [
            ("write-1-1", true),
            ("write-4194304-17", true),
            ("write-1", false),
            ("write--1", false),
            ("write-1-", false),
            ("write-1-1.tmp", false),
            ("Write-1-1", false),
            (".tackle-1-1.tmp", false),
            ("write-12345678901-1", false),
        ];
        for (name, want) in cases {
            assert_eq!(is_intent_name(name), want, "{name:?}");
        }
    }
}
