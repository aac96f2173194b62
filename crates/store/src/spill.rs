//! A spilled capture's bytes on their way to its temp file: gathered into blocks, hashed on one
//! thread and written on another.
//!
//! **Owns** the block pool, the `capture-hash` and `capture-write` threads, and the choice
//! between the page cache and direct I/O for each block.
//!
//! **Refuses** to name, publish or remove the temp file (the capture in `artifact.rs` does), and
//! to hold more than [`SPILL_BUFFERS`] blocks however fast the producer is: a slow hasher or a
//! slow device slows the writer down instead.
//!
//! **Key decision:** the caller only copies bytes into a block; hashing and writing run beside it
//! as a two-stage pipeline, so SHA-256 and the device work overlap with the producer. Blocks past
//! the first [`DIRECT_AFTER`] bytes are written with `O_DIRECT`: large output is rarely read
//! back whole at once, and through the page cache each byte would cost a copy into freshly
//! allocated cache memory (the largest cost of a 1 GiB capture), an fsync that writes it again
//! for a call with effects, and, when the artifact already exists, freeing it all again. The
//! head stays in the page cache, so small spills that are deduplicated never reach the device.
//! Each block is one transparent huge page where the kernel offers them: a direct write then
//! pins one page-table entry instead of 512 and reaches the device as one contiguous segment
//! (as small pages a block is 512 segments, more than one request of a virtio disk takes: 254
//! where this was measured).

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::thread::JoinHandle;

use memmap2::{Advice, MmapMut};
use sha2::{Digest, Sha256};

/// A spilled capture's writes are gathered into blocks of this size; each is hashed, then
/// written to the temp file in one call. One huge page.
pub(crate) const SPILL_CHUNK: usize = HUGE_PAGE;

/// The size and alignment of a transparent huge page on x86-64 and (with 4 KiB pages) arm64.
/// Elsewhere, or where huge pages are off, the aligned block is ordinary pages and works alike.
const HUGE_PAGE: usize = 2 * 1024 * 1024;

/// Blocks a spilled capture may have at once (being filled, queued, hashed or written): its
/// memory bound is `SPILL_BUFFERS * SPILL_CHUNK`.
pub(crate) const SPILL_BUFFERS: usize = 4;

/// Blocks starting at or past this offset bypass the page cache (`O_DIRECT`).
pub(crate) const DIRECT_AFTER: u64 = 8 * 1024 * 1024;

/// Alignment of a direct write's memory, file offset and length. It covers the logical block
/// size of ordinary devices; one needing more refuses the write (`EINVAL`), and the block then
/// goes through the page cache like every later one.
const DIRECT_ALIGN: usize = 4096;

/// Up to [`SPILL_CHUNK`] bytes in memory aligned for direct I/O, one huge page where possible.
pub(crate) struct Block {
    /// Anonymous memory straight from the kernel, one huge page longer than a block so that a
    /// start aligned to one exists; never reallocated. Fresh mappings are zeroed by the kernel
    /// on first touch and the slack around the block is never touched, so it costs address
    /// space, not memory. (From the allocator, a large zeroed buffer may be recycled heap that
    /// is cleared by writing it, which would fault it in as small pages.)
    memory: MmapMut,
    start: usize,
    len: usize,
    /// Leading bytes the hash already covers (the in-memory head of a capture that spilled).
    hashed: usize,
}

impl std::fmt::Debug for Block {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Block")
            .field("len", &self.len)
            .field("hashed", &self.hashed)
            .finish()
    }
}

impl Block {
    fn new() -> io::Result<Self> {
        let memory = MmapMut::map_anon(SPILL_CHUNK + HUGE_PAGE)?;
        let misalign = memory.as_ptr().addr() % HUGE_PAGE;
        let start = (HUGE_PAGE - misalign) % HUGE_PAGE;
        // Asked before the first touch, so the first fault maps the whole block as one huge
        // page (zeroing 2 MiB once costs less than the 512 small faults of filling it). Best
        // effort: without transparent huge pages the block is small pages, only slower.
        let _ = memory.advise_range(Advice::HugePage, start, SPILL_CHUNK);
        Ok(Self {
            memory,
            start,
            len: 0,
            hashed: 0,
        })
    }

    /// Copies as much of `data` as fits; returns how much that was.
    fn fill(&mut self, data: &[u8]) -> usize {
        let take = (SPILL_CHUNK - self.len).min(data.len());
        let at = self.start + self.len;
        self.memory[at..at + take].copy_from_slice(&data[..take]);
        self.len += take;
        take
    }

    fn is_full(&self) -> bool {
        self.len == SPILL_CHUNK
    }

    fn bytes(&self) -> &[u8] {
        &self.memory[self.start..self.start + self.len]
    }

    fn clear(&mut self) {
        self.len = 0;
        self.hashed = 0;
    }
}

/// Writes blocks in order at their offsets: through the page cache up to [`DIRECT_AFTER`], then
/// through a second, `O_DIRECT` open file description of the same file when the block is
/// aligned and the filesystem takes it.
pub(crate) struct BlockWriter {
    /// The capture's own descriptor (it carries the temp file's lock).
    file: File,
    direct: Direct,
    written: u64,
    /// Bytes that went past the page cache (what the tests check).
    direct_bytes: u64,
}

enum Direct {
    /// Not needed yet.
    NotOpened,
    Open(File),
    /// Refused by the filesystem or the device: the page cache from here on.
    Unavailable,
}

impl BlockWriter {
    pub(crate) fn new(file: File) -> Self {
        Self {
            file,
            direct: Direct::NotOpened,
            written: 0,
            direct_bytes: 0,
        }
    }

    /// Appends `data` at the end of what was written so far.
    pub(crate) fn write(&mut self, data: &[u8]) -> io::Result<()> {
        let offset = self.written;
        if offset >= DIRECT_AFTER
            && is_aligned(data, offset)
            && let Some(direct) = self.direct_file()
        {
            match direct.write_all_at(data, offset) {
                Ok(()) => {
                    self.written += data.len() as u64;
                    self.direct_bytes += data.len() as u64;
                    return Ok(());
                }
                // Refused (EINVAL on a filesystem without direct I/O, or a partial write that
                // left the rest unaligned): rewrite the whole block through the page cache,
                // which reports a real failure (no space, I/O error) again.
                Err(_) => self.direct = Direct::Unavailable,
            }
        }
        self.file.write_all_at(data, offset)?;
        self.written += data.len() as u64;
        Ok(())
    }

    /// The direct descriptor, opened on first use through `/proc/self/fd`, so it is the very
    /// file this capture locked, whatever happens to its name.
    fn direct_file(&mut self) -> Option<&File> {
        if let Direct::NotOpened = self.direct {
            let path = format!("/proc/self/fd/{}", self.file.as_raw_fd());
            self.direct = match OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_DIRECT)
                .open(path)
            {
                Ok(file) => Direct::Open(file),
                Err(_) => Direct::Unavailable,
            };
        }
        match &self.direct {
            Direct::Open(file) => Some(file),
            Direct::NotOpened | Direct::Unavailable => None,
        }
    }

    #[cfg(test)]
    pub(crate) fn direct_bytes(&self) -> u64 {
        self.direct_bytes
    }

    pub(crate) fn into_file(self) -> File {
        self.file
    }
}

fn is_aligned(data: &[u8], offset: u64) -> bool {
    data.as_ptr().addr().is_multiple_of(DIRECT_ALIGN)
        && data.len().is_multiple_of(DIRECT_ALIGN)
        && offset.is_multiple_of(DIRECT_ALIGN as u64)
}

/// What the writing thread hands back: the file, its lock still held.
type Written = io::Result<File>;

/// A spilled capture's bytes gathered into blocks; each full block goes to the hashing thread,
/// then to the writing thread, then back to the pool.
#[derive(Debug)]
pub(crate) struct SpilledSink {
    /// The block being filled (`None` only transiently and after a failure).
    pending: Option<Block>,
    /// `None` once finished; dropping it tells the threads no more blocks are coming.
    to_hash: Option<SyncSender<Block>>,
    returned: Receiver<Block>,
    allocated: usize,
    hash_thread: Option<JoinHandle<Sha256>>,
    write_thread: Option<JoinHandle<Written>>,
    /// Gone once both threads' closures have been dropped, i.e. both threads have ended.
    #[cfg(test)]
    pub(crate) alive: std::sync::Weak<()>,
}

impl SpilledSink {
    /// Starts the threads. `hasher` covers exactly `head`, the bytes held in memory so far,
    /// which become the start of the file.
    pub(crate) fn start(file: File, hasher: Sha256, head: &[u8]) -> io::Result<Self> {
        const { assert!(crate::artifact::CAPTURE_BUFFER <= SPILL_CHUNK) };
        // Every channel can hold every block, so no send ever blocks: only taking a block from
        // the pool waits, which is what bounds memory.
        let (to_hash, hash_queue) = mpsc::sync_channel::<Block>(SPILL_BUFFERS);
        let (to_write, write_queue) = mpsc::sync_channel::<Block>(SPILL_BUFFERS);
        let (give_back, returned) = mpsc::sync_channel::<Block>(SPILL_BUFFERS);
        #[cfg(test)]
        let token = std::sync::Arc::new(());
        #[cfg(test)]
        let alive = std::sync::Arc::downgrade(&token);
        #[cfg(test)]
        let hash_token = std::sync::Arc::clone(&token);
        let hash_thread = std::thread::Builder::new()
            .name("capture-hash".into())
            .spawn(move || {
                #[cfg(test)]
                let _token = hash_token;
                let mut hasher = hasher;
                while let Ok(block) = hash_queue.recv() {
                    hasher.update(&block.bytes()[block.hashed..]);
                    // The writer stopped on a failure: stop too, which the caller then sees.
                    if to_write.send(block).is_err() {
                        break;
                    }
                }
                hasher
            })?;
        let write_thread = std::thread::Builder::new()
            .name("capture-write".into())
            .spawn(move || {
                #[cfg(test)]
                let _token = token;
                let mut writer = BlockWriter::new(file);
                while let Ok(mut block) = write_queue.recv() {
                    writer.write(block.bytes())?;
                    block.clear();
                    // The caller may have finished or gone; the block is then simply freed.
                    let _ = give_back.try_send(block);
                }
                Ok(writer.into_file())
            });
        let write_thread = match write_thread {
            Ok(thread) => thread,
            Err(err) => {
                // The hashing thread ends once its queue closes.
                drop(to_hash);
                let _ = hash_thread.join();
                return Err(err);
            }
        };
        let mut sink = Self {
            pending: None,
            to_hash: Some(to_hash),
            returned,
            allocated: 0,
            hash_thread: Some(hash_thread),
            write_thread: Some(write_thread),
            #[cfg(test)]
            alive,
        };
        let mut first = sink.take_block()?;
        first.fill(head);
        first.hashed = head.len();
        sink.pending = Some(first);
        Ok(sink)
    }

    pub(crate) fn write(&mut self, mut data: &[u8]) -> io::Result<()> {
        while !data.is_empty() {
            let mut block = match self.pending.take() {
                Some(block) => block,
                None => self.take_block()?,
            };
            let took = block.fill(data);
            data = &data[took..];
            if block.is_full() {
                self.submit(block)?;
            } else {
                self.pending = Some(block);
            }
        }
        Ok(())
    }

    /// An empty block: a returned one if any, a new one while under the pool size, else waits
    /// for the writer to return one.
    fn take_block(&mut self) -> io::Result<Block> {
        if let Ok(block) = self.returned.try_recv() {
            return Ok(block);
        }
        if self.allocated < SPILL_BUFFERS {
            let block = Block::new()?;
            self.allocated += 1;
            return Ok(block);
        }
        match self.returned.recv() {
            Ok(block) => Ok(block),
            Err(_) => Err(self.stop()),
        }
    }

    fn submit(&mut self, block: Block) -> io::Result<()> {
        let sent = self
            .to_hash
            .as_ref()
            .is_some_and(|to_hash| to_hash.send(block).is_ok());
        if sent { Ok(()) } else { Err(self.stop()) }
    }

    /// After a thread stopped: ends both and returns why (the writer's error, normally).
    fn stop(&mut self) -> io::Error {
        self.to_hash = None;
        if let Some(thread) = self.hash_thread.take() {
            let _ = thread.join();
        }
        match self.write_thread.take().map(JoinHandle::join) {
            Some(Ok(Err(err))) => err,
            _ => threads_stopped(),
        }
    }

    /// Submits the last bytes, waits until everything is hashed and written, and returns the
    /// file (its lock still held) and the hash.
    pub(crate) fn finish(mut self) -> io::Result<(File, Sha256)> {
        if let Some(last) = self.pending.take().filter(|b| b.len > 0) {
            self.submit(last)?;
        }
        self.to_hash = None;
        let hasher = self
            .hash_thread
            .take()
            .ok_or_else(threads_stopped)?
            .join()
            .map_err(|_| threads_stopped())?;
        let file = self
            .write_thread
            .take()
            .ok_or_else(threads_stopped)?
            .join()
            .map_err(|_| threads_stopped())??;
        Ok((file, hasher))
    }
}

impl Drop for SpilledSink {
    fn drop(&mut self) {
        // Closing the queue ends both threads after at most the few blocks still queued.
        self.to_hash = None;
        if let Some(thread) = self.hash_thread.take() {
            let _ = thread.join();
        }
        if let Some(thread) = self.write_thread.take() {
            let _ = thread.join();
        }
    }
}

fn threads_stopped() -> io::Error {
    io::Error::other("the capture's hashing or writing thread stopped unexpectedly")
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    fn pattern(len: usize) -> Vec<u8> {
        (0..len).map(|i| ((i * 7 + i / 4099) % 256) as u8).collect()
    }

    /// Whether the filesystem under `dir` takes an aligned `O_DIRECT` write.
    fn takes_direct_writes(dir: &std::path::Path) -> bool {
        let mut block = Block::new().unwrap();
        block.fill(&[b'x'; DIRECT_ALIGN]);
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_DIRECT)
            .open(dir.join("probe"))
            .and_then(|f| f.write_all_at(block.bytes(), 0))
            .is_ok()
    }

    /// Blocks of any length and alignment, past the direct threshold and not, land in order;
    /// the aligned ones past the threshold bypass the page cache where the filesystem allows.
    #[test]
    fn block_writer_keeps_every_byte_in_order_across_direct_and_cached_blocks() {
        let m = SPILL_CHUNK;
        let head = DIRECT_AFTER as usize;
        // (name, block lengths, bytes expected to go direct where the filesystem allows)
        let cases: &[(&str, &[usize], u64)] = &[
            ("below the threshold only", &[m, m, 17], 0),
            (
                "cached head then direct blocks",
                &[head, m, m, 1],
                2 * m as u64,
            ),
            (
                // An odd-sized block leaves every later offset unaligned: page cache only.
                "an unaligned block past the threshold, then aligned ones",
                &[head, 4095, m, m],
                0,
            ),
            (
                "crossing the threshold inside a block",
                &[head - 1, 1, m, m],
                2 * m as u64,
            ),
            ("ends on an aligned block", &[head, m], m as u64),
        ];
        for (name, lengths, direct) in cases {
            let dir = tempfile::tempdir().unwrap();
            let direct = if takes_direct_writes(dir.path()) {
                *direct
            } else {
                0
            };
            let path = dir.path().join("t");
            let file = File::create_new(&path).unwrap();
            let mut writer = BlockWriter::new(file);
            let total: usize = lengths.iter().sum();
            let data = pattern(total);
            let mut at = 0;
            for &len in *lengths {
                // Through a block, so the memory is aligned as in a capture.
                let mut block = Block::new().unwrap();
                let mut rest = &data[at..at + len];
                while !rest.is_empty() {
                    block.clear();
                    let took = block.fill(rest);
                    writer.write(block.bytes()).unwrap();
                    rest = &rest[took..];
                }
                at += len;
            }
            assert_eq!(writer.direct_bytes(), direct, "{name}");
            drop(writer);
            let mut on_disk = Vec::new();
            File::open(&path)
                .unwrap()
                .read_to_end(&mut on_disk)
                .unwrap();
            assert!(on_disk == data, "{name}: bytes differ");
        }
    }

    /// A direct write that fails (here: a read-only descriptor) is rewritten through the page
    /// cache, and later blocks stay there.
    #[test]
    fn a_refused_direct_write_is_rewritten_through_the_page_cache() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t");
        let mut writer = BlockWriter::new(File::create_new(&path).unwrap());
        writer.direct = Direct::Open(File::open(&path).unwrap());
        let data = pattern(DIRECT_AFTER as usize + 2 * SPILL_CHUNK);
        let mut block = Block::new().unwrap();
        for chunk in data.chunks(SPILL_CHUNK) {
            block.clear();
            block.fill(chunk);
            writer.write(block.bytes()).unwrap();
        }
        assert_eq!(writer.direct_bytes(), 0);
        assert!(matches!(writer.direct, Direct::Unavailable));
        assert!(std::fs::read(&path).unwrap() == data);
    }

    /// A failure on the writing thread reaches the capture: at a later write or at finish.
    #[test]
    fn a_failed_write_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t");
        File::create_new(&path).unwrap();
        let read_only = File::open(&path).unwrap();
        let mut sink = SpilledSink::start(read_only, Sha256::new(), b"head").unwrap();
        let data = pattern((SPILL_BUFFERS + 3) * SPILL_CHUNK);
        let failed = match sink.write(&data) {
            Err(e) => e,
            Ok(()) => sink.finish().err().unwrap(),
        };
        assert_eq!(failed.raw_os_error(), Some(libc::EBADF), "{failed}");
    }

    /// Aligned for direct I/O, and to a huge page, which is what lets the kernel back a block
    /// with one (whether it does depends on the system's settings, so that is not asserted).
    #[test]
    fn blocks_are_aligned_for_direct_io_and_huge_pages() {
        for _ in 0..4 {
            let mut block = Block::new().unwrap();
            block.fill(&[1; SPILL_CHUNK]);
            assert!(block.is_full());
            assert!(is_aligned(block.bytes(), 0));
            assert_eq!(block.bytes().as_ptr().addr() % HUGE_PAGE, 0);
        }
    }
}
