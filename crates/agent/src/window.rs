//! The window the loop plans requests for, and the catalog form that fits it.
//!
//! A window starts as the catalog says (or as the front end learned it from the server), and
//! shrinks when a server's context-overflow answer names a smaller one: the loop remembers it
//! for the rest of the session instead of sending the same over-long request again. The
//! output a turn may use is at most a quarter of the window, so a small window keeps room for
//! the prompt (servers such as vLLM count both against it).
//!
//! **Key decision:** below [`COMPACT_BELOW`] tokens, `descriptions = "auto"` sends the compact
//! catalog (one sentence per tool, the same schemas) and the short system prompt: the full
//! catalog alone is about 4,000 tokens, which a 4,096-token window cannot hold at all.

use tackle_llm::OverflowSizes;
use tackle_runtime::Descriptions;

use crate::model::ModelSetup;

/// Windows smaller than this many tokens get the compact catalog under `auto`.
pub const COMPACT_BELOW: u64 = 16_384;

/// `[tools] descriptions`: which catalog form a session sends.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DescriptionsSetting {
    /// Compact below [`COMPACT_BELOW`] tokens of window, full above.
    #[default]
    Auto,
    Full,
    Compact,
}

impl DescriptionsSetting {
    pub const NAMES: [&'static str; 3] = ["auto", "full", "compact"];

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "auto" => Some(Self::Auto),
            "full" => Some(Self::Full),
            "compact" => Some(Self::Compact),
            _ => None,
        }
    }

    /// The form a window of `context` tokens gets.
    pub fn form_for(self, context: u64) -> Descriptions {
        match self {
            Self::Full => Descriptions::Full,
            Self::Compact => Descriptions::Compact,
            Self::Auto if context < COMPACT_BELOW => Descriptions::Compact,
            Self::Auto => Descriptions::Full,
        }
    }
}

/// Where the window the loop uses came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowSource {
    /// The model's catalog entry (built in, configured, or probed by the front end).
    Catalog,
    /// The server's answer to a request that did not fit.
    Server,
}

impl WindowSource {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Catalog => "the model catalog",
            Self::Server => "the server's answer to an over-long request",
        }
    }
}

/// The window requests are planned for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// Tokens of input and output together.
    pub context: u64,
    /// The output limit of one turn.
    pub output: u32,
    pub source: WindowSource,
}

impl Window {
    /// The window of a model as its setup has it.
    pub fn of(model: &ModelSetup) -> Self {
        Self::sized(
            model.entry.context_window,
            model.max_tokens,
            WindowSource::Catalog,
        )
    }

    fn sized(context: u64, max_tokens: u32, source: WindowSource) -> Self {
        let quarter = u32::try_from(context / 4).unwrap_or(u32::MAX).max(1);
        Self {
            context,
            output: max_tokens.clamp(1, quarter),
            source,
        }
    }

    /// The prompt tokens a request may use: the window less the output limit.
    pub fn prompt(&self) -> u64 {
        self.context.saturating_sub(u64::from(self.output))
    }

    /// Takes the window an overflow answer names when it is smaller than this one; true when
    /// it was. `max_tokens` is the turn's output limit before any window shrank it.
    pub fn learn(&mut self, sizes: OverflowSizes, max_tokens: u32) -> bool {
        match sizes.window {
            Some(window) if window > 0 && window < self.context => {
                *self = Self::sized(window, max_tokens, WindowSource::Server);
                true
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_is_at_most_a_quarter_of_the_window() {
        let w = Window::sized(4096, 4096, WindowSource::Catalog);
        assert_eq!((w.output, w.prompt()), (1024, 3072));
        let w = Window::sized(200_000, 16_384, WindowSource::Catalog);
        assert_eq!((w.output, w.prompt()), (16_384, 183_616));
    }

    #[test]
    fn a_window_only_shrinks() {
        let mut w = Window::sized(32_768, 4096, WindowSource::Catalog);
        let sizes = |window| OverflowSizes {
            prompt: Some(4811),
            window,
        };
        assert!(!w.learn(sizes(None), 4096));
        assert!(!w.learn(sizes(Some(65_536)), 4096));
        assert!(w.learn(sizes(Some(4096)), 4096));
        assert_eq!(
            w,
            Window {
                context: 4096,
                output: 1024,
                source: WindowSource::Server
            }
        );
    }

    #[test]
    fn auto_is_compact_below_sixteen_k() {
        let auto = DescriptionsSetting::Auto;
        assert_eq!(auto.form_for(4096), Descriptions::Compact);
        assert_eq!(auto.form_for(16_384), Descriptions::Full);
        assert_eq!(DescriptionsSetting::Full.form_for(4096), Descriptions::Full);
        assert_eq!(
            DescriptionsSetting::Compact.form_for(1_000_000),
            Descriptions::Compact
        );
    }
}
