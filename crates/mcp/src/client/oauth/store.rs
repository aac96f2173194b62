//! Where OAuth tokens live: one file per server name and URL in the user's config directory
//! (`$XDG_CONFIG_HOME/tackle/oauth/<name>-<digest of the URL>.json`), 0600 in a 0700
//! directory, replaced atomically.
//!
//! Key decision: a token belongs to the exact URL it was issued for. The file is found by the
//! server's name *and* a digest of its URL, and the URL recorded inside must match again on
//! reading, so a project entry that reuses the name of a server the user logged into, but
//! points elsewhere, finds no token. A token travels only over https or to a loopback http
//! endpoint ([`token_may_travel`]). The authorization server's endpoints are recorded at login
//! and used for refresh, so a later change of what the resource advertises cannot redirect a
//! refresh token. Never the project directory, never the session log.

use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

use rmcp::transport::auth::{AuthorizationMetadata, StoredCredentials};
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

/// The directory token files are kept in, or none (no user config directory: nothing is
/// stored and no token is ever sent).
#[derive(Clone, Debug, Default)]
pub struct TokenDir {
    dir: Option<PathBuf>,
}

impl TokenDir {
    /// `<user config dir>/oauth`.
    pub fn in_config_dir(config_dir: &Path) -> Self {
        Self {
            dir: Some(config_dir.join("oauth")),
        }
    }

    /// No directory: logins cannot be kept and connections send no token.
    pub fn none() -> Self {
        Self { dir: None }
    }

    /// The file of server `name` at `url`.
    pub fn path_for(&self, name: &str, url: &str) -> Option<PathBuf> {
        let digest = Sha256::digest(url.as_bytes());
        let short: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
        Some(self.dir.as_ref()?.join(format!("{name}-{short}.json")))
    }

    /// The record of `name` at `url`, if one was stored for exactly that URL.
    pub fn load(&self, name: &str, url: &str) -> Result<Option<TokenRecord>, StoreError> {
        let Some(path) = self.path_for(name, url) else {
            return Ok(None);
        };
        let record = read_record(&path)?;
        Ok(record.filter(|r| r.server == name && r.url == url))
    }

    /// Remember that the server of `name` at `url` asked for `scopes`; nothing when there is
    /// no login to remember it with (the next login starts from the server's challenge).
    pub fn note_required_scopes(
        &self,
        name: &str,
        url: &str,
        scopes: &[String],
    ) -> Result<(), StoreError> {
        let Some(mut record) = self.load(name, url)? else {
            return Ok(());
        };
        let before = record.required_scopes.len();
        for scope in scopes {
            if !record.required_scopes.contains(scope) {
                record.required_scopes.push(scope.clone());
            }
        }
        if record.required_scopes.len() != before {
            self.save(&record)?;
        }
        Ok(())
    }

    /// Delete the record of `name` at `url`; whether there was one.
    pub fn remove(&self, name: &str, url: &str) -> Result<bool, StoreError> {
        let Some(path) = self.path_for(name, url) else {
            return Ok(false);
        };
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(source) => Err(StoreError::Io { path, source }),
        }
    }

    /// Delete every record of server `name`, whatever URL it was for; how many there were.
    pub fn remove_server(&self, name: &str) -> Result<usize, StoreError> {
        let Some(dir) = &self.dir else {
            return Ok(0);
        };
        let entries = match std::fs::read_dir(dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
            Err(source) => {
                return Err(StoreError::Io {
                    path: dir.clone(),
                    source,
                });
            }
        };
        let prefix = format!("{name}-");
        let mut removed = 0;
        for entry in entries.flatten() {
            let file = entry.file_name();
            let Some(file) = file.to_str() else { continue };
            if !file.starts_with(&prefix) || !file.ends_with(".json") {
                continue;
            }
            let path = entry.path();
            // `a-b-….json` also starts with `a-`: the record inside says whose it is. A file
            // that cannot be read as a record is left for the person to look at.
            let Ok(Some(record)) = read_record(&path) else {
                continue;
            };
            if record.server == name {
                std::fs::remove_file(&path).map_err(|source| StoreError::Io {
                    path: path.clone(),
                    source,
                })?;
                // The refresh lock goes with it (absent unless a refresh ever ran).
                let _ = std::fs::remove_file(path.with_extension("lock"));
                removed += 1;
            }
        }
        Ok(removed)
    }

    /// Hold the refresh lock of `name` at `url` (`<file>.lock`, exclusive, across processes)
    /// until the returned file is dropped: two tackle processes refreshing one login at once
    /// would otherwise spend the same single-use refresh token, and the loser would need a login.
    pub fn lock_refresh(&self, name: &str, url: &str) -> Result<std::fs::File, StoreError> {
        let path = self
            .path_for(name, url)
            .ok_or(StoreError::NoDirectory)?
            .with_extension("lock");
        let io = |source| StoreError::Io {
            path: path.clone(),
            source,
        };
        if let Some(dir) = path.parent() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(io)?;
        }
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(&path)
            .map_err(io)?;
        file.lock().map_err(io)?;
        Ok(file)
    }

    /// Write `record` (atomically, 0600, the directory created 0700).
    pub fn save(&self, record: &TokenRecord) -> Result<PathBuf, StoreError> {
        let Some(path) = self.path_for(&record.server, &record.url) else {
            return Err(StoreError::NoDirectory);
        };
        write_record(&path, record)?;
        Ok(path)
    }
}

/// Why a token file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("no user config directory to keep OAuth tokens in; set XDG_CONFIG_HOME or HOME")]
    NoDirectory,
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{path} is not a token file tackle wrote ({message}); run `tackle mcp logout` and log in again"
    )]
    Corrupt { path: PathBuf, message: String },
    /// Not a file tackle reads (a FIFO, a device, over the cap): the message names the fix.
    #[error("{0}")]
    Refused(#[from] tackle_fs::OwnFileError),
}

/// The client tackle authorizes as: registered at login (dynamic registration) or configured
/// on the server entry. A pre-configured client's secret stays in its environment variable
/// and is not copied here; a dynamically registered one's secret is kept with the tokens.
#[derive(Clone, Serialize, Deserialize)]
pub struct ClientRecord {
    pub client_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    pub redirect_uri: String,
}

/// One token file: which server and URL it is for, the authorization server's endpoints as
/// discovered at login, the client, and the tokens.
#[derive(Clone, Serialize, Deserialize)]
pub struct TokenRecord {
    pub server: String,
    pub url: String,
    pub metadata: AuthorizationMetadata,
    pub client: ClientRecord,
    pub credentials: Option<StoredCredentials>,
    /// Scopes the server asked for (a 403 `insufficient_scope`) beyond what was granted: the
    /// next login requests them with the granted ones (step-up authorization).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub required_scopes: Vec<String>,
}

impl std::fmt::Debug for TokenRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenRecord")
            .field("server", &self.server)
            .field("url", &self.url)
            .field("client_id", &self.client.client_id)
            .field("credentials", &self.credentials.as_ref().map(|_| "***"))
            .finish()
    }
}

/// Whether a token may be sent to `url`: https anywhere, plain http only to a loopback host
/// (where nothing crosses a network).
pub fn token_may_travel(url: &str) -> bool {
    let Ok(url) = reqwest::Url::parse(url) else {
        return false;
    };
    match url.scheme() {
        "https" => true,
        "http" => match url.host() {
            Some(url::Host::Ipv4(a)) => a.is_loopback(),
            Some(url::Host::Ipv6(a)) => a.is_loopback(),
            Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
            None => false,
        },
        _ => false,
    }
}

fn read_record(path: &Path) -> Result<Option<TokenRecord>, StoreError> {
    // Regular files only, capped, never blocking (tackle_fs::OwnFile).
    let Some(read) = tackle_fs::OwnFile::LOGIN_TOKEN.read_at(path)? else {
        return Ok(None);
    };
    serde_json::from_slice(&read.bytes)
        .map(Some)
        .map_err(|e| StoreError::Corrupt {
            path: path.to_owned(),
            message: e.to_string(),
        })
}

fn write_record(path: &Path, record: &TokenRecord) -> Result<(), StoreError> {
    let io = |source| StoreError::Io {
        path: path.to_owned(),
        source,
    };
    let dir = path.parent().ok_or(StoreError::NoDirectory)?;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(io)?;
    // A directory made before (or by someone else's umask) is narrowed again.
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).map_err(io)?;
    let text = serde_json::to_vec_pretty(record).map_err(|e| io(std::io::Error::other(e)))?;
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("token"),
        std::process::id()
    ));
    let _ = std::fs::remove_file(&tmp);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .map_err(io)?;
    let written = file
        .write_all(&text)
        .and_then(|()| file.sync_all())
        .and_then(|()| std::fs::rename(&tmp, path));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(io(e));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(server: &str, url: &str) -> TokenRecord {
        TokenRecord {
            server: server.into(),
            url: url.into(),
            metadata: AuthorizationMetadata::default(),
            client: ClientRecord {
                client_id: "c".into(),
                client_secret: None,
                redirect_uri: "http://127.0.0.1:1/callback".into(),
            },
            credentials: Some(StoredCredentials::new("c".into(), None, vec![], None)),
            required_scopes: Vec::new(),
        }
    }

    #[test]
    fn a_token_is_found_only_for_its_own_name_and_url() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = TokenDir::in_config_dir(tmp.path());
        dir.save(&record("docs", "https://a.example/mcp")).unwrap();
        assert!(dir.load("docs", "https://a.example/mcp").unwrap().is_some());
        for (name, url) in [
            ("docs", "https://evil.example/mcp"),
            ("docs", "https://a.example/mcp/"),
            ("other", "https://a.example/mcp"),
        ] {
            assert!(dir.load(name, url).unwrap().is_none(), "{name} {url}");
        }
        let path = dir.path_for("docs", "https://a.example/mcp").unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let dmode = std::fs::metadata(path.parent().unwrap())
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(dmode, 0o700);
        assert!(dir.remove("docs", "https://a.example/mcp").unwrap());
        assert!(!dir.remove("docs", "https://a.example/mcp").unwrap());
    }

    #[test]
    fn removing_a_server_removes_its_logins_at_every_url_and_no_other() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = TokenDir::in_config_dir(tmp.path());
        assert_eq!(dir.remove_server("docs").unwrap(), 0);
        dir.save(&record("docs", "https://a.example/mcp")).unwrap();
        dir.save(&record("docs", "https://b.example/mcp")).unwrap();
        dir.save(&record("docs-2", "https://a.example/mcp"))
            .unwrap();
        assert_eq!(dir.remove_server("docs").unwrap(), 2);
        assert!(
            dir.load("docs-2", "https://a.example/mcp")
                .unwrap()
                .is_some()
        );
    }

    #[test]
    fn a_file_naming_another_url_is_not_used() {
        // A file renamed (or planted) under another URL's name is refused by its content.
        let tmp = tempfile::tempdir().unwrap();
        let dir = TokenDir::in_config_dir(tmp.path());
        let planted = dir.save(&record("docs", "https://a.example/mcp")).unwrap();
        let target = dir.path_for("docs", "https://b.example/mcp").unwrap();
        std::fs::rename(planted, target).unwrap();
        assert!(dir.load("docs", "https://b.example/mcp").unwrap().is_none());
    }

    #[test]
    fn tokens_travel_over_https_or_to_loopback_only() {
        for (url, ok) in [
            ("https://a.example/mcp", true),
            ("http://127.0.0.1:8080/mcp", true),
            ("http://127.9.9.9/mcp", true),
            ("http://[::1]:9/mcp", true),
            ("http://localhost:9/mcp", true),
            ("http://a.example/mcp", false),
            ("http://10.0.0.1/mcp", false),
            ("http://localhost.evil.example/mcp", false),
            ("ftp://127.0.0.1/mcp", false),
            ("not a url", false),
        ] {
            assert_eq!(token_may_travel(url), ok, "{url}");
        }
    }

    #[test]
    fn required_scopes_accumulate_on_an_existing_login_only() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = TokenDir::in_config_dir(tmp.path());
        let url = "https://a.example/mcp";
        dir.note_required_scopes("docs", url, &["w".into()])
            .unwrap();
        assert!(dir.load("docs", url).unwrap().is_none());
        dir.save(&record("docs", url)).unwrap();
        dir.note_required_scopes("docs", url, &["r".into(), "w".into()])
            .unwrap();
        dir.note_required_scopes("docs", url, &["w".into()])
            .unwrap();
        assert_eq!(
            dir.load("docs", url).unwrap().unwrap().required_scopes,
            ["r", "w"]
        );
    }

    #[test]
    fn a_refresh_lock_is_held_until_dropped() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = TokenDir::in_config_dir(tmp.path());
        let url = "https://a.example/mcp";
        let held = dir.lock_refresh("docs", url).unwrap();
        let lock = dir.path_for("docs", url).unwrap().with_extension("lock");
        let other = std::fs::File::open(&lock).unwrap();
        assert!(matches!(
            other.try_lock(),
            Err(std::fs::TryLockError::WouldBlock)
        ));
        drop(held);
        other.try_lock().unwrap();
        assert_eq!(mode(&lock), 0o600);
    }

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn no_directory_keeps_nothing() {
        let dir = TokenDir::none();
        assert!(dir.load("a", "https://a.example").unwrap().is_none());
        assert!(matches!(
            dir.save(&record("a", "https://a.example")),
            Err(StoreError::NoDirectory)
        ));
    }
}
