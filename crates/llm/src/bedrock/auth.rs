//! How a Bedrock request proves who sends it: SigV4 (service `bedrock`) over AWS credentials
//! from the standard chain ([`super::chain`]), or a Bedrock API key as `Authorization: Bearer`.
//!
//! Signing is `aws-sigv4`'s; nothing here computes a signature.

use std::path::PathBuf;
use std::time::SystemTime;

use aws_credential_types::Credentials;
use aws_runtime::env_config::file::{EnvConfigFileKind, EnvConfigFiles};
use aws_sigv4::http_request::{SignableBody, SignableRequest, SigningSettings, sign};
use aws_sigv4::sign::v4;
use http::{HeaderMap, HeaderName, HeaderValue};

use crate::credentials::KeySource;

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

/// The AWS credential chain: the environment, the shared files' profile, web identity, then
/// the container and instance metadata endpoints (see [`super::chain`]). The rest of the
/// environment (`AWS_PROFILE`, `AWS_CONFIG_FILE`, `AWS_ENDPOINT_URL_STS`, `HOME` for the SSO
/// token cache, ...) is read as aws-config reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AwsChain {
    /// Whether the `AWS_*` key variables are read first.
    pub environment: bool,
    /// Whether the container (`AWS_CONTAINER_CREDENTIALS_*`) and EC2 instance metadata
    /// endpoints are asked last, as the AWS SDKs do.
    pub metadata_endpoints: bool,
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
            metadata_endpoints: true,
            profile: None,
            config_file: None,
            credentials_file: None,
        }
    }

    /// The shared files this chain reads.
    pub(crate) fn files(&self) -> EnvConfigFiles {
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
        files.build()
    }
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
    use crate::bedrock::chain::AwsCredentials;
    use crate::error::{ErrorContext, ErrorKind};

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
            metadata_endpoints: false,
            profile: Some("work".into()),
            config_file: Some(config.clone()),
            credentials_file: Some(credentials),
        };
        let client = crate::Transport::new(crate::TransportLimits::default())
            .unwrap()
            .client();
        let got = AwsCredentials::new(chain.clone(), "us-east-1", client.clone())
            .get(&ctx)
            .await
            .unwrap();
        assert_eq!(
            (got.access_key_id(), got.session_token()),
            ("AKIDWORK", Some("TOKEN-WORK-2"))
        );

        let missing = AwsChain {
            profile: Some("absent".into()),
            ..chain
        };
        let e = AwsCredentials::new(missing, "us-east-1", client)
            .get(&ctx)
            .await
            .unwrap_err();
        assert_eq!(e.kind, ErrorKind::Configuration);
        assert!(
            e.message.contains("AWS_ACCESS_KEY_ID")
                && e.message.contains(BEARER_TOKEN_ENV)
                && e.message.contains("`absent`"),
            "{e}"
        );
        assert!(
            !e.message.contains("SECRET-") && !e.message.contains("TOKEN-WORK"),
            "{e}"
        );
    }
}
