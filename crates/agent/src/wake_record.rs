//! A wake as the session log keeps it ([`WakeSpec`], in `wake_pending`) and back again, so an
//! autonomous run whose process died mid-wait goes on waiting for the same thing.
//!
//! Every time is recorded as a moment: a sleep as the moment it ends, a timeout as the moment
//! it fires. A wait resumed later therefore ends when the first one would have (at once, when
//! that moment has passed). The watched file is named by its root-relative path and checked
//! again on the way back in, so a log cannot point the wait outside the root.

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tackle_protocol::{WakeSpec, WatchedFile};

use crate::schedule::{FileState, NAME, Wake};

/// `wake` as it is recorded when the wait begins at `now`.
pub fn record(wake: &Wake, now: SystemTime) -> WakeSpec {
    let limit_at = |limit: &Option<Duration>| limit.map(|l| ms(now + l));
    match wake {
        Wake::After(d) => WakeSpec::At {
            at_ms: ms(now + *d),
        },
        Wake::At(t) => WakeSpec::At { at_ms: ms(*t) },
        Wake::FileChange {
            path,
            before,
            limit,
            ..
        } => WakeSpec::FileChange {
            path: path.clone(),
            before: before.map(|b| WatchedFile {
                len: b.len,
                modified_ns: b.modified.and_then(|m| {
                    let ns = m.duration_since(UNIX_EPOCH).ok()?.as_nanos();
                    u64::try_from(ns).ok()
                }),
                ino: b.ino,
            }),
            limit_at_ms: limit_at(limit),
        },
        Wake::Message { limit } => WakeSpec::Message {
            limit_at_ms: limit_at(limit),
        },
    }
}

/// The wake `spec` stands for, resumed at `now` under `root`; an error says why it cannot be
/// (a path that is not under the root).
pub fn restore(spec: &WakeSpec, root: &Path, now: SystemTime) -> Result<Wake, String> {
    let remaining = |at: &Option<u64>| {
        at.map(|at| {
            (UNIX_EPOCH + Duration::from_millis(at))
                .duration_since(now)
                .unwrap_or(Duration::ZERO)
        })
    };
    Ok(match spec {
        WakeSpec::At { at_ms } => Wake::At(UNIX_EPOCH + Duration::from_millis(*at_ms)),
        WakeSpec::FileChange {
            path,
            before,
            limit_at_ms,
        } => {
            let (rel, _) = tackle_tools::resolve_read(NAME, root, path)
                .map_err(|e| format!("the recorded wake watches `{path}`: {}", e.message))?;
            Wake::FileChange {
                path: rel.as_str().to_owned(),
                absolute: root.join(rel.as_str()),
                before: before.map(|b| FileState {
                    len: b.len,
                    modified: b
                        .modified_ns
                        .map(|ns| UNIX_EPOCH + Duration::from_nanos(ns)),
                    ino: b.ino,
                }),
                limit: remaining(limit_at_ms),
            }
        }
        WakeSpec::Message { limit_at_ms } => Wake::Message {
            limit: remaining(limit_at_ms),
        },
    })
}

fn ms(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_wake_comes_back_as_the_same_wait() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("flag"), "x").unwrap();
        let now = UNIX_EPOCH + Duration::from_secs(1_000_000);
        let later = now + Duration::from_secs(30);
        let file = root.path().join("flag");
        let cases = [
            (
                Wake::After(Duration::from_secs(60)),
                Wake::At(now + Duration::from_secs(60)),
            ),
            (
                Wake::At(now + Duration::from_secs(5)),
                Wake::At(now + Duration::from_secs(5)),
            ),
            (
                Wake::Message {
                    limit: Some(Duration::from_secs(100)),
                },
                Wake::Message {
                    limit: Some(Duration::from_secs(70)),
                },
            ),
            (Wake::Message { limit: None }, Wake::Message { limit: None }),
            (
                Wake::FileChange {
                    path: "flag".into(),
                    absolute: file.clone(),
                    before: FileState::of(&file),
                    limit: Some(Duration::from_secs(10)),
                },
                // The timeout's moment has passed: the resumed wait ends at once.
                Wake::FileChange {
                    path: "flag".into(),
                    absolute: file.clone(),
                    before: FileState::of(&file),
                    limit: Some(Duration::ZERO),
                },
            ),
        ];
        for (wake, want) in cases {
            let spec = record(&wake, now);
            let text = serde_json::to_string(&spec).unwrap();
            let back: WakeSpec = serde_json::from_str(&text).unwrap();
            assert_eq!(restore(&back, root.path(), later).unwrap(), want, "{text}");
        }
    }

    #[test]
    fn a_recorded_path_outside_the_root_is_refused() {
        let root = tempfile::tempdir().unwrap();
        for path in ["../elsewhere", "/etc/passwd"] {
            let spec = WakeSpec::FileChange {
                path: path.into(),
                before: None,
                limit_at_ms: None,
            };
            let err = restore(&spec, root.path(), SystemTime::now()).unwrap_err();
            assert!(err.contains(path), "{err}");
        }
    }
}
