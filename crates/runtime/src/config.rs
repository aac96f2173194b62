//! The runtime's own settings. Loading them from files is the binary's job.

use std::time::Duration;

/// Per-stream preview limits (`[tool_output]` in `.agents/config.toml`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PreviewLimits {
    /// Lines of each stream shown to the model before truncation.
    pub max_lines: usize,
    /// Bytes of each stream shown to the model before truncation.
    pub max_bytes: usize,
}

impl PreviewLimits {
    /// 400 lines or 30,000 bytes per stream, whichever comes first: about 8k tokens, enough for a
    /// stack trace or a diff, small enough that one noisy command cannot flood the context.
    pub const DEFAULT: PreviewLimits = PreviewLimits {
        max_lines: 400,
        max_bytes: 30_000,
    };
}

/// The bound on one terminal result (seed 000: the event schema's 2 MiB output limit).
pub const RESULT_LIMIT_BYTES: usize = 2 * 1024 * 1024;
/// Reserved inside [`RESULT_LIMIT_BYTES`] for headings and read hints.
pub const HEADINGS_RESERVE_BYTES: usize = 16 * 1024;
/// Live display/message budget per call (seed 000, ToolProgress).
pub const LIVE_DISPLAY_BUDGET_BYTES: usize = 64 * 1024;
/// Bound on a final display.
pub const FINAL_DISPLAY_LIMIT_BYTES: usize = 64 * 1024;

/// Output limits, timeouts and digests: how the runtime shapes what every call returns.
#[derive(Clone, Debug)]
pub struct RuntimeConfig {
    pub preview: PreviewLimits,
    /// Wall-clock limit for one call's execution; exceeded → `timeout`, output kept.
    pub call_timeout: Duration,
    /// Whether survey tools' large results are shown as structural digests (seed 003,
    /// "Digested survey tools"). Off: raw output, and `retrieve_raw` is not registered.
    pub digests: bool,
}

impl RuntimeConfig {
    pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(600);
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        Self {
            preview: PreviewLimits::DEFAULT,
            call_timeout: Self::DEFAULT_CALL_TIMEOUT,
            digests: true,
        }
    }
}
