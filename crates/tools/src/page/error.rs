//! Errors a page read can return to the caller (and, rendered, to the model).

use std::io;

/// Why a page could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PageError {
    /// The first requested line does not exist.
    #[error(
        "read: offset {offset} is past the end; the content has {total_lines} lines, pass an offset between 1 and {}",
        (*total_lines).max(1)
    )]
    OffsetPastEnd { offset: u64, total_lines: u64 },
    /// Offsets are 1-based line numbers.
    #[error(
        "read: offset 0 is not a line number; offsets are 1-based, pass 1 to start at the first line"
    )]
    ZeroOffset,
    /// A page must hold at least one line.
    #[error("read: limit 0 returns nothing; pass a limit between 1 and {max}", max = super::MAX_PAGE_LINES)]
    ZeroLimit,
    /// Reading the underlying file failed.
    #[error("read: reading the content failed at byte {at}: {source}")]
    Io {
        at: u64,
        #[source]
        source: io::Error,
    },
}
