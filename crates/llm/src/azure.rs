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
//!   another variable; or a Microsoft Entra ID access token as `Authorization: Bearer`, from a
//!   variable (`token_env`) or printed by `token_command` (run without a shell, again after a
//!   401, like Vertex's: [`crate::token`]), and then no `api-key` is sent.
//!
//! Azure's error bodies are the OpenAI shape with codes of their own (`DeploymentNotFound`,
//! `content_filter` with the categories that tripped); `openai_chat::error` reads both.
//! Rejected alternative: copies of the two adapters for Azure, which would drift from them.

use crate::credentials::KeySource;
use crate::endpoint::{KeyHeader, Route};
use crate::openai_chat::OpenAiChatConfig;
use crate::openai_responses::OpenAiResponsesConfig;
use crate::token::{BearerToken, TokenHelp, TokenSource};

/// The `api-version` of Chat Completions requests when the provider configures none: the
/// latest GA version of the deployments API.
pub const AZURE_CHAT_API_VERSION: &str = "2024-10-21";

/// The variable an Azure key is read from when the provider names none.
pub const AZURE_KEY_ENV: &str = "AZURE_OPENAI_API_KEY";

const KEY_HEADER: KeyHeader = KeyHeader::Named("api-key");

/// What an Entra ID token's errors suggest: the Azure CLI's token for Azure OpenAI.
pub const ENTRA_TOKEN_HELP: TokenHelp = TokenHelp {
    example: &[
        "az",
        "account",
        "get-access-token",
        "--resource",
        "https://cognitiveservices.azure.com",
        "--query",
        "accessToken",
        "--output",
        "tsv",
    ],
    login: "az login",
};

/// How an Azure provider authenticates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AzureAuth {
    /// A resource key in `api-key`.
    ApiKey(KeySource),
    /// A Microsoft Entra ID access token as `Authorization: Bearer`.
    Entra(TokenSource),
}

impl AzureAuth {
    /// The key, the token and the header of a route.
    fn parts(self) -> (Option<KeySource>, Option<BearerToken>, KeyHeader) {
        match self {
            Self::ApiKey(key) => (Some(key), None, KEY_HEADER),
            Self::Entra(source) => (
                None,
                Some(BearerToken {
                    source,
                    help: ENTRA_TOKEN_HELP,
                }),
                KeyHeader::Bearer,
            ),
        }
    }
}

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
    auth: AzureAuth,
) -> OpenAiChatConfig {
    let (key, token, key_header) = auth.parts();
    OpenAiChatConfig {
        name: name.into(),
        base_url: endpoint.into(),
        key,
        token,
        route: Route {
            path: "/openai/deployments/{model}/chat/completions".into(),
            query: query(Some(api_version.unwrap_or(AZURE_CHAT_API_VERSION))),
            key_header,
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
    auth: AzureAuth,
) -> OpenAiResponsesConfig {
    let (key, token, key_header) = auth.parts();
    OpenAiResponsesConfig {
        name: name.into(),
        base_url: endpoint.into(),
        key,
        token,
        route: Route {
            path: "/openai/v1/responses".into(),
            query: query(api_version),
            key_header,
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
        let key = || AzureAuth::ApiKey(KeySource::env(AZURE_KEY_ENV));
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

        let entra = AzureAuth::Entra(TokenSource::Command(vec!["az".into()]));
        let chat = chat_config("azure", "https://r", None, entra);
        assert_eq!(chat.route.key_header, KeyHeader::Bearer);
        assert_eq!(chat.key, None);
        assert_eq!(chat.token.unwrap().help, ENTRA_TOKEN_HELP);
    }
}
