//! The allocator settings of a tackle process that streams model turns (`tackle run` and
//! `tackle chat` set them first thing in `main`; a benchmark that runs that code in-process
//! sets the same).
//!
//! glibc's `malloc` serves a request of 128 KiB or more from a fresh `mmap`, raises that
//! threshold only after such a block is freed, and returns the free top of its heap to the
//! kernel past twice the threshold. A model's streamed turn builds buffers of megabytes (the
//! event data, each call's arguments) and drops them when the turn is assembled, so under the
//! defaults every turn faults its pages in again: over a millisecond for a 2 MiB turn, more
//! than the decoding itself. Fixing the thresholds keeps such buffers in the heap and keeps
//! up to [`TRIM_THRESHOLD`] of free heap for the next turn.
//!
//! Not for `tackle serve`: its buffers are a call's output of a few hundred KiB, and with
//! these settings they stay in glibc's per-thread heaps: under 50 HTTP sessions it ended at
//! 126 MiB where the defaults end at 88 MiB (the CPU per call moved within the machine's
//! noise).
//!
//! Rejected: a replacement allocator (mimalloc) for the whole binary. It removed the faults,
//! but under `serve --http`'s many sessions it used more CPU per call than glibc and grew the
//! server to over 400 MiB where glibc stays under 100.

/// Requests below this come from the heap: large enough for the buffers of a turn of several
/// megabytes as they double.
pub const MMAP_THRESHOLD: usize = 8 * 1024 * 1024;

/// Free memory at the top of a heap kept for reuse before the rest goes back to the kernel: a
/// turn's buffers, and little more, so a long-lived server does not sit on what it freed.
pub const TRIM_THRESHOLD: usize = 8 * 1024 * 1024;

/// Applies [`MMAP_THRESHOLD`] and [`TRIM_THRESHOLD`] to glibc's allocator; elsewhere nothing,
/// and nothing when `GLIBC_TUNABLES` sets any `glibc.malloc.` tunable (the operator's choice
/// wins). Call it before the process starts its threads.
pub fn tune_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let operator_tuned = std::env::var_os("GLIBC_TUNABLES")
            .is_some_and(|t| t.to_string_lossy().contains("glibc.malloc."));
        if operator_tuned {
            return;
        }
        let (mmap, trim) = (c_int_of(MMAP_THRESHOLD), c_int_of(TRIM_THRESHOLD));
        // SAFETY: mallopt only sets allocator parameters; it is called with valid parameter
        // numbers and values, before the process starts other threads.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, mmap);
            libc::mallopt(libc::M_TRIM_THRESHOLD, trim);
        }
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn c_int_of(bytes: usize) -> libc::c_int {
    libc::c_int::try_from(bytes).unwrap_or(libc::c_int::MAX)
}

#[cfg(all(test, target_os = "linux", target_env = "gnu"))]
mod tests {
    use super::*;

    /// Bytes glibc holds in blocks mapped on their own (`mmap`ed, not from a heap).
    fn mapped_bytes() -> usize {
        // SAFETY: mallinfo2 only reads the allocator's counters.
        unsafe { libc::mallinfo2() }.hblkhd
    }

    #[test]
    fn a_turn_sized_buffer_comes_from_the_heap_once_tuned() {
        tune_allocator();
        let size = 4 * 1024 * 1024;
        let before = mapped_bytes();
        let buffer = std::hint::black_box(vec![1u8; size]);
        let during = mapped_bytes();
        drop(buffer);
        // Under glibc's defaults the buffer would be a mapping of its own, adding `size`.
        assert!(
            during < before + size,
            "a {size}-byte buffer was mapped on its own: {before} -> {during} bytes mapped"
        );
    }
}
