//! How a Bedrock request proves who sends it: SigV4 (service `bedrock`) over AWS credentials
//! from the standard chain, or a Bedrock API key as `Authorization: Bearer`.
//!
//! The chain is read with the AWS SDK's own pieces (`aws-config`): its environment provider
//! (`AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY` / `AWS_SESSION_TOKEN`), then its parser of the
//! shared config and credentials files for `AWS_PROFILE` (else `default`), whose static or
//! session keys are used. It is asked at every turn, so session keys refreshed in the files
//! are picked up. aws-config's profile provider is not used: without an HTTP client (which
//! would bring a second TLS stack) it panics on profiles it would send to STS; profiles that
//! assume a role, use SSO or run a process are a configuration error that says what to do.
//! Signing is `aws-sigv4`'s; nothing here computes a signature.

use std::path::PathBuf;
use std::time::SystemTime;

use aws_config::environment::credentials::EnvironmentVariableCredentialsProvider;
use aws_credential_types::Credentials;
use aws_credential_types::provider::ProvideCredentials;
use aws_credential_types::provider::error::CredentialsError;
use aws_runtime::env_config::file::{EnvConfigFileKind, EnvConfigFiles};
use aws_sigv4::http_request::{SignableBody, SignableRequest, SigningSettings, sign};
use aws_sigv4::sign::v4;
use aws_types::os_shim_internal::{Env, Fs};
use http::{HeaderMap, HeaderName, HeaderValue};

use crate::credentials::KeySource;
use crate::error::{ErrorContext, ErrorKind, LlmError};

/// The variable a Bedrock API key is read from when no other is configured.
pub const BEARER_TOKEN_ENV: &str = "AWS_BEARER_TOKEN_BEDROCK";

/// Where a Bedrock provider's credentials come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BedrockAuth {
    /// AWS credentials, signed with SigV4.
    Aws(AwsChain),
    /// A Bedrock API key from this variable, sent as a bearer token.
    ApiKey(KeySource),
}

impl BedrockAuth {
    /// A Bedrock API key when `AWS_BEARER_TOKEN_BEDROCK` is set (as the AWS SDKs decide),
    /// else the AWS chain.
    pub fn from_environment() -> Self {
        match std::env::var(BEARER_TOKEN_ENV) {
            Ok(v) if !v.trim().is_empty() => Self::ApiKey(KeySource::env(BEARER_TOKEN_ENV)),
            _ => Self::Aws(AwsChain::standard()),
        }
    }
}

/// The AWS credential chain: the environment, then the shared files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AwsChain {
    /// Whether the `AWS_*` key variables are read first.
    pub environment: bool,
    /// `None`: `AWS_PROFILE`, else `default`.
    pub profile: Option<String>,
    /// `None`: `AWS_CONFIG_FILE`, else `~/.aws/config`.
    pub config_file: Option<PathBuf>,
    /// `None`: `AWS_SHARED_CREDENTIALS_FILE`, else `~/.aws/credentials`.
    pub credentials_file: Option<PathBuf>,
}

impl AwsChain {
    /// The chain every AWS tool uses.
    pub fn standard() -> Self {
        Self {
            environment: true,
            profile: None,
            config_file: None,
            credentials_file: None,
        }
    }

    /// The credentials for this turn.
    pub(crate) async fn credentials(&self, ctx: &ErrorContext) -> Result<Credentials, LlmError> {
        if self.environment {
            match EnvironmentVariableCredentialsProvider::new()
                .provide_credentials()
                .await
            {
                Ok(credentials) => return Ok(credentials),
                Err(CredentialsError::CredentialsNotLoaded(_)) => {}
                // Only the error's own line: its sources may quote values.
                Err(e) => return Err(missing(ctx, &format!("the environment's keys: {e}"))),
            }
        }
        self.profile_keys().await.map_err(|why| missing(ctx, &why))
    }

    /// Static or session keys of the selected profile, as aws-config's parser reads the two
    /// files (a profile that assumes a role or uses SSO needs an HTTP client this build lacks).
    async fn profile_keys(&self) -> Result<Credentials, String> {
        let mut files = EnvConfigFiles::builder();
        if let Some(path) = &self.config_file {
            files = files
                .include_default_config_file(false)
                .with_file(EnvConfigFileKind::Config, path);
        }
        if let Some(path) = &self.credentials_file {
            files = files
                .include_default_credentials_file(false)
                .with_file(EnvConfigFileKind::Credentials, path);
        }
        let profiles = aws_config::profile::load(
            &Fs::real(),
            &Env::real(),
            &files.build(),
            self.profile.clone().map(Into::into),
        )
        .await
        .map_err(|e| format!("the shared files could not be read: {e}"))?;
        let name = profiles.selected_profile().to_owned();
        let Some(profile) = profiles.get_profile(&name) else {
            return Err(format!("no profile `{name}` in the shared files"));
        };
        match (
            profile.get("aws_access_key_id"),
            profile.get("aws_secret_access_key"),
        ) {
            (Some(id), Some(secret)) => Ok(Credentials::new(
                id,
                secret,
                profile.get("aws_session_token").map(str::to_owned),
                None,
                "profile",
            )),
            _ if [
                "role_arn",
                "sso_session",
                "sso_start_url",
                "credential_process",
            ]
            .iter()
            .any(|k| profile.get(k).is_some()) =>
            {
                Err(format!(
                    "profile `{name}` assumes a role, uses sso or runs a process, which this build does not do"
                ))
            }
            _ => Err(format!(
                "profile `{name}` has no aws_access_key_id and aws_secret_access_key"
            )),
        }
    }
}

fn missing(ctx: &ErrorContext, why: &str) -> LlmError {
    ctx.error(
        ErrorKind::Configuration,
        format!(
            "no aws credentials ({why}); export AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and \
             AWS_SESSION_TOKEN), put static or session keys in the shared credentials file for \
             AWS_PROFILE, or set {BEARER_TOKEN_ENV} to a bedrock api key"
        ),
    )
}

/// Adds the SigV4 headers (`authorization`, `x-amz-date`, `x-amz-security-token` with a
/// session token, `x-amz-content-sha256` if asked) for a POST of `body` to `url`.
pub(crate) fn sign_request(
    headers: &mut HeaderMap,
    url: &str,
    body: &[u8],
    credentials: &Credentials,
    region: &str,
    now: SystemTime,
) -> Result<(), String> {
    let identity = credentials.clone().into();
    let params = v4::SigningParams::builder()
        .identity(&identity)
        .region(region)
        .name("bedrock")
        .time(now)
        .settings(SigningSettings::default())
        .build()
        .map_err(|e| format!("sigv4 parameters: {e}"))?
        .into();
    let pairs: Vec<(&str, &str)> = headers
        .iter()
        .filter_map(|(name, value)| Some((name.as_str(), value.to_str().ok()?)))
        .collect();
    let signable = SignableRequest::new("POST", url, pairs.into_iter(), SignableBody::Bytes(body))
        .map_err(|e| format!("sigv4 request: {e}"))?;
    let (instructions, _signature) = sign(signable, &params)
        .map_err(|e| format!("sigv4 signing: {e}"))?
        .into_parts();
    let (signed, _query) = instructions.into_parts();
    for header in signed {
        let mut value = HeaderValue::from_str(header.value())
            .map_err(|_| format!("sigv4 produced an invalid `{}` header", header.name()))?;
        value.set_sensitive(header.sensitive() || header.name() == "authorization");
        headers.insert(HeaderName::from_static(header.name()), value);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signing_adds_the_sigv4_headers_marked_sensitive() {
        let creds = Credentials::new(
            "AKIDEXAMPLE",
            "secret-DO-NOT-LEAK",
            Some("token-DO-NOT-LEAK".into()),
            None,
            "test",
        );
        let mut headers = HeaderMap::new();
        headers.insert("content-type", HeaderValue::from_static("application/json"));
        sign_request(
            &mut headers,
            "https://bedrock-runtime.us-east-1.amazonaws.com/model/a%3A0/converse-stream",
            b"{}",
            &creds,
            "us-east-1",
            SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000),
        )
        .unwrap();
        let auth = headers["authorization"].to_str().unwrap();
        assert!(
            auth.starts_with(
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20231114/us-east-1/bedrock/aws4_request"
            ),
            "{auth}"
        );
        assert!(!auth.contains("secret-DO-NOT-LEAK"));
        assert_eq!(headers["x-amz-date"], "20231114T221320Z");
        assert!(headers["x-amz-security-token"].is_sensitive());
        assert!(headers["authorization"].is_sensitive());
        assert!(!format!("{headers:?}").contains("DO-NOT-LEAK"));
    }

    #[tokio::test]
    async fn the_chain_reads_the_named_profile_of_the_given_files() {
        let dir = tempfile::tempdir().unwrap();
        let credentials = dir.path().join("credentials");
        std::fs::write(
            &credentials,
            "[default]\naws_access_key_id = AKIDDEFAULT\naws_secret_access_key = SECRET-DEFAULT-1\n\n[work]\naws_access_key_id = AKIDWORK\naws_secret_access_key = SECRET-WORK-2\naws_session_token = TOKEN-WORK-2\n",
        )
        .unwrap();
        let config = dir.path().join("config");
        std::fs::write(&config, "").unwrap();
        let ctx = ErrorContext {
            provider: "bedrock".into(),
            model: "m".into(),
        };
        let chain = AwsChain {
            environment: false,
            profile: Some("work".into()),
            config_file: Some(config.clone()),
            credentials_file: Some(credentials),
        };
        let got = chain.credentials(&ctx).await.unwrap();
        assert_eq!(
            (got.access_key_id(), got.session_token()),
            ("AKIDWORK", Some("TOKEN-WORK-2"))
        );

        let missing = AwsChain {
            profile: Some("absent".into()),
            ..chain
        };
        let e = missing.credentials(&ctx).await.unwrap_err();
        assert_eq!(e.kind, ErrorKind::Configuration);
        assert!(
            e.message.contains("AWS_ACCESS_KEY_ID") && e.message.contains(BEARER_TOKEN_ENV),
            "{e}"
        );
        assert!(
            !e.message.contains("SECRET-") && !e.message.contains("TOKEN-WORK"),
            "{e}"
        );
    }
}
