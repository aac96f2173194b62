//! Azure OpenAI: the [`crate::openai_chat`] and [`crate::openai_responses`] adapters on an
//! Azure resource's endpoint. Nothing here parses a stream or builds a body; it only says where
//! Azure serves each format and how its key travels, as a [`Route`] on the adapter's config.
//!
//! - Chat Completions at `{endpoint}/openai/deployments/{deployment}/chat/completions` with
//!   `api-version` (always; [`AZURE_CHAT_API_VERSION`] unless configured). The model id's model
//!   part is the deployment name.
//! - Responses at the v1 GA path `{endpoint}/openai/v1/responses`, which takes no
//!   `api-version`; one is sent only when configured. The model is the deployment name.
//! - The key in the `api-key` header, from `AZURE_OPENAI_API_KEY` unless the provider names
//!   another variable.
//!
//! Azure's error bodies are the OpenAI shape with codes of their own (`DeploymentNotFound`,
//! `content_filter` with the categories that tripped); `openai_chat::error` reads both.
//! Rejected alternative: copies of the two adapters for Azure, which would drift from them.

use crate::credentials::KeySource;
use crate::endpoint::{KeyHeader, Route};
use crate::openai_chat::OpenAiChatConfig;
use crate::openai_responses::OpenAiResponsesConfig;

/// The `api-version` of Chat Completions requests when the provider configures none: the
/// latest GA version of the deployments API.
pub const AZURE_CHAT_API_VERSION: &str = "2024-10-21";

/// The variable an Azure key is read from when the provider names none.
pub const AZURE_KEY_ENV: &str = "AZURE_OPENAI_API_KEY";

const KEY_HEADER: KeyHeader = KeyHeader::Named("api-key");

fn query(api_version: Option<&str>) -> Vec<(String, String)> {
    api_version
        .map(|v| vec![("api-version".to_owned(), v.to_owned())])
        .unwrap_or_default()
}

/// Chat Completions on the Azure resource at `endpoint` (`https://{resource}.openai.azure.com`).
pub fn chat_config(
    name: impl Into<String>,
    endpoint: impl Into<String>,
    api_version: Option<&str>,
    key: KeySource,
) -> OpenAiChatConfig {
    OpenAiChatConfig {
        name: name.into(),
        base_url: endpoint.into(),
        key: Some(key),
        route: Route {
            path: "/openai/deployments/{model}/chat/completions".into(),
            query: query(Some(api_version.unwrap_or(AZURE_CHAT_API_VERSION))),
            key_header: KEY_HEADER,
        },
        strict_tools: false,
        include_usage: true,
        max_tokens_field: "max_completion_tokens".into(),
    }
}

/// Responses on the Azure resource at `endpoint`, on the v1 GA path.
pub fn responses_config(
    name: impl Into<String>,
    endpoint: impl Into<String>,
    api_version: Option<&str>,
    key: KeySource,
) -> OpenAiResponsesConfig {
    OpenAiResponsesConfig {
        name: name.into(),
        base_url: endpoint.into(),
        key: Some(key),
        route: Route {
            path: "/openai/v1/responses".into(),
            query: query(api_version),
            key_header: KEY_HEADER,
        },
        strict_tools: false,
        include_reasoning: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chat_always_has_an_api_version_and_responses_only_when_configured() {
        let key = || KeySource::env(AZURE_KEY_ENV);
        let chat = chat_config("azure", "https://r.openai.azure.com", None, key());
        assert_eq!(
            chat.route.query,
            vec![("api-version".into(), AZURE_CHAT_API_VERSION.into())]
        );
        assert_eq!(chat.route.key_header, KeyHeader::Named("api-key"));
        let chat = chat_config("azure", "https://r", Some("2025-01-01-preview"), key());
        assert_eq!(chat.route.query[0].1, "2025-01-01-preview");

        let responses = responses_config("azure", "https://r", None, key());
        assert!(responses.route.query.is_empty());
        assert_eq!(responses.route.path, "/openai/v1/responses");
        let responses = responses_config("azure", "https://r", Some("preview"), key());
        assert_eq!(
            responses.route.query,
            vec![("api-version".into(), "preview".into())]
        );
    }
}
