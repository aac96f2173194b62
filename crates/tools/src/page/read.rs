//! One page read: seek to the nearest checkpoint, count newlines to the first requested line,
//! then collect up to `limit` lines, recording checkpoints on the way.

use std::borrow::Cow;
use std::cell::RefCell;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

use super::{LineIndex, MAX_PAGE_LINES, PageError};

/// Bytes per positional read. 1 MiB amortises the syscall and stays inside a 2 MiB L2, so the
/// newline count reads the bytes the kernel just copied while they are still cached.
const BLOCK_BYTES: usize = 1 << 20;

/// Bytes per newline count while skipping. When a count shows that a checkpoint or the first
/// requested line falls inside a sub-block, only that sub-block is walked newline by newline.
const SUB_BLOCK_BYTES: usize = 16 << 10;

thread_local! {
    /// One read buffer per thread, reused across calls so a repeated read does not pay for
    /// allocating and faulting in a fresh megabyte.
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Which lines to return.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageRequest {
    /// 1-based number of the first line returned.
    pub offset: u64,
    /// Lines to return, 1..=[`MAX_PAGE_LINES`]; larger values are clamped.
    pub limit: usize,
    /// Lines longer than this many bytes (newline excluded) are cut.
    pub max_line_bytes: usize,
}

/// A page of lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// The lines, each ending in `'\n'` except a final line that has none in the content. A line
    /// longer than `max_line_bytes` is cut at a UTF-8 character boundary at or before that many
    /// bytes and followed by ` … [line truncated: N bytes]`, N being the full line length without
    /// its newline. Invalid UTF-8 is decoded lossily; `"\r\n"` endings are kept as they are.
    pub text: String,
    /// Number of the first line returned; equals the request's `offset`.
    pub first_line: u64,
    /// How many lines were returned.
    pub lines: usize,
    /// `Some(first_line + lines)` when more lines follow, else `None`.
    pub next_offset: Option<u64>,
    /// The total line count, when this or an earlier scan reached the end.
    pub total_lines: Option<u64>,
    /// 1-based numbers of the lines that were cut.
    pub truncated_lines: Vec<u64>,
    /// Bytes this call read from the content.
    pub bytes_read: u64,
}

/// Reads the page `req` asks for from `file`, using and extending `index`.
///
/// `index` must describe this content; take it from [`super::LineIndexCache`] keyed by the
/// content's [`super::ContentIdentity`]. Offset 1 on empty content is an empty page; any other
/// offset past the last line is [`PageError::OffsetPastEnd`].
pub fn read_page(file: &File, index: &mut LineIndex, req: &PageRequest) -> Result<Page, PageError> {
    read_page_in_blocks(file, index, req, Blocks::DEFAULT)
}

/// Read and count granularity; small values in tests put block and sub-block edges everywhere.
#[derive(Debug, Clone, Copy)]
pub(super) struct Blocks {
    pub(super) read: usize,
    pub(super) count: usize,
}

impl Blocks {
    const DEFAULT: Blocks = Blocks {
        read: BLOCK_BYTES,
        count: SUB_BLOCK_BYTES,
    };
}

pub(super) fn read_page_in_blocks(
    file: &File,
    index: &mut LineIndex,
    req: &PageRequest,
    blocks: Blocks,
) -> Result<Page, PageError> {
    if req.offset == 0 {
        return Err(PageError::ZeroOffset);
    }
    if req.limit == 0 {
        return Err(PageError::ZeroLimit);
    }
    let len = file
        .metadata()
        .map_err(|source| PageError::Io { at: 0, source })?
        .len();
    index.adopt_len(len);
    if len == 0 {
        index.set_total_lines(0);
    }
    if let Some(total) = index.total_lines() {
        if total == 0 && req.offset == 1 {
            return Ok(Page {
                text: String::new(),
                first_line: 1,
                lines: 0,
                next_offset: None,
                total_lines: Some(0),
                truncated_lines: Vec::new(),
                bytes_read: 0,
            });
        }
        if req.offset > total {
            return Err(PageError::OffsetPastEnd {
                offset: req.offset,
                total_lines: total,
            });
        }
    }
    let blocks = Blocks {
        read: blocks.read.max(1),
        count: blocks.count.clamp(1, blocks.read.max(1)),
    };
    SCRATCH.with_borrow_mut(|buf| {
        if buf.len() < blocks.read {
            buf.resize(blocks.read, 0);
        }
        Scan::new(file, index, req, len, blocks).run(&mut buf[..blocks.read])
    })
}

/// The state of one scan from a checkpoint towards the end of the page.
struct Scan<'a> {
    file: &'a File,
    index: &'a mut LineIndex,
    len: u64,
    offset: u64,
    limit: usize,
    count_bytes: usize,
    /// Number of the line the cursor is in.
    line: u64,
    /// Line number of the next checkpoint to record.
    next_checkpoint: u64,
    /// True once the cursor has reached the start of line `offset`.
    reached: bool,
    bytes_read: u64,
    page: PageBuilder,
}

impl<'a> Scan<'a> {
    fn new(
        file: &'a File,
        index: &'a mut LineIndex,
        req: &PageRequest,
        len: u64,
        blocks: Blocks,
    ) -> Self {
        let next_checkpoint = index.next_checkpoint_line();
        Scan {
            file,
            index,
            len,
            offset: req.offset,
            limit: req.limit.min(MAX_PAGE_LINES),
            count_bytes: blocks.count,
            line: 0,
            next_checkpoint,
            reached: false,
            bytes_read: 0,
            page: PageBuilder::new(req.max_line_bytes),
        }
    }

    fn run(mut self, buf: &mut [u8]) -> Result<Page, PageError> {
        let (start_line, mut pos) = self.index.nearest(self.offset);
        self.line = start_line;
        self.reached = start_line == self.offset;
        let mut last_byte = None;
        while pos < self.len {
            let want = buf.len().min((self.len - pos) as usize);
            let block = &mut buf[..want];
            read_exact_at(self.file, block, pos)?;
            self.bytes_read += want as u64;
            last_byte = block.last().copied();
            let block = &*block;
            let mut at = 0;
            if !self.reached {
                at = self.skip(block, pos);
            }
            if self.reached
                && let Some(end) = self.collect(block, pos, at)
            {
                return Ok(self.finish(Some(end)));
            }
            pos += want as u64;
        }
        if self.reached {
            return Ok(self.finish(None));
        }
        // The end came before line `offset`: every newline has been counted since the checkpoint.
        let total = if last_byte == Some(b'\n') {
            self.line - 1
        } else {
            self.line
        };
        self.index.set_total_lines(total);
        Err(PageError::OffsetPastEnd {
            offset: self.offset,
            total_lines: total,
        })
    }

    /// Counts newlines in `block` (which starts at byte `base`) until line `offset` starts,
    /// recording checkpoints passed. Returns where in `block` line `offset` starts, or the block
    /// length when it does not start in this block.
    fn skip(&mut self, block: &[u8], base: u64) -> usize {
        let mut at = 0;
        while at < block.len() {
            let end = (at + self.count_bytes).min(block.len());
            let sub = &block[at..end];
            let target = self.offset.min(self.next_checkpoint);
            let newlines = bytecount::count(sub, b'\n') as u64;
            if self.line + newlines < target {
                self.line += newlines;
                at = end;
                continue;
            }
            for newline in memchr::memchr_iter(b'\n', sub) {
                let next = at + newline + 1;
                let start = base + next as u64;
                self.line += 1;
                if self.line == self.next_checkpoint {
                    self.record_checkpoint(start);
                }
                if self.line == self.offset && start < self.len {
                    self.reached = true;
                    return next;
                }
            }
            at = end;
        }
        block.len()
    }

    /// Collects lines from `block[at..]`. Returns the byte just past the page when the page is
    /// complete.
    fn collect(&mut self, block: &[u8], base: u64, mut at: usize) -> Option<u64> {
        while let Some(newline) = memchr::memchr(b'\n', &block[at..]) {
            self.page.extend(&block[at..at + newline]);
            at += newline + 1;
            self.page.finish_line(self.line, true);
            self.line += 1;
            let start = base + at as u64;
            if self.line == self.next_checkpoint {
                self.record_checkpoint(start);
            }
            if self.page.lines == self.limit {
                return Some(start);
            }
        }
        self.page.extend(&block[at..]);
        None
    }

    fn record_checkpoint(&mut self, start: u64) {
        // A newline that ends the content starts no line, so it is no checkpoint.
        if start < self.len {
            self.index.push_checkpoint(start);
        }
        self.next_checkpoint += self.index.stride();
    }

    /// Builds the page; `end` is the byte after the last full line when the limit was reached,
    /// `None` when the scan reached the end of the content.
    fn finish(mut self, end: Option<u64>) -> Page {
        if end.is_none() && self.page.has_partial_line() {
            self.page.finish_line(self.line, false);
        }
        let more = end.is_some_and(|end| end < self.len);
        let lines = self.page.lines;
        if !more {
            self.index.set_total_lines(self.offset + lines as u64 - 1);
        }
        Page {
            text: self.page.text,
            first_line: self.offset,
            lines,
            next_offset: more.then(|| self.offset + lines as u64),
            total_lines: self.index.total_lines(),
            truncated_lines: self.page.truncated_lines,
            bytes_read: self.bytes_read,
        }
    }
}

/// Accumulates rendered lines; keeps only the bytes of the current line that can be shown.
struct PageBuilder {
    max_line_bytes: usize,
    text: String,
    lines: usize,
    truncated_lines: Vec<u64>,
    /// The kept head of the current line: up to `max_line_bytes + 3` bytes, enough to tell
    /// whether the byte at the cut continues a multi-byte character.
    current: Vec<u8>,
    current_len: u64,
}

impl PageBuilder {
    fn new(max_line_bytes: usize) -> Self {
        PageBuilder {
            max_line_bytes,
            text: String::new(),
            lines: 0,
            truncated_lines: Vec::new(),
            current: Vec::new(),
            current_len: 0,
        }
    }

    fn extend(&mut self, bytes: &[u8]) {
        let keep = self.max_line_bytes.saturating_add(3);
        let room = keep.saturating_sub(self.current.len()).min(bytes.len());
        self.current.extend_from_slice(&bytes[..room]);
        self.current_len += bytes.len() as u64;
    }

    fn has_partial_line(&self) -> bool {
        self.current_len > 0
    }

    fn finish_line(&mut self, number: u64, newline: bool) {
        if self.current_len > self.max_line_bytes as u64 {
            let cut = char_floor(&self.current, self.max_line_bytes);
            self.text.push_str(&lossy(&self.current[..cut]));
            self.text
                .push_str(&format!(" … [line truncated: {} bytes]", self.current_len));
            self.truncated_lines.push(number);
        } else {
            self.text.push_str(&lossy(&self.current));
        }
        if newline {
            self.text.push('\n');
        }
        self.current.clear();
        self.current_len = 0;
        self.lines += 1;
    }
}

fn lossy(bytes: &[u8]) -> Cow<'_, str> {
    String::from_utf8_lossy(bytes)
}

/// The largest cut `<= max` that does not split a UTF-8 sequence: steps back over at most three
/// continuation bytes (a longer run is invalid UTF-8 and is cut where it stands).
fn char_floor(bytes: &[u8], max: usize) -> usize {
    let mut cut = max.min(bytes.len());
    for _ in 0..3 {
        match bytes.get(cut) {
            Some(byte) if cut > 0 && byte & 0xC0 == 0x80 => cut -= 1,
            _ => break,
        }
    }
    if bytes.get(cut).is_some_and(|byte| byte & 0xC0 == 0x80) {
        // Four or more continuation bytes in a row: not a character, so no boundary to respect.
        return max.min(bytes.len());
    }
    cut
}

/// Fills `buf` from `pos`; content that ends early changed underneath the read.
fn read_exact_at(file: &File, buf: &mut [u8], pos: u64) -> Result<(), PageError> {
    let mut filled = 0;
    while filled < buf.len() {
        let at = pos + filled as u64;
        match file.read_at(&mut buf[filled..], at) {
            Ok(0) => {
                return Err(PageError::Io {
                    at,
                    source: io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the content shrank while it was being read; read it again",
                    ),
                });
            }
            Ok(n) => filled += n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(source) => return Err(PageError::Io { at, source }),
        }
    }
    Ok(())
}
