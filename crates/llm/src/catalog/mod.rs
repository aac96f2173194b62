//! The model catalog: what each model accepts and costs, and the providers it is reached
//! through.
//!
//! An entry is plain data (context window, output limit, input modalities, per-kind media
//! limits, prices) keyed by a [`ModelId`] of the form `provider:model`. The built-in entries
//! ([`builtin_models`]) and providers ([`builtin_providers`]) are tables; a front end layers the
//! user's entries and overrides on top and keeps the provenance itself.
//!
//! **Refuses** to read configuration files or the environment: it is data and the rules that
//! check it, so the whole table is tested as data. The prices are list prices in US dollars per
//! million tokens as the vendors published them when the table was written; they are for cost
//! accounting and are overridden per entry where an account pays something else.

mod builtin;
mod model_id;
mod providers;

pub use builtin::builtin_models;
pub use model_id::{ModelId, ModelIdError};
pub use providers::{
    ANTHROPIC_API, OPENAI_API, ProviderKind, ProviderSpec, UnknownKind, builtin_providers,
};

use std::fmt;
use std::str::FromStr;

/// A kind of input a model may accept.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Modality {
    Text,
    Image,
    Pdf,
    Audio,
    Video,
}

impl Modality {
    pub const ALL: [Modality; 5] = [
        Modality::Text,
        Modality::Image,
        Modality::Pdf,
        Modality::Audio,
        Modality::Video,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Modality::Text => "text",
            Modality::Image => "image",
            Modality::Pdf => "pdf",
            Modality::Audio => "audio",
            Modality::Video => "video",
        }
    }
}

impl fmt::Display for Modality {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A modality name that is not one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownModality(pub String);

impl fmt::Display for UnknownModality {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = Modality::ALL.iter().map(|m| m.as_str()).collect();
        write!(
            f,
            "unknown input modality `{}` (valid: {})",
            self.0,
            names.join(", ")
        )
    }
}

impl std::error::Error for UnknownModality {}

impl FromStr for Modality {
    type Err = UnknownModality;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Modality::ALL
            .into_iter()
            .find(|m| m.as_str() == s)
            .ok_or_else(|| UnknownModality(s.to_owned()))
    }
}

/// How much of one media kind a model takes in one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MediaLimit {
    /// The largest single item, in raw (not base64) bytes.
    pub max_bytes: u64,
    /// The most items of this kind per request.
    pub max_count: u32,
}

/// List prices in US dollars per million tokens.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Prices {
    pub input: f64,
    pub output: f64,
    /// Input read from the prompt cache.
    pub cache_read: f64,
    /// Input written to the prompt cache (Anthropic charges for it; others do not).
    pub cache_write: f64,
}

/// One model as the catalog knows it.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelEntry {
    pub id: ModelId,
    /// Tokens of input and output together.
    pub context_window: u64,
    /// The most output tokens of one turn.
    pub max_output: u64,
    /// Always includes [`Modality::Text`].
    pub input: Vec<Modality>,
    /// A limit for each media modality in `input` (text has none).
    pub media: Vec<(Modality, MediaLimit)>,
    pub prices: Option<Prices>,
}

/// What makes an entry unusable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryError {
    pub id: String,
    pub problem: String,
}

impl fmt::Display for EntryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "model `{}`: {}", self.id, self.problem)
    }
}

impl std::error::Error for EntryError {}

impl ModelEntry {
    /// Whether the model declares `modality`.
    pub fn accepts(&self, modality: Modality) -> bool {
        self.input.contains(&modality)
    }

    /// The limit for a media kind the model accepts.
    pub fn media_limit(&self, modality: Modality) -> Option<MediaLimit> {
        self.media
            .iter()
            .find(|(m, _)| *m == modality)
            .map(|(_, l)| *l)
    }

    /// Checks the entry's own consistency: a usable window, an output limit inside it, text
    /// among the inputs, a limit for every media kind it accepts (and none for one it does
    /// not), and prices that are finite and not negative.
    pub fn check(&self) -> Result<(), EntryError> {
        let fail = |problem: String| {
            Err(EntryError {
                id: self.id.to_string(),
                problem,
            })
        };
        if self.context_window == 0 {
            return fail("context_window must be at least 1".into());
        }
        if self.max_output == 0 || self.max_output > self.context_window {
            return fail(format!(
                "max_output ({}) must be between 1 and the context window ({})",
                self.max_output, self.context_window
            ));
        }
        if !self.accepts(Modality::Text) {
            return fail("input must include \"text\"".into());
        }
        for modality in self.input.iter().filter(|m| **m != Modality::Text) {
            match self.media_limit(*modality) {
                None => {
                    return fail(format!(
                        "input includes \"{modality}\" but no media limit for it; add [models.\"{}\".media.{modality}] with max_bytes and max_count",
                        self.id
                    ));
                }
                Some(l) if l.max_bytes == 0 || l.max_count == 0 => {
                    return fail(format!(
                        "the {modality} limit must allow at least one item of at least one byte"
                    ));
                }
                Some(_) => {}
            }
        }
        if let Some((modality, _)) = self.media.iter().find(|(m, _)| !self.accepts(*m)) {
            return fail(format!(
                "a media limit for \"{modality}\", which input does not include; add it to input or remove the limit"
            ));
        }
        if let Some(p) = &self.prices {
            let all = [p.input, p.output, p.cache_read, p.cache_write];
            if all.iter().any(|v| !v.is_finite() || *v < 0.0) {
                return fail("prices must be finite and not negative".into());
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
