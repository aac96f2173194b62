//! The window of a model the catalog does not know, learned from its server: the cache first
//! (what a server said less than a day ago), else the server asked now
//! (`tackle_llm::window_probe`), else the old assumption, each with the words that say which.
//! Shared by `tackle run` and `tackle chat` (through `run::model::choose`) and
//! `tackle models --probe`.
//!
//! The cache is `$XDG_CACHE_HOME/tackle/windows.json`, else `~/.cache/tackle/windows.json`, else
//! none. A cache that cannot be read or written is said once and otherwise ignored: it only
//! saves a question.
//!
//! Key decision: a probe runs on a thread of its own with a runtime of its own, so the same
//! call serves `tackle run` (before its runtime exists) and `tackle chat` (inside its runtime,
//! where blocking on another runtime would panic). Its questions are bounded (2 s each, the
//! first unanswered one ends it), so the wait is too.

use std::path::PathBuf;
use std::time::SystemTime;

use tackle_llm::catalog::ProviderSpec;
use tackle_llm::window_probe::{
    CachedWindow, LearnedWindow, ProbeError, ProbeLimits, ProbeTarget, WindowCache, probe,
};

/// Where a window came from, for a model the catalog does not know.
pub enum Learned {
    /// The server said so, now or (`cached`) less than a day ago.
    Window {
        learned: LearnedWindow,
        /// The server as messages name it.
        server_url: String,
        /// When the cache had it.
        cached: Option<SystemTime>,
    },
    /// The provider is not one to ask (a hosted vendor, another kind, no base URL).
    NotAsked,
    /// Asking failed.
    Failed(ProbeError),
}

/// What was learned, and what is worth telling about the cache (a file that could not be read
/// or written).
pub struct Outcome {
    pub learned: Learned,
    pub cache_note: Option<String>,
}

/// The window cache, when there is a place for one.
pub fn cache() -> Option<WindowCache> {
    let dir = std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .filter(|d| d.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(|h| PathBuf::from(h).join(".cache"))
        })?;
    Some(WindowCache::at(dir.join("tackle").join("windows.json")))
}

/// `model`'s window at `spec`'s server: from the cache when `use_cache` and it has one, else
/// asked now (and kept).
pub fn learn(spec: &ProviderSpec, model: &str, use_cache: bool) -> Outcome {
    let target = match ProbeTarget::for_provider(spec) {
        Ok(target) => target,
        Err(_) => {
            return Outcome {
                learned: Learned::NotAsked,
                cache_note: None,
            };
        }
    };
    let cache = cache();
    let now = SystemTime::now();
    let mut cache_note = None;
    if use_cache && let Some(cache) = &cache {
        match cache.get(target.base_url(), model, now) {
            Ok(Some(CachedWindow {
                learned,
                learned_at,
            })) => {
                return Outcome {
                    learned: Learned::Window {
                        learned,
                        server_url: target.shown(),
                        cached: Some(learned_at),
                    },
                    cache_note: None,
                };
            }
            Ok(None) => {}
            Err(e) => cache_note = Some(format!("{e}; asking the server instead")),
        }
    }
    let learned = match probe_blocking(&target, model) {
        Ok(learned) => {
            if let Some(cache) = &cache
                && let Err(e) = cache.put(target.base_url(), model, &learned, now)
            {
                cache_note = Some(e.to_string());
            }
            Learned::Window {
                learned,
                server_url: target.shown(),
                cached: None,
            }
        }
        Err(e) => Learned::Failed(e),
    };
    Outcome {
        learned,
        cache_note,
    }
}

/// [`probe`] to its end, on a thread and runtime of its own.
pub fn probe_blocking(target: &ProbeTarget, model: &str) -> Result<LearnedWindow, ProbeError> {
    std::thread::scope(|scope| {
        let asked = scope.spawn(|| {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build();
            match runtime {
                Ok(runtime) => {
                    Some(runtime.block_on(probe(target, model, &ProbeLimits::default())))
                }
                Err(_) => None,
            }
        });
        asked.join().ok().flatten()
    })
    .unwrap_or_else(|| {
        Err(ProbeError {
            kind: tackle_llm::window_probe::ProbeErrorKind::Unreachable,
            message: "could not start the probe's runtime".to_owned(),
        })
    })
}

/// How long ago `then` was, in the largest whole unit.
pub fn ago(then: SystemTime) -> String {
    let secs = SystemTime::now()
        .duration_since(then)
        .map_or(0, |d| d.as_secs());
    match secs {
        0..60 => "just now".to_owned(),
        60..3600 => format!("{} min ago", secs / 60),
        _ => format!("{} h ago", secs / 3600),
    }
}
