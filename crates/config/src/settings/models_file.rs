//! The TOML shape of model configuration: `[model]`, `[providers.<name>]` and
//! `[models."<provider:model>"]`, parsed as strictly as the rest (unknown keys name the nearest
//! valid one).
//!
//! `[providers.*]` decides where a credential is sent and `[models.*]` what the catalog says of
//! a model, so both are read only from the user's config; a project file that has either is an
//! error (see `crate::config`). A project may name the model it prefers in `[model]`, which
//! applies once the folder is trusted.

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

/// `[model]`: which catalog entries a session uses.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelSection {
    /// The model of a session (`provider:model`); also `--model`.
    pub default: Option<Spanned<String>>,
    /// The model for compaction and other cheap work.
    pub small: Option<Spanned<String>>,
}

/// `[providers.<name>]`: an endpoint, or a change to a built-in one.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderSection {
    /// The wire format; optional only when the table changes a built-in provider.
    pub kind: Option<Spanned<String>>,
    pub base_url: Option<Spanned<String>>,
    /// The environment variable the key is read from (the key itself is never in a file).
    pub api_key_env: Option<Spanned<String>>,
    /// Vertex AI: the Google Cloud project.
    pub project: Option<Spanned<String>>,
    /// Vertex AI: the region (`us-central1`) or `global`.
    pub location: Option<Spanned<String>>,
    /// Vertex AI and Azure: the program and arguments that print an access token, run without
    /// a shell (`["gcloud", "auth", "print-access-token"]`; for Azure a Microsoft Entra ID
    /// token, `["az", "account", "get-access-token", ...]`); without it Vertex reads its token
    /// from `api_key_env` (default `VERTEX_ACCESS_TOKEN`).
    pub token_command: Option<Spanned<Vec<String>>>,
    /// Azure: the variable holding a Microsoft Entra ID access token, sent as a bearer token in
    /// place of the `api-key`.
    pub token_env: Option<Spanned<String>>,
    /// The cloud region of a regional endpoint (Bedrock: `us-east-1`); without it the
    /// environment's `AWS_REGION`/`AWS_DEFAULT_REGION` applies.
    pub region: Option<Spanned<String>>,
    /// Azure's `api-version` query parameter (`azure-chat` defaults to
    /// `tackle_llm::azure::AZURE_CHAT_API_VERSION`; `azure-responses` sends none by default).
    pub api_version: Option<Spanned<String>>,
}

/// `[models."<provider:model>"]`: a catalog entry, or an override of a built-in one.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelEntrySection {
    pub context_window: Option<Spanned<u64>>,
    pub max_output: Option<Spanned<u64>>,
    /// Input modalities: `text`, `image`, `pdf`, `audio`, `video`.
    pub input: Option<Spanned<Vec<String>>>,
    pub media: Option<MediaSections>,
    pub prices: Option<PricesSection>,
}

/// `[models."<id>".media]`: per-kind limits.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MediaSections {
    pub image: Option<MediaSection>,
    pub pdf: Option<MediaSection>,
    pub audio: Option<MediaSection>,
    pub video: Option<MediaSection>,
}

/// One media kind's limits.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MediaSection {
    pub max_bytes: Option<Spanned<u64>>,
    pub max_count: Option<Spanned<u32>>,
}

/// `[models."<id>".prices]`: US dollars per million tokens.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PricesSection {
    pub input: Option<Spanned<f64>>,
    pub output: Option<Spanned<f64>>,
    pub cache_read: Option<Spanned<f64>>,
    pub cache_write: Option<Spanned<f64>>,
}

/// The provider and model tables of one file, by name.
pub type ProviderTables = BTreeMap<String, Spanned<ProviderSection>>;
pub type ModelTables = BTreeMap<String, Spanned<ModelEntrySection>>;
