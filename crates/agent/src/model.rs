//! The model a session talks to: the provider's name for it, its catalog entry (window,
//! output limit, modalities, prices) and its media family.

use tackle_llm::catalog::ModelEntry;
use tackle_llm::media::DeliveryFamily;

/// The model a session talks to, as requests name it and as the loop plans for it.
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
    /// The model of `entry`, named as its id names it, its output limit the entry's
    /// `max_output`, its media laid out for `family`.
    pub fn new(entry: ModelEntry, family: DeliveryFamily) -> Self {
        Self {
            model: entry.id.model.clone(),
            max_tokens: u32::try_from(entry.max_output).unwrap_or(u32::MAX),
            entry,
            family,
        }
    }

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
