//! Which workspace content is trusted: beneath a vouched directory, or a file a person vouched
//! for at the quarantined-read prompt; never a file a write of quarantined content tainted, in
//! this session or an earlier one (the taint is kept beside the vouches, in the user's file).
//! Everything else is untrusted. A file's *name* is content of its directory: it is trusted
//! when the directory holding it is.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use tackle_protocol::{Label, Privacy, Trust};

use crate::state::SealedState;
use crate::vouches::Vouches;

/// The trust map of one session.
pub struct TrustMap {
    vouches: Vouches,
    state: Arc<SealedState>,
    /// Where taints outlive the session: the user's vouch file and the project root it is
    /// keyed by. `None` keeps them in the session alone (tests, benchmarks).
    keep: Option<(PathBuf, PathBuf)>,
    /// Taints kept or lifted by this process, over what the file said at start.
    kept: Mutex<Vec<(String, bool)>>,
}

impl TrustMap {
    pub fn new(vouches: Vouches, state: Arc<SealedState>) -> Self {
        Self {
            vouches,
            state,
            keep: None,
            kept: Mutex::new(Vec::new()),
        }
    }

    /// Keeps taints in the user's vouch file at `file`, under `root`, for later sessions.
    pub fn keeping_taints(mut self, file: PathBuf, root: PathBuf) -> Self {
        self.keep = Some((file, root));
        self
    }

    /// Records that `path` now holds content of `trust`: untrusted content taints it for later
    /// sessions too; trusted content lifts an earlier taint.
    pub fn wrote(&self, path: &str, trust: Trust) -> Result<(), String> {
        let tainted = trust == Trust::Untrusted;
        if self.persisted_taint(path) == tainted {
            return Ok(());
        }
        if let Some((file, root)) = &self.keep {
            crate::vouches::set_tainted(file, root, path, tainted)?;
        }
        self.kept
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((path.to_owned(), tainted));
        Ok(())
    }

    /// Whether a write (of this process, else of an earlier session) left `path` tainted.
    fn persisted_taint(&self, path: &str) -> bool {
        let kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        match kept.iter().rev().find(|(p, _)| p == path) {
            Some((_, tainted)) => *tainted,
            None => self.vouches.tainted(path),
        }
    }

    pub fn vouches(&self) -> &Vouches {
        &self.vouches
    }

    /// The trust of a file's content (`path` root-relative and normalized: the real path).
    pub fn file(&self, path: &str) -> Trust {
        match self.state.file_trust(path) {
            Some(true) => Trust::Trusted,
            Some(false) => Trust::Untrusted,
            None if self.persisted_taint(path) => Trust::Untrusted,
            None if self.vouches.covers(path) => Trust::Trusted,
            None => Trust::Untrusted,
        }
    }

    /// The label of a file's content: workspace files are private.
    pub fn file_label(&self, path: &str) -> Label {
        Label {
            trust: self.file(path),
            privacy: Privacy::Private,
        }
    }

    /// Whether the name of the entry at `path` may be shown: its directory is vouched for.
    pub fn name(&self, path: &str) -> Trust {
        let parent = match path.rsplit_once('/') {
            Some((parent, _)) => parent,
            None => ".",
        };
        if self.vouches.covers(parent) {
            Trust::Trusted
        } else {
            Trust::Untrusted
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recorder::MemoryRecorder;

    fn map(file: &std::path::Path, root: &std::path::Path) -> TrustMap {
        let vouches = Vouches::load(file, root).unwrap();
        let state = SealedState::new(Arc::new(MemoryRecorder::default()));
        TrustMap::new(vouches, state).keeping_taints(file.to_owned(), root.to_owned())
    }

    #[test]
    fn a_taint_outlives_the_session_until_trusted_content_replaces_it() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("sealed.json");
        let root = std::path::Path::new("/p");
        crate::vouches::add(&file, root, &["src".into()], &[]).unwrap();
        let first = map(&file, root);
        assert_eq!(first.file("src/a.rs"), Trust::Trusted);
        first.wrote("src/a.rs", Trust::Untrusted).unwrap();
        assert_eq!(first.file("src/a.rs"), Trust::Untrusted);
        assert_eq!(first.file("src/b.rs"), Trust::Trusted);
        // A later session of the same project: still tainted.
        let second = map(&file, root);
        assert_eq!(second.file("src/a.rs"), Trust::Untrusted);
        second.wrote("src/a.rs", Trust::Trusted).unwrap();
        assert_eq!(second.file("src/a.rs"), Trust::Trusted);
        assert_eq!(map(&file, root).file("src/a.rs"), Trust::Trusted);
        // Names are a directory's content: a taint does not touch them.
        assert_eq!(second.name("src/a.rs"), Trust::Trusted);
    }
}
