//! Which providers are asked for a window, and where.
//!
//! Only a provider whose turns go to a configured base URL in a format local servers speak
//! (OpenAI Chat or Responses, Anthropic Messages), and never OpenAI's or Anthropic's own API.
//! Every question goes to the base URL's scheme, host and port, under its path with a final
//! `/v1` taken off (`http://127.0.0.1:8080/v1` → `http://127.0.0.1:8080/props`), so a question
//! lands exactly where turns land or beside them on the same server. The provider's key, when
//! its variable is set, travels as its turns carry it (`Authorization: Bearer`, or `x-api-key`
//! for the Messages format) and only there.

use http::{HeaderName, HeaderValue};

use super::{ProbeError, ProbeErrorKind, Question};
use crate::catalog::{ProviderKind, ProviderSpec};
use crate::credentials::KeySource;
use crate::error::ErrorContext;

/// Hosts whose models the catalog knows and which publish no window: never asked.
const HOSTED_VENDORS: [(&str, &str); 2] = [
    ("api.openai.com", "OpenAI's own API"),
    ("api.anthropic.com", "Anthropic's own API"),
];

/// A provider's server, ready to be asked.
#[derive(Clone, Debug)]
pub struct ProbeTarget {
    provider: String,
    kind: ProviderKind,
    /// The base URL as configured, without a trailing `/`.
    base: reqwest::Url,
    /// `base` with a final `/v1` segment taken off: where the servers' own paths live.
    root: reqwest::Url,
    /// The key's header, marked sensitive.
    key: Option<(HeaderName, HeaderValue)>,
    /// The variable the key should be in, when the provider names one that is not set.
    unset_key_var: Option<String>,
}

impl ProbeTarget {
    /// The target of `spec`, or why it is not one to ask (a [`ProbeErrorKind::NotProbed`]).
    pub fn for_provider(spec: &ProviderSpec) -> Result<ProbeTarget, ProbeError> {
        let not_probed = |why: String| ProbeError::new(ProbeErrorKind::NotProbed, why);
        if !matches!(
            spec.kind,
            ProviderKind::OpenAiChat | ProviderKind::OpenAiResponses | ProviderKind::Anthropic
        ) {
            return Err(not_probed(format!(
                "provider `{}` is of kind {}, which no local server speaks",
                spec.name, spec.kind
            )));
        }
        let Some(configured) = spec.base_url.as_deref() else {
            return Err(not_probed(format!(
                "provider `{}` has no base_url",
                spec.name
            )));
        };
        let base = reqwest::Url::parse(configured.trim_end_matches('/'))
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https") && u.host_str().is_some())
            .ok_or_else(|| {
                not_probed(format!(
                    "provider `{}`: base_url `{configured}` is not an http url",
                    spec.name
                ))
            })?;
        if let Some((_, vendor)) = HOSTED_VENDORS
            .iter()
            .find(|(host, _)| base.host_str() == Some(host))
        {
            return Err(not_probed(format!(
                "provider `{}` is {vendor}, which names no window; the catalog's entry or a [models.*] table gives it",
                spec.name
            )));
        }
        let mut root = base.clone();
        root.set_query(None);
        root.set_fragment(None);
        if let Ok(mut segments) = root.path_segments_mut() {
            segments.pop_if_empty();
        }
        if root.path().ends_with("/v1")
            && let Ok(mut segments) = root.path_segments_mut()
        {
            segments.pop();
        }
        let (key, unset_key_var) = match &spec.api_key_env {
            None => (None, None),
            Some(var) => {
                let ctx = ErrorContext {
                    provider: spec.name.clone(),
                    model: "-".into(),
                };
                match KeySource::env(var).load(&ctx) {
                    Ok(key) => {
                        let header = if spec.kind == ProviderKind::Anthropic {
                            (HeaderName::from_static("x-api-key"), key.header("", &ctx))
                        } else {
                            (http::header::AUTHORIZATION, key.header("Bearer ", &ctx))
                        };
                        (header.1.ok().map(|value| (header.0, value)), None)
                    }
                    Err(_) => (None, Some(var.clone())),
                }
            }
        };
        Ok(ProbeTarget {
            provider: spec.name.clone(),
            kind: spec.kind,
            base,
            root,
            key,
            unset_key_var,
        })
    }

    /// The provider's configured name.
    pub fn provider(&self) -> &str {
        &self.provider
    }

    /// The base URL as configured (without a trailing `/`), the key of the cache.
    pub fn base_url(&self) -> &str {
        self.base.as_str().trim_end_matches('/')
    }

    /// The server as messages name it: scheme, host, port and the root path, never a user or
    /// password the URL may carry.
    pub fn shown(&self) -> String {
        let mut shown = self.root.clone();
        // Only a URL that cannot be a base refuses these; ours is an http URL with a host.
        let _ = shown.set_username("");
        let _ = shown.set_password(None);
        shown.as_str().trim_end_matches('/').to_owned()
    }

    pub(super) fn key(&self) -> Option<&(HeaderName, HeaderValue)> {
        self.key.as_ref()
    }

    /// What to do when the server wants a key.
    pub(super) fn key_advice(&self) -> String {
        match (&self.unset_key_var, &self.key) {
            (Some(var), _) => format!("export {var} with the server's key"),
            (None, Some(_)) => format!(
                "the key in provider `{}`'s api_key_env was refused; check it",
                self.provider
            ),
            (None, None) => format!(
                "set api_key_env in [providers.{}] to the variable holding the server's key",
                self.provider
            ),
        }
    }

    /// A question about `path` under the root.
    pub(super) fn question(&self, method: &'static str, path: &str) -> Question {
        Question {
            method,
            shown: path.to_owned(),
            url: join(&self.root, path),
            body: None,
        }
    }

    /// A question about `path` under the root, with a JSON body.
    pub(super) fn question_with(
        &self,
        method: &'static str,
        path: &str,
        body: serde_json::Value,
    ) -> Question {
        Question {
            body: Some(body),
            ..self.question(method, path)
        }
    }

    /// The models list where the provider's turns go: `{base}/models` for the OpenAI formats,
    /// `{root}/v1/models` for the Messages format (whose base URL has no `/v1`).
    pub(super) fn models_question(&self) -> Question {
        let (url, shown) = match self.kind {
            ProviderKind::Anthropic => (join(&self.root, "/v1/models"), "/v1/models".to_owned()),
            _ => {
                let url = join(&self.base, "/models");
                let shown = url
                    .path()
                    .strip_prefix(self.root.path().trim_end_matches('/'));
                let shown = shown.unwrap_or(url.path()).to_owned();
                (url, shown)
            }
        };
        Question {
            method: "GET",
            shown,
            url,
            body: None,
        }
    }
}

/// `base` with `path`'s segments pushed onto its path, no query, no fragment.
fn join(base: &reqwest::Url, path: &str) -> reqwest::Url {
    let mut url = base.clone();
    url.set_query(None);
    url.set_fragment(None);
    if let Ok(mut segments) = url.path_segments_mut() {
        segments.pop_if_empty();
        for segment in path.split('/').filter(|s| !s.is_empty()) {
            segments.push(segment);
        }
    }
    url
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(kind: ProviderKind, base_url: Option<&str>) -> ProviderSpec {
        ProviderSpec {
            name: "local".into(),
            kind,
            base_url: base_url.map(str::to_owned),
            api_key_env: None,
            project: None,
            location: None,
            token_command: None,
            token_env: None,
            region: None,
            api_version: None,
        }
    }

    #[test]
    fn questions_go_to_the_base_url_with_v1_taken_off() {
        // (kind, base url, /props, models list)
        let cases = [
            (
                ProviderKind::OpenAiChat,
                "http://127.0.0.1:8080/v1",
                "http://127.0.0.1:8080/props",
                "http://127.0.0.1:8080/v1/models",
            ),
            (
                ProviderKind::OpenAiResponses,
                "http://127.0.0.1:8080/v1/",
                "http://127.0.0.1:8080/props",
                "http://127.0.0.1:8080/v1/models",
            ),
            (
                ProviderKind::OpenAiChat,
                "http://gpu-box:8000",
                "http://gpu-box:8000/props",
                "http://gpu-box:8000/models",
            ),
            (
                ProviderKind::OpenAiChat,
                "https://lab.example/llm/v1?team=a",
                "https://lab.example/llm/props",
                "https://lab.example/llm/v1/models",
            ),
            (
                ProviderKind::Anthropic,
                "http://127.0.0.1:11434",
                "http://127.0.0.1:11434/props",
                "http://127.0.0.1:11434/v1/models",
            ),
        ];
        for (kind, base, props, models) in cases {
            let target = ProbeTarget::for_provider(&spec(kind, Some(base))).unwrap();
            assert_eq!(
                target.question("GET", "/props").url.as_str(),
                props,
                "{base}"
            );
            assert_eq!(target.models_question().url.as_str(), models, "{base}");
            let asked = target.question("GET", "/props").url;
            let configured = reqwest::Url::parse(base).unwrap();
            assert_eq!(
                (asked.scheme(), asked.host_str(), asked.port()),
                (
                    configured.scheme(),
                    configured.host_str(),
                    configured.port()
                ),
                "{base}: a question left the configured server"
            );
        }
        let shown = ProbeTarget::for_provider(&spec(
            ProviderKind::OpenAiChat,
            Some("http://me:secret@127.0.0.1:8080/v1"),
        ))
        .unwrap()
        .shown();
        assert_eq!(shown, "http://127.0.0.1:8080");
    }

    #[test]
    fn hosted_vendors_other_kinds_and_bad_urls_are_not_asked() {
        let cases = [
            spec(
                ProviderKind::OpenAiResponses,
                Some("https://api.openai.com/v1"),
            ),
            spec(ProviderKind::OpenAiChat, Some("https://api.openai.com/v1/")),
            spec(ProviderKind::Anthropic, Some("https://api.anthropic.com")),
            spec(ProviderKind::Gemini, Some("http://127.0.0.1:9")),
            spec(ProviderKind::Bedrock, None),
            spec(ProviderKind::AzureChat, Some("https://r.openai.azure.com")),
            spec(ProviderKind::Cohere, Some("https://api.cohere.com")),
            spec(ProviderKind::OpenAiChat, None),
            spec(ProviderKind::OpenAiChat, Some("file:///etc/passwd")),
            spec(ProviderKind::OpenAiChat, Some("127.0.0.1:8080")),
        ];
        for spec in cases {
            let e = ProbeTarget::for_provider(&spec).unwrap_err();
            assert_eq!(e.kind, ProbeErrorKind::NotProbed, "{spec:?}");
            assert!(e.message.contains("`local`"), "{e}");
        }
    }
}
