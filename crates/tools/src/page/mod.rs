//! Line paging for `read_file`: returns pages of at most [`MAX_PAGE_LINES`] lines from files or
//! content-addressed artifacts that may be many GiB, without rescanning from the start for every
//! page.
//!
//! This module owns the line arithmetic (1-based `offset`, `next_offset`, `total_lines`), the cut
//! of over-long lines, lossy decoding, and a sparse [`LineIndex`] of line-start checkpoints that is
//! cached per [`ContentIdentity`] in a [`LineIndexCache`]. It does not own path resolution,
//! permissions, artifact lookup or media sniffing beyond the NUL test in [`looks_binary`]; callers
//! open the file and decide what identity it has.
//!
//! Key decision: a sparse index of the byte offset of every `STRIDE`-th line, filled lazily as far
//! as any request has scanned, instead of a full per-line index (8 bytes per line, 150 MiB for a
//! 1 GiB log) or no index (every deep page rescans from byte 0). A request seeks to the nearest
//! checkpoint at or before its first line, so a repeated read costs at most one stride plus the
//! page itself. The first scan reads large blocks with positional reads into one reused buffer
//! and counts newlines with SIMD (`bytecount`); `memchr` iteration runs only inside the small
//! sub-block where a checkpoint or the requested line falls. Positional reads (`read_at`) mean a
//! shared `File` carries no seek state. `mmap` was rejected: it turns I/O errors into `SIGBUS` and
//! page-faults cost more than copying into an L2-sized buffer. `posix_fadvise` is not used: the
//! kernel's readahead already follows sequential positional reads, and with a warm page cache
//! (the benchmarked case, `crates/bench/benches/read_deep_page.rs`) it cannot help.

mod cache;
mod error;
mod identity;
mod index;
mod read;

pub use cache::LineIndexCache;
pub use error::PageError;
pub use identity::ContentIdentity;
pub use index::LineIndex;
pub use read::{Page, PageRequest, read_page};

/// Most lines one page may hold; larger limits are clamped to this.
pub const MAX_PAGE_LINES: usize = 2000;

/// How many leading bytes [`looks_binary`] is meant to inspect.
pub const BINARY_SNIFF_BYTES: usize = 8192;

/// Binary sniff: true when the first 8 KiB of `head` contain a NUL byte.
pub fn looks_binary(head: &[u8]) -> bool {
    let head = &head[..head.len().min(BINARY_SNIFF_BYTES)];
    memchr::memchr(0, head).is_some()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)] // a failed test should panic loudly
mod tests {
    use super::*;

    #[test]
    fn binary_sniff_looks_only_at_the_head() {
        assert!(!looks_binary(b""));
        assert!(!looks_binary("plain text\nwith ünïcode\n".as_bytes()));
        assert!(looks_binary(b"\x7fELF\x02\x01\x01\x00"));
        let mut late_nul = vec![b'a'; BINARY_SNIFF_BYTES];
        late_nul.push(0);
        assert!(!looks_binary(&late_nul));
        late_nul[BINARY_SNIFF_BYTES - 1] = 0;
        assert!(looks_binary(&late_nul));
    }
}
