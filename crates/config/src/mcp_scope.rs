//! The two places MCP servers are declared and which of their entries may start.
//!
//! The user scope is `mcp.json` in the user's config directory (beside `config.toml` and the
//! trust store); its servers are the user's own and always start. The project scope is the
//! root's `.agents/mcp.json`; its servers start only while folder trust applies. Both files
//! have the same format ([`tackle_mcp::client::config`]).
//!
//! Key decision: a name declared in both scopes is one server. While the project applies, its
//! entry replaces the user's (the project knows what it needs, as with Claude Code's scopes);
//! while it is untrusted the user's entry stands, so a cloned repository can neither start a
//! server nor stop one the user relies on by reusing its name.

use std::path::{Path, PathBuf};

use crate::config_error;
use tackle_mcp::client::ServerConfig;

/// Where `tackle mcp login` keeps tokens: `<user config dir>/oauth`, or nowhere without a user
/// config directory (then no token is stored or sent).
pub fn tokens() -> tackle_mcp::client::TokenDir {
    match crate::load::user_config_dir() {
        Some(dir) => tackle_mcp::client::TokenDir::in_config_dir(&dir),
        None => tackle_mcp::client::TokenDir::none(),
    }
}

/// Where a server entry lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Scope {
    /// The user's own file: `$XDG_CONFIG_HOME/tackle/mcp.json` (else `~/.config/tackle/mcp.json`).
    User,
    /// The project's `.agents/mcp.json`, subject to folder trust.
    Project,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
        }
    }
}

/// The file name of the user scope inside the user config directory.
const USER_FILE: &str = "mcp.json";

/// `$XDG_CONFIG_HOME/tackle/mcp.json`, else `~/.config/tackle/mcp.json`.
pub fn user_path() -> Option<PathBuf> {
    Some(crate::load::user_config_dir()?.join(USER_FILE))
}

/// `<root>/.agents/mcp.json`.
pub fn project_path(root: &Path) -> PathBuf {
    root.join(tackle_mcp::client::config::CONFIG_PATH)
}

/// The servers of the user scope; none without a user config directory or file.
pub fn load_user() -> crate::Result<Vec<ServerConfig>> {
    let Some(path) = user_path() else {
        return Ok(Vec::new());
    };
    let shown = path.display().to_string();
    tackle_mcp::client::config::load_file(&path, &shown).map_err(|e| config_error!("{e}"))
}

/// The entries that may start, user scope first: every project entry when the project
/// applies (replacing a user entry of the same name), else the user's alone.
pub fn startable(
    user: &[ServerConfig],
    project: &[ServerConfig],
    project_applies: bool,
) -> Vec<ServerConfig> {
    if !project_applies {
        return user.to_vec();
    }
    user.iter()
        .filter(|u| !project.iter().any(|p| p.name == u.name))
        .chain(project)
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn servers(text: &str) -> Vec<ServerConfig> {
        tackle_mcp::client::config::parse(text).unwrap()
    }

    #[test]
    fn a_project_entry_replaces_the_users_only_while_it_applies() {
        let user = servers(r#"{"servers": {"a": {"command": "user-a"}, "b": {"command": "b"}}}"#);
        let project =
            servers(r#"{"servers": {"a": {"command": "proj-a"}, "c": {"command": "c"}}}"#);
        let names = |v: Vec<ServerConfig>| -> Vec<String> {
            v.iter()
                .map(|s| format!("{}={}", s.name, s.endpoint()))
                .collect()
        };
        assert_eq!(
            names(startable(&user, &project, true)),
            ["b=b", "a=proj-a", "c=c"]
        );
        assert_eq!(
            names(startable(&user, &project, false)),
            ["a=user-a", "b=b"]
        );
    }
}
