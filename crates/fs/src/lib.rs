//! Confined file access: every file operation happens beneath one root directory handle.
//!
//! Owns: resolving a caller's path to a normalized root-relative [`RelPath`] (the permission
//! resource), reading files and directories, metadata, and staged writes and deletes that
//! publish only if the target still has the content they were staged against.
//!
//! Refuses to own: permission decisions (the gate decides whether `read:<path>` is allowed;
//! this crate decides only whether the path stays inside the root), and paging or formatting.
//!
//! Key decision: paths are never re-joined onto the root's absolute path and opened by name.
//! Everything is opened relative to a [`cap_std::fs::Dir`] handle with `RESOLVE_BENEATH`
//! semantics (`openat2` on Linux, cap-std's own sandboxed resolver elsewhere), so symlinks out,
//! `..`, absolute paths, `/proc` magic links and prefix siblings fail in the kernel's own
//! resolution, at open time, with no window between check and use. The rejected alternative,
//! canonicalize-then-check, is racy: a directory swapped for a symlink between the check and
//! the open escapes it. Every refusal fails closed: when resolution cannot prove a path stays
//! beneath the root, the operation is refused, never retried unconfined.

mod error;
mod links;
mod rel_path;
mod root;
mod stage;

pub use error::FsError;
pub use rel_path::{MAX_COMPONENT_BYTES, MAX_PATH_BYTES, RelPath};
pub use root::{DirEntry, EntryKind, Metadata, ReadOptions, ReadTarget, Root};
pub use stage::{Base, Committed, Deleted, StagedDelete, StagedWrite};
