//! Structural digests of survey tools (seed 003, "Digested survey tools") and `retrieve_raw`,
//! the way back to what a digest replaced.
//!
//! A survey tool (`Tool::survey`: read_many_files, grep, glob, list_dir) answers "what is out
//! there" over a set the model named loosely. When its output is over
//! [`DIGEST_THRESHOLD_BYTES`], the model is shown a digest built from the tool's typed listing
//! instead, stamped with the call id; the raw output is already a retained artifact
//! and `call_finished` records `digested: true`, so `retrieve_raw` finds it in the session's
//! event log. A digest that is not smaller than the output is discarded.
//!
//! Key decision: the digest is built from the tool's typed listing
//! (`ToolCompletion::survey`, a `tackle_tool::SurveyListing`: entries, matches, paths, files
//! read), never by re-parsing the rendered text or reading metadata keys, with pruning of the
//! metadata JSON as the fallback for a survey that gives no listing. Rejected: asking each tool for its own digest,
//! which would put a runtime concern (what the model sees) into tools.

mod retrieve_raw;
mod shape;

pub use retrieve_raw::{RETRIEVE_RAW, RetrieveRaw, UNKNOWN_CALL};
pub use shape::digest_text;

/// Survey output above this many bytes is replaced by its digest.
pub const DIGEST_THRESHOLD_BYTES: u64 = 8_000;
