//! `[store]` and `[artifacts]` of the user's config, checked into [`StorageSettings`]: where
//! session logs and tool output are durable besides the project's `.agents/store/`.
//!
//! The user's alone: a project file with either table is refused (`load.rs`), since a
//! repository choosing the database or the bucket would choose who reads every conversation
//! and every byte of tool output. The database URL, password included, is read from the
//! environment variable named here and never from a file; the bucket's credentials come from
//! the usual AWS chain.

use std::time::Duration;

use crate::settings::{ArtifactsSection, LoadedFile, StoreSection};

/// The default variable holding the database URL.
pub const DEFAULT_DATABASE_URL_ENV: &str = "TACKLE_DATABASE_URL";

/// Where logs and artifacts are durable.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StorageSettings {
    pub store: StoreBackend,
    pub artifacts: ArtifactsBackend,
}

/// `[store] backend`.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum StoreBackend {
    /// The project's files alone (the default).
    #[default]
    Files,
    /// PostgreSQL.
    Postgres {
        database_url_env: String,
        pool_size: usize,
        lease: Duration,
    },
}

/// `[artifacts] backend`.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum ArtifactsBackend {
    /// The project's files alone (the default).
    #[default]
    Files,
    /// An S3-compatible bucket.
    S3 {
        endpoint: Option<String>,
        bucket: String,
        region: String,
        prefix: String,
        /// The endpoint is `http://` on a loopback address.
        allow_http: bool,
    },
}

impl StorageSettings {
    /// Whether anything is kept beyond the project's files.
    pub fn is_fleet(&self) -> bool {
        self.store != StoreBackend::Files
    }

    /// One line for `tackle config`: the variable's name, never its value.
    pub fn describe(&self) -> String {
        let store = match &self.store {
            StoreBackend::Files => "files under .agents/store/".to_owned(),
            StoreBackend::Postgres {
                database_url_env,
                lease,
                ..
            } => format!(
                "postgres at ${database_url_env} (leases of {}s)",
                lease.as_secs_f64()
            ),
        };
        let artifacts = match &self.artifacts {
            ArtifactsBackend::Files => "files".to_owned(),
            ArtifactsBackend::S3 {
                endpoint,
                bucket,
                prefix,
                ..
            } => format!(
                "s3 bucket {bucket}{}{}",
                if prefix.is_empty() {
                    String::new()
                } else {
                    format!(" under {prefix}/")
                },
                endpoint
                    .as_deref()
                    .map(|e| format!(" at {e}"))
                    .unwrap_or_default()
            ),
        };
        format!("logs: {store}; artifacts: {artifacts}")
    }
}

/// The user file's `[store]` and `[artifacts]`, checked; the defaults without a file.
pub fn from_user_file(file: Option<&LoadedFile>) -> crate::Result<StorageSettings> {
    let Some(file) = file else {
        return Ok(StorageSettings::default());
    };
    let store = match &file.settings.store {
        Some(section) => store_backend(file, section)?,
        None => StoreBackend::Files,
    };
    let artifacts = match &file.settings.artifacts {
        Some(section) => artifacts_backend(file, section)?,
        None => ArtifactsBackend::Files,
    };
    if matches!(artifacts, ArtifactsBackend::S3 { .. }) && store == StoreBackend::Files {
        let at = file
            .settings
            .artifacts
            .as_ref()
            .and_then(|a| a.backend.as_ref())
            .map_or_else(
                || file.path.display().to_string(),
                |v| file.origin(v).to_string(),
            );
        return Err(crate::config_error!(
            "{at}: [artifacts] backend = \"s3\" needs [store] backend = \"postgres\": which artifacts are still referenced is kept in the database; set both, or neither"
        ));
    }
    Ok(StorageSettings { store, artifacts })
}

fn store_backend(file: &LoadedFile, s: &StoreSection) -> crate::Result<StoreBackend> {
    let backend = s.backend.as_ref().map_or("files", |v| v.get_ref().as_str());
    match backend {
        "files" => {
            let stray = [
                s.database_url_env.as_ref().map(|v| file.origin(v)),
                s.pool_size.as_ref().map(|v| file.origin(v)),
                s.lease_seconds.as_ref().map(|v| file.origin(v)),
            ];
            if let Some(at) = stray.into_iter().flatten().next() {
                return Err(crate::config_error!(
                    "{at}: this [store] key applies to backend = \"postgres\" only, and the backend is files; remove it or set backend = \"postgres\""
                ));
            }
            Ok(StoreBackend::Files)
        }
        "postgres" => {
            let database_url_env = s
                .database_url_env
                .as_ref()
                .map_or(DEFAULT_DATABASE_URL_ENV.to_owned(), |v| v.get_ref().clone());
            if database_url_env.is_empty()
                || !database_url_env
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_')
            {
                let at = s
                    .database_url_env
                    .as_ref()
                    .map(|v| file.origin(v).to_string())
                    .unwrap_or_default();
                return Err(crate::config_error!(
                    "{at}: [store] database_url_env = {database_url_env:?} must be the name of an environment variable (letters, digits, _), not the URL: the URL holds a password and is read only from the environment"
                ));
            }
            let pool_size = s.pool_size.as_ref().map_or(8, |v| *v.get_ref());
            if !(1..=256).contains(&pool_size) {
                return Err(crate::config_error!(
                    "{}: [store] pool_size = {pool_size} must be from 1 to 256",
                    s.pool_size
                        .as_ref()
                        .map(|v| file.origin(v).to_string())
                        .unwrap_or_default()
                ));
            }
            let lease = s.lease_seconds.as_ref().map_or(30.0, |v| *v.get_ref());
            if !(1.0..=3600.0).contains(&lease) {
                return Err(crate::config_error!(
                    "{}: [store] lease_seconds = {lease} must be from 1 to 3600: how long another daemon waits before it takes over a session whose daemon died",
                    s.lease_seconds
                        .as_ref()
                        .map(|v| file.origin(v).to_string())
                        .unwrap_or_default()
                ));
            }
            Ok(StoreBackend::Postgres {
                database_url_env,
                pool_size,
                lease: Duration::from_secs_f64(lease),
            })
        }
        other => Err(crate::config_error!(
            "{}: [store] backend = {other:?} is not a backend; use \"files\" (the default) or \"postgres\"",
            s.backend
                .as_ref()
                .map(|v| file.origin(v).to_string())
                .unwrap_or_default()
        )),
    }
}

fn artifacts_backend(file: &LoadedFile, s: &ArtifactsSection) -> crate::Result<ArtifactsBackend> {
    let backend = s.backend.as_ref().map_or("files", |v| v.get_ref().as_str());
    let at = |v: &toml::Spanned<String>| file.origin(v).to_string();
    match backend {
        "files" => Ok(ArtifactsBackend::Files),
        "s3" => {
            let Some(bucket) = s.bucket.as_ref().filter(|b| !b.get_ref().is_empty()) else {
                return Err(crate::config_error!(
                    "{}: [artifacts] backend = \"s3\" needs bucket = \"<name>\"",
                    s.backend.as_ref().map(at).unwrap_or_default()
                ));
            };
            let endpoint = s.endpoint.as_ref().map(|v| v.get_ref().clone());
            let allow_http = match &endpoint {
                None => false,
                Some(url) => endpoint_is_plain(url).map_err(|why| {
                    crate::config_error!(
                        "{}: [artifacts] endpoint = {url:?} {why}",
                        s.endpoint.as_ref().map(at).unwrap_or_default()
                    )
                })?,
            };
            Ok(ArtifactsBackend::S3 {
                endpoint,
                bucket: bucket.get_ref().clone(),
                region: s
                    .region
                    .as_ref()
                    .map_or_else(|| "us-east-1".to_owned(), |v| v.get_ref().clone()),
                prefix: s
                    .prefix
                    .as_ref()
                    .map_or_else(String::new, |v| v.get_ref().trim_matches('/').to_owned()),
                allow_http,
            })
        }
        other => Err(crate::config_error!(
            "{}: [artifacts] backend = {other:?} is not a backend; use \"files\" (the default) or \"s3\"",
            s.backend.as_ref().map(at).unwrap_or_default()
        )),
    }
}

/// Whether the endpoint is plain HTTP, which is allowed on loopback alone: the requests are
/// signed but their bodies, every byte of tool output, are not encrypted.
fn endpoint_is_plain(url: &str) -> Result<bool, String> {
    let parsed = url::Url::parse(url).map_err(|e| format!("is not a URL ({e})"))?;
    match parsed.scheme() {
        "https" => Ok(false),
        "http" => {
            let loopback = match parsed.host() {
                Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
                Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
                Some(url::Host::Domain(d)) => d == "localhost",
                None => false,
            };
            if loopback {
                Ok(true)
            } else {
                Err("is plain http to another machine: tool output would cross the network unencrypted; use https".to_owned())
            }
        }
        other => Err(format!("has scheme {other}; use https")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_http_is_for_loopback_alone() {
        assert_eq!(endpoint_is_plain("https://s3.example.com"), Ok(false));
        assert_eq!(endpoint_is_plain("http://127.0.0.1:9000"), Ok(true));
        assert_eq!(endpoint_is_plain("http://[::1]:9000"), Ok(true));
        assert_eq!(endpoint_is_plain("http://localhost:9000"), Ok(true));
        for bad in [
            "http://10.0.0.5:9000",
            "http://s3.example.com",
            "ftp://x",
            "nope",
        ] {
            assert!(endpoint_is_plain(bad).is_err(), "{bad}");
        }
    }
}
