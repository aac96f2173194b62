//! The `[providers.<name>]` keys that belong to some kinds only: each is refused, with what it
//! applies to, on a kind that would ignore it, so a table never says more than what happens.
//!
//! - `region`: bedrock (its URL and signing region).
//! - `project`, `location`: vertex (its URL).
//! - `api_version`: azure-chat and azure-responses.
//! - `token_command`: vertex and the Azure kinds; `token_env`: the Azure kinds, where a token
//!   replaces the `api-key` (so not beside `api_key_env`).

use tackle_llm::catalog::{ProviderKind, ProviderSpec};

use crate::bail;
use crate::settings::Origin;

pub(super) fn check(name: &str, at: &Origin, spec: &ProviderSpec) -> crate::Result<()> {
    let kind = spec.kind;
    let only = |key: &str, set: bool, applies: bool, kinds: &str| -> crate::Result<()> {
        if set && !applies {
            bail!(
                "[providers.{name}] ({at}): {key} applies only to {kinds}, not {kind}; remove it"
            );
        }
        Ok(())
    };
    only(
        "region",
        spec.region.is_some(),
        kind == ProviderKind::Bedrock,
        "kind bedrock",
    )?;
    only(
        "project",
        spec.project.is_some(),
        kind == ProviderKind::Vertex,
        "kind vertex",
    )?;
    only(
        "location",
        spec.location.is_some(),
        kind == ProviderKind::Vertex,
        "kind vertex",
    )?;
    only(
        "api_version",
        spec.api_version.is_some(),
        is_azure(kind),
        "kinds azure-chat and azure-responses",
    )?;
    only(
        "token_command",
        spec.token_command.is_some(),
        is_azure(kind) || kind == ProviderKind::Vertex,
        "kinds vertex, azure-chat and azure-responses",
    )?;
    if spec.token_env.is_some() && !is_azure(kind) {
        let hint = if kind == ProviderKind::Vertex {
            " (vertex reads its token from api_key_env)"
        } else {
            ""
        };
        bail!(
            "[providers.{name}] ({at}): token_env applies only to kinds azure-chat and azure-responses, not {kind}{hint}; remove it"
        );
    }
    if is_azure(kind)
        && spec.api_key_env.is_some()
        && (spec.token_env.is_some() || spec.token_command.is_some())
    {
        bail!(
            "[providers.{name}] ({at}): an entra id token (token_env or token_command) replaces the api key; remove api_key_env"
        );
    }
    Ok(())
}

pub(super) fn is_azure(kind: ProviderKind) -> bool {
    matches!(kind, ProviderKind::AzureChat | ProviderKind::AzureResponses)
}
