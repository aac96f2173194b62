//! The AWS credential chain as the AWS SDKs and CLI walk it, built from aws-config's own
//! providers: the `AWS_*` key variables, then the selected profile of the shared files
//! (static or session keys, `role_arn` with `source_profile` or `credential_source` assumed
//! through STS, `credential_process`, SSO through `sso_session` or the legacy `sso_*` keys and
//! the token cache `aws sso login` fills, `web_identity_token_file`), then web identity from
//! `AWS_WEB_IDENTITY_TOKEN_FILE` and `AWS_ROLE_ARN`, then the container and instance metadata
//! endpoints.
//!
//! The first source that has credentials answers; a source that has none lets the next one
//! try; a source that has them configured but fails ends the walk with an error that names the
//! source, the profile and what to do ([`super::advice`]). STS and the SSO portal are reached
//! through the provider's own HTTP client ([`super::aws_http`]), at the endpoints aws-config
//! resolves (`AWS_ENDPOINT_URL_STS`, `AWS_ENDPOINT_URL_SSO`, `AWS_ENDPOINT_URL`, or a profile's
//! `endpoint_url` and `services` section), in the provider's region. What the chain returns is
//! cached until shortly before it expires ([`super::cache`]).

use aws_config::ecs::EcsCredentialsProvider;
use aws_config::environment::credentials::EnvironmentVariableCredentialsProvider;
use aws_config::imds::credentials::ImdsCredentialsProvider;
use aws_config::profile::ProfileFileCredentialsProvider;
use aws_config::provider_config::ProviderConfig;
use aws_config::web_identity_token::WebIdentityTokenCredentialsProvider;
use aws_credential_types::Credentials;
use aws_credential_types::provider::error::CredentialsError;
use aws_credential_types::provider::{ProvideCredentials, SharedCredentialsProvider};
use aws_types::region::Region;

use super::advice;
use super::auth::AwsChain;
use super::aws_http::ReqwestClient;
use super::cache::CredentialsCache;
use crate::error::{ErrorContext, LlmError};

/// Where a set of credentials came from, for errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    Environment,
    Profile,
    WebIdentity,
    Container,
    Instance,
}

/// The chain of one provider, with its cache.
pub(crate) struct AwsCredentials {
    chain: AwsChain,
    sources: Vec<(Source, SharedCredentialsProvider)>,
    cache: CredentialsCache,
}

impl AwsCredentials {
    /// Builds the providers; nothing is read or sent until the first turn.
    pub fn new(chain: AwsChain, region: &str, client: reqwest::Client) -> Self {
        let conf = ProviderConfig::without_region()
            .with_region(Some(Region::new(region.to_owned())))
            .with_http_client(ReqwestClient::new(client));
        let mut sources = Vec::new();
        if chain.environment {
            sources.push((
                Source::Environment,
                SharedCredentialsProvider::new(EnvironmentVariableCredentialsProvider::new()),
            ));
        }
        let mut profile = ProfileFileCredentialsProvider::builder()
            .configure(&conf)
            .profile_files(chain.files());
        if let Some(name) = &chain.profile {
            profile = profile.profile_name(name);
        }
        sources.push((
            Source::Profile,
            SharedCredentialsProvider::new(profile.build()),
        ));
        sources.push((
            Source::WebIdentity,
            SharedCredentialsProvider::new(
                WebIdentityTokenCredentialsProvider::builder()
                    .configure(&conf)
                    .build(),
            ),
        ));
        if chain.metadata_endpoints {
            sources.push((
                Source::Container,
                SharedCredentialsProvider::new(
                    EcsCredentialsProvider::builder().configure(&conf).build(),
                ),
            ));
            sources.push((
                Source::Instance,
                SharedCredentialsProvider::new(
                    ImdsCredentialsProvider::builder().configure(&conf).build(),
                ),
            ));
        }
        Self {
            chain,
            sources,
            cache: CredentialsCache::new(),
        }
    }

    /// The credentials for this turn: the cached ones while fresh, else the chain's.
    pub async fn get(&self, ctx: &ErrorContext) -> Result<Credentials, LlmError> {
        self.cache.get(|| self.resolve(ctx)).await
    }

    /// Drops the cached credentials after the service refused them.
    pub fn invalidate(&self) {
        self.cache.invalidate();
    }

    async fn resolve(&self, ctx: &ErrorContext) -> Result<Credentials, LlmError> {
        for (source, provider) in &self.sources {
            match provider.provide_credentials().await {
                Ok(credentials) => return Ok(credentials),
                Err(CredentialsError::CredentialsNotLoaded(_)) => {}
                Err(e) => return Err(advice::failed(ctx, &self.chain, *source, &e).await),
            }
        }
        Err(advice::none(ctx, &self.chain).await)
    }
}

impl std::fmt::Debug for AwsCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AwsCredentials")
            .field("chain", &self.chain)
            .field(
                "sources",
                &self.sources.iter().map(|(s, _)| s).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}
