//! `[messaging]` checked into [`MessagingSettings`]: whether send_message accepts anything,
//! the largest body, how many unread messages a recipient may hold, the longest chain of
//! messages (`max_hops`, `<= 0` counts none) and the unread window of one sender to one
//! recipient (`max_inflight_per_pair`, 0 keeps none). An untrusted project may only tighten
//! them (`trust::classify`).

use tackle_agent::messaging::MessagingSettings;

use crate::bail;
use crate::settings::Settings;

/// The largest body a setting may allow: one message is a note between agents, and the
/// recipient's log keeps every byte of it.
pub const MAX_BODY_CEILING: usize = 1024 * 1024;

pub fn settings(s: &Settings) -> crate::Result<MessagingSettings> {
    let body = &s.messaging_max_body_bytes;
    if body.value == 0 || body.value > MAX_BODY_CEILING {
        bail!(
            "[messaging] max_body_bytes = {} ({}) must be from 1 to {MAX_BODY_CEILING}; turn \
             messaging off with enabled = false",
            body.value,
            body.origin
        );
    }
    let pending = &s.messaging_max_pending;
    if pending.value == 0 {
        bail!(
            "[messaging] max_pending_per_session = 0 ({}) would refuse every message; set at \
             least 1, or turn messaging off with enabled = false",
            pending.origin
        );
    }
    Ok(MessagingSettings {
        enabled: s.messaging_enabled.value,
        max_body_bytes: body.value,
        max_pending_per_session: pending.value,
        max_hops: s.messaging_max_hops.value,
        max_inflight_per_pair: s.messaging_max_inflight.value,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::LoadedFile;

    fn with(text: &str) -> crate::Result<MessagingSettings> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, text).unwrap();
        let mut s = Settings::defaults(1, 1);
        s.apply_file(&LoadedFile::load(&path)?.unwrap());
        settings(&s)
    }

    /// One row per file: the settings, or the words of its refusal.
    #[test]
    fn messaging_is_checked_as_the_table_says() {
        let d = MessagingSettings::DEFAULT;
        let rows: &[(&str, Result<MessagingSettings, &str>)] = &[
            ("", Ok(d)),
            (
                "[messaging]\nenabled = false\n",
                Ok(MessagingSettings {
                    enabled: false,
                    ..d
                }),
            ),
            (
                "[messaging]\nmax_hops = 0\n",
                Ok(MessagingSettings { max_hops: 0, ..d }),
            ),
            (
                "[messaging]\nmax_hops = -1\n",
                Ok(MessagingSettings { max_hops: -1, ..d }),
            ),
            (
                "[messaging]\nmax_inflight_per_pair = 0\n",
                Ok(MessagingSettings {
                    max_inflight_per_pair: 0,
                    ..d
                }),
            ),
            (
                "[messaging]\nmax_body_bytes = 100\nmax_pending_per_session = 2\n",
                Ok(MessagingSettings {
                    max_body_bytes: 100,
                    max_pending_per_session: 2,
                    ..d
                }),
            ),
            (
                "[messaging]\nmax_body_bytes = 0\n",
                Err("must be from 1 to 1048576"),
            ),
            (
                "[messaging]\nmax_body_bytes = 2000000\n",
                Err("must be from 1 to 1048576"),
            ),
            (
                "[messaging]\nmax_pending_per_session = 0\n",
                Err("would refuse every message"),
            ),
            ("[messaging]\nenabled = \"yes\"\n", Err("config.toml:2")),
            ("[messaging]\nmax_hop = 1\n", Err("unknown key `max_hop`")),
        ];
        for (text, want) in rows {
            match (with(text), want) {
                (Ok(got), Ok(want)) => assert_eq!(&got, want, "{text:?}"),
                (Err(e), Err(words)) => assert!(e.to_string().contains(words), "{text:?}: {e}"),
                (got, want) => panic!("{text:?}: {got:?}, want {want:?}"),
            }
        }
    }
}
