//! The model a session talks to: the provider's name for it, its catalog entry (window,
//! output limit, modalities, prices) and its media family.

use tackle_llm::catalog::ModelEntry;
use tackle_llm::media::DeliveryFamily;

#[derive(Clone, Debug, PartialEq)]
pub struct ModelSetup {
    /// The model as requests name it (`claude-sonnet-4-5`).
    pub model: String,
    pub entry: ModelEntry,
    pub family: DeliveryFamily,
    /// The output limit of one turn.
    pub max_tokens: u32,
}

impl ModelSetup {
    /// `provider:model`, as the record names it.
    pub fn id(&self) -> String {
        self.entry.id.to_string()
    }

    /// The prompt tokens a request may use: the window less the output limit.
    pub fn prompt_window(&self) -> u64 {
        self.entry
            .context_window
            .saturating_sub(u64::from(self.max_tokens))
    }
}
