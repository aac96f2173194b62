//! The bearer token `tackle serve --http` requires of every client. A loopback port is open to
//! every local user of the machine, and the server runs tools (bash among them) as the user who
//! started it, so a token is required on loopback too: the one `--token-env` names, else one
//! drawn once for this user and kept in `$XDG_STATE_HOME/tackle/serve/token` (else
//! `~/.local/state/tackle/serve/token`; the directory 0700, the file 0600), which the same
//! user's MCP client configuration reads. `--no-token` serves without one, on loopback only.

use std::io::Write as _;
use std::net::SocketAddr;
use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};

use anyhow::{Context, anyhow};

/// The token a client must send, and where it came from.
#[derive(Debug, PartialEq, Eq)]
pub enum ServeToken {
    /// From the variable `--token-env` names.
    Named { var: String, token: String },
    /// This user's kept token, read or drawn now.
    Kept { path: PathBuf, token: String },
    /// `--no-token` on loopback: any local user may call the tools.
    Open,
}

impl ServeToken {
    pub fn token(&self) -> Option<&str> {
        match self {
            ServeToken::Named { token, .. } | ServeToken::Kept { token, .. } => Some(token),
            ServeToken::Open => None,
        }
    }

    /// What the person starting the server is told about it (never the token itself).
    pub fn said(&self) -> String {
        match self {
            ServeToken::Named { var, .. } => {
                format!("clients send `Authorization: Bearer` with the token in ${var}")
            }
            ServeToken::Kept { path, .. } => format!(
                "clients send `Authorization: Bearer` with the token in {} (this user's; --token-env NAME names another)",
                path.display()
            ),
            ServeToken::Open => "--no-token: no bearer token is asked for, so any local user of this machine can call these tools as you".to_owned(),
        }
    }
}

/// The token to serve `addr` with.
pub fn choose(
    token_env: Option<&str>,
    no_token: bool,
    addr: SocketAddr,
) -> anyhow::Result<ServeToken> {
    if no_token {
        if !addr.ip().is_loopback() {
            return Err(anyhow!(
                "--no-token serves loopback only: {addr} is reachable from other machines; pass --token-env VAR with the token in VAR, or bind 127.0.0.1"
            ));
        }
        return Ok(ServeToken::Open);
    }
    if let Some(var) = token_env {
        let token = std::env::var(var).map_err(|_| {
            anyhow!("--token-env {var}: the variable is not set; export it with the token clients must send")
        })?;
        if token.is_empty() {
            return Err(anyhow!(
                "--token-env {var}: the token is empty; set a non-empty token"
            ));
        }
        if token.len() < tackle_mcp::http::MIN_TOKEN_BYTES {
            return Err(anyhow!(
                "--token-env {var}: the token is {} bytes; use at least {} random bytes (for example `export {var}=$(openssl rand -hex 32)`)",
                token.len(),
                tackle_mcp::http::MIN_TOKEN_BYTES,
            ));
        }
        return Ok(ServeToken::Named {
            var: var.to_owned(),
            token,
        });
    }
    if !addr.ip().is_loopback() {
        // A kept token is for this user's own clients on this machine; off loopback the
        // operator names the token the remote clients hold.
        return Err(anyhow!(
            "refusing to serve on {addr}, which is not a loopback address, without a bearer token; pass --token-env VAR with the token in VAR, or bind 127.0.0.1"
        ));
    }
    let path = kept_path()?;
    let token = kept_or_drawn(&path)?;
    Ok(ServeToken::Kept { path, token })
}

/// `$XDG_STATE_HOME/tackle/serve/token`, else `~/.local/state/tackle/serve/token`.
pub fn kept_path() -> anyhow::Result<PathBuf> {
    let state = match std::env::var_os("XDG_STATE_HOME").filter(|v| !v.is_empty()) {
        Some(state) => PathBuf::from(state),
        None => PathBuf::from(
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .ok_or_else(|| {
                    anyhow!("neither XDG_STATE_HOME nor HOME is set, so there is nowhere to keep the server's token; pass --token-env VAR")
                })?,
        )
        .join(".local/state"),
    };
    Ok(state.join("tackle/serve/token"))
}

/// The token kept at `path`, drawn and written (0600, in a 0700 directory) when there is none.
/// A file others could read, a link or a short token is refused, not used.
fn kept_or_drawn(path: &Path) -> anyhow::Result<String> {
    if let Some(dir) = path.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .with_context(|| format!("creating {}", dir.display()))?;
    }
    let drawn = tackle_runtime::unguessable::unguessable_id("tackle");
    // Created only if absent: of two servers starting together, one draws and both use it.
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
    {
        Ok(mut file) => {
            file.write_all(drawn.as_bytes())
                .and_then(|()| file.sync_all())
                .with_context(|| format!("writing {}", path.display()))?;
            return Ok(drawn);
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e).with_context(|| format!("creating {}", path.display())),
    }
    let meta =
        std::fs::symlink_metadata(path).with_context(|| format!("reading {}", path.display()))?;
    if !meta.file_type().is_file() {
        return Err(anyhow!(
            "{} is not a regular file (a link?); remove it and start again to draw a new token",
            path.display()
        ));
    }
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    if meta.uid() != me || meta.mode() & 0o077 != 0 {
        return Err(anyhow!(
            "{} is not private to you (owner {}, mode {:o}); remove it and start again to draw a new token, or `chmod 600` it if you own it",
            path.display(),
            meta.uid(),
            meta.mode() & 0o777
        ));
    }
    let token = std::fs::read_to_string(path)
        .with_context(|| format!("reading {}", path.display()))?
        .trim()
        .to_owned();
    if token.len() < tackle_mcp::http::MIN_TOKEN_BYTES {
        return Err(anyhow!(
            "{} holds a token of {} bytes; at least {} are needed: remove the file and start again to draw one",
            path.display(),
            token.len(),
            tackle_mcp::http::MIN_TOKEN_BYTES
        ));
    }
    Ok(token)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    #[test]
    fn a_token_is_drawn_once_and_kept_private() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tackle/serve/token");
        let first = kept_or_drawn(&path).unwrap();
        assert!(first.len() >= tackle_mcp::http::MIN_TOKEN_BYTES);
        assert_eq!(
            kept_or_drawn(&path).unwrap(),
            first,
            "kept, not drawn again"
        );
        let meta = std::fs::metadata(&path).unwrap();
        assert_eq!(meta.mode() & 0o777, 0o600);
        let parent = std::fs::metadata(path.parent().unwrap()).unwrap();
        assert_eq!(parent.mode() & 0o777, 0o700);
    }

    #[test]
    fn a_readable_linked_or_short_token_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "x".repeat(64)).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let e = kept_or_drawn(&path).unwrap_err().to_string();
        assert!(e.contains("not private to you") && e.contains("644"), "{e}");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::write(&path, "short").unwrap();
        let e = kept_or_drawn(&path).unwrap_err().to_string();
        assert!(e.contains("a token of 5 bytes"), "{e}");
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        let e = kept_or_drawn(&link).unwrap_err().to_string();
        assert!(e.contains("not a regular file"), "{e}");
    }

    #[test]
    fn no_token_is_loopback_only() {
        let public: SocketAddr = "0.0.0.0:8123".parse().unwrap();
        let e = choose(None, true, public).unwrap_err().to_string();
        assert!(e.contains("--no-token serves loopback only"), "{e}");
        let e = choose(None, false, public).unwrap_err().to_string();
        assert!(
            e.contains("not a loopback address, without a bearer token"),
            "{e}"
        );
        let local: SocketAddr = "127.0.0.1:0".parse().unwrap();
        assert_eq!(choose(None, true, local).unwrap(), ServeToken::Open);
    }
}
