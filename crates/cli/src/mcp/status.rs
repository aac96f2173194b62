//! What `tackle mcp list` and `get` show: each declared entry, its scope, how it is reached,
//! and how it stands.
//!
//! Key decision: only entries that would start are started (once each, all together, through
//! [`tackle_mcp::client::probe_servers`]); a project entry of an untrusted folder is reported
//! as not started, with how to trust it, and is never run to find out more. Secret values are
//! never shown: a stdio `env` value is `***` unless it is a `${VAR}` reference (then the
//! variable's name is shown), and a header shows the variable it is read from.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use tackle_mcp::client::config::env_reference;
use tackle_mcp::client::{ProbeOutcome, ServerConfig, Transport};

use super::scope::Scope;
use crate::config::Config;
use crate::trust::TrustState;

/// How one entry stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum State {
    /// It answered `initialize` and listed these tools.
    Connected { tools: Vec<String> },
    /// It could not be reached.
    Failed { cause: String },
    /// It answered 401 and no stored token satisfied it (`tackle mcp login <name>`).
    NeedsLogin { cause: String },
    /// A project entry while folder trust does not apply.
    Untrusted { trust: TrustState },
    /// A user entry the trusted project's entry of the same name replaces.
    Replaced,
}

/// One declared entry and its state.
#[derive(Clone, Debug)]
pub struct Row {
    pub scope: Scope,
    pub server: ServerConfig,
    pub state: State,
}

/// Every entry of `user` and `project`, user scope first; entries that would start are probed
/// together. `only` restricts the rows (and so the probes) to one name.
pub fn rows(
    config: &Config,
    user: &[ServerConfig],
    project: &[ServerConfig],
    only: Option<&str>,
) -> Vec<Row> {
    let applies = config.trust.applies();
    let wanted = |s: &&ServerConfig| only.is_none_or(|n| s.name == n);
    let mut rows: Vec<Row> = Vec::new();
    let mut to_probe: Vec<(usize, ServerConfig)> = Vec::new();
    for server in user.iter().filter(wanted) {
        let replaced = applies && project.iter().any(|p| p.name == server.name);
        if !replaced {
            to_probe.push((rows.len(), server.clone()));
        }
        rows.push(Row {
            scope: Scope::User,
            server: server.clone(),
            state: State::Replaced,
        });
    }
    for server in project.iter().filter(wanted) {
        let state = if applies {
            to_probe.push((rows.len(), server.clone()));
            State::Replaced
        } else {
            State::Untrusted {
                trust: config.trust.state,
            }
        };
        rows.push(Row {
            scope: Scope::Project,
            server: server.clone(),
            state,
        });
    }
    let servers: Vec<ServerConfig> = to_probe.iter().map(|(_, s)| s.clone()).collect();
    let outcomes = tackle_mcp::client::probe_servers(
        &servers,
        &config.root,
        &config.process_env,
        &super::tokens(),
    );
    for ((index, _), outcome) in to_probe.iter().zip(outcomes) {
        rows[*index].state = match outcome {
            ProbeOutcome::Connected { tools } => State::Connected { tools },
            ProbeOutcome::Failed { cause } => State::Failed { cause },
            ProbeOutcome::NeedsLogin { cause } => State::NeedsLogin { cause },
        };
    }
    rows
}

/// `stdio` or `http`.
fn transport_name(server: &ServerConfig) -> &'static str {
    match server.transport {
        Transport::Stdio { .. } => "stdio",
        Transport::Http { .. } => "http",
    }
}

/// The command line of a stdio entry, or the URL (without user information) of an HTTP one.
pub fn target(server: &ServerConfig) -> String {
    match &server.transport {
        Transport::Stdio { command, args, .. } => std::iter::once(command)
            .chain(args)
            .map(|a| quoted(a))
            .collect::<Vec<_>>()
            .join(" "),
        Transport::Http { .. } => server.endpoint(),
    }
}

/// A word as a person would type it: bare when it is plain, else in single quotes.
fn quoted(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./:=@,+%".contains(&b));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// What is shown of a stored `tackle mcp login`: never its tokens.
struct StoredLogin {
    client_id: String,
    scopes: Vec<String>,
}

/// The login stored for this entry's name at its exact URL, if any (an unreadable token file
/// shows as none; the connection reports why it cannot be used).
fn stored_login(server: &ServerConfig) -> Option<StoredLogin> {
    let Transport::Http { url, .. } = &server.transport else {
        return None;
    };
    let record = super::tokens().load(&server.name, url).ok()??;
    let credentials = record.credentials?;
    Some(StoredLogin {
        client_id: record.client.client_id,
        scopes: credentials.granted_scopes,
    })
}

/// A stdio `env` value as it may be shown: the reference, or `***` for a literal.
fn shown_env_value(value: &str) -> String {
    match env_reference(value) {
        Some(var) => format!("${{{var}}}"),
        None => "***".to_owned(),
    }
}

/// What an untrusted project entry is told.
fn untrusted_text(trust: TrustState) -> String {
    let why = match trust {
        TrustState::Changed => "this folder's MCP servers changed since it was trusted",
        _ => "this folder is not trusted",
    };
    format!("not started: {why}; run `tackle trust` to review and start project servers")
}

impl State {
    fn name(&self) -> &'static str {
        match self {
            State::Connected { .. } => "connected",
            State::Failed { .. } => "failed",
            State::NeedsLogin { .. } => "needs_login",
            State::Untrusted { .. } => "untrusted",
            State::Replaced => "replaced",
        }
    }

    /// One line for a person.
    pub fn text(&self) -> String {
        match self {
            State::Connected { tools } => match tools.len() {
                1 => "connected (1 tool)".to_owned(),
                n => format!("connected ({n} tools)"),
            },
            State::Failed { cause } => format!("failed: {cause}"),
            State::NeedsLogin { cause } => cause.clone(),
            State::Untrusted { trust } => untrusted_text(*trust),
            State::Replaced => {
                "not started: the project's entry of the same name is used instead".to_owned()
            }
        }
    }
}

impl Row {
    /// The row as JSON: configuration (secret values masked) and state.
    pub fn json(&self) -> Value {
        let s = &self.server;
        let mut v = json!({
            "name": s.name,
            "scope": self.scope.as_str(),
            "transport": transport_name(s),
            "read_only": s.read_only,
            "poll_allow": s.poll_allow,
            "timeout_ms": s.call_timeout.as_millis() as u64,
            "startup_timeout_ms": s.startup_timeout.as_millis() as u64,
            "state": self.state.name(),
        });
        match &s.transport {
            Transport::Stdio { command, args, env } => {
                let env: BTreeMap<&str, String> = env
                    .iter()
                    .map(|(k, v)| (k.as_str(), shown_env_value(v)))
                    .collect();
                v["command"] = json!(command);
                v["args"] = json!(args);
                v["env"] = json!(env);
            }
            Transport::Http {
                headers_env, oauth, ..
            } => {
                v["url"] = json!(s.endpoint());
                v["headers_env"] = json!(headers_env);
                if let Some(oauth) = oauth {
                    v["oauth"] = json!(oauth);
                }
                if let Some(login) = stored_login(s) {
                    v["login"] = json!({"client_id": login.client_id, "scopes": login.scopes});
                }
            }
        }
        match &self.state {
            State::Connected { tools } => {
                v["tools"] = json!(tools.len());
                v["tool_names"] = json!(tools);
            }
            State::Failed { cause } => v["error"] = json!(cause),
            State::NeedsLogin { cause } => v["hint"] = json!(cause),
            State::Untrusted { trust } => {
                v["trust"] = json!(trust.as_str());
                v["hint"] = json!(untrusted_text(*trust));
            }
            State::Replaced => {
                v["hint"] = json!(self.state.text());
            }
        }
        v
    }

    /// One line for `tackle mcp list`.
    pub fn line(&self) -> String {
        format!(
            "{} ({}, {}): {} - {}",
            self.server.name,
            self.scope.as_str(),
            transport_name(&self.server),
            target(&self.server),
            self.state.text()
        )
    }

    /// The block `tackle mcp get` prints.
    pub fn details(&self) -> String {
        let s = &self.server;
        let mut out = format!(
            "{}\n  scope: {}\n  transport: {}\n",
            s.name,
            self.scope.as_str(),
            transport_name(s)
        );
        match &s.transport {
            Transport::Stdio { env, .. } => {
                out.push_str(&format!("  command: {}\n", target(s)));
                for (k, v) in env {
                    out.push_str(&format!("  env {k}={}\n", shown_env_value(v)));
                }
            }
            Transport::Http {
                headers_env, oauth, ..
            } => {
                out.push_str(&format!("  url: {}\n", s.endpoint()));
                for (h, var) in headers_env {
                    out.push_str(&format!("  header {h}: from ${var}\n"));
                }
                if let Some(oauth) = oauth {
                    if let Some(id) = &oauth.client_id {
                        out.push_str(&format!("  oauth client_id: {id}\n"));
                    }
                    if let Some(url) = &oauth.client_metadata_url {
                        out.push_str(&format!("  oauth client metadata document: {url}\n"));
                    }
                    if let Some(var) = &oauth.client_secret_env {
                        out.push_str(&format!("  oauth client secret: from ${var}\n"));
                    }
                }
                match stored_login(s) {
                    Some(login) => out.push_str(&format!(
                        "  login: stored for this URL (client {}{})\n",
                        login.client_id,
                        if login.scopes.is_empty() {
                            String::new()
                        } else {
                            format!(", scopes {}", login.scopes.join(" "))
                        }
                    )),
                    None => out.push_str("  login: none stored\n"),
                }
            }
        }
        if s.read_only {
            out.push_str("  read_only: true\n");
        }
        out.push_str(&format!("  state: {}\n", self.state.text()));
        if let State::Connected { tools } = &self.state {
            // The names the model sees, as the catalog derives them.
            let mut taken = std::collections::BTreeSet::new();
            for t in tools {
                let model = tackle_mcp::client::model_name(&s.name, t, &mut taken);
                out.push_str(&format!("    {model}\n"));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_values_are_never_shown() {
        let servers = tackle_mcp::client::config::parse(
            r#"{"servers": {
                "a": {"command": "x", "env": {"TOKEN": "hunter2", "GH": "${GH_PAT}"}},
                "b": {"url": "https://user:pw@h.example/mcp", "headers_env": {"Authorization": "B_TOKEN"}}
            }}"#,
        )
        .unwrap();
        for server in servers {
            let row = Row {
                scope: Scope::User,
                server,
                state: State::Failed { cause: "x".into() },
            };
            let shown = format!("{}\n{}\n{}", row.json(), row.line(), row.details());
            for secret in ["hunter2", "pw@"] {
                assert!(!shown.contains(secret), "{shown}");
            }
            if row.server.name == "a" {
                assert!(
                    shown.contains("TOKEN=***") && shown.contains("${GH_PAT}"),
                    "{shown}"
                );
            } else {
                assert!(shown.contains("B_TOKEN"), "{shown}");
            }
        }
    }

    #[test]
    fn command_words_are_quoted_when_needed() {
        for (word, want) in [
            ("npx", "npx"),
            ("-y", "-y"),
            ("a b", "'a b'"),
            ("it's", r"'it'\''s'"),
            ("", "''"),
        ] {
            assert_eq!(quoted(word), want, "{word}");
        }
    }
}
