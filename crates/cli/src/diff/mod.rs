//! What a file-changing call would do to its file, for every front end that shows it to a
//! person: [`compute`] reads the file and works out the lines (one copy, used by chat's
//! transcript and approval widget and by the terminal approver of `tackle run` and
//! `tackle call`); [`plain`] prints them as text for a terminal prompt; chat draws them with
//! ratatui (`chat/diff.rs`).

mod capped;
pub mod compute;
pub mod plain;

pub use compute::{Diff, DiffKind, between, for_call};
