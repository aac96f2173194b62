//! Settings files and flags, layered with provenance.

mod file;
mod merge;

pub use file::{LoadedFile, Origin, Sourced, nearest};
pub use merge::{Flags, RuleEffect, Settings};
