//! `.agents/mcp.json`: which third-party MCP servers to start, parsed strictly.
//!
//! Unknown keys are errors that name the nearest valid key (a typo such as `read_onyl` would
//! otherwise silently leave a server writable). A server is either a child process (`command`)
//! or a Streamable HTTP endpoint (`url`), never both.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

/// Where the project's MCP client configuration lives, relative to the project root.
pub const CONFIG_PATH: &str = ".agents/mcp.json";

/// How long a server may take to start and list its tools, unless configured.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(10);
/// How long one call may take, unless configured.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// Why `.agents/mcp.json` cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("reading {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Invalid { path: String, message: String },
}

/// How to reach a server.
#[derive(Clone, Debug, PartialEq)]
pub enum Transport {
    /// A child process speaking MCP over stdio, started in the project root.
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
    },
    /// A Streamable HTTP endpoint; each header's value is read from the named environment
    /// variable (secrets stay out of the file).
    Http {
        url: String,
        headers_env: BTreeMap<String, String>,
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
    "read_only",
    "poll_allow",
    "timeout_ms",
    "startup_timeout_ms",
];

/// Read `<root>/.agents/mcp.json`; no file means no servers.
pub fn load(root: &Path) -> Result<Vec<ServerConfig>, ConfigError> {
    let path = root.join(CONFIG_PATH);
    match std::fs::read_to_string(&path) {
        Ok(text) => parse(&text).map_err(|message| ConfigError::Invalid {
            path: CONFIG_PATH.to_owned(),
            message,
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(source) => Err(ConfigError::Read {
            path: CONFIG_PATH.to_owned(),
            source,
        }),
    }
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
        if name.is_empty()
            || !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        {
            return Err(format!(
                "server name `{name}` is invalid; use letters, digits, `_` and `-`"
            ));
        }
        let Value::Object(obj) = raw else {
            return Err(format!("servers.{name} must be an object"));
        };
        check_keys(obj, SERVER_KEYS, &format!("servers.{name}."))?;
        let raw: RawServer = serde_json::from_value(Value::Object(obj.clone()))
            .map_err(|e| format!("servers.{name}: {e}"))?;
        let transport = match (raw.command, raw.url) {
            (Some(command), None) => {
                if !raw.headers_env.is_empty() {
                    return Err(format!(
                        "servers.{name}.headers_env applies to `url` servers only"
                    ));
                }
                Transport::Stdio {
                    command,
                    args: raw.args,
                    env: raw.env,
                }
            }
            (None, Some(url)) => {
                if !raw.args.is_empty() || !raw.env.is_empty() {
                    return Err(format!(
                        "servers.{name}: `args` and `env` apply to `command` servers only"
                    ));
                }
                Transport::Http {
                    url,
                    headers_env: raw.headers_env,
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

fn check_keys(
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
        ];
        for (text, want) in cases {
            let err = parse(text).unwrap_err();
            assert!(err.contains(want), "{text}: {err}");
        }
    }
}
