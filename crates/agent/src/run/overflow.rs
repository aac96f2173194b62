//! When a request cannot fit the window: what the loop knows about sizes, and the message a
//! run ends with, which gives both sizes and the fixes.
//!
//! The loop compacts at most once between two answers of the model. A request that is still
//! too long after that (by the estimate, or by the server's refusal), or whose part no
//! compaction can remove (system prompt, tool catalog, the last message) is larger than the
//! window, ends the run as a provider failure (`tackle run` exits 5) instead of sending the same
//! request again: against a server that refuses at once, retrying would loop without end, and
//! against a hosted model every retry is a paid request.

use tackle_llm::{LlmError, OverflowSizes};
use tackle_protocol::{Message, RunOutcome, ToolSpec};

use super::ending::Ended;
use crate::context;
use crate::window::Window;

/// A server's refusal of the last request as too long.
#[derive(Clone, Debug)]
pub(super) struct Refused {
    pub(super) sizes: OverflowSizes,
    /// The provider's error, as shown.
    pub(super) error: String,
}

impl Refused {
    pub(super) fn of(error: &LlmError) -> Self {
        Self {
            sizes: error.overflow_sizes().unwrap_or_default(),
            error: error.to_string(),
        }
    }
}

/// The estimated parts of a request that no compaction removes.
#[derive(Clone, Copy, Debug)]
pub(super) struct Fixed {
    pub(super) system: u64,
    pub(super) tools: u64,
    pub(super) last: u64,
}

impl Fixed {
    pub(super) fn of(system: &str, tools: &[ToolSpec], last: Option<&Message>) -> Self {
        Self {
            system: context::estimate_fixed(system, &[]),
            tools: context::estimate_fixed("", tools),
            last: last.map_or(0, context::estimate_unelidable),
        }
    }

    fn total(&self) -> u64 {
        self.system + self.tools + self.last
    }
}

/// Why the run cannot go on.
#[derive(Clone, Debug)]
pub(super) enum TooLong {
    /// The part no compaction removes is larger than the prompt's share of the window.
    Irreducible { fixed: Fixed, scale: f64 },
    /// Compacted once already, and the request is still too long by the estimate.
    AfterCompaction { estimate: u64 },
    /// Compacted once already, and the server refused the request again.
    RefusedAgain(Refused),
    /// The summary request itself did not fit.
    Summary(Refused),
}

impl TooLong {
    /// The run's end: a provider failure whose reason gives the sizes and the fixes.
    pub(super) fn ended(&self, window: &Window, descriptions: &str) -> Ended {
        Ended::new(
            RunOutcome::ProviderFailed,
            self.reason(window, descriptions),
        )
    }

    fn reason(&self, window: &Window, descriptions: &str) -> String {
        let what = match self {
            TooLong::Irreducible { fixed, scale } => {
                let scaled = |n: u64| (n as f64 * scale).ceil() as u64;
                format!(
                    "the request does not fit the model's context window even with nothing of the \
                     conversation but the last message: it needs about {} tokens (system prompt \
                     {}, tool catalog {} with {descriptions} descriptions, last message {})",
                    tokens(scaled(fixed.total())),
                    tokens(scaled(fixed.system)),
                    tokens(scaled(fixed.tools)),
                    tokens(scaled(fixed.last)),
                )
            }
            TooLong::AfterCompaction { estimate } => format!(
                "the conversation was compacted and the request still needs about {} tokens",
                tokens(*estimate)
            ),
            TooLong::RefusedAgain(refused) => format!(
                "the server refused the request as too long again after the conversation was \
                 compacted{} ({})",
                sizes_said(&refused.sizes),
                refused.error
            ),
            TooLong::Summary(refused) => format!(
                "the request to summarise the conversation did not fit the window either{} ({})",
                sizes_said(&refused.sizes),
                refused.error
            ),
        };
        format!(
            "{what}; the window is {} tokens, {} of them for the prompt after {} for the answer \
             (from {}). Fix: start the model's server with a larger window (llama-server -c \
             16384; Ollama: OLLAMA_CONTEXT_LENGTH=16384 or PARAMETER num_ctx 16384 in a \
             Modelfile; vLLM: --max-model-len), send a smaller catalog ([tools] descriptions = \
             \"compact\" in config.toml, or --disable-tools for tools the task does not need), or \
             use a model with a larger window",
            tokens(window.context),
            tokens(window.prompt()),
            tokens(u64::from(window.output)),
            window.source.as_str(),
        )
    }
}

fn sizes_said(sizes: &OverflowSizes) -> String {
    match (sizes.prompt, sizes.window) {
        (Some(p), Some(w)) => format!(": {} tokens against its {}", tokens(p), tokens(w)),
        (Some(p), None) => format!(": {} tokens", tokens(p)),
        (None, Some(w)) => format!(": its window is {} tokens", tokens(w)),
        (None, None) => String::new(),
    }
}

/// `4811` as `4,811`.
fn tokens(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::window::WindowSource;

    #[test]
    fn thousands() {
        assert_eq!(tokens(0), "0");
        assert_eq!(tokens(999), "999");
        assert_eq!(tokens(4811), "4,811");
        assert_eq!(tokens(1_048_576), "1,048,576");
    }

    #[test]
    fn a_refusal_names_both_sizes_and_the_fixes() {
        let window = Window {
            context: 4096,
            output: 1024,
            source: WindowSource::Server,
        };
        let refused = Refused {
            sizes: OverflowSizes {
                prompt: Some(4811),
                window: Some(4096),
            },
            error: "local model q: context_too_long (http 400): request (4811 tokens) exceeds …"
                .into(),
        };
        let reason = TooLong::RefusedAgain(refused).reason(&window, "compact");
        for part in [
            "4,811 tokens against its 4,096",
            "the window is 4,096 tokens, 3,072 of them for the prompt after 1,024",
            "the server's answer",
            "llama-server -c 16384",
            "OLLAMA_CONTEXT_LENGTH",
            "descriptions = \"compact\"",
            "larger window",
        ] {
            assert!(reason.contains(part), "{part:?} missing from {reason}");
        }
    }
}
