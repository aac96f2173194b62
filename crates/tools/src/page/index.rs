//! The sparse line index: where every `stride`-th line starts, as far as anyone has scanned.

/// Checkpoint spacing used by [`LineIndex::new`] and the cache: every 4,096 lines. At ~60 bytes a
/// line that is one checkpoint (8 bytes) per ~240 KiB, so a 1 GiB file costs ~35 KiB of index
/// and a repeated read rescans at most ~240 KiB before its page.
pub const DEFAULT_STRIDE: u64 = 4096;

/// Sparse line index: the byte offset of line `1 + k * stride` for `k = 0, 1, …`, filled as far as
/// the content has been scanned. A later request seeks to the nearest checkpoint at or before its
/// first line. Once a scan reaches the end, the total line count is remembered too.
///
/// An index describes one content version; [`super::LineIndexCache`] keys it by
/// [`super::ContentIdentity`]. As a cheap guard, an index that sees a different content length
/// than it recorded starts over.
#[derive(Debug, Clone)]
pub struct LineIndex {
    stride: u64,
    /// `checkpoints[k]` is the byte offset where line `1 + k * stride` starts; `checkpoints[0]` is
    /// always 0 and every entry is below the content length.
    checkpoints: Vec<u64>,
    total_lines: Option<u64>,
    content_len: Option<u64>,
}

impl Default for LineIndex {
    fn default() -> Self {
        Self::new()
    }
}

impl LineIndex {
    /// An empty index with checkpoints every [`DEFAULT_STRIDE`] lines.
    pub fn new() -> Self {
        Self::with_stride(DEFAULT_STRIDE)
    }

    /// An empty index with checkpoints every `stride` lines (at least 1).
    pub fn with_stride(stride: u64) -> Self {
        LineIndex {
            stride: stride.max(1),
            checkpoints: vec![0],
            total_lines: None,
            content_len: None,
        }
    }

    /// Lines between checkpoints.
    pub fn stride(&self) -> u64 {
        self.stride
    }

    /// How many checkpoints are known (line 1 always is).
    pub fn checkpoints(&self) -> usize {
        self.checkpoints.len()
    }

    /// The number of lines, once some scan has reached the end of the content.
    pub fn total_lines(&self) -> Option<u64> {
        self.total_lines
    }

    /// Binds the index to a content length, dropping what it knew about different content.
    pub(super) fn adopt_len(&mut self, len: u64) {
        if self.content_len != Some(len) {
            *self = LineIndex {
                content_len: Some(len),
                ..LineIndex::with_stride(self.stride)
            };
        }
    }

    /// The nearest checkpoint at or before `line` (1-based): its line number and byte offset.
    pub(super) fn nearest(&self, line: u64) -> (u64, u64) {
        let wanted = (line.saturating_sub(1) / self.stride) as usize;
        let k = wanted.min(self.checkpoints.len() - 1);
        (1 + k as u64 * self.stride, self.checkpoints[k])
    }

    /// The line number of the first checkpoint not yet recorded.
    pub(super) fn next_checkpoint_line(&self) -> u64 {
        1 + self.checkpoints.len() as u64 * self.stride
    }

    /// Records that line [`Self::next_checkpoint_line`] starts at byte `start`.
    pub(super) fn push_checkpoint(&mut self, start: u64) {
        debug_assert!(self.checkpoints.last().is_some_and(|&last| last < start));
        self.checkpoints.push(start);
    }

    pub(super) fn set_total_lines(&mut self, total: u64) {
        self.total_lines = Some(total);
    }
}
