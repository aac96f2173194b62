//! The model catalog a command runs with: the built-in providers and models of `tackle-llm`,
//! the user's `[providers.*]` and `[models.*]` on top, and `[model] default/small`, each value
//! checked and kept with where it came from.
//!
//! Checked at load like every other setting, so a typo in a model table fails every command
//! with the file and line, not the first turn that needs it. Provider and model tables reach
//! this module only from the user's config ([`crate::settings::Settings::apply_user_catalog`]).

mod kind_keys;
mod resolve;

#[cfg(test)]
mod tests;

pub use resolve::resolve;

use tackle_llm::catalog::{ModelEntry, ModelId, ProviderSpec};

use crate::settings::{Origin, Sourced};

/// Where a catalog entry came from.
#[derive(Clone, Debug, PartialEq)]
pub enum EntrySource {
    BuiltIn,
    /// A user table that defines a model the built-in catalog lacks.
    User(Origin),
    /// A user table that changes fields of a built-in entry.
    Override(Origin),
}

impl std::fmt::Display for EntrySource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EntrySource::BuiltIn => f.write_str("built-in"),
            EntrySource::User(o) => write!(f, "{o}"),
            EntrySource::Override(o) => write!(f, "built-in, overridden at {o}"),
        }
    }
}

/// One catalog entry and its source.
#[derive(Clone, Debug, PartialEq)]
pub struct CatalogEntry {
    pub entry: ModelEntry,
    pub source: EntrySource,
}

/// One provider and its source (a built-in, or a user table that defines or changes one).
#[derive(Clone, Debug, PartialEq)]
pub struct CatalogProvider {
    pub spec: ProviderSpec,
    pub source: EntrySource,
}

/// The resolved catalog.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelCatalog {
    pub providers: Vec<CatalogProvider>,
    /// Sorted by id.
    pub entries: Vec<CatalogEntry>,
    pub default: Option<Sourced<ModelId>>,
    pub small: Option<Sourced<ModelId>>,
}

impl ModelCatalog {
    pub fn entry(&self, id: &ModelId) -> Option<&CatalogEntry> {
        self.entries.iter().find(|e| &e.entry.id == id)
    }
}
