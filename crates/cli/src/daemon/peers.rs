//! The peer registry a hub daemon keeps (`tackle daemon --peer-hub`): daemons register their
//! name, URL and the environment variable a caller finds their token in (`POST /peers`), and
//! register again as a heartbeat; an entry not renewed within its time to live is gone, so
//! `call_peer` only ever reaches a peer that is alive now. `GET /peers` lists the live ones.
//!
//! An entry never holds a token: only the name of the variable the calling daemon reads it from,
//! and that name must be the shared [`PEER_TOKEN_PREFIX`] or the entry's own
//! `TACKLE_PEER_TOKEN_<NAME>` ([`check_token_env`]). Whoever registers chooses the URL the token
//! goes to, so a registration naming any variable could have a caller send it its
//! `OPENAI_API_KEY`, and one naming another peer's variable that peer's token.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// How long an entry lives without a heartbeat, unless the registration says otherwise.
pub const DEFAULT_TTL: Duration = Duration::from_secs(30);

/// The longest time to live a registration may ask for.
const MOST_TTL: Duration = Duration::from_secs(3600);

/// Every variable a peer's token is read from is this, or this and `_` and a suffix
/// (`TACKLE_PEER_TOKEN_BUILDER`).
pub const PEER_TOKEN_PREFIX: &str = "TACKLE_PEER_TOKEN";

/// The most peers one hub holds.
const MOST_PEERS: usize = 1024;

/// A registration as `POST /peers` takes it.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Registration {
    pub name: String,
    /// The peer daemon's base URL (`http://127.0.0.1:PORT`).
    pub url: String,
    /// The variable, in the caller's environment, holding the peer's bearer token.
    #[serde(default)]
    pub token_env: Option<String>,
    #[serde(default)]
    pub ttl_seconds: Option<u64>,
}

/// A live peer as `GET /peers` lists it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Peer {
    pub name: String,
    pub url: String,
    #[serde(default)]
    pub token_env: Option<String>,
    /// Seconds until the entry expires without another heartbeat.
    #[serde(default)]
    pub expires_in_seconds: u64,
}

struct Entry {
    url: String,
    token_env: Option<String>,
    expires: Instant,
}

#[derive(Default)]
pub struct Registry {
    entries: Mutex<BTreeMap<String, Entry>>,
}

impl Registry {
    fn entries(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Entry>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Adds or renews `registration`; an error says what is wrong with it.
    pub fn register(&self, registration: Registration, now: Instant) -> Result<Peer, String> {
        let (base, ttl) = check(&registration)?;
        let mut entries = self.entries();
        entries.retain(|_, e| e.expires > now);
        if !entries.contains_key(&registration.name) && entries.len() >= MOST_PEERS {
            return Err(format!("the hub holds {MOST_PEERS} peers, its most"));
        }
        entries.insert(
            registration.name.clone(),
            Entry {
                url: base.clone(),
                token_env: registration.token_env.clone(),
                expires: now + ttl,
            },
        );
        Ok(Peer {
            name: registration.name,
            url: base,
            token_env: registration.token_env,
            expires_in_seconds: ttl.as_secs(),
        })
    }

    /// The live peers, by name.
    pub fn live(&self, now: Instant) -> Vec<Peer> {
        let mut entries = self.entries();
        entries.retain(|_, e| e.expires > now);
        entries
            .iter()
            .map(|(name, e)| Peer {
                name: name.clone(),
                url: e.url.clone(),
                token_env: e.token_env.clone(),
                expires_in_seconds: e.expires.saturating_duration_since(now).as_secs(),
            })
            .collect()
    }
}

/// What is wrong with `registration`, if anything; else its base URL (no trailing `/`) and
/// how long the entry lives.
pub fn check(registration: &Registration) -> Result<(String, Duration), String> {
    check_name(&registration.name)?;
    let url = url::Url::parse(&registration.url)
        .map_err(|e| format!("the peer's url {:?} is not a URL: {e}", registration.url))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(format!(
            "the peer's url {:?} is not an http or https URL with a host",
            registration.url
        ));
    }
    if let Some(env) = &registration.token_env {
        check_token_env(env, &registration.name)?;
    }
    let ttl = registration
        .ttl_seconds
        .map_or(DEFAULT_TTL, Duration::from_secs)
        .clamp(Duration::from_secs(1), MOST_TTL);
    Ok((registration.url.trim_end_matches('/').to_owned(), ttl))
}

/// Whether a caller may read peer `name`'s token from `env`: the shared `TACKLE_PEER_TOKEN`, or
/// `TACKLE_PEER_TOKEN_<NAME>` where `<NAME>` is `name` in upper case with `-` and `.` as `_`
/// (peer `prod-1` → `TACKLE_PEER_TOKEN_PROD_1`), nothing else. Bound to the name, since whoever
/// registers a name chooses the URL its token goes to: a registration naming any variable could
/// have a caller send it its `OPENAI_API_KEY`, and one naming another peer's variable that peer's
/// token. Checked where an entry is registered and again where a caller reads the variable,
/// since a row of the fleet's `peers` table may have been written by anything that can write
/// the database, not by a registration.
pub fn check_token_env(env: &str, name: &str) -> Result<(), String> {
    let own = own_token_env(name);
    if env == PEER_TOKEN_PREFIX || env == own {
        return Ok(());
    }
    let why = if env.starts_with(PEER_TOKEN_PREFIX) {
        format!("it is not peer {name:?}'s own variable")
    } else {
        "it is not a peer token variable".to_owned()
    };
    Err(format!(
        "token_env {env:?} is refused: {why}. Callers read peer {name:?}'s token only from {own} or the shared {PEER_TOKEN_PREFIX}, so that no registration can have them send another secret, or another peer's token, to its URL; name the variable so"
    ))
}

/// The variable that holds peer `name`'s own token: `TACKLE_PEER_TOKEN_<NAME>`.
pub fn own_token_env(name: &str) -> String {
    let suffix: String = name
        .chars()
        .map(|c| match c {
            '-' | '.' => '_',
            c => c.to_ascii_uppercase(),
        })
        .collect();
    format!("{PEER_TOKEN_PREFIX}_{suffix}")
}

/// A peer's name: what `call_peer`'s argument and the permission key `call_peer:<name>` hold.
pub fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "the peer name {name:?} is not 1 to 64 letters, digits, '-', '_' or '.'"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registration(name: &str, ttl: u64) -> Registration {
        Registration {
            name: name.to_owned(),
            url: "http://127.0.0.1:4100/".to_owned(),
            token_env: Some(own_token_env(name)),
            ttl_seconds: Some(ttl),
        }
    }

    #[test]
    fn entries_live_until_their_heartbeat_is_missed() {
        let registry = Registry::default();
        let t0 = Instant::now();
        registry.register(registration("a", 10), t0).unwrap();
        registry.register(registration("b", 30), t0).unwrap();
        let names = |at| -> Vec<String> {
            registry
                .live(at)
                .into_iter()
                .map(|p: Peer| p.name)
                .collect()
        };
        assert_eq!(names(t0 + Duration::from_secs(5)), ["a", "b"]);
        assert_eq!(names(t0 + Duration::from_secs(11)), ["b"]);
        // A heartbeat renews.
        registry
            .register(registration("b", 30), t0 + Duration::from_secs(20))
            .unwrap();
        assert_eq!(names(t0 + Duration::from_secs(45)), ["b"]);
        assert_eq!(registry.live(t0)[0].url, "http://127.0.0.1:4100");
    }

    #[test]
    fn bad_registrations_are_refused_with_the_reason() {
        let registry = Registry::default();
        let now = Instant::now();
        for (name, url, env, says) in [
            ("", "http://x", None, "not 1 to 64"),
            ("a b", "http://x", None, "not 1 to 64"),
            ("p", "file:///etc/passwd", None, "not an http"),
            ("p", "not a url", None, "not a URL"),
            ("p", "http://x", Some("A-B"), "not a peer token variable"),
            // A registration names where its token comes from, not which secret it receives.
            (
                "p",
                "http://x",
                Some("OPENAI_API_KEY"),
                "not a peer token variable",
            ),
            ("p", "http://x", Some("HOME"), "not a peer token variable"),
            (
                "p",
                "http://x",
                Some("TACKLE_PEER_TOKENS"),
                "not peer \"p\"'s own variable",
            ),
            (
                "p",
                "http://x",
                Some("TACKLE_PEER_TOKEN_"),
                "not peer \"p\"'s own variable",
            ),
            (
                "p",
                "http://x",
                Some("TACKLE_PEER_TOKEN_A-B"),
                "not peer \"p\"'s own variable",
            ),
            (
                "p",
                "http://x",
                Some("tackle_peer_token"),
                "not a peer token variable",
            ),
            // Nor another peer's token: it would go to this registration's URL.
            (
                "p",
                "http://x",
                Some("TACKLE_PEER_TOKEN_PROD"),
                "not peer \"p\"'s own variable",
            ),
        ] {
            let refused = registry
                .register(
                    Registration {
                        name: name.into(),
                        url: url.into(),
                        token_env: env.map(str::to_owned),
                        ttl_seconds: None,
                    },
                    now,
                )
                .unwrap_err();
            assert!(refused.contains(says), "{name} {url}: {refused}");
        }
    }

    #[test]
    fn a_peer_reads_the_shared_variable_or_its_own() {
        for (env, name) in [
            ("TACKLE_PEER_TOKEN", "b"),
            ("TACKLE_PEER_TOKEN_B", "b"),
            ("TACKLE_PEER_TOKEN_PROD_1", "prod-1"),
            ("TACKLE_PEER_TOKEN_EU_BUILDER", "eu.builder"),
        ] {
            assert_eq!(check_token_env(env, name), Ok(()), "{env} for {name}");
        }
        for (env, name) in [
            ("TACKLE_PEER_TOKEN_B", "c"),
            ("TACKLE_PEER_TOKEN_PROD", "prod-1"),
            ("TACKLE_PEER_TOKEN_prod_1", "prod-1"),
            ("TACKLE_PEER_TOKEN_PROD-1", "prod-1"),
            ("OPENAI_API_KEY", "openai_api_key"),
        ] {
            assert!(check_token_env(env, name).is_err(), "{env} for {name}");
        }
    }
}
