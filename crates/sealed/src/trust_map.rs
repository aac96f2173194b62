//! Which workspace content is trusted: beneath a vouched directory, or a file a person vouched
//! for at the quarantined-read prompt; never a file a write of quarantined content tainted.
//! Everything else is untrusted. A file's *name* is content of its directory: it is trusted
//! when the directory holding it is.

use std::sync::Arc;

use tackle_protocol::{Label, Privacy, Trust};

use crate::state::SealedState;
use crate::vouches::Vouches;

/// The trust map of one session.
pub struct TrustMap {
    vouches: Vouches,
    state: Arc<SealedState>,
}

impl TrustMap {
    pub fn new(vouches: Vouches, state: Arc<SealedState>) -> Self {
        Self { vouches, state }
    }

    pub fn vouches(&self) -> &Vouches {
        &self.vouches
    }

    /// The trust of a file's content (`path` root-relative and normalized: the real path).
    pub fn file(&self, path: &str) -> Trust {
        match self.state.file_trust(path) {
            Some(true) => Trust::Trusted,
            Some(false) => Trust::Untrusted,
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
