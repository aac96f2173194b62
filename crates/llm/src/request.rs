//! What one turn asks of a provider, in neutral terms.

use tackle_protocol::{Message, ToolSpec};

use crate::tool_names::ToolNameMap;

/// One model turn: the conversation so far, the tools on offer and the bounds of the answer.
#[derive(Clone, Debug, PartialEq)]
pub struct TurnRequest {
    /// The model id as the provider names it (`claude-sonnet-4-5`, `gpt-4.1`, `local-qwen`).
    pub model: String,
    /// System instructions, sent the way each family places them.
    pub system: Option<String>,
    pub messages: Vec<Message>,
    /// The catalog's specs; adapters shape names and schemas per family.
    pub tools: Vec<ToolSpec>,
    pub tool_choice: ToolChoice,
    /// Required by Anthropic, a bound everywhere.
    pub max_tokens: u32,
    pub temperature: Option<f32>,
    /// Extended thinking with this budget of tokens, where the family has it.
    pub thinking_budget: Option<u32>,
    /// Mark prompt-cache breakpoints where the family takes them (Anthropic: the last tool,
    /// the system prompt and the last user message).
    pub prompt_cache: bool,
}

impl TurnRequest {
    /// A request with no tools, no thinking and caching on.
    pub fn new(model: impl Into<String>, messages: Vec<Message>, max_tokens: u32) -> Self {
        Self {
            model: model.into(),
            system: None,
            messages,
            tools: Vec::new(),
            tool_choice: ToolChoice::Auto,
            max_tokens,
            temperature: None,
            thinking_budget: None,
            prompt_cache: true,
        }
    }

    /// The wire names of this request's tools, which its body and the lift of its answer share.
    pub(crate) fn tool_names(&self) -> ToolNameMap {
        ToolNameMap::new(self.tools.iter().map(|t| t.name.as_str()))
    }
}

/// Whether and which tools the model must call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolChoice {
    Auto,
    None,
    /// Some tool must be called.
    Required,
    /// This tool (its catalog name) must be called.
    Tool(String),
}
