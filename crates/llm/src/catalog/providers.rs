//! Provider kinds (the wire format an endpoint speaks) and the built-in providers, which need
//! no configuration table: a name, a kind, the vendor's URL and the variable its key is in.

use std::fmt;
use std::str::FromStr;

/// The wire format of a provider endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProviderKind {
    Anthropic,
    OpenAiChat,
    OpenAiResponses,
    Gemini,
    Vertex,
    Bedrock,
    Cohere,
    AzureChat,
    AzureResponses,
}

impl ProviderKind {
    pub const ALL: [ProviderKind; 9] = [
        ProviderKind::Anthropic,
        ProviderKind::OpenAiChat,
        ProviderKind::OpenAiResponses,
        ProviderKind::Gemini,
        ProviderKind::Vertex,
        ProviderKind::Bedrock,
        ProviderKind::Cohere,
        ProviderKind::AzureChat,
        ProviderKind::AzureResponses,
    ];

    /// The name configuration uses (`kind = "openai-chat"`).
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::OpenAiChat => "openai-chat",
            ProviderKind::OpenAiResponses => "openai-responses",
            ProviderKind::Gemini => "gemini",
            ProviderKind::Vertex => "vertex",
            ProviderKind::Bedrock => "bedrock",
            ProviderKind::Cohere => "cohere",
            ProviderKind::AzureChat => "azure-chat",
            ProviderKind::AzureResponses => "azure-responses",
        }
    }
}

impl fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A kind name that is not one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownKind(pub String);

impl UnknownKind {
    /// Every valid kind name.
    pub fn valid() -> Vec<&'static str> {
        ProviderKind::ALL.iter().map(|k| k.as_str()).collect()
    }
}

impl fmt::Display for UnknownKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown provider kind `{}` (valid: {})",
            self.0,
            Self::valid().join(", ")
        )
    }
}

impl std::error::Error for UnknownKind {}

impl FromStr for ProviderKind {
    type Err = UnknownKind;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ProviderKind::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| UnknownKind(s.to_owned()))
    }
}

/// Anthropic's own API root (a Messages endpoint at any other URL is a compatible one).
pub const ANTHROPIC_API: &str = "https://api.anthropic.com";
/// OpenAI's own API root (Chat or Responses at any other URL is a compatible server).
pub const OPENAI_API: &str = "https://api.openai.com/v1";

impl ProviderSpec {
    /// Whether the spec's base URL is `root`, the vendor's own API (a trailing `/` aside).
    pub fn is_at(&self, root: &str) -> bool {
        self.base_url
            .as_deref()
            .is_some_and(|b| b.trim_end_matches('/') == root)
    }
}

/// Where a provider's requests go and which variable holds its key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProviderSpec {
    pub name: String,
    pub kind: ProviderKind,
    /// `None` where the endpoint depends on the account (Azure's resource, Vertex's project)
    /// and must be configured.
    pub base_url: Option<String>,
    /// `None` for an endpoint that takes no key, or one whose credentials come from another
    /// chain (Bedrock's AWS chain, Vertex's bearer token).
    pub api_key_env: Option<String>,
    /// Vertex AI: the Google Cloud project whose endpoint the turns go to.
    pub project: Option<String>,
    /// Vertex AI: the region (`us-central1`) or `global`; also picks the host.
    pub location: Option<String>,
    /// Vertex AI and Azure: a program and its arguments that print an access token
    /// (`["gcloud", "auth", "print-access-token"]`, `["az", "account", "get-access-token",
    /// ...]`), run without a shell, again after a 401. Without it Vertex reads its token from
    /// the `api_key_env` variable.
    pub token_command: Option<Vec<String>>,
    /// Azure: the variable holding a Microsoft Entra ID access token, sent as a bearer token
    /// in place of the `api-key`.
    pub token_env: Option<String>,
    /// The cloud region, for kinds whose endpoint is regional (Bedrock); `None` leaves it to
    /// the environment (`AWS_REGION`, `AWS_DEFAULT_REGION`).
    pub region: Option<String>,
    /// Azure's `api-version` query parameter; `None` takes the default of the kind (see
    /// [`crate::azure`]). Other kinds ignore it.
    pub api_version: Option<String>,
}

fn spec(name: &str, kind: ProviderKind, base_url: Option<&str>, key: Option<&str>) -> ProviderSpec {
    ProviderSpec {
        name: name.to_owned(),
        kind,
        base_url: base_url.map(str::to_owned),
        api_key_env: key.map(str::to_owned),
        project: None,
        location: None,
        token_command: None,
        token_env: None,
        region: None,
        api_version: None,
    }
}

/// The providers every configuration has.
pub fn builtin_providers() -> Vec<ProviderSpec> {
    use ProviderKind as K;
    vec![
        spec(
            "anthropic",
            K::Anthropic,
            Some(ANTHROPIC_API),
            Some("ANTHROPIC_API_KEY"),
        ),
        spec(
            "openai",
            K::OpenAiResponses,
            Some(OPENAI_API),
            Some("OPENAI_API_KEY"),
        ),
        spec(
            "gemini",
            K::Gemini,
            Some("https://generativelanguage.googleapis.com"),
            Some("GEMINI_API_KEY"),
        ),
        spec("vertex", K::Vertex, None, None),
        spec("bedrock", K::Bedrock, None, None),
        spec(
            "cohere",
            K::Cohere,
            Some("https://api.cohere.com"),
            Some("COHERE_API_KEY"),
        ),
        spec(
            "azure",
            K::AzureResponses,
            None,
            Some("AZURE_OPENAI_API_KEY"),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_round_trip_and_unknown_ones_list_the_valid() {
        for kind in ProviderKind::ALL {
            assert_eq!(kind.as_str().parse::<ProviderKind>(), Ok(kind));
        }
        let e = "openai_chat".parse::<ProviderKind>().unwrap_err();
        assert!(e.to_string().contains("openai-chat"), "{e}");
    }

    #[test]
    fn builtin_providers_have_unique_names_and_https_urls() {
        let providers = builtin_providers();
        for (i, p) in providers.iter().enumerate() {
            assert!(
                providers[..i].iter().all(|q| q.name != p.name),
                "{} twice",
                p.name
            );
            if let Some(url) = &p.base_url {
                assert!(url.starts_with("https://"), "{}: {url}", p.name);
            }
        }
    }
}
