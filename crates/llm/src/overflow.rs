//! What a provider's context-overflow answer says about sizes: how long the request was and how
//! large the window is, in whichever words the server put it. The agent uses them to tell the
//! user both numbers and to remember the window the server really has.
//!
//! Every family words it differently (`request (4811 tokens) exceeds the available context
//! size (4096 tokens)` from llama.cpp, `maximum context length is 4096 tokens. However, you
//! requested 5000 tokens` from OpenAI and vLLM, `prompt is too long: 208310 tokens > 200000
//! maximum` from Anthropic, `The input token count (1200000) exceeds the maximum number of
//! tokens allowed (1048576)` from Gemini); each wording is a row of [`WORDINGS`], tested with
//! the recorded answer it comes from.

use crate::error::{ErrorKind, LlmError};

/// The sizes an overflow answer named; either may be missing (Bedrock's `Input is too long
/// for requested model` names none).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OverflowSizes {
    /// The request's prompt, in the server's tokens.
    pub prompt: Option<u64>,
    /// The window the server has for the model, in its tokens.
    pub window: Option<u64>,
}

/// Which number of a wording is which: the text before each number, lowercase.
struct Wording {
    prompt_after: &'static [&'static str],
    window_after: &'static [&'static str],
}

/// Each known wording, as the text that comes right before the prompt's size and the
/// window's. Matched on the lowercase message; the first number after the text is taken.
const WORDINGS: &[Wording] = &[
    // llama.cpp: "request (4811 tokens) exceeds the available context size (4096 tokens)".
    Wording {
        prompt_after: &["request ("],
        window_after: &["available context size ("],
    },
    // OpenAI, vLLM, LM Studio's OpenAI surface: "maximum context length is 4096 tokens.
    // However, you requested 5000 tokens" / "your messages resulted in 5000 tokens" / "your
    // request has 3500 input tokens".
    Wording {
        prompt_after: &[
            "your messages resulted in ",
            "you requested ",
            "your request has ",
            "resulted in ",
        ],
        window_after: &["maximum context length is "],
    },
    // Anthropic, Bedrock (Claude): "prompt is too long: 208310 tokens > 200000 maximum".
    Wording {
        prompt_after: &["prompt is too long: "],
        window_after: &["tokens > "],
    },
    // Gemini: "The input token count (1200000) exceeds the maximum number of tokens allowed
    // (1048576)".
    Wording {
        prompt_after: &["input token count ("],
        window_after: &["tokens allowed ("],
    },
    // LM Studio: "… the model is loaded with context length of only 4096 tokens …".
    Wording {
        prompt_after: &["keep the first "],
        window_after: &["context length of only "],
    },
];

impl LlmError {
    /// The sizes a context-overflow error names; `None` for other errors.
    pub fn overflow_sizes(&self) -> Option<OverflowSizes> {
        (self.kind == ErrorKind::ContextTooLong).then(|| sizes_in(&self.message))
    }
}

/// The sizes a message names, by the first wording that finds any.
pub(crate) fn sizes_in(message: &str) -> OverflowSizes {
    let lower = message.to_ascii_lowercase();
    for wording in WORDINGS {
        let found = OverflowSizes {
            prompt: first_after(&lower, wording.prompt_after),
            window: first_after(&lower, wording.window_after),
        };
        if found.prompt.is_some() || found.window.is_some() {
            return found;
        }
    }
    OverflowSizes::default()
}

/// The number that starts right after the first of `marks` found in `text` (thousands
/// separators allowed).
fn first_after(text: &str, marks: &[&str]) -> Option<u64> {
    marks.iter().find_map(|mark| {
        let at = text.find(mark)? + mark.len();
        let digits: String = text[at..]
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == ',')
            .filter(char::is_ascii_digit)
            .collect();
        digits.parse().ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wordings_of_each_family() {
        let cases: &[(&str, Option<u64>, Option<u64>)] = &[
            (
                "request (4811 tokens) exceeds the available context size (4096 tokens), try increasing it",
                Some(4811),
                Some(4096),
            ),
            (
                "This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens. Please reduce the length of the messages.",
                Some(130_512),
                Some(128_000),
            ),
            (
                "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion).",
                Some(5000),
                Some(4096),
            ),
            (
                "prompt is too long: 208310 tokens > 200000 maximum",
                Some(208_310),
                Some(200_000),
            ),
            (
                "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
                Some(1_200_000),
                Some(1_048_576),
            ),
            ("Input is too long for requested model.", None, None),
        ];
        for &(message, prompt, window) in cases {
            assert_eq!(
                sizes_in(message),
                OverflowSizes { prompt, window },
                "{message}"
            );
        }
    }
}
