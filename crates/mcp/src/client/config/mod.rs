//! `.agents/mcp.json`: which third-party MCP servers to start, parsed strictly.
//!
//! Unknown keys are errors that name the nearest valid key (a typo such as `read_onyl` would
//! otherwise silently leave a server writable). A server is either a child process (`command`)
//! or a Streamable HTTP endpoint (`url`), never both.
//!
//! A stdio child gets tackle's filtered environment (the same secrets withheld as from bash
//! commands) plus exactly its entry's `env`; a value written `${NAME}` is taken from tackle's
//! own environment, which is how a withheld credential reaches the one server that needs it.
//! [`ServerConfig::secrets`] names every variable an entry hands over and where it goes, so
//! folder trust can show it before anything starts.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

mod oauth;
pub use oauth::OAuthClient;

/// Where the project's MCP client configuration lives, relative to the project root.
pub const CONFIG_PATH: &str = ".agents/mcp.json";

/// How long a server may take to start and list its tools, unless configured.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(10);
/// How long one call may take, unless configured.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// Why `.agents/mcp.json` cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file is not one tackle reads (a FIFO, a device, a link out of the project, over the
    /// cap): the message names it and the fix.
    #[error("{0}")]
    Refused(#[from] tackle_fs::OwnFileError),
    /// The project root itself could not be opened.
    #[error("opening the project root {path}: {source}")]
    Root {
        path: String,
        source: tackle_fs::FsError,
    },
    #[error("{path}: {message}")]
    Invalid { path: String, message: String },
}

/// How to reach a server.
#[derive(Clone, Debug, PartialEq)]
pub enum Transport {
    /// A child process speaking MCP over stdio, started in the project root. Each `env`
    /// value is literal, or `${NAME}`: the value of `NAME` in tackle's environment.
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
    },
    /// A Streamable HTTP endpoint; each header's value is read from the named environment
    /// variable (secrets stay out of the file). `oauth` names a client registered with the
    /// server's authorization server out of band (else `tackle mcp login` registers one).
    Http {
        url: String,
        headers_env: BTreeMap<String, String>,
        oauth: Option<OAuthClient>,
    },
}

/// One configured server.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerConfig {
    pub name: String,
    pub transport: Transport,
    /// Every tool of this server is read-only (and so pollable).
    pub read_only: bool,
    /// Tools that may be polled although neither the server nor the tool says read-only.
    pub poll_allow: Vec<String>,
    pub call_timeout: Duration,
    pub startup_timeout: Duration,
}

/// A secret a server entry hands over: the variable whose value leaves tackle, and where to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SecretUse {
    pub var: String,
    /// For a person: "header Authorization of every request to http://…".
    pub destination: String,
}

/// The variable a stdio `env` value takes from tackle's environment: `${NAME}` → `NAME`.
pub fn env_reference(value: &str) -> Option<&str> {
    let name = value.strip_prefix("${")?.strip_suffix('}')?;
    let valid = name
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    valid.then_some(name)
}

/// Every field of an entry, in a fixed order with sorted maps: the stable text trust digests.
#[derive(Serialize)]
struct Canonical<'a> {
    name: &'a str,
    command: Option<&'a str>,
    args: Option<&'a [String]>,
    env: Option<&'a BTreeMap<String, String>>,
    url: Option<&'a str>,
    headers_env: Option<&'a BTreeMap<String, String>>,
    oauth: Option<&'a OAuthClient>,
    read_only: bool,
    poll_allow: &'a [String],
    timeout_ms: u128,
    startup_timeout_ms: u128,
}

impl ServerConfig {
    /// Where the server is, for people: the command of a stdio server, the URL of an HTTP one
    /// without any user information it carries.
    pub fn endpoint(&self) -> String {
        match &self.transport {
            Transport::Stdio { command, .. } => command.clone(),
            Transport::Http { url, .. } => redact_userinfo(url),
        }
    }

    /// Every variable this entry sends somewhere: each `headers_env` value (to the URL) and
    /// each `${NAME}` of a stdio `env` (into the child).
    pub fn secrets(&self) -> Vec<SecretUse> {
        match &self.transport {
            Transport::Stdio { command, env, .. } => env
                .iter()
                .filter_map(|(name, value)| {
                    env_reference(value).map(|var| SecretUse {
                        var: var.to_owned(),
                        destination: format!(
                            "environment variable {name} of MCP server `{}` (command {command})",
                            self.name
                        ),
                    })
                })
                .collect(),
            Transport::Http {
                url,
                headers_env,
                oauth,
            } => headers_env
                .iter()
                .map(|(header, var)| SecretUse {
                    var: var.clone(),
                    destination: format!(
                        "header {header} of every request of MCP server `{}` to {url}",
                        self.name
                    ),
                })
                .chain(
                    oauth
                        .as_ref()
                        .and_then(|o| o.client_secret_env.as_ref())
                        .map(|var| SecretUse {
                            var: var.clone(),
                            destination: format!(
                                "the OAuth client secret of MCP server `{}` ({url}), sent to its authorization server",
                                self.name
                            ),
                        }),
                )
                .collect(),
        }
    }

    /// The entry as one stable line of JSON (every field, maps sorted): what a person accepted
    /// when trusting it is recognised by this text, so any change to the entry asks again.
    pub fn canonical(&self) -> String {
        let (command, args, env, url, headers_env, oauth) = match &self.transport {
            Transport::Stdio { command, args, env } => (
                Some(command.as_str()),
                Some(args.as_slice()),
                Some(env),
                None,
                None,
                None,
            ),
            Transport::Http {
                url,
                headers_env,
                oauth,
            } => (
                None,
                None,
                None,
                Some(url.as_str()),
                Some(headers_env),
                oauth.as_ref(),
            ),
        };
        let c = Canonical {
            name: &self.name,
            command,
            args,
            env,
            url,
            headers_env,
            oauth,
            read_only: self.read_only,
            poll_allow: &self.poll_allow,
            timeout_ms: self.call_timeout.as_millis(),
            startup_timeout_ms: self.startup_timeout.as_millis(),
        };
        // Serializing strings, bools, integers and string maps cannot fail.
        serde_json::to_string(&c).unwrap_or_default()
    }
}

/// `scheme://user:secret@host/...` without the `user:secret@`; other URLs unchanged.
pub(crate) fn redact_userinfo(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{scheme}://{}", &rest[at + 1..]),
        None => url.to_owned(),
    }
}

#[derive(Deserialize)]
struct RawServer {
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    url: Option<String>,
    #[serde(default)]
    headers_env: BTreeMap<String, String>,
    oauth: Option<Value>,
    #[serde(default)]
    read_only: bool,
    #[serde(default)]
    poll_allow: Vec<String>,
    timeout_ms: Option<u64>,
    startup_timeout_ms: Option<u64>,
}

const TOP_KEYS: &[&str] = &["servers"];
const SERVER_KEYS: &[&str] = &[
    "command",
    "args",
    "env",
    "url",
    "headers_env",
    "oauth",
    "read_only",
    "poll_allow",
    "timeout_ms",
    "startup_timeout_ms",
];

/// Read `<root>/.agents/mcp.json`; no file means no servers. Whether its servers may start
/// is not decided here (folder trust is the caller's).
pub fn load(root: &Path) -> Result<Vec<ServerConfig>, ConfigError> {
    parse_named(read_project(root)?, CONFIG_PATH)
}

/// The text of `<root>/.agents/mcp.json`, read as tackle reads its own files
/// ([`tackle_fs::OwnFile::MCP_CONFIG`]: through the root handle, regular files only, capped,
/// never blocking); `None` when there is none.
pub fn read_project(root: &Path) -> Result<Option<String>, ConfigError> {
    let handle = tackle_fs::Root::open_shared(root).map_err(|source| ConfigError::Root {
        path: root.display().to_string(),
        source,
    })?;
    let kind = tackle_fs::OwnFile::MCP_CONFIG;
    match kind.read_in(&handle, CONFIG_PATH)? {
        Some(bytes) => Ok(Some(bytes.into_text(kind, CONFIG_PATH)?)),
        None => Ok(None),
    }
}

/// Read a file in the `.agents/mcp.json` format at `path` (the user's own file, for one: links
/// followed, but regular files only, capped, never blocking), naming it `shown` in errors; no
/// file means no servers.
pub fn load_file(path: &Path, shown: &str) -> Result<Vec<ServerConfig>, ConfigError> {
    let kind = tackle_fs::OwnFile::MCP_CONFIG;
    let text = match kind.read_at(path)? {
        Some(bytes) => Some(bytes.into_text(kind, shown)?),
        None => None,
    };
    parse_named(text, shown)
}

/// [`parse`] of a file's text, errors naming it `shown`; no text means no servers.
pub fn parse_named(text: Option<String>, shown: &str) -> Result<Vec<ServerConfig>, ConfigError> {
    match text {
        Some(text) => parse(&text).map_err(|message| ConfigError::Invalid {
            path: shown.to_owned(),
            message,
        }),
        None => Ok(Vec::new()),
    }
}

/// Whether `name` may name a server: letters, digits, `_` and `-` (it becomes part of tool
/// names and permission keys). The error says what is allowed.
pub fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty()
        || !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        return Err(format!(
            "server name `{name}` is invalid; use letters, digits, `_` and `-`"
        ));
    }
    Ok(())
}

/// Whether `url` can be a Streamable HTTP endpoint: an absolute `http` or `https` URL with a host.
pub fn check_url(url: &str) -> Result<(), String> {
    let parsed = reqwest::Url::parse(url)
        .map_err(|e| format!("`{url}` is not a URL ({e}); write it as https://host/path"))?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
        return Err(format!(
            "`{url}` is not an http or https URL with a host; MCP servers over HTTP are reached at https://host/path"
        ));
    }
    Ok(())
}

/// Parse the file's text; the error is a message naming the offending key.
pub fn parse(text: &str) -> Result<Vec<ServerConfig>, String> {
    let value: Value = serde_json::from_str(text).map_err(|e| format!("not valid JSON: {e}"))?;
    let Value::Object(top) = value else {
        return Err("the file must hold a JSON object with a `servers` object".to_owned());
    };
    check_keys(&top, TOP_KEYS, "")?;
    let Some(servers) = top.get("servers") else {
        return Ok(Vec::new());
    };
    let Value::Object(servers) = servers else {
        return Err("`servers` must be an object mapping server names to servers".to_owned());
    };
    let mut out = Vec::with_capacity(servers.len());
    for (name, raw) in servers {
        check_name(name)?;
        let Value::Object(obj) = raw else {
            return Err(format!("servers.{name} must be an object"));
        };
        check_keys(obj, SERVER_KEYS, &format!("servers.{name}."))?;
        let raw: RawServer = serde_json::from_value(Value::Object(obj.clone()))
            .map_err(|e| format!("servers.{name}: {e}"))?;
        let transport = match (raw.command, raw.url) {
            (Some(command), None) => {
                if !raw.headers_env.is_empty() || raw.oauth.is_some() {
                    return Err(format!(
                        "servers.{name}: `headers_env` and `oauth` apply to `url` servers only"
                    ));
                }
                for (key, value) in &raw.env {
                    if value.starts_with("${") && env_reference(value).is_none() {
                        return Err(format!(
                            "servers.{name}.env.{key}: `{value}` is not a variable reference; write ${{NAME}} with letters, digits and `_`"
                        ));
                    }
                }
                Transport::Stdio {
                    command,
                    args: raw.args,
                    env: raw.env,
                }
            }
            (None, Some(url)) => {
                check_url(&url).map_err(|e| format!("servers.{name}.url: {e}"))?;
                if !raw.args.is_empty() || !raw.env.is_empty() {
                    return Err(format!(
                        "servers.{name}: `args` and `env` apply to `command` servers only"
                    ));
                }
                let oauth = match raw.oauth {
                    Some(value) => Some(oauth::parse(name, value)?),
                    None => None,
                };
                Transport::Http {
                    url,
                    headers_env: raw.headers_env,
                    oauth,
                }
            }
            (Some(_), Some(_)) => {
                return Err(format!(
                    "servers.{name} has both `command` and `url`; keep one"
                ));
            }
            (None, None) => {
                return Err(format!(
                    "servers.{name} needs `command` (a stdio server) or `url` (an HTTP server)"
                ));
            }
        };
        out.push(ServerConfig {
            name: name.clone(),
            transport,
            read_only: raw.read_only,
            poll_allow: raw.poll_allow,
            call_timeout: raw
                .timeout_ms
                .map_or(DEFAULT_CALL_TIMEOUT, Duration::from_millis),
            startup_timeout: raw
                .startup_timeout_ms
                .map_or(DEFAULT_STARTUP_TIMEOUT, Duration::from_millis),
        });
    }
    Ok(out)
}

pub(crate) fn check_keys(
    obj: &serde_json::Map<String, Value>,
    valid: &[&str],
    prefix: &str,
) -> Result<(), String> {
    for key in obj.keys() {
        if valid.contains(&key.as_str()) {
            continue;
        }
        let nearest = valid
            .iter()
            .max_by(|a, b| strsim::jaro_winkler(key, a).total_cmp(&strsim::jaro_winkler(key, b)));
        return Err(match nearest {
            Some(n) => format!("unknown key `{prefix}{key}`; did you mean `{prefix}{n}`?"),
            None => format!("unknown key `{prefix}{key}`"),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_stdio_and_http_servers() {
        let servers = parse(
            r#"{"servers": {
                "fs": {"command": "npx", "args": ["srv"], "env": {"A": "1"}, "read_only": true,
                       "poll_allow": ["x"], "timeout_ms": 5},
                "gh": {"url": "http://127.0.0.1:9/mcp", "headers_env": {"Authorization": "TOKEN"}}
            }}"#,
        )
        .unwrap();
        assert_eq!(servers.len(), 2);
        assert_eq!(servers[0].name, "fs");
        assert!(servers[0].read_only);
        assert_eq!(servers[0].call_timeout, Duration::from_millis(5));
        assert_eq!(servers[1].startup_timeout, DEFAULT_STARTUP_TIMEOUT);
        assert!(matches!(servers[1].transport, Transport::Http { .. }));
        assert!(parse("{}").unwrap().is_empty());
    }

    #[test]
    fn secrets_name_each_variable_and_where_it_goes() {
        let servers = parse(
            r#"{"servers": {
                "gh": {"command": "gh-mcp", "env": {"GITHUB_TOKEN": "${GH_PAT}", "LOG": "off"}},
                "docs": {"url": "http://127.0.0.1:9/mcp",
                         "headers_env": {"Authorization": "OPENAI_API_KEY", "X-Org": "ORG_ID"}}
            }}"#,
        )
        .unwrap();
        let by_name = |n: &str| servers.iter().find(|s| s.name == n).unwrap().secrets();
        let gh = by_name("gh");
        assert_eq!(gh.len(), 1, "{gh:?}");
        assert_eq!(gh[0].var, "GH_PAT");
        assert!(gh[0].destination.contains("GITHUB_TOKEN") && gh[0].destination.contains("gh-mcp"));
        let docs: Vec<String> = by_name("docs").iter().map(|s| s.var.clone()).collect();
        assert_eq!(docs, ["OPENAI_API_KEY", "ORG_ID"]);
        assert!(
            by_name("docs")[0]
                .destination
                .contains("http://127.0.0.1:9/mcp")
        );
    }

    #[test]
    fn env_references_are_exact() {
        for (value, want) in [
            ("${A}", Some("A")),
            ("${_A1}", Some("_A1")),
            ("${1A}", None),
            ("${}", None),
            ("${A B}", None),
            ("x${A}", None),
            ("$A", None),
            ("plain", None),
        ] {
            assert_eq!(env_reference(value), want, "{value}");
        }
        let err =
            parse(r#"{"servers": {"a": {"command": "x", "env": {"K": "${A-B}"}}}}"#).unwrap_err();
        assert!(err.contains("servers.a.env.K"), "{err}");
    }

    #[test]
    fn the_canonical_text_changes_with_every_field() {
        let base =
            r#"{"servers": {"a": {"command": "x", "args": ["1"], "env": {"B": "2", "A": "1"}}}}"#;
        let text = |t: &str| parse(t).unwrap()[0].canonical();
        let same_reordered =
            r#"{"servers": {"a": {"env": {"A": "1", "B": "2"}, "args": ["1"], "command": "x"}}}"#;
        assert_eq!(text(base), text(same_reordered));
        for changed in [
            r#"{"servers": {"a": {"command": "y", "args": ["1"], "env": {"B": "2", "A": "1"}}}}"#,
            r#"{"servers": {"a": {"command": "x", "args": ["2"], "env": {"B": "2", "A": "1"}}}}"#,
            r#"{"servers": {"a": {"command": "x", "args": ["1"], "env": {"B": "3", "A": "1"}}}}"#,
            r#"{"servers": {"a": {"command": "x", "args": ["1"], "env": {"B": "2", "A": "1"}, "read_only": true}}}"#,
            r#"{"servers": {"b": {"command": "x", "args": ["1"], "env": {"B": "2", "A": "1"}}}}"#,
        ] {
            assert_ne!(text(base), text(changed), "{changed}");
        }
    }

    #[test]
    fn refusals_name_the_key() {
        let cases: &[(&str, &str)] = &[
            (r#"{"server": {}}"#, "did you mean `servers`"),
            (
                r#"{"servers": {"a": {"command": "x", "read_onyl": true}}}"#,
                "did you mean `servers.a.read_only`",
            ),
            (r#"{"servers": {"a": {}}}"#, "needs `command`"),
            (
                r#"{"servers": {"a": {"command": "x", "url": "http://h"}}}"#,
                "both `command` and `url`",
            ),
            (
                r#"{"servers": {"a.b": {"command": "x"}}}"#,
                "server name `a.b`",
            ),
            (
                r#"{"servers": {"a": {"command": "x", "timeout_ms": "5"}}}"#,
                "servers.a:",
            ),
            ("[", "not valid JSON"),
            (
                r#"{"servers": {"a": {"url": "file:///etc/passwd"}}}"#,
                "servers.a.url: `file:///etc/passwd` is not an http or https URL",
            ),
            (
                r#"{"servers": {"a": {"url": "127.0.0.1:9/mcp"}}}"#,
                "servers.a.url:",
            ),
            (r#"{"servers": {"a": {"url": "not a url"}}}"#, "not a URL"),
        ];
        for (text, want) in cases {
            let err = parse(text).unwrap_err();
            assert!(err.contains(want), "{text}: {err}");
        }
    }
}
