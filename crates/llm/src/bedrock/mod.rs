//! Amazon Bedrock's Converse API, streaming (`POST {base}/model/{modelId}/converse-stream`),
//! for every model Bedrock serves, foundation model ids and inference profiles alike.
//!
//! The response is not server-sent events but `application/vnd.amazon.eventstream` binary
//! frames ([`frames`]); requests are signed with SigV4 over the AWS chain's credentials
//! ([`chain`], cached until they expire) or carry a Bedrock API key ([`auth`]).
//! The region comes from the provider's table, else `AWS_REGION`, else `AWS_DEFAULT_REGION`.

mod advice;
mod auth;
mod aws_http;
mod cache;
mod chain;
mod error;
mod frames;
pub(crate) mod request;
mod stream;

pub use auth::{AwsChain, BEARER_TOKEN_ENV, BedrockAuth};
pub use request::request_body;

use std::time::SystemTime;

use async_trait::async_trait;
use bytes::Bytes;
use http::{HeaderMap, HeaderValue};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

use crate::credentials::ApiKey;
use crate::error::{ErrorContext, ErrorKind, LlmError};
use crate::lift::drive;
use crate::provider::Provider;
use crate::redact::Redactor;
use crate::request::TurnRequest;
use crate::transport::{Classify, StreamingPost, Transport, TurnStream};

/// Where and how to reach Bedrock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BedrockConfig {
    /// The provider's name in errors (`bedrock`).
    pub name: String,
    /// `None`: `AWS_REGION`, else `AWS_DEFAULT_REGION`.
    pub region: Option<String>,
    /// `None`: `https://bedrock-runtime.{region}.amazonaws.com` (set for a VPC endpoint).
    pub base_url: Option<String>,
    pub auth: BedrockAuth,
}

impl BedrockConfig {
    /// Bedrock in the environment's region with the environment's credentials.
    pub fn standard() -> Self {
        Self {
            name: "bedrock".into(),
            region: None,
            base_url: None,
            auth: BedrockAuth::from_environment(),
        }
    }
}

/// How this provider authenticates, with an API key already read.
#[derive(Debug)]
enum Auth {
    Aws(chain::AwsCredentials),
    Bearer(ApiKey),
}

/// A Bedrock Converse provider.
#[derive(Debug)]
pub struct Bedrock {
    name: String,
    region: String,
    base_url: String,
    auth: Auth,
    transport: Transport,
}

impl Bedrock {
    /// Resolves the region and reads an API key now, so either missing is reported before any
    /// turn; AWS credentials are resolved at the first turn and again when they expire (see
    /// [`AwsChain`]).
    pub fn new(config: BedrockConfig, transport: Transport) -> Result<Self, LlmError> {
        let ctx = ErrorContext {
            provider: config.name.clone(),
            model: "-".into(),
        };
        let region = resolve_region(config.region.as_deref(), |v| std::env::var(v).ok())
            .ok_or_else(|| {
                ctx.error(
                    ErrorKind::Configuration,
                    format!(
                        "no aws region for provider `{}`; set region in its [providers.{}] table, \
                         or export AWS_REGION or AWS_DEFAULT_REGION",
                        config.name, config.name
                    ),
                )
            })?;
        let auth = match config.auth {
            BedrockAuth::Aws(aws) => {
                Auth::Aws(chain::AwsCredentials::new(aws, &region, transport.client()))
            }
            BedrockAuth::ApiKey(source) => Auth::Bearer(source.load(&ctx)?),
        };
        let base_url = match config.base_url {
            Some(url) => url.trim_end_matches('/').to_owned(),
            None => format!("https://bedrock-runtime.{region}.amazonaws.com"),
        };
        Ok(Self {
            name: config.name,
            region,
            base_url,
            auth,
            transport,
        })
    }
}

/// The configured region, else the first of the two variables that is set and not empty.
fn resolve_region(
    configured: Option<&str>,
    var: impl Fn(&str) -> Option<String>,
) -> Option<String> {
    let usable = |s: &str| !s.trim().is_empty();
    configured
        .filter(|s| usable(s))
        .map(|s| s.trim().to_owned())
        .or_else(|| {
            ["AWS_REGION", "AWS_DEFAULT_REGION"]
                .into_iter()
                .filter_map(&var)
                .find(|s| usable(s))
                .map(|s| s.trim().to_owned())
        })
}

/// What a path label may keep: the unreserved characters (`:` and `/` of ARNs and versions
/// are encoded).
const LABEL: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// The model id as one URL path segment.
pub fn model_path(model: &str) -> String {
    format!(
        "/model/{}/converse-stream",
        utf8_percent_encode(model, LABEL)
    )
}

#[async_trait]
impl Provider for Bedrock {
    fn name(&self) -> &str {
        &self.name
    }

    async fn stream(&self, request: &TurnRequest) -> Result<TurnStream, LlmError> {
        let ctx = ErrorContext {
            provider: self.name.clone(),
            model: request.model.clone(),
        };
        let names = request.tool_names();
        let body = Bytes::from(request_body(request, &names).to_string());
        let url = format!("{}{}", self.base_url, model_path(&request.model));
        let mut headers = HeaderMap::new();
        headers.insert(
            http::header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        headers.insert(
            http::header::ACCEPT,
            HeaderValue::from_static("application/vnd.amazon.eventstream"),
        );
        let redactor = match &self.auth {
            Auth::Bearer(key) => {
                headers.insert(http::header::AUTHORIZATION, key.header("Bearer ", &ctx)?);
                Redactor::new(Some(key))
            }
            Auth::Aws(aws) => {
                let credentials = aws.get(&ctx).await?;
                let redactor = Redactor::new(None)
                    .with_secret(credentials.secret_access_key())
                    .with_secret(credentials.access_key_id())
                    .with_secret(credentials.session_token().unwrap_or(""));
                auth::sign_request(
                    &mut headers,
                    &url,
                    &body,
                    &credentials,
                    &self.region,
                    SystemTime::now(),
                )
                .map_err(|e| redactor.error(ctx.error(ErrorKind::Configuration, e)))?;
                redactor
            }
        };
        let post = StreamingPost {
            ctx,
            url,
            headers,
            body,
            classify: Classify::Response(error::classify),
        };
        let reader = self
            .transport
            .open::<frames::EventStreamFraming>(post)
            .await
            .map_err(|e| {
                // Refused credentials (expired or revoked early) are resolved anew next turn.
                if let (Auth::Aws(aws), Some(401 | 403)) = (&self.auth, e.status) {
                    aws.invalidate();
                }
                redactor.error(e)
            })?;
        let lift = stream::BedrockLift::new(names, request.model.clone());
        Ok(redactor.stream(drive(reader, lift)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_resolve_from_the_table_then_the_two_variables() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| (*v).to_owned())
            }
        };
        let both = &[
            ("AWS_REGION", "eu-west-1"),
            ("AWS_DEFAULT_REGION", "us-east-1"),
        ];
        type Vars = &'static [(&'static str, &'static str)];
        let cases: [(Option<&str>, Vars, Option<&str>); 5] = [
            (Some("us-west-2"), both, Some("us-west-2")),
            (None, both, Some("eu-west-1")),
            (
                None,
                &[("AWS_REGION", " "), ("AWS_DEFAULT_REGION", "us-east-1")],
                Some("us-east-1"),
            ),
            (Some(""), &[], None),
            (None, &[], None),
        ];
        for (configured, vars, want) in cases {
            assert_eq!(
                resolve_region(configured, env(vars)).as_deref(),
                want,
                "{configured:?} {vars:?}"
            );
        }
    }

    #[test]
    fn model_ids_are_one_encoded_path_segment() {
        let cases = [
            (
                "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
                "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream",
            ),
            (
                "arn:aws:bedrock:us-east-1:123:inference-profile/x",
                "/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123%3Ainference-profile%2Fx/converse-stream",
            ),
        ];
        for (model, want) in cases {
            assert_eq!(model_path(model), want);
        }
    }
}
