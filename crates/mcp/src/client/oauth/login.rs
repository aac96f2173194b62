//! `tackle mcp login`: authorize tackle against one HTTP server, as the MCP authorization
//! specification lays it out, and keep the tokens.
//!
//! The steps: an unauthenticated `initialize` to get the server's 401 challenge
//! (`WWW-Authenticate: Bearer resource_metadata=…, scope=…`); discovery from it (RFC 9728
//! protected-resource metadata and its well-known fallbacks, then RFC 8414 / OpenID
//! authorization-server metadata, then the 2025-03-26 default endpoints at the server's
//! root); a client (the entry's pre-registered `oauth.client_id`, else RFC 7591 dynamic
//! registration); the authorization code flow with PKCE S256, `state` and the `resource`
//! parameter through a loopback redirect ([`super::callback`]); the code exchanged and the
//! tokens written by [`super::store`].
//!
//! Key decision: the protocol is rmcp's (`AuthorizationManager` and `AuthorizationSession`,
//! on the `oauth2` crate): discovery, registration, PKCE and the exchange are the SDK's, which
//! also refuses metadata that points at private or link-local hosts a public server has no
//! business naming. This module only chooses the client, runs the redirect listener, and binds
//! the result to the server's name and URL. Opening a browser is the caller's (the front end
//! decides how a URL reaches a person); nothing here starts one.

use std::path::PathBuf;
use std::time::Duration;

use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationMetadataSource, AuthorizationRequest,
    AuthorizationSession,
};

use super::callback::{CallbackError, CallbackListener};
use super::credential_store::FileCredentialStore;
use super::store::{ClientRecord, TokenDir, TokenRecord, token_may_travel};
use crate::client::config::{ServerConfig, Transport};

/// How long a login waits for the browser's redirect, unless told.
pub const DEFAULT_LOGIN_TIMEOUT: Duration = Duration::from_secs(300);

/// Why a login did not end with stored tokens.
#[derive(Debug, thiserror::Error)]
pub enum LoginError {
    #[error("`{0}` is a stdio server; only HTTP servers (`url`) log in with OAuth")]
    NotHttp(String),
    #[error(
        "`{0}` is plain http to a non-loopback host, where a token would travel in clear; use its https URL"
    )]
    Insecure(String),
    #[error(
        "`{server}` sends its own Authorization header (headers_env); drop that header to log in with OAuth"
    )]
    HeaderConfigured { server: String },
    #[error("reaching {url}: {message}")]
    Unreachable { url: String, message: String },
    #[error("discovering how {url} is authorized: {message}")]
    Discovery { url: String, message: String },
    #[error(
        "the authorization server offers no dynamic client registration; register a client with it and set servers.{server}.oauth.client_id in mcp.json (tackle mcp add --client-id)"
    )]
    NoRegistration { server: String },
    #[error("registering tackle as a client: {0}")]
    Registration(String),
    #[error(
        "oauth.client_secret_env of `{server}` names {var}, which is not set; export it or drop the key"
    )]
    MissingSecret { server: String, var: String },
    #[error("starting the authorization: {0}")]
    Authorization(String),
    #[error("the redirect listener: {0}")]
    Listener(String),
    #[error(
        "no authorization arrived within {0} s; open the URL printed above in a browser, or pass a longer --timeout"
    )]
    Timeout(u64),
    #[error("{0}")]
    Callback(#[from] CallbackError),
    #[error("exchanging the authorization code for tokens: {0}")]
    Exchange(String),
    #[error("{0}")]
    Store(#[from] super::store::StoreError),
}

/// How the client tackle authorized as was chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientSource {
    /// The entry's `oauth.client_id`.
    Configured,
    /// The entry's `oauth.client_metadata_url`, as the client id (SEP-991).
    MetadataDocument,
    /// Registered now (RFC 7591 dynamic client registration).
    Registered,
}

impl ClientSource {
    pub fn as_str(self) -> &'static str {
        match self {
            ClientSource::Configured => "configured",
            ClientSource::MetadataDocument => "metadata_document",
            ClientSource::Registered => "registered",
        }
    }
}

/// What a completed login did.
#[derive(Clone, Debug)]
pub struct LoginOutcome {
    /// The token file written.
    pub path: PathBuf,
    pub client_id: String,
    /// Where the client came from.
    pub client_source: ClientSource,
    /// The authorization server's issuer, when its metadata names one.
    pub issuer: Option<String>,
    /// The scopes the tokens were granted (as the server reported them, else as requested).
    pub scopes: Vec<String>,
    /// Whether the server published its metadata (false: the 2025-03-26 default endpoints).
    pub discovered: bool,
}

/// Run the login of `server`, calling `show_url` with the authorization URL once it is
/// known; wait at most `timeout` for the redirect.
pub async fn login(
    server: &ServerConfig,
    tokens: &TokenDir,
    timeout: Duration,
    show_url: impl FnOnce(&str),
) -> Result<LoginOutcome, LoginError> {
    let Transport::Http {
        url,
        headers_env,
        oauth,
    } = &server.transport
    else {
        return Err(LoginError::NotHttp(server.name.clone()));
    };
    if headers_env
        .keys()
        .any(|h| h.eq_ignore_ascii_case("authorization"))
    {
        return Err(LoginError::HeaderConfigured {
            server: server.name.clone(),
        });
    }
    if !token_may_travel(url) {
        return Err(LoginError::Insecure(server.endpoint()));
    }
    if tokens.path_for(&server.name, url).is_none() {
        return Err(super::store::StoreError::NoDirectory.into());
    }
    let challenge = challenge(url).await?;
    // A login again after the server asked for more (step-up): the scopes held and the
    // scopes asked for, together.
    let earlier = tokens.load(&server.name, url)?;
    let mut wanted: Vec<String> = Vec::new();
    if let Some(earlier) = &earlier {
        let granted = earlier
            .credentials
            .as_ref()
            .map(|c| c.granted_scopes.clone())
            .unwrap_or_default();
        for scope in granted.into_iter().chain(earlier.required_scopes.clone()) {
            if !wanted.contains(&scope) {
                wanted.push(scope);
            }
        }
    }
    let discovery = |e: AuthError| LoginError::Discovery {
        url: server.endpoint(),
        message: e.to_string(),
    };
    let mut manager = AuthorizationManager::new(url.as_str())
        .await
        .map_err(discovery)?;
    let resolution = manager
        .resolve_metadata_from_challenge(challenge.as_deref())
        .await
        .map_err(discovery)?;
    let metadata = resolution.metadata.clone();
    manager.set_metadata(resolution.metadata);

    let listener = CallbackListener::bind()
        .await
        .map_err(|e| LoginError::Listener(e.to_string()))?;
    let redirect_uri = listener.redirect_uri();

    // The client, in the specification's order: configured on the entry, a client ID metadata
    // document where the authorization server takes one, else registered now.
    let metadata_document_supported = metadata
        .additional_fields
        .get("client_id_metadata_document_supported")
        .and_then(serde_json::Value::as_bool)
        == Some(true);
    let configured_id = oauth.as_ref().and_then(|o| o.client_id.clone());
    let document = oauth
        .as_ref()
        .and_then(|o| o.client_metadata_url.clone())
        .filter(|_| metadata_document_supported);
    let (client, secret, source) = if let Some(client_id) = configured_id {
        let secret = match oauth.as_ref().and_then(|o| o.client_secret_env.as_ref()) {
            Some(var) => Some(std::env::var(var).map_err(|_| LoginError::MissingSecret {
                server: server.name.clone(),
                var: var.clone(),
            })?),
            None => None,
        };
        let client = ClientRecord {
            client_id,
            // The secret stays in its variable; connections read it from there.
            client_secret: None,
            redirect_uri: redirect_uri.clone(),
        };
        (client, secret, ClientSource::Configured)
    } else if let Some(url) = document {
        let client = ClientRecord {
            client_id: url,
            client_secret: None,
            redirect_uri: redirect_uri.clone(),
        };
        (client, None, ClientSource::MetadataDocument)
    } else {
        if metadata.registration_endpoint.is_none() {
            return Err(LoginError::NoRegistration {
                server: server.name.clone(),
            });
        }
        let scopes = if wanted.is_empty() {
            manager.select_scopes(None, &[])
        } else {
            wanted.clone()
        };
        let scope_refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
        let config = manager
            .register_client("tackle", &redirect_uri, &scope_refs)
            .await
            .map_err(|e| LoginError::Registration(e.to_string()))?;
        let client = ClientRecord {
            client_id: config.client_id.clone(),
            client_secret: config.client_secret.clone(),
            redirect_uri: redirect_uri.clone(),
        };
        (client, config.client_secret, ClientSource::Registered)
    };
    let record = TokenRecord {
        server: server.name.clone(),
        url: url.clone(),
        metadata: metadata.clone(),
        client: client.clone(),
        credentials: None,
        required_scopes: Vec::new(),
    };
    manager.set_credential_store(FileCredentialStore::new(tokens.clone(), record));

    let mut request = AuthorizationRequest::new(redirect_uri.clone())
        .with_preregistered_client(&client.client_id);
    if let Some(secret) = secret {
        request = request.with_client_secret(secret);
    }
    if !wanted.is_empty() {
        request = request.with_scopes(wanted);
    }
    let session = AuthorizationSession::new(manager, request)
        .await
        .map_err(|(_, e)| LoginError::Authorization(e.to_string()))?;
    let auth_url = session.get_authorization_url().to_owned();
    let state = reqwest::Url::parse(&auth_url)
        .ok()
        .and_then(|u| {
            u.query_pairs()
                .find(|(k, _)| k == "state")
                .map(|(_, v)| v.into_owned())
        })
        .ok_or_else(|| {
            LoginError::Authorization("the authorization URL carries no state".into())
        })?;
    show_url(&auth_url);

    let callback = match tokio::time::timeout(timeout, listener.wait(&state)).await {
        Ok(c) => c?,
        Err(_) => return Err(LoginError::Timeout(timeout.as_secs())),
    };
    session
        .handle_callback_with_issuer(&callback.code, &state, callback.issuer.as_deref())
        .await
        .map_err(|e| LoginError::Exchange(e.to_string()))?;
    // What the exchange stored (through the credential store above) is the record of truth.
    let scopes = tokens
        .load(&server.name, url)?
        .and_then(|r| r.credentials)
        .map(|c| c.granted_scopes)
        .unwrap_or_default();
    let path = tokens
        .path_for(&server.name, url)
        .ok_or(super::store::StoreError::NoDirectory)?;
    Ok(LoginOutcome {
        path,
        client_id: client.client_id,
        client_source: source,
        issuer: metadata.issuer,
        scopes,
        discovered: resolution.source != AuthorizationMetadataSource::LegacyEndpointFallback,
    })
}

/// The server's `WWW-Authenticate` challenge to an unauthenticated `initialize`, if it
/// answers 401 with one. Any other answer leaves discovery to the well-known locations.
async fn challenge(url: &str) -> Result<Option<String>, LoginError> {
    crate::client::tls::ensure_crypto_provider();
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(30))
        .build()
        .map_err(|e| LoginError::Unreachable {
            url: url.to_owned(),
            message: e.to_string(),
        })?;
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "tackle", "version": env!("CARGO_PKG_VERSION")}
        }
    });
    let response = client
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .json(&body)
        .send()
        .await
        .map_err(|e| LoginError::Unreachable {
            url: crate::client::config::redact_userinfo(url),
            message: crate::client::connection::error_chain(&e),
        })?;
    if response.status() != reqwest::StatusCode::UNAUTHORIZED {
        return Ok(None);
    }
    Ok(response
        .headers()
        .get_all(reqwest::header::WWW_AUTHENTICATE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.trim_start().to_ascii_lowercase().starts_with("bearer"))
        .map(str::to_owned))
}
