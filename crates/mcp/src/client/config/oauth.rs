//! `servers.<name>.oauth` of an HTTP entry: the OAuth client tackle logs in as when the server
//! does not take dynamic registration (or the user prefers their own client), parsed as
//! strictly as the rest of the file.

use serde::Serialize;
use serde_json::Value;

use super::{check_keys, env_reference};

const OAUTH_KEYS: &[&str] = &["client_id", "client_secret_env", "client_metadata_url"];

/// How an HTTP server entry's OAuth client is known: a client id registered with the
/// authorization server out of band (`"oauth": {"client_id": …}`), or the https URL of a
/// client ID metadata document the entry's owner hosts (`client_metadata_url`), used where the
/// authorization server supports those.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OAuthClient {
    pub client_id: Option<String>,
    pub client_metadata_url: Option<String>,
    /// The environment variable holding the client secret of a confidential client; the
    /// secret itself never sits in the file.
    pub client_secret_env: Option<String>,
}

/// `servers.<name>.oauth`: a client id and, for a confidential client, the variable of its
/// secret; unknown keys refused like everywhere else in the file.
pub(super) fn parse(name: &str, value: Value) -> Result<OAuthClient, String> {
    let Value::Object(obj) = value else {
        return Err(format!(
            "servers.{name}.oauth must be an object such as {{\"client_id\": \"…\"}}"
        ));
    };
    check_keys(&obj, OAUTH_KEYS, &format!("servers.{name}.oauth."))?;
    let text = |key: &str| -> Result<Option<String>, String> {
        match obj.get(key) {
            None => Ok(None),
            Some(Value::String(s)) if !s.is_empty() => Ok(Some(s.clone())),
            Some(_) => Err(format!(
                "servers.{name}.oauth.{key} must be a non-empty string"
            )),
        }
    };
    let client_id = text("client_id")?;
    let client_metadata_url = text("client_metadata_url")?;
    if client_id.is_none() && client_metadata_url.is_none() {
        return Err(format!(
            "servers.{name}.oauth needs `client_id` (the client registered with the authorization server) or `client_metadata_url`"
        ));
    }
    if let Some(url) = &client_metadata_url {
        let https_with_path = reqwest::Url::parse(url)
            .is_ok_and(|u| u.scheme() == "https" && u.host_str().is_some() && u.path() != "/");
        if !https_with_path {
            return Err(format!(
                "servers.{name}.oauth.client_metadata_url: `{url}` is not an https URL with a path; a client ID metadata document is served as https://host/path.json"
            ));
        }
    }
    let client_secret_env = text("client_secret_env")?;
    if client_secret_env.is_some() && client_id.is_none() {
        return Err(format!(
            "servers.{name}.oauth.client_secret_env belongs to a `client_id`; add the client id it is the secret of"
        ));
    }
    if let Some(var) = &client_secret_env
        && env_reference(&format!("${{{var}}}")).is_none()
    {
        return Err(format!(
            "servers.{name}.oauth.client_secret_env: `{var}` is not an environment variable name; name the variable that holds the secret"
        ));
    }
    Ok(OAuthClient {
        client_id,
        client_metadata_url,
        client_secret_env,
    })
}

#[cfg(test)]
mod tests {
    use super::super::{Transport, parse};

    #[test]
    fn an_oauth_client_is_parsed_named_as_a_secret_and_digested() {
        let text = r#"{"servers": {"a": {"url": "https://h.example/mcp",
            "oauth": {"client_id": "cid", "client_secret_env": "A_SECRET"}}}}"#;
        let server = &parse(text).unwrap()[0];
        let Transport::Http { oauth, .. } = &server.transport else {
            panic!("{server:?}")
        };
        assert_eq!(
            oauth
                .as_ref()
                .map(|o| (o.client_id.as_deref(), o.client_secret_env.as_deref())),
            Some((Some("cid"), Some("A_SECRET")))
        );
        let secrets = server.secrets();
        assert_eq!(secrets.len(), 1, "{secrets:?}");
        assert_eq!(secrets[0].var, "A_SECRET");
        assert!(secrets[0].destination.contains("authorization server"));
        let without = parse(r#"{"servers": {"a": {"url": "https://h.example/mcp"}}}"#).unwrap();
        assert_ne!(server.canonical(), without[0].canonical());
    }

    #[test]
    fn refusals_name_the_key() {
        let cases: &[(&str, &str)] = &[
            (
                r#"{"servers": {"a": {"url": "https://h/mcp", "oauth": {"client_idd": "x"}}}}"#,
                "did you mean `servers.a.oauth.client_id`",
            ),
            (
                r#"{"servers": {"a": {"url": "https://h/mcp", "oauth": {}}}}"#,
                "servers.a.oauth needs `client_id`",
            ),
            (
                r#"{"servers": {"a": {"url": "https://h/mcp", "oauth": {"client_id": 5}}}}"#,
                "servers.a.oauth.client_id must be a non-empty string",
            ),
            (
                r#"{"servers": {"a": {"url": "https://h/mcp", "oauth": "x"}}}"#,
                "servers.a.oauth must be an object",
            ),
            (
                r#"{"servers": {"a": {"url": "https://h/mcp", "oauth": {"client_id": "c", "client_secret_env": "A-B"}}}}"#,
                "not an environment variable name",
            ),
            (
                r#"{"servers": {"a": {"url": "https://h/mcp", "oauth": {"client_metadata_url": "http://h/c.json"}}}}"#,
                "is not an https URL with a path",
            ),
            (
                r#"{"servers": {"a": {"url": "https://h/mcp", "oauth": {"client_metadata_url": "https://h/"}}}}"#,
                "is not an https URL with a path",
            ),
            (
                r#"{"servers": {"a": {"url": "https://h/mcp", "oauth": {"client_metadata_url": "https://h/c.json", "client_secret_env": "S"}}}}"#,
                "belongs to a `client_id`",
            ),
            (
                r#"{"servers": {"a": {"command": "x", "oauth": {"client_id": "c"}}}}"#,
                "apply to `url` servers only",
            ),
        ];
        for (text, want) in cases {
            let err = parse(text).unwrap_err();
            assert!(err.contains(want), "{text}: {err}");
        }
    }
}
