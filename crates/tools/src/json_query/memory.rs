//! The memory a filter's values hold, measured where it is allocated.
//!
//! [`MeteredAlloc`] wraps the system allocator and, on a thread that opened a [`Meter`],
//! counts the bytes live on it (allocated there minus freed there). jaq's values are
//! reference-counted and never leave the filter's thread, so that count is what the filter's
//! values hold, whatever built them: a `reduce`, a native, a copy on update.
//!
//! An allocator cannot refuse gracefully (a null return aborts the process), so the meter
//! only counts; the filter is stopped by checks: every definition call, generator step,
//! collected array element and output reads [`over`], and each operation that can allocate
//! in one go more than a small multiple of what it was given (string repetition, splitting,
//! serialising, number growth) first asks [`headroom`] whether its result fits.
//!
//! The binary installs it (`#[global_allocator]`); without it [`installed`] is false and the
//! checks fall back to the budget alone for each single operation.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};

/// The system allocator, counting what metered threads hold.
pub struct MeteredAlloc;

static INSTALLED: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// Bytes live on this thread since its meter opened, and the meter's limit (0: none).
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
    static LIMIT: Cell<usize> = const { Cell::new(0) };
}

#[inline]
fn note(delta: isize) {
    // `try_with`: the thread may be tearing its locals down; nothing is metered then.
    let _ = LIMIT.try_with(|limit| {
        if limit.get() != 0 {
            LIVE.with(|live| {
                let now = live.get().saturating_add(delta);
                live.set(now);
                PEAK.with(|p| p.set(p.get().max(now)));
            });
        }
    });
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged and only
// adds bookkeeping in thread-locals that need no allocation (const-initialised `Cell`s).
unsafe impl GlobalAlloc for MeteredAlloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !INSTALLED.load(Ordering::Relaxed) {
            INSTALLED.store(true, Ordering::Relaxed);
        }
        // SAFETY: the caller's contract for `alloc` is passed on unchanged.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            note(layout.size() as isize);
        }
        p
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            note(layout.size() as isize);
        }
        p
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from this allocator, that is from `System`, with `layout`.
        unsafe { System.dealloc(ptr, layout) };
        note(-(layout.size() as isize));
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as for `dealloc`; `new_size` is the caller's, checked by its contract.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            note(new_size as isize - layout.size() as isize);
        }
        p
    }
}

/// Whether [`MeteredAlloc`] is the process's allocator (it has allocated at least once).
pub fn installed() -> bool {
    INSTALLED.load(Ordering::Relaxed)
}

/// Counting on this thread, from zero, until dropped.
pub struct Meter(());

impl Meter {
    /// Start counting this thread's allocations against `limit` bytes.
    pub fn open(limit: usize) -> Self {
        LIVE.with(|l| l.set(0));
        PEAK.with(|p| p.set(0));
        LIMIT.with(|l| l.set(limit.max(1)));
        Meter(())
    }

    /// The most bytes live at once since the meter opened.
    pub fn peak(&self) -> usize {
        PEAK.with(|p| p.get().max(0) as usize)
    }
}

impl Drop for Meter {
    fn drop(&mut self) {
        LIMIT.with(|l| l.set(0));
    }
}

/// The most bytes live at once under this thread's last meter (0 if none was opened).
pub fn last_peak() -> usize {
    PEAK.with(|p| p.get().max(0) as usize)
}

/// Whether this thread's values hold more than its meter's limit.
pub fn over() -> bool {
    let limit = LIMIT.with(Cell::get);
    limit != 0 && LIVE.with(Cell::get) > limit as isize
}

/// How many more bytes this thread's values may take: the limit less what they hold (the
/// limit itself where the allocator does not count); `usize::MAX` with no meter open.
pub fn headroom() -> usize {
    let limit = LIMIT.with(Cell::get);
    if limit == 0 {
        return usize::MAX;
    }
    if !installed() {
        return limit;
    }
    let live = LIVE.with(Cell::get);
    (limit as isize).saturating_sub(live).max(0) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The library's own tests install it, so what is counted here is real.
    #[test]
    fn a_meter_counts_what_its_thread_holds() {
        std::thread::spawn(|| {
            assert!(installed());
            let meter = Meter::open(1 << 20);
            assert!(!over());
            let big = vec![0u8; 2 << 20];
            assert!(over(), "2 MiB live against a 1 MiB limit");
            assert_eq!(headroom(), 0);
            drop(big);
            assert!(!over());
            assert!(meter.peak() >= 2 << 20);
            drop(meter);
            assert_eq!(headroom(), usize::MAX);
        })
        .join()
        .unwrap();
    }
}
