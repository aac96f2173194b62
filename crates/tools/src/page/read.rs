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

/// The most a page's text is sized for up front; a larger page grows past it as it fills.
const RESERVE_CAP: usize = 1 << 20;

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
    // Content shorter than a block is read into as much of the buffer as it needs: a thread's
    // first read of a small file then zeroes (and faults in) kilobytes, not a megabyte.
    let want = blocks.read.min(usize::try_from(len).unwrap_or(usize::MAX));
    SCRATCH.with_borrow_mut(|buf| {
        if buf.len() < want {
            buf.resize(want, 0);
        }
        Scan::new(file, index, req, len, blocks).run(&mut buf[..want])
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
    ///
    /// Whole lines of this block that need no cut are gathered into a run and taken in one copy
    /// with one UTF-8 check ([`PageBuilder::push_run`]); a line begun in the previous block or
    /// too long to show whole goes through the line-at-a-time path.
    fn collect(&mut self, block: &[u8], base: u64, mut at: usize) -> Option<u64> {
        self.page
            .reserve_for(self.len - (base + at as u64), self.limit);
        let mut run = at;
        while let Some(newline) = memchr::memchr(b'\n', &block[at..]) {
            let end = at + newline;
            if self.page.has_partial_line() || newline > self.page.max_line_bytes {
                self.page.push_run(&block[run..at]);
                self.page.extend(&block[at..end]);
                self.page.finish_line(self.line, true);
                run = end + 1;
            } else {
                self.page.lines += 1;
            }
            at = end + 1;
            self.line += 1;
            let start = base + at as u64;
            if self.line == self.next_checkpoint {
                self.record_checkpoint(start);
            }
            if self.page.lines == self.limit {
                self.page.push_run(&block[run..at]);
                return Some(start);
            }
        }
        self.page.push_run(&block[run..at]);
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

    /// Makes room once for the page's text: at most the content left, what `limit` lines of
    /// the longest shown length hold, and [`RESERVE_CAP`], so the text is not grown by doubling.
    fn reserve_for(&mut self, left: u64, limit: usize) {
        if self.text.capacity() > 0 {
            return;
        }
        let lines_hold = limit.saturating_mul(self.max_line_bytes.saturating_add(1));
        let want = usize::try_from(left)
            .unwrap_or(usize::MAX)
            .min(lines_hold)
            .min(RESERVE_CAP);
        self.text.reserve(want);
    }

    /// Whole lines, each ending in its newline and none needing a cut, that were counted in
    /// `lines` already. Decoding them together is decoding each: a newline is a whole character
    /// in UTF-8 and never part of an invalid sequence, so each line's replacements are its own.
    fn push_run(&mut self, lines: &[u8]) {
        if !lines.is_empty() {
            self.text.push_str(&lossy(lines));
        }
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

/// Valid UTF-8 borrowed, through the standard validator's ASCII fast path; anything else with
/// U+FFFD for each invalid sequence.
fn lossy(bytes: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    }
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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)] // a failed test should panic loudly
mod tests {
    use super::*;
    use std::io::Write;

    fn file_with(content: &[u8]) -> File {
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(content).unwrap();
        file
    }

    fn req(offset: u64, limit: usize) -> PageRequest {
        PageRequest {
            offset,
            limit,
            max_line_bytes: 1 << 20,
        }
    }

    fn numbered(lines: usize) -> String {
        (1..=lines).map(|n| format!("line {n}\n")).collect()
    }

    /// What a page must be, computed the obvious way from the whole content.
    struct Expected {
        text: String,
        lines: usize,
        next_offset: Option<u64>,
        total: u64,
        truncated: Vec<u64>,
    }

    fn reference(content: &[u8], req: &PageRequest) -> Result<Expected, u64> {
        let all: Vec<&[u8]> = content.split_inclusive(|&b| b == b'\n').collect();
        let total = all.len() as u64;
        if req.offset > total && !(req.offset == 1 && total == 0) {
            return Err(total);
        }
        let first = (req.offset - 1) as usize;
        let end = (first + req.limit.min(MAX_PAGE_LINES)).min(all.len());
        let mut text = String::new();
        let mut truncated = Vec::new();
        for (i, line) in all[first..end].iter().enumerate() {
            let (body, newline) = match line.strip_suffix(b"\n") {
                Some(body) => (body, true),
                None => (*line, false),
            };
            if body.len() > req.max_line_bytes {
                let body = std::str::from_utf8(body).expect("cut tests use valid UTF-8");
                let mut cut = req.max_line_bytes;
                while !body.is_char_boundary(cut) {
                    cut -= 1;
                }
                text.push_str(&body[..cut]);
                text.push_str(&format!(" … [line truncated: {} bytes]", body.len()));
                truncated.push(req.offset + i as u64);
            } else {
                text.push_str(&String::from_utf8_lossy(body));
            }
            if newline {
                text.push('\n');
            }
        }
        Ok(Expected {
            text,
            lines: end - first,
            next_offset: (end < all.len()).then_some(end as u64 + 1),
            total,
            truncated,
        })
    }

    fn check(
        content: &[u8],
        file: &File,
        index: &mut LineIndex,
        req: &PageRequest,
        blocks: Blocks,
    ) {
        let got = read_page_in_blocks(file, index, req, blocks);
        let context = format!("{req:?} {blocks:?} stride {}", index.stride());
        match (reference(content, req), got) {
            (Ok(want), Ok(page)) => {
                assert_eq!(page.text, want.text, "{context}");
                assert_eq!(page.first_line, req.offset, "{context}");
                assert_eq!(page.lines, want.lines, "{context}");
                assert_eq!(page.next_offset, want.next_offset, "{context}");
                assert_eq!(page.truncated_lines, want.truncated, "{context}");
                if let Some(total) = page.total_lines {
                    assert_eq!(total, want.total, "{context}");
                }
                if page.next_offset.is_none() {
                    assert_eq!(page.total_lines, Some(want.total), "{context}");
                }
            }
            (
                Err(total),
                Err(PageError::OffsetPastEnd {
                    offset,
                    total_lines,
                }),
            ) => {
                assert_eq!((offset, total_lines), (req.offset, total), "{context}");
            }
            (want, got) => panic!(
                "{context}: reference {:?} but read_page {got:?}",
                want.map(|w| w.text)
            ),
        }
    }

    /// A small deterministic generator so the random cases are reproducible without a crate.
    struct XorShift(u64);

    impl XorShift {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    fn random_content(rng: &mut XorShift, lines: usize, trailing_newline: bool) -> Vec<u8> {
        let pieces = ["a", "bc", "é", "日本", "🦀", " ", "\t", "x=1;", "\r"];
        let mut out = Vec::new();
        for n in 0..lines {
            let len = match rng.below(10) {
                0 => 0,
                1 => 40 + rng.below(40),
                _ => rng.below(12),
            };
            for _ in 0..len {
                out.extend_from_slice(pieces[rng.below(pieces.len() as u64) as usize].as_bytes());
            }
            if n + 1 < lines || trailing_newline {
                out.push(b'\n');
            }
        }
        out
    }

    #[test]
    fn empty_file_gives_an_empty_page_at_offset_one_only() {
        let file = file_with(b"");
        let mut index = LineIndex::new();
        let page = read_page(&file, &mut index, &req(1, 2000)).unwrap();
        assert_eq!(page.text, "");
        assert_eq!(page.lines, 0);
        assert_eq!(page.next_offset, None);
        assert_eq!(page.total_lines, Some(0));
        match read_page(&file, &mut index, &req(2, 10)) {
            Err(PageError::OffsetPastEnd {
                offset: 2,
                total_lines: 0,
            }) => {}
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn final_line_without_newline_stays_without() {
        let file = file_with(b"one\ntwo\nthree");
        let mut index = LineIndex::new();
        let page = read_page(&file, &mut index, &req(2, 10)).unwrap();
        assert_eq!(page.text, "two\nthree");
        assert_eq!(page.lines, 2);
        assert_eq!(page.next_offset, None);
        assert_eq!(page.total_lines, Some(3));
    }

    #[test]
    fn exactly_a_full_page_has_no_next_offset_and_one_more_line_has() {
        let file = file_with(numbered(2000).as_bytes());
        let page = read_page(&file, &mut LineIndex::new(), &req(1, 2000)).unwrap();
        assert_eq!(page.lines, 2000);
        assert_eq!(page.next_offset, None);
        assert_eq!(page.total_lines, Some(2000));
        assert!(page.text.ends_with("line 2000\n"));

        let file = file_with(numbered(2001).as_bytes());
        let mut index = LineIndex::new();
        let page = read_page(&file, &mut index, &req(1, 2000)).unwrap();
        assert_eq!(page.lines, 2000);
        assert_eq!(page.next_offset, Some(2001));
        assert_eq!(page.total_lines, None);
        let rest = read_page(&file, &mut index, &req(2001, 2000)).unwrap();
        assert_eq!(rest.text, "line 2001\n");
        assert_eq!(rest.next_offset, None);
        assert_eq!(rest.total_lines, Some(2001));
    }

    #[test]
    fn limits_above_the_maximum_are_clamped() {
        let file = file_with(numbered(2500).as_bytes());
        let page = read_page(&file, &mut LineIndex::new(), &req(1, 5000)).unwrap();
        assert_eq!(page.lines, MAX_PAGE_LINES);
        assert_eq!(page.next_offset, Some(2001));
    }

    #[test]
    fn middle_last_and_past_the_end_offsets() {
        let content = numbered(100);
        let file = file_with(content.as_bytes());
        let mut index = LineIndex::with_stride(8);
        let page = read_page(&file, &mut index, &req(50, 3)).unwrap();
        assert_eq!(page.text, "line 50\nline 51\nline 52\n");
        assert_eq!(page.next_offset, Some(53));
        let last = read_page(&file, &mut index, &req(100, 3)).unwrap();
        assert_eq!(last.text, "line 100\n");
        assert_eq!(last.next_offset, None);
        assert_eq!(last.total_lines, Some(100));
        let err = read_page(&file, &mut index, &req(101, 3)).unwrap_err();
        assert!(matches!(
            err,
            PageError::OffsetPastEnd {
                offset: 101,
                total_lines: 100
            }
        ));
        assert_eq!(
            err.to_string(),
            "read: offset 101 is past the end; the content has 100 lines, pass an offset between 1 and 100"
        );
        // Past the end on a fresh index is found by scanning.
        let err = read_page(&file, &mut LineIndex::with_stride(8), &req(500, 3)).unwrap_err();
        assert!(matches!(
            err,
            PageError::OffsetPastEnd {
                offset: 500,
                total_lines: 100
            }
        ));
    }

    #[test]
    fn zero_limit_and_zero_offset_are_errors() {
        let file = file_with(b"a\n");
        let mut index = LineIndex::new();
        assert!(matches!(
            read_page(&file, &mut index, &req(1, 0)),
            Err(PageError::ZeroLimit)
        ));
        assert!(matches!(
            read_page(&file, &mut index, &req(0, 1)),
            Err(PageError::ZeroOffset)
        ));
    }

    #[test]
    fn crlf_lines_are_kept_as_they_are() {
        let file = file_with(b"a\r\nb\r\nc\r\n");
        let page = read_page(&file, &mut LineIndex::new(), &req(2, 5)).unwrap();
        assert_eq!(page.text, "b\r\nc\r\n");
        assert_eq!(page.lines, 2);
    }

    #[test]
    fn long_lines_are_cut_at_a_char_boundary_with_the_marker() {
        // "ab" then 'é' (2 bytes) straddling byte 3, then more.
        let file = file_with("abéxyz\nshort\n€€€€\n".as_bytes());
        let page = read_page(
            &file,
            &mut LineIndex::new(),
            &PageRequest {
                offset: 1,
                limit: 10,
                max_line_bytes: 3,
            },
        )
        .unwrap();
        assert_eq!(
            page.text,
            "ab … [line truncated: 7 bytes]\nsho … [line truncated: 5 bytes]\n€ … [line truncated: 12 bytes]\n"
        );
        assert_eq!(page.truncated_lines, vec![1, 2, 3]);
    }

    #[test]
    fn long_line_spanning_many_blocks_keeps_only_its_head() {
        let mut content = "é".repeat(10_000).into_bytes();
        content.extend_from_slice(b"\nnext\n");
        let file = file_with(&content);
        let req = PageRequest {
            offset: 1,
            limit: 2,
            max_line_bytes: 101,
        };
        let blocks = Blocks {
            read: 64,
            count: 16,
        };
        let page =
            read_page_in_blocks(&file, &mut LineIndex::with_stride(1), &req, blocks).unwrap();
        assert_eq!(
            page.text,
            format!("{} … [line truncated: 20000 bytes]\nnext\n", "é".repeat(50))
        );
        assert_eq!(page.truncated_lines, vec![1]);
    }

    #[test]
    fn invalid_utf8_is_decoded_lossily() {
        let file = file_with(b"ok\n\xff\xfe bad\n\xe2\x82\n");
        let page = read_page(&file, &mut LineIndex::new(), &req(1, 10)).unwrap();
        assert_eq!(page.text, "ok\n\u{fffd}\u{fffd} bad\n\u{fffd}\n");
        let cut = read_page(
            &file,
            &mut LineIndex::new(),
            &PageRequest {
                offset: 2,
                limit: 1,
                max_line_bytes: 1,
            },
        )
        .unwrap();
        assert_eq!(cut.text, "\u{fffd} … [line truncated: 6 bytes]\n");
    }

    #[test]
    fn pages_across_stride_and_block_boundaries_match_the_reference() {
        let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
        let shapes = [
            (0, true),
            (1, false),
            (1, true),
            (37, true),
            (300, false),
            (300, true),
        ];
        let blockings = [
            Blocks { read: 1, count: 1 },
            Blocks { read: 7, count: 3 },
            Blocks {
                read: 64,
                count: 16,
            },
            Blocks {
                read: 4096,
                count: 4096,
            },
        ];
        for (lines, trailing) in shapes {
            let content = random_content(&mut rng, lines, trailing);
            let file = file_with(&content);
            let total = lines as u64;
            for stride in [1, 2, 3, 5, 64] {
                for blocks in blockings {
                    // One index per (stride, blocks), reused across requests in varied order, so
                    // both fresh scans and checkpoint reuse are compared.
                    let mut index = LineIndex::with_stride(stride);
                    let mut requests = Vec::new();
                    for offset in [
                        1,
                        2,
                        stride,
                        stride + 1,
                        2 * stride + 1,
                        total,
                        total + 1,
                        total + 2,
                    ] {
                        for limit in [1, 2, stride as usize, 7, 2000] {
                            requests.push(PageRequest {
                                offset: offset.max(1),
                                limit,
                                max_line_bytes: 1 << 20,
                            });
                        }
                    }
                    for _ in 0..40 {
                        requests.push(PageRequest {
                            offset: 1 + rng.below(total + 3),
                            limit: 1 + rng.below(40) as usize,
                            max_line_bytes: [0, 1, 2, 5, 30, 1 << 20][rng.below(6) as usize],
                        });
                    }
                    for req in &requests {
                        check(&content, &file, &mut index, req, blocks);
                    }
                    // Reading the whole content by following next_offset reproduces it.
                    let mut fresh = LineIndex::with_stride(stride);
                    let mut offset = Some(1);
                    let mut text = String::new();
                    while let Some(at) = offset {
                        let page =
                            read_page_in_blocks(&file, &mut fresh, &req(at, 4), blocks).unwrap();
                        text.push_str(&page.text);
                        offset = page.next_offset;
                    }
                    assert_eq!(text.as_bytes(), &content[..]);
                }
            }
        }
    }

    #[test]
    fn invalid_utf8_across_lines_and_blocks_matches_line_by_line_decoding() {
        // Runs of whole lines are decoded together; a sequence cut by a newline, a block edge or
        // the end must still come out as each line decoded on its own.
        let pieces: [&[u8]; 9] = [
            b"a",
            b"\xff",
            b"\xe2\x82",
            b"\xc3",
            b"\xa9",
            "é".as_bytes(),
            "🦀".as_bytes(),
            b"\xf0\x9f",
            b"\r",
        ];
        let mut rng = XorShift(0x2545_F491_4F6C_DD1D);
        for lines in [1, 5, 60, 400] {
            let mut content = Vec::new();
            for n in 0..lines {
                for _ in 0..rng.below(14) {
                    content.extend_from_slice(pieces[rng.below(pieces.len() as u64) as usize]);
                }
                if n + 1 < lines || rng.below(2) == 0 {
                    content.push(b'\n');
                }
            }
            let file = file_with(&content);
            for blocks in [
                Blocks { read: 1, count: 1 },
                Blocks { read: 5, count: 2 },
                Blocks {
                    read: 4096,
                    count: 512,
                },
            ] {
                let mut index = LineIndex::with_stride(3);
                for (offset, limit) in [(1, 2000), (1, 3), (2, 7), (lines as u64, 1)] {
                    let req = PageRequest {
                        offset,
                        limit,
                        max_line_bytes: 1 << 20,
                    };
                    check(&content, &file, &mut index, &req, blocks);
                }
            }
        }
    }

    #[test]
    fn checkpoints_match_true_line_starts() {
        let mut rng = XorShift(42);
        let content = random_content(&mut rng, 1000, true);
        let file = file_with(&content);
        let starts: Vec<u64> = std::iter::once(0)
            .chain(memchr::memchr_iter(b'\n', &content).map(|i| i as u64 + 1))
            .filter(|&s| s < content.len() as u64)
            .collect();
        let mut index = LineIndex::with_stride(7);
        read_page_in_blocks(
            &file,
            &mut index,
            &req(990, 5),
            Blocks { read: 13, count: 5 },
        )
        .unwrap();
        assert_eq!(index.checkpoints(), 1000_usize.div_ceil(7));
        for k in 0..index.checkpoints() {
            let line = 1 + 7 * k as u64;
            assert_eq!(index.nearest(line), (line, starts[7 * k]));
        }
    }

    #[test]
    fn a_repeated_read_scans_far_fewer_bytes_than_the_first() {
        let content = numbered(200_000);
        let file = file_with(content.as_bytes());
        let mut index = LineIndex::with_stride(256);
        let blocks = Blocks {
            read: 4096,
            count: 512,
        };
        let first = read_page_in_blocks(&file, &mut index, &req(190_000, 2000), blocks).unwrap();
        let again = read_page_in_blocks(&file, &mut index, &req(190_000, 2000), blocks).unwrap();
        assert_eq!(
            first,
            Page {
                bytes_read: first.bytes_read,
                ..again.clone()
            }
        );
        assert!(first.bytes_read > 2_000_000, "{}", first.bytes_read);
        // One stride (256 lines) before the page plus the page (2000 lines of ~12 bytes) plus
        // block rounding.
        assert!(again.bytes_read < 40_000, "{}", again.bytes_read);
        // An earlier page is served from the checkpoints too.
        let earlier = read_page_in_blocks(&file, &mut index, &req(1_000, 10), blocks).unwrap();
        assert!(earlier.bytes_read <= 8192, "{}", earlier.bytes_read);
        assert_eq!(earlier.text.lines().next(), Some("line 1000"));
    }

    #[test]
    fn index_starts_over_when_the_length_changes() {
        let mut file = file_with(numbered(10).as_bytes());
        let mut index = LineIndex::with_stride(2);
        read_page(&file, &mut index, &req(10, 1)).unwrap();
        assert_eq!(index.total_lines(), Some(10));
        file.write_all(b"eleven\n").unwrap();
        let page = read_page(&file, &mut index, &req(11, 1)).unwrap();
        assert_eq!(page.text, "eleven\n");
        assert_eq!(page.total_lines, Some(11));
    }
}
