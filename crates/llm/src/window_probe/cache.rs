//! What servers said about windows, kept for a day per base URL and model, so a run does not
//! ask again each time (`$XDG_CACHE_HOME/tackle/windows.json`; the front end names the file).
//!
//! The file is tackle's own, but anything can be at its name: it is read as every such file is
//! (`tackle_fs::OwnFile::WINDOW_CACHE`: regular files only, non-blocking, at most 1 MiB), and a
//! file that is not a cache, or an entry that does not hold together (a window that is not the
//! least of its sizes, a time in the future, a name with control characters), is as good as
//! absent: the probe asks the server again. Entries are keyed by a digest of the base URL and
//! the model, so a URL with a password or a token in its path is never written out.
//!
//! Written whole to a new file beside it (created exclusively, 0600) and renamed over it, so a
//! reader sees the old cache or the new one, never half of one, and a link at the name is
//! replaced, never written through. Two runs writing at once may lose one's entry: it is a
//! cache, and the next probe writes it again.

use std::fs;
use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::LearnedWindow;
use super::answers::MAX_WINDOW;

/// How long a learned window is believed.
pub(super) const MAX_AGE: Duration = Duration::from_secs(24 * 60 * 60);
/// The most entries kept (the newest).
const MAX_ENTRIES: usize = 256;
/// The most sizes one entry holds.
const MAX_SIZES: usize = 8;
/// The most characters of any text of an entry.
const MAX_TEXT: usize = 1000;
/// A time this far ahead of the clock is a clock that moved back, not a future.
const CLOCK_SLACK: Duration = Duration::from_secs(300);
const VERSION: u32 = 1;

/// The cache file.
#[derive(Clone, Debug)]
pub struct WindowCache {
    path: PathBuf,
}

/// A window read from the cache, and when it was learned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CachedWindow {
    pub learned: LearnedWindow,
    pub learned_at: SystemTime,
}

/// Why the cache could not be read or written; never fatal: the server is asked instead.
#[derive(Debug)]
pub struct CacheError {
    pub path: PathBuf,
    pub problem: String,
}

impl std::fmt::Display for CacheError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "window cache {} {}", self.path.display(), self.problem)
    }
}

impl std::error::Error for CacheError {}

#[derive(Serialize, Deserialize)]
struct CacheFile {
    tackle_window_cache: u32,
    entries: Vec<Entry>,
}

#[derive(Clone, Serialize, Deserialize)]
struct Entry {
    /// Hex SHA-256 of the base URL, a newline and the model.
    key: String,
    /// Seconds since the Unix epoch.
    learned_at: u64,
    #[serde(flatten)]
    window: LearnedWindow,
}

impl WindowCache {
    pub fn at(path: PathBuf) -> Self {
        Self { path }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The window learned for `model` at `base_url` less than a day (`MAX_AGE`) before `now`.
    pub fn get(
        &self,
        base_url: &str,
        model: &str,
        now: SystemTime,
    ) -> Result<Option<CachedWindow>, CacheError> {
        let key = key(base_url, model);
        Ok(self
            .read(now)?
            .into_iter()
            .find(|e| e.key == key)
            .map(|e| CachedWindow {
                learned: e.window,
                learned_at: SystemTime::UNIX_EPOCH + Duration::from_secs(e.learned_at),
            }))
    }

    /// Keeps `learned` for `model` at `base_url`, with the entries still fresh at `now`.
    pub fn put(
        &self,
        base_url: &str,
        model: &str,
        learned: &LearnedWindow,
        now: SystemTime,
    ) -> Result<(), CacheError> {
        let key = key(base_url, model);
        // A file that cannot be read is replaced, not kept.
        let mut entries: Vec<Entry> = self
            .read(now)
            .unwrap_or_default()
            .into_iter()
            .filter(|e| e.key != key)
            .collect();
        entries.push(Entry {
            key,
            learned_at: seconds(now),
            window: learned.clone(),
        });
        entries.sort_by_key(|e| std::cmp::Reverse(e.learned_at));
        entries.truncate(MAX_ENTRIES);
        let file = CacheFile {
            tackle_window_cache: VERSION,
            entries,
        };
        let bytes = serde_json::to_vec_pretty(&file).map_err(|e| self.error(e.to_string()))?;
        self.write(&bytes)
    }

    /// The valid, fresh entries; an absent file has none.
    fn read(&self, now: SystemTime) -> Result<Vec<Entry>, CacheError> {
        let kind = tackle_fs::OwnFile::WINDOW_CACHE;
        let bytes = match kind.read_at(&self.path) {
            Ok(None) => return Ok(Vec::new()),
            Ok(Some(bytes)) => bytes.bytes,
            // The error names the file itself; keep only what it says of it.
            Err(e) => return Err(self.error(e.problem.to_string())),
        };
        let file: CacheFile = serde_json::from_slice(&bytes).map_err(|e| {
            self.error(format!(
                "is not a window cache ({e}); the next probe writes it anew"
            ))
        })?;
        if file.tackle_window_cache != VERSION {
            return Err(self.error(format!(
                "has version {}, not {VERSION}; the next probe writes it anew",
                file.tackle_window_cache
            )));
        }
        Ok(file
            .entries
            .into_iter()
            .filter(|e| is_whole(e) && is_fresh(e.learned_at, now))
            .collect())
    }

    fn write(&self, bytes: &[u8]) -> Result<(), CacheError> {
        let dir = self
            .path
            .parent()
            .ok_or_else(|| self.error("has no directory".to_owned()))?;
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| self.error(format!("cannot be written: {e}")))?;
        let temp = dir.join(format!(
            ".windows.{}.{:016x}.tmp",
            std::process::id(),
            rand::random::<u64>()
        ));
        let written = (|| {
            // Exclusive creation: never a file (or a link) that was already there.
            let mut file = fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&temp)?;
            file.write_all(bytes)?;
            file.sync_data()?;
            fs::rename(&temp, &self.path)
        })();
        written.map_err(|e| {
            let _ = fs::remove_file(&temp);
            self.error(format!("cannot be written: {e}"))
        })
    }

    fn error(&self, problem: String) -> CacheError {
        CacheError {
            path: self.path.clone(),
            problem,
        }
    }
}

fn key(base_url: &str, model: &str) -> String {
    let digest = Sha256::digest(format!("{}\n{model}", base_url.trim_end_matches('/')));
    hex::encode(digest)
}

fn seconds(time: SystemTime) -> u64 {
    time.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn is_fresh(learned_at: u64, now: SystemTime) -> bool {
    let now = seconds(now);
    learned_at <= now + CLOCK_SLACK.as_secs() && now.saturating_sub(learned_at) < MAX_AGE.as_secs()
}

/// An entry that holds together: a digest key, plausible sizes of which the window is the
/// least, and texts that are short and free of control characters.
fn is_whole(entry: &Entry) -> bool {
    let w = &entry.window;
    let text_ok = |s: &str| s.chars().count() <= MAX_TEXT && !s.chars().any(char::is_control);
    entry.key.len() == 64
        && entry.key.bytes().all(|b| b.is_ascii_hexdigit())
        && !w.sizes.is_empty()
        && w.sizes.len() <= MAX_SIZES
        && w.sizes
            .iter()
            .all(|s| (1..=MAX_WINDOW).contains(&s.tokens) && text_ok(&s.source))
        && w.sizes.iter().map(|s| s.tokens).min() == Some(w.window)
        && text_ok(&w.model)
        && w.caveat.as_deref().is_none_or(text_ok)
}

#[cfg(test)]
mod tests {
    use super::super::{NamedSize, ServerKind, SizeMeaning};
    use super::*;

    fn learned(window: u64) -> LearnedWindow {
        LearnedWindow {
            server: ServerKind::LlamaCpp,
            model: "local-qwen".into(),
            window,
            sizes: vec![NamedSize {
                tokens: window,
                meaning: SizeMeaning::Serving,
                source: "GET /props: default_generation_settings.n_ctx".into(),
            }],
            caveat: None,
        }
    }

    const BASE: &str = "http://127.0.0.1:8080/v1";

    fn now() -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000)
    }

    #[test]
    fn an_entry_is_kept_for_a_day_per_base_url_and_model() {
        let dir = tempfile::tempdir().unwrap();
        let cache = WindowCache::at(dir.path().join("tackle/windows.json"));
        assert_eq!(cache.get(BASE, "m", now()).unwrap(), None);
        cache.put(BASE, "m", &learned(4096), now()).unwrap();
        cache
            .put("http://other:1/v1", "m", &learned(8192), now())
            .unwrap();
        let got = cache.get(&format!("{BASE}/"), "m", now()).unwrap().unwrap();
        assert_eq!(got.learned, learned(4096));
        assert_eq!(got.learned_at, now());
        assert_eq!(cache.get(BASE, "other-model", now()).unwrap(), None);
        let later = now() + MAX_AGE - Duration::from_secs(1);
        assert!(cache.get(BASE, "m", later).unwrap().is_some());
        assert_eq!(cache.get(BASE, "m", now() + MAX_AGE).unwrap(), None);
        // Learned again: replaced, not added.
        cache.put(BASE, "m", &learned(2048), now()).unwrap();
        let text = std::fs::read_to_string(cache.path()).unwrap();
        assert_eq!(text.matches("\"key\"").count(), 2, "{text}");
        assert!(
            !text.contains("127.0.0.1"),
            "the url is never written: {text}"
        );
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(cache.path())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let leftovers: Vec<_> = std::fs::read_dir(dir.path().join("tackle"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(leftovers.len(), 1, "{leftovers:?}");
    }

    #[test]
    fn entries_that_do_not_hold_together_are_absent() {
        let dir = tempfile::tempdir().unwrap();
        let cache = WindowCache::at(dir.path().join("windows.json"));
        cache.put(BASE, "m", &learned(4096), now()).unwrap();
        let good: serde_json::Value =
            serde_json::from_slice(&std::fs::read(cache.path()).unwrap()).unwrap();
        let entry = good["entries"][0].clone();
        let spoiled = |edit: &dyn Fn(&mut serde_json::Value)| {
            let mut e = entry.clone();
            edit(&mut e);
            e
        };
        let bad = [
            spoiled(&|e| e["window"] = 1_000_000.into()),
            spoiled(&|e| e["window"] = 0.into()),
            spoiled(&|e| e["sizes"][0]["tokens"] = (1u64 << 40).into()),
            spoiled(&|e| e["sizes"] = serde_json::json!([])),
            spoiled(&|e| e["model"] = "\u{1b}[31mred".into()),
            spoiled(&|e| e["caveat"] = "x".repeat(5000).into()),
            spoiled(&|e| e["learned_at"] = (seconds(now()) + 86_400).into()),
            spoiled(&|e| e["server"] = "mystery".into()),
        ];
        for entry in bad {
            let file = serde_json::json!({"tackle_window_cache": 1, "entries": [entry]});
            std::fs::write(cache.path(), file.to_string()).unwrap();
            assert!(
                cache.get(BASE, "m", now()).map_or(true, |e| e.is_none()),
                "{file}"
            );
        }
    }

    /// Every hostile form of the file: read as absent with a problem named, never a hang, a
    /// crash or an unbounded read; and a write replaces what is there (a link is not followed).
    #[test]
    fn hostile_files_are_absent_and_replaced() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("windows.json");
        let outside = dir.path().join("outside.json");
        type Plant<'a> = Box<dyn Fn() + 'a>;
        let forms: Vec<(&str, Plant)> = vec![
            (
                "/dev/zero",
                Box::new(|| symlink("/dev/zero", &path).unwrap()),
            ),
            (
                "a fifo",
                Box::new(|| {
                    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
                    // SAFETY: a valid NUL-terminated path.
                    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
                }),
            ),
            (
                "a directory",
                Box::new(|| std::fs::create_dir(&path).unwrap()),
            ),
            (
                "oversized",
                Box::new(|| {
                    std::fs::File::create(&path)
                        .unwrap()
                        .set_len(tackle_fs::OwnFile::WINDOW_CACHE.cap + 1)
                        .unwrap()
                }),
            ),
            (
                "garbage",
                Box::new(|| std::fs::write(&path, b"\xff\xfe{{{").unwrap()),
            ),
            (
                "another version",
                Box::new(|| {
                    std::fs::write(&path, br#"{"tackle_window_cache": 9, "entries": []}"#).unwrap()
                }),
            ),
            (
                "deep nesting",
                Box::new(|| std::fs::write(&path, "[".repeat(100_000)).unwrap()),
            ),
            (
                "a link out",
                Box::new(|| {
                    std::fs::write(&outside, b"{}").unwrap();
                    symlink(&outside, &path).unwrap()
                }),
            ),
            ("dangling", Box::new(|| symlink("nowhere", &path).unwrap())),
        ];
        let cache = WindowCache::at(path.clone());
        for (form, plant) in forms {
            let _ = std::fs::remove_file(&path);
            let _ = std::fs::remove_dir_all(&path);
            plant();
            let got = cache.get(BASE, "m", now());
            assert!(matches!(got, Err(_) | Ok(None)), "{form}: {got:?}");
            if form == "a directory" {
                assert!(cache.put(BASE, "m", &learned(4096), now()).is_err());
                continue;
            }
            cache
                .put(BASE, "m", &learned(4096), now())
                .unwrap_or_else(|e| panic!("{form}: {e}"));
            assert!(cache.get(BASE, "m", now()).unwrap().is_some(), "{form}");
            assert!(
                !std::fs::symlink_metadata(&path)
                    .unwrap()
                    .file_type()
                    .is_symlink()
            );
        }
        assert_eq!(
            std::fs::read(&outside).unwrap(),
            b"{}",
            "a link was written through"
        );
    }
}
