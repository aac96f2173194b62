//! Confined file access: every file operation happens beneath one root directory handle.
//!
//! Owns: resolving a caller's path to a normalized root-relative [`RelPath`] (the permission
//! resource), reading files and directories, metadata, and staged writes and deletes that
//! publish only if the target still has the content they were staged against, through temps
//! that are locked from creation so that those a killed writer left are found and swept
//! (`temp.rs`: on the next commit into the directory; `intents.rs`: at start-up, through the
//! intents a commit records in the store directory). Also the one reading path for files
//! tackle reads for itself, in the project or in the user's config directory (`own_file.rs`:
//! [`OwnFile`], a named cap per kind, non-blocking, regular files only).
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
mod intents;
mod links;
mod own_file;
mod rel_path;
mod root;
mod stage;
mod temp;

pub use error::FsError;
pub use intents::{INTENTS_DIR, MAX_INTENTS_PER_PASS};
pub use own_file::{OverCap, OwnBytes, OwnFile, OwnFileError, Problem as OwnFileProblem};
pub use rel_path::{MAX_COMPONENT_BYTES, MAX_PATH_BYTES, RelPath};
pub use root::{DirEntry, EntryKind, Metadata, ReadOptions, ReadTarget, Root, WalkedFile};
pub use stage::{Base, Committed, Deleted, StagedDelete, StagedWrite};
pub use temp::{SweepMode, Swept, is_temp_name};
