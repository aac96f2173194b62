//! What makes two reads "the same content", so a line index can be reused safely.

use std::os::unix::fs::MetadataExt;

/// Identity of immutable-or-checked content: for files `(dev, ino, len, mtime_ns)`; for artifacts
/// the SHA-256 digest.
///
/// A file rewritten in place with the same length within one mtime tick would keep its identity;
/// that is the same trade-off `make` and `git status` accept, and artifacts are immutable anyway.
#[derive(Clone, Hash, Eq, PartialEq, Debug)]
pub enum ContentIdentity {
    File {
        dev: u64,
        ino: u64,
        len: u64,
        mtime_ns: i128,
    },
    Artifact([u8; 32]),
}

impl ContentIdentity {
    /// The identity of a regular file as described by `meta`.
    pub fn of_file(meta: &std::fs::Metadata) -> Self {
        ContentIdentity::File {
            dev: meta.dev(),
            ino: meta.ino(),
            len: meta.len(),
            mtime_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
        }
    }
}
