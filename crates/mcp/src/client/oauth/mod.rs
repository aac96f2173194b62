//! OAuth for HTTP MCP servers: `tackle mcp login` ([`login`]), the tokens it keeps
//! ([`store`]), and the redirect listener ([`callback`]). Connections read the stored token
//! and let rmcp's `AuthClient` send it, refresh it when it expires, and retry once after a
//! 401 ([`authorized_client`]).
//!
//! Refuses: starting a browser flow on its own. A connection that meets a 401 with no usable
//! token fails as "needs login" naming `tackle mcp login <server>`; only that command, run by
//! a person, authorizes.

pub mod callback;
mod credential_store;
pub mod login;
pub mod store;

use rmcp::transport::auth::{AuthClient, AuthorizationManager, OAuthClientConfig};

use crate::client::config::{ServerConfig, Transport};
pub use login::{ClientSource, DEFAULT_LOGIN_TIMEOUT, LoginError, LoginOutcome, login};
pub use store::{TokenDir, token_may_travel};

/// The HTTP client that carries `server`'s stored token, or `None` when there is none to
/// carry: no login for this name at this exact URL, an explicit Authorization header in
/// `headers_env` (the entry's own credential wins), or a URL a token may not travel to.
pub async fn authorized_client(
    server: &ServerConfig,
    tokens: &TokenDir,
    http: reqwest::Client,
) -> Result<Option<AuthClient<reqwest::Client>>, String> {
    let Transport::Http {
        url,
        headers_env,
        oauth,
    } = &server.transport
    else {
        return Ok(None);
    };
    if headers_env
        .keys()
        .any(|h| h.eq_ignore_ascii_case("authorization"))
        || !token_may_travel(url)
    {
        return Ok(None);
    }
    let Some(record) = tokens.load(&server.name, url).map_err(|e| e.to_string())? else {
        return Ok(None);
    };
    if record.credentials.is_none() {
        return Ok(None);
    }
    // A secret configured on the entry belongs to the entry's client id only: a token file
    // of another client never gets it.
    let secret = match (&record.client.client_secret, oauth) {
        (Some(s), _) => Some(s.clone()),
        (None, Some(o)) if o.client_id.as_deref() == Some(record.client.client_id.as_str()) => o
            .client_secret_env
            .as_ref()
            .and_then(|var| std::env::var(var).ok()),
        (None, _) => None,
    };
    let mut manager = AuthorizationManager::new(url.as_str())
        .await
        .map_err(|e| e.to_string())?;
    manager.set_metadata(record.metadata.clone());
    let mut config = OAuthClientConfig::new(
        record.client.client_id.clone(),
        record.client.redirect_uri.clone(),
    );
    if let Some(secret) = secret {
        config = config.with_client_secret(secret);
    }
    manager
        .configure_client(config)
        .map_err(|e| e.to_string())?;
    manager.set_credential_store(credential_store::FileCredentialStore::new(
        tokens.clone(),
        record,
    ));
    Ok(Some(AuthClient::new(http, manager)))
}
