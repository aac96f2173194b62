//! Context overflow answers: whether a provider's error says the request did not fit the
//! model's window, and the sizes it names (how long the request was, how large the window is),
//! in whichever words the server put them. The classifiers ask [`is_overflow`] to tell an
//! overflow from other invalid requests; the agent reads [`LlmError::overflow_sizes`] to tell
//! the user both numbers and to remember the window the server really has.
//!
//! Owns [`WORDINGS`]: every known wording as the phrases that recognise it and the text that
//! comes before each number, one row per server, each tested with the recorded answer it comes
//! from (`tests/fixtures/overflow/`). A server that also states the sizes as fields of their
//! own (llama.cpp's `n_prompt_tokens` and `n_ctx`) is read by [`stated_in`]; those fields win
//! over the message.
//!
//! Key decision: a wording is recognised by phrases that only an overflow answer contains
//! (`exceeds the available context size`, `maximum context length is`), never by loose words
//! (`too long`, `token`) that other refusals share; a number is read only right after the text
//! that introduces it, and one that counts characters rather than tokens is not taken.
//! Rejected: one regular expression per family, which cannot say which number is which when a
//! server puts the output tokens first (`you requested 1000 output tokens and your prompt
//! contains 5000 input tokens`).

use serde_json::Value;

use crate::error::{ErrorKind, LlmError};

/// The sizes an overflow answer named; either may be missing (Bedrock's `Input is too long
/// for requested model` names none).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OverflowSizes {
    /// The request's prompt (its input, without the output it asked for), in the server's
    /// tokens.
    pub prompt: Option<u64>,
    /// The window the server has for the model, in its tokens.
    pub window: Option<u64>,
}

impl OverflowSizes {
    /// Neither size is known.
    pub fn is_empty(&self) -> bool {
        self.prompt.is_none() && self.window.is_none()
    }

    /// `self`'s sizes, each filled from `other` where `self` has none.
    pub fn or(self, other: OverflowSizes) -> OverflowSizes {
        OverflowSizes {
            prompt: self.prompt.or(other.prompt),
            window: self.window.or(other.window),
        }
    }
}

/// One server's wording of an overflow (who answers so is the comment above its row).
struct Wording {
    /// Phrases that all appear in the lowercase message when it is this wording.
    says: &'static [&'static str],
    /// The text right before the prompt's size, most specific first.
    prompt_after: &'static [&'static str],
    /// The text right before the window's size, most specific first.
    window_after: &'static [&'static str],
}

/// Every known wording, the most specific first: an answer is read by the first row whose
/// phrases it all contains.
static WORDINGS: &[Wording] = &[
    // llama.cpp (and Ollama, which passes llama.cpp's answer on).
    Wording {
        // "request (4811 tokens) exceeds the available context size (4096 tokens), try
        // increasing it"; earlier "the request exceeds the available context size, try
        // increasing it. n_prompt_tokens = 6249, n_ctx = 4096", and before that without the
        // sizes (then only the `n_prompt_tokens`/`n_ctx` fields name them).
        says: &["exceeds the available context size"],
        prompt_after: &["request (", "n_prompt_tokens = "],
        window_after: &["available context size (", "n_ctx = "],
    },
    // vLLM 0.18 and later.
    Wording {
        // "This model's maximum context length is 4096 tokens. However, you requested 1000
        // output tokens and your prompt contains at least 5000 input tokens, for a total of
        // at least 6000 tokens. …"; a very long prompt is counted in characters instead
        // ("your prompt contains 900000 characters (more than …"), which names no prompt size.
        says: &["maximum context length is", "your prompt contains"],
        prompt_after: &["your prompt contains at least ", "your prompt contains "],
        window_after: &["maximum context length is "],
    },
    // OpenAI, vLLM up to 0.17, DeepSeek, OpenRouter.
    Wording {
        // OpenAI: "This model's maximum context length is 4097 tokens. However, you requested
        // 4120 tokens (3120 in the messages, 1000 in the completion)." or "… However, your
        // messages resulted in 130512 tokens."; vLLM: "… However, your request has 5000 input
        // tokens." and "'max_tokens' or 'max_completion_tokens' is too large: 1000. This
        // model's maximum context length is 4096 tokens and your request has 3500 input tokens
        // (1000 > 4096 - 3500)."; OpenRouter: "This endpoint's maximum context length is 8192
        // tokens. However, you requested about 12000 tokens (10000 of text input, 2000 in the
        // output)."
        says: &["maximum context length is"],
        prompt_after: &[
            "your messages resulted in ",
            "your request has ",
            "tokens (",
            "you requested about ",
            "you requested ",
        ],
        window_after: &["maximum context length is "],
    },
    // Anthropic, and Claude on Bedrock.
    Wording {
        // "prompt is too long: 208310 tokens > 200000 maximum"
        says: &["prompt is too long"],
        prompt_after: &["prompt is too long: "],
        window_after: &["tokens > "],
    },
    // Anthropic, when the prompt fits but not with the output asked for.
    Wording {
        // "input length and `max_tokens` exceed context limit: 189136 + 20000 > 204648,
        // decrease input length or `max_tokens` and try again"
        says: &["exceed context limit"],
        prompt_after: &["exceed context limit: "],
        window_after: &[" > "],
    },
    // Gemini and Vertex AI.
    Wording {
        // "The input token count (1200000) exceeds the maximum number of tokens allowed
        // (1048576)."
        says: &["input token count", "exceeds the maximum number of tokens"],
        prompt_after: &["input token count ("],
        window_after: &["tokens allowed ("],
    },
    // LM Studio.
    Wording {
        // "Trying to keep the first 6269 tokens when context the overflows. However, the model
        // is loaded with context length of only 4096 tokens, which is not enough. …"
        says: &["context length of only"],
        prompt_after: &["keep the first "],
        window_after: &["context length of only "],
    },
    // LM Studio (later versions).
    Wording {
        // "The number of tokens to keep from the initial prompt is greater than the context
        // length (n_keep: 13055>= n_ctx: 4096). Try to load the model with a larger context
        // length, or provide a shorter input."
        says: &["tokens to keep from the initial prompt is greater than the context length"],
        prompt_after: &["n_keep: "],
        window_after: &["n_ctx: "],
    },
    // Bedrock (models other than Claude).
    Wording {
        // "Input is too long for requested model."
        says: &["input is too long for requested model"],
        prompt_after: &[],
        window_after: &[],
    },
    // OpenAI Responses.
    Wording {
        // "Your input exceeds the context window of this model. Please adjust your input and
        // try again." (code `context_length_exceeded`)
        says: &["input exceeds the context window"],
        prompt_after: &[],
        window_after: &[],
    },
];

impl LlmError {
    /// The sizes a context-overflow error names, fields the server stated first, then its
    /// message; `None` for other errors.
    pub fn overflow_sizes(&self) -> Option<OverflowSizes> {
        (self.kind == ErrorKind::ContextTooLong).then(|| {
            self.stated_sizes
                .as_deref()
                .copied()
                .unwrap_or_default()
                .or(sizes_in(&self.message))
        })
    }
}

/// Whether `message` is an overflow answer in a known wording.
pub(crate) fn is_overflow(message: &str) -> bool {
    wording_of(&message.to_ascii_lowercase()).is_some()
}

/// The wording of a lowercase message.
fn wording_of(lower: &str) -> Option<&'static Wording> {
    WORDINGS
        .iter()
        .find(|w| w.says.iter().all(|phrase| lower.contains(phrase)))
}

/// The sizes a message names, read by its wording; none for a message in no known wording.
pub(crate) fn sizes_in(message: &str) -> OverflowSizes {
    let lower = message.to_ascii_lowercase();
    match wording_of(&lower) {
        Some(wording) => OverflowSizes {
            prompt: first_after(&lower, wording.prompt_after),
            window: first_after(&lower, wording.window_after),
        },
        None => OverflowSizes::default(),
    }
}

/// The number of tokens that starts right after the first of `marks` found in `text`
/// (thousands separators allowed); a number of characters is no number of tokens.
fn first_after(text: &str, marks: &[&str]) -> Option<u64> {
    marks.iter().find_map(|mark| {
        let at = text.find(mark)? + mark.len();
        let rest = &text[at..];
        let number_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == ','))
            .unwrap_or(rest.len());
        if rest[number_len..].trim_start().starts_with("character") {
            return None;
        }
        let digits: String = rest[..number_len]
            .chars()
            .filter(char::is_ascii_digit)
            .collect();
        digits.parse().ok()
    })
}

/// The sizes an error body states as fields of their own: llama.cpp's `n_prompt_tokens` and
/// `n_ctx` beside its `error.message`, also when the body is the message of another server's
/// error (Ollama passes llama.cpp's whole answer on as its `error.message` or `error`).
/// `None` when the body names neither.
pub(crate) fn stated_in(body: &[u8]) -> Option<OverflowSizes> {
    let value: Value = serde_json::from_slice(body).ok()?;
    stated_in_value(&value, 2)
}

/// [`stated_in`] of a parsed body, looking `depth` bodies deep into messages that are bodies.
fn stated_in_value(value: &Value, depth: u8) -> Option<OverflowSizes> {
    let error = value.get("error")?;
    let field = |name: &str| error.get(name).and_then(Value::as_u64);
    let sizes = OverflowSizes {
        prompt: field("n_prompt_tokens"),
        window: field("n_ctx"),
    };
    if !sizes.is_empty() {
        return Some(sizes);
    }
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .or(error.as_str())?;
    let inner: Value = serde_json::from_str(message.trim()).ok()?;
    depth
        .checked_sub(1)
        .and_then(|depth| stated_in_value(&inner, depth))
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
                "the request exceeds the available context size, try increasing it",
                None,
                None,
            ),
            (
                "the request exceeds the available context size, try increasing it. n_prompt_tokens = 6249, n_ctx = 4096",
                Some(6249),
                Some(4096),
            ),
            (
                "This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens. Please reduce the length of the messages.",
                Some(130_512),
                Some(128_000),
            ),
            (
                "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion).",
                Some(4000),
                Some(4096),
            ),
            (
                "This model's maximum context length is 32768 tokens. However, your request has 40000 input tokens. Please reduce the length of the input messages.",
                Some(40_000),
                Some(32_768),
            ),
            (
                "'max_tokens' or 'max_completion_tokens' is too large: 3072. This model's maximum context length is 8192 tokens and your request has 6000 input tokens (3072 > 8192 - 6000).",
                Some(6000),
                Some(8192),
            ),
            (
                "This model's maximum context length is 4096 tokens. However, you requested 1000 output tokens and your prompt contains at least 5000 input tokens, for a total of at least 6000 tokens. Please reduce the length of the input prompt or the number of requested output tokens. (parameter=input_tokens, value=5000)",
                Some(5000),
                Some(4096),
            ),
            (
                "This model's maximum context length is 4096 tokens. However, you requested 1000 output tokens and your prompt contains 900000 characters (more than 409600 characters, which is the upper bound for 4096 input tokens). Please reduce the length of the input prompt or the number of requested output tokens. (parameter=input_text, value=900000)",
                None,
                Some(4096),
            ),
            (
                "This endpoint's maximum context length is 8192 tokens. However, you requested about 12000 tokens (10000 of text input, 2000 in the output).",
                Some(10_000),
                Some(8192),
            ),
            (
                "prompt is too long: 208310 tokens > 200000 maximum",
                Some(208_310),
                Some(200_000),
            ),
            (
                "The model returned the following errors: prompt is too long: 200049 tokens > 200000 maximum",
                Some(200_049),
                Some(200_000),
            ),
            (
                "input length and `max_tokens` exceed context limit: 189136 + 20000 > 204648, decrease input length or `max_tokens` and try again",
                Some(189_136),
                Some(204_648),
            ),
            (
                "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
                Some(1_200_000),
                Some(1_048_576),
            ),
            (
                "Trying to keep the first 6269 tokens when context the overflows. However, the model is loaded with context length of only 4096 tokens, which is not enough.",
                Some(6269),
                Some(4096),
            ),
            (
                "The number of tokens to keep from the initial prompt is greater than the context length (n_keep: 13055>= n_ctx: 4096). Try to load the model with a larger context length, or provide a shorter input.",
                Some(13_055),
                Some(4096),
            ),
            ("Input is too long for requested model.", None, None),
            (
                "Your input exceeds the context window of this model. Please adjust your input and try again.",
                None,
                None,
            ),
        ];
        for &(message, prompt, window) in cases {
            assert!(is_overflow(message), "{message}");
            assert_eq!(
                sizes_in(message),
                OverflowSizes { prompt, window },
                "{message}"
            );
        }
    }

    /// Refusals that share words with an overflow but are not one.
    #[test]
    fn other_refusals_are_no_overflow() {
        for message in [
            "bad",
            "max_tokens=5000 cannot be greater than max_model_len=max_total_tokens=4096. Please request fewer output tokens.",
            "URL is too long",
            "session token is too long",
            "Invalid max_tokens: must be between 1 and 4096",
            "the request body is too large",
            "request (12 tokens) was refused",
        ] {
            assert!(!is_overflow(message), "{message}");
            assert_eq!(sizes_in(message), OverflowSizes::default(), "{message}");
        }
    }

    #[test]
    fn stated_fields_are_read_also_inside_a_passed_on_answer() {
        let llama = br#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":5000,"n_ctx":4096}}"#;
        let sizes = OverflowSizes {
            prompt: Some(5000),
            window: Some(4096),
        };
        assert_eq!(stated_in(llama), Some(sizes));
        let passed_on = serde_json::json!({
            "error": {"message": String::from_utf8_lossy(llama), "type": "invalid_request_error"}
        });
        assert_eq!(stated_in(passed_on.to_string().as_bytes()), Some(sizes));
        let native = serde_json::json!({"error": String::from_utf8_lossy(llama)});
        assert_eq!(stated_in(native.to_string().as_bytes()), Some(sizes));
        for body in [
            &b"not json"[..],
            br#"{"error":{"message":"x"}}"#,
            br#"{"error":"x"}"#,
            br#"{"error":{"n_ctx":"4096"}}"#,
            b"[]",
        ] {
            assert_eq!(stated_in(body), None, "{}", String::from_utf8_lossy(body));
        }
    }

    /// Every wording is recognised in at least one recorded answer (`tests/fixtures/overflow/`),
    /// so no row stands on a guess alone.
    #[test]
    fn every_wording_has_a_recorded_answer() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/overflow");
        let mut bodies = Vec::new();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let file: Value =
                serde_json::from_slice(&std::fs::read(entry.unwrap().path()).unwrap()).unwrap();
            for answer in file["answers"].as_array().unwrap() {
                bodies.push(answer["body"].as_str().unwrap().to_ascii_lowercase());
            }
        }
        for wording in WORDINGS {
            assert!(
                bodies
                    .iter()
                    .any(|b| wording_of(b).is_some_and(|w| std::ptr::eq(w, wording))),
                "no recorded answer in {} is worded as {:?}",
                dir.display(),
                wording.says
            );
        }
    }

    /// A message nested in messages is read only so deep; deeper nesting is no answer, and
    /// nesting past serde_json's recursion limit is refused by the parser, never a crash.
    #[test]
    fn nested_answers_are_bounded() {
        let mut body = serde_json::json!({"error": {"n_ctx": 4096}});
        for _ in 0..3 {
            body = serde_json::json!({"error": {"message": body.to_string()}});
        }
        assert_eq!(stated_in(body.to_string().as_bytes()), None);
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert_eq!(stated_in(deep.as_bytes()), None);
        assert!(!is_overflow(&deep));
    }
}
