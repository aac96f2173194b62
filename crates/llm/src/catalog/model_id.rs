//! `provider:model` ids: the provider's configured name, then the model as that provider names
//! it. The split is at the first colon, since model names may contain colons themselves
//! (Bedrock's `anthropic.claude-…-v1:0`, Ollama's `qwen2.5:7b`).

use std::fmt;
use std::str::FromStr;

/// A model id in the catalog.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ModelId {
    /// The provider's name (`anthropic`, `openai`, or a `[providers.<name>]` table).
    pub provider: String,
    /// The model as the provider names it on the wire.
    pub model: String,
}

/// Why a text is not a `provider:model` id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelIdError {
    pub text: String,
    pub problem: &'static str,
}

impl fmt::Display for ModelIdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` is not a model id: {}; write it as provider:model (for example anthropic:claude-sonnet-4-5)",
            self.text, self.problem
        )
    }
}

impl std::error::Error for ModelIdError {}

impl FromStr for ModelId {
    type Err = ModelIdError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let fail = |problem| {
            Err(ModelIdError {
                text: text.to_owned(),
                problem,
            })
        };
        let Some((provider, model)) = text.split_once(':') else {
            return fail("it has no provider");
        };
        if provider.is_empty() {
            return fail("the provider is empty");
        }
        if !provider
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
        {
            return fail("a provider name is lowercase letters, digits, `-` and `_`");
        }
        if model.is_empty() {
            return fail("the model is empty");
        }
        if model.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return fail("the model contains whitespace");
        }
        Ok(ModelId {
            provider: provider.to_owned(),
            model: model.to_owned(),
        })
    }
}

impl fmt::Display for ModelId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.provider, self.model)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_parse_as_a_table() {
        let cases: &[(&str, Option<(&str, &str)>)] = &[
            (
                "anthropic:claude-sonnet-4-5",
                Some(("anthropic", "claude-sonnet-4-5")),
            ),
            (
                "bedrock:anthropic.claude-sonnet-4-5-20250929-v1:0",
                Some(("bedrock", "anthropic.claude-sonnet-4-5-20250929-v1:0")),
            ),
            ("local:qwen2.5:7b", Some(("local", "qwen2.5:7b"))),
            ("openai-compat_2:m", Some(("openai-compat_2", "m"))),
            ("claude-sonnet-4-5", None),
            (":gpt-5", None),
            ("openai:", None),
            ("OpenAI:gpt-5", None),
            ("open ai:gpt-5", None),
            ("openai:gpt 5", None),
        ];
        for (text, want) in cases {
            let got = text.parse::<ModelId>();
            match (got, want) {
                (Ok(id), Some((p, m))) => {
                    assert_eq!((id.provider.as_str(), id.model.as_str()), (*p, *m));
                    assert_eq!(id.to_string(), *text);
                }
                (Err(e), None) => assert!(e.to_string().contains("provider:model"), "{e}"),
                (got, want) => panic!("{text}: got {got:?}, wanted {want:?}"),
            }
        }
    }
}
