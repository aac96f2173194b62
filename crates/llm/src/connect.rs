//! From a catalog provider to an adapter that sends its turns: one match over
//! [`ProviderKind`], so adding a family is one arm here plus its module.
//!
//! The spec's key variable is read now (by the adapter's constructor), so a missing key is a
//! `configuration` error before any turn, naming the variable. Cohere and Azure always
//! need a key: without `api_key_env` theirs is read from `COHERE_API_KEY` or
//! `AZURE_OPENAI_API_KEY`.

use std::sync::Arc;

use crate::anthropic::{Anthropic, AnthropicConfig};
use crate::azure::{self, AZURE_KEY_ENV, AzureAuth};
use crate::bedrock::{Bedrock, BedrockAuth, BedrockConfig};
use crate::catalog::{OPENAI_API, ProviderKind, ProviderSpec};
use crate::cohere::{COHERE_KEY_ENV, Cohere, CohereConfig};
use crate::credentials::KeySource;
use crate::error::{ErrorContext, ErrorKind, LlmError};
use crate::gemini::vertex::DEFAULT_TOKEN_ENV;
use crate::gemini::{Gemini, GeminiConfig, TokenSource, Vertex, VertexConfig};
use crate::openai_chat::{OpenAiChat, OpenAiChatConfig};
use crate::openai_responses::{OpenAiResponses, OpenAiResponsesConfig};
use crate::provider::Provider;
use crate::transport::Transport;

/// The adapter for `spec`, with its key loaded.
pub fn connect(spec: &ProviderSpec, transport: Transport) -> Result<Arc<dyn Provider>, LlmError> {
    let ctx = ErrorContext {
        provider: spec.name.clone(),
        model: "-".into(),
    };
    let key = spec.api_key_env.as_deref().map(KeySource::env);
    let base_url = || {
        spec.base_url.clone().ok_or_else(|| {
            ctx.error(
                ErrorKind::Configuration,
                format!(
                    "provider `{}` (kind {}) has no base_url; set one in its [providers.{}] table",
                    spec.name, spec.kind, spec.name
                ),
            )
        })
    };
    // Azure: an Entra ID token when the table names one, else the resource key.
    let azure_auth = || match (&spec.token_command, &spec.token_env) {
        (Some(argv), _) => AzureAuth::Entra(TokenSource::Command(argv.clone())),
        (None, Some(var)) => AzureAuth::Entra(TokenSource::Env(var.clone())),
        (None, None) => {
            AzureAuth::ApiKey(key.clone().unwrap_or_else(|| KeySource::env(AZURE_KEY_ENV)))
        }
    };
    let provider: Arc<dyn Provider> = match spec.kind {
        ProviderKind::Anthropic => {
            let mut config = AnthropicConfig::official();
            config.name = spec.name.clone();
            config.base_url = base_url()?;
            config.key = key;
            Arc::new(Anthropic::new(config, transport)?)
        }
        ProviderKind::Cohere => Arc::new(Cohere::new(
            CohereConfig {
                name: spec.name.clone(),
                base_url: base_url()?,
                key: Some(key.unwrap_or_else(|| KeySource::env(COHERE_KEY_ENV))),
            },
            transport,
        )?),
        ProviderKind::AzureChat => Arc::new(OpenAiChat::new(
            azure::chat_config(
                spec.name.clone(),
                base_url()?,
                spec.api_version.as_deref(),
                azure_auth(),
            ),
            transport,
        )?),
        ProviderKind::AzureResponses => Arc::new(OpenAiResponses::new(
            azure::responses_config(
                spec.name.clone(),
                base_url()?,
                spec.api_version.as_deref(),
                azure_auth(),
            ),
            transport,
        )?),
        ProviderKind::OpenAiChat => {
            let url = base_url()?;
            // OpenAI's own API gets OpenAI's field names and features; any other URL is a
            // compatible server and gets the fields those servers read.
            let mut config = if spec.is_at(OPENAI_API) {
                OpenAiChatConfig::official()
            } else {
                OpenAiChatConfig::compatible(spec.name.clone(), url.clone())
            };
            config.name = spec.name.clone();
            config.base_url = url;
            config.key = key;
            Arc::new(OpenAiChat::new(config, transport)?)
        }
        ProviderKind::OpenAiResponses => {
            let url = base_url()?;
            // OpenAI's own API gets OpenAI's field names and features; any other URL is a
            // compatible server and gets the fields those servers read.
            let mut config = if spec.is_at(OPENAI_API) {
                OpenAiResponsesConfig::official()
            } else {
                OpenAiResponsesConfig::compatible(spec.name.clone(), url.clone())
            };
            config.name = spec.name.clone();
            config.base_url = url;
            config.key = key;
            Arc::new(OpenAiResponses::new(config, transport)?)
        }
        ProviderKind::Gemini => Arc::new(Gemini::new(
            GeminiConfig {
                name: spec.name.clone(),
                base_url: base_url()?,
                key,
            },
            transport,
        )?),
        ProviderKind::Vertex => {
            let missing = |field: &str| {
                ctx.error(
                    ErrorKind::Configuration,
                    format!(
                        "provider `{}` (kind vertex) has no {field}; set {field} in its [providers.{}] table",
                        spec.name, spec.name
                    ),
                )
            };
            let token = match &spec.token_command {
                Some(argv) => TokenSource::Command(argv.clone()),
                None => TokenSource::Env(
                    spec.api_key_env
                        .clone()
                        .unwrap_or_else(|| DEFAULT_TOKEN_ENV.to_owned()),
                ),
            };
            Arc::new(Vertex::new(
                VertexConfig {
                    name: spec.name.clone(),
                    project: spec.project.clone().ok_or_else(|| missing("project"))?,
                    location: spec.location.clone().ok_or_else(|| missing("location"))?,
                    base_url: spec.base_url.clone(),
                    token,
                },
                transport,
            )?)
        }
        ProviderKind::Bedrock => {
            let mut config = BedrockConfig::standard();
            config.name = spec.name.clone();
            config.region = spec.region.clone();
            config.base_url = spec.base_url.clone();
            if let Some(key) = key {
                config.auth = BedrockAuth::ApiKey(key);
            }
            Arc::new(Bedrock::new(config, transport)?)
        }
    };
    Ok(provider)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::builtin_providers;
    use crate::transport::TransportLimits;

    fn transport() -> Transport {
        Transport::new(TransportLimits::default()).unwrap()
    }

    fn spec(kind: ProviderKind, base_url: Option<&str>, key: Option<&str>) -> ProviderSpec {
        ProviderSpec {
            name: "local".into(),
            kind,
            base_url: base_url.map(str::to_owned),
            api_key_env: key.map(str::to_owned),
            project: Some("proj".into()),
            location: Some("us-central1".into()),
            // A command is run at the first turn, so connecting needs no token.
            token_command: Some(vec!["true".into()]),
            token_env: None,
            region: Some("us-east-1".into()),
            api_version: None,
        }
    }

    #[test]
    fn every_kind_connects_and_names_itself() {
        for kind in ProviderKind::ALL {
            // Cohere and Azure always read a key; PATH is set in every test process, and its
            // value goes nowhere since no turn is sent.
            let p = connect(
                &spec(kind, Some("http://127.0.0.1:9/v1"), Some("PATH")),
                transport(),
            )
            .unwrap_or_else(|e| panic!("{kind}: {e}"));
            assert_eq!(p.name(), "local", "{kind}");
        }
    }

    #[test]
    fn vertex_needs_project_and_location_and_defaults_its_token_variable() {
        let vertex = |project: Option<&str>, location: Option<&str>| ProviderSpec {
            name: "vertex".into(),
            kind: ProviderKind::Vertex,
            base_url: None,
            api_key_env: None,
            project: project.map(str::to_owned),
            location: location.map(str::to_owned),
            token_command: None,
            token_env: None,
            region: None,
            api_version: None,
        };
        for (spec, named) in [
            (vertex(None, Some("global")), "project"),
            (vertex(Some("p"), None), "location"),
            (vertex(Some("p"), Some("us/central")), "location"),
            (vertex(Some("p q"), Some("global")), "project"),
        ] {
            let e = connect(&spec, transport()).err().unwrap();
            assert_eq!(e.kind, ErrorKind::Configuration);
            assert!(e.message.contains(named), "{e}");
        }
        // The variable is never set by anything in these tests.
        if std::env::var_os(DEFAULT_TOKEN_ENV).is_none() {
            let e = connect(&vertex(Some("p"), Some("global")), transport())
                .err()
                .unwrap();
            assert!(e.message.contains(DEFAULT_TOKEN_ENV), "{e}");
        }
    }

    #[test]
    fn a_missing_base_url_or_key_names_what_to_set() {
        let e = connect(&spec(ProviderKind::OpenAiChat, None, None), transport())
            .err()
            .unwrap();
        assert_eq!(e.kind, ErrorKind::Configuration);
        assert!(e.message.contains("[providers.local]"), "{e}");

        let var = "TACKLE_CONNECT_TEST_UNSET_KEY";
        // The variable is never set by anything; reading it only observes that.
        assert!(std::env::var_os(var).is_none());
        let e = connect(
            &spec(
                ProviderKind::Anthropic,
                Some("http://127.0.0.1:9"),
                Some(var),
            ),
            transport(),
        )
        .err()
        .unwrap();
        assert_eq!(e.kind, ErrorKind::Configuration);
        assert!(e.message.contains(var), "{e}");
    }

    /// Azure's endpoint is the user's resource, so the built-in `azure` also needs a base_url;
    /// Vertex and Bedrock derive theirs from the project, location and region.
    #[test]
    fn the_builtin_providers_need_only_their_key_and_azure_its_endpoint() {
        for p in builtin_providers() {
            if p.kind == ProviderKind::AzureResponses {
                let e = connect(&p, transport()).err().unwrap();
                assert!(e.message.contains("[providers.azure]"), "{e}");
                continue;
            }
            let e = connect(
                &ProviderSpec {
                    api_key_env: Some(format!("TACKLE_CONNECT_TEST_UNSET_{}", p.name)),
                    // Vertex's project and location are the account's, never built in.
                    project: p.project.clone().or(Some("proj".into())),
                    location: p.location.clone().or(Some("global".into())),
                    // Bedrock's region is the account's too.
                    region: Some("us-east-1".into()),
                    ..p.clone()
                },
                transport(),
            )
            .err()
            .unwrap();
            assert!(
                e.message.contains("TACKLE_CONNECT_TEST_UNSET_"),
                "{}: {e}",
                p.name
            );
        }
    }
}
