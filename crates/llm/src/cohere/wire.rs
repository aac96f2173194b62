//! The shapes of v2 Chat stream events, as far as the lift reads them; every field optional,
//! so an event Cohere extends still parses.

use serde::Deserialize;

#[derive(Deserialize)]
pub(super) struct Event {
    #[serde(rename = "type", default)]
    pub(super) kind: Option<String>,
    #[serde(default)]
    pub(super) id: Option<String>,
    #[serde(default)]
    pub(super) index: Option<usize>,
    #[serde(default)]
    pub(super) delta: Option<Delta>,
    /// An error object sent in place of an event.
    #[serde(default)]
    pub(super) message: Option<String>,
}

#[derive(Deserialize, Default)]
pub(super) struct Delta {
    #[serde(default)]
    pub(super) message: Option<DeltaMessage>,
    #[serde(default)]
    pub(super) finish_reason: Option<String>,
    #[serde(default)]
    pub(super) usage: Option<WireUsage>,
    #[serde(default)]
    pub(super) error: Option<String>,
}

#[derive(Deserialize, Default)]
pub(super) struct DeltaMessage {
    #[serde(default)]
    pub(super) content: Option<Content>,
    #[serde(default)]
    pub(super) tool_plan: Option<String>,
    /// One call per event, despite the plural.
    #[serde(default)]
    pub(super) tool_calls: Option<ToolCallDelta>,
}

#[derive(Deserialize, Default)]
pub(super) struct Content {
    #[serde(default)]
    pub(super) text: Option<String>,
    #[serde(default)]
    pub(super) thinking: Option<String>,
}

#[derive(Deserialize, Default)]
pub(super) struct ToolCallDelta {
    #[serde(default)]
    pub(super) id: Option<String>,
    #[serde(default)]
    pub(super) function: Option<FunctionDelta>,
}

#[derive(Deserialize, Default)]
pub(super) struct FunctionDelta {
    #[serde(default)]
    pub(super) name: Option<String>,
    #[serde(default)]
    pub(super) arguments: Option<String>,
}

#[derive(Deserialize)]
pub(super) struct WireUsage {
    #[serde(default)]
    pub(super) billed_units: Option<Tokens>,
    #[serde(default)]
    pub(super) tokens: Option<Tokens>,
}

#[derive(Deserialize)]
pub(super) struct Tokens {
    #[serde(default)]
    pub(super) input_tokens: Option<f64>,
    #[serde(default)]
    pub(super) output_tokens: Option<f64>,
}
