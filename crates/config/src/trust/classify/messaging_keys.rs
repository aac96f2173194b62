//! `[messaging]` from an untrusted project: turning messaging off, a smaller body, fewer
//! unread messages and a shorter chain are kept; anything looser (messaging on where the user
//! turned it off, a guard turned off or raised) lets a repository's agents talk to each other
//! longer than the user allows.

use super::Splitter;
use crate::settings::MessagingSection;

impl Splitter<'_> {
    pub(super) fn messaging(&mut self, m: &MessagingSection) -> MessagingSection {
        let lower = self.lower;
        let enabled = m.enabled.as_ref().and_then(|v| {
            if !*v.get_ref() || lower.messaging_enabled.value {
                return Some(v.clone());
            }
            self.widen(
                "messaging.enabled",
                v,
                format!(
                    "turns messaging on, which is off (from {})",
                    lower.messaging_enabled.origin
                ),
            );
            None
        });
        let max_body_bytes = m.max_body_bytes.as_ref().and_then(|v| {
            let was = &lower.messaging_max_body_bytes;
            if *v.get_ref() <= was.value {
                return Some(v.clone());
            }
            self.widen(
                "messaging.max_body_bytes",
                v,
                format!(
                    "raises the body limit to {} from {} (from {})",
                    v.get_ref(),
                    was.value,
                    was.origin
                ),
            );
            None
        });
        let max_pending_per_session = m.max_pending_per_session.as_ref().and_then(|v| {
            let was = &lower.messaging_max_pending;
            if *v.get_ref() <= was.value {
                return Some(v.clone());
            }
            self.widen(
                "messaging.max_pending_per_session",
                v,
                format!(
                    "raises unread messages per session to {} from {} (from {})",
                    v.get_ref(),
                    was.value,
                    was.origin
                ),
            );
            None
        });
        let max_hops = m.max_hops.as_ref().and_then(|v| {
            let was = &lower.messaging_max_hops;
            // <= 0 counts no hops: the loosest setting there is.
            let tighter = *v.get_ref() > 0 && (was.value <= 0 || *v.get_ref() <= was.value);
            if tighter || (*v.get_ref() <= 0 && was.value <= 0) {
                return Some(v.clone());
            }
            self.widen(
                "messaging.max_hops",
                v,
                format!(
                    "sets max_hops = {} where it is {} (from {})",
                    v.get_ref(),
                    was.value,
                    was.origin
                ),
            );
            None
        });
        let max_inflight_per_pair = m.max_inflight_per_pair.as_ref().and_then(|v| {
            let was = &lower.messaging_max_inflight;
            // 0 keeps no window: the loosest setting there is.
            let tighter = *v.get_ref() > 0 && (was.value == 0 || *v.get_ref() <= was.value);
            if tighter || (*v.get_ref() == 0 && was.value == 0) {
                return Some(v.clone());
            }
            self.widen(
                "messaging.max_inflight_per_pair",
                v,
                format!(
                    "sets max_inflight_per_pair = {} where it is {} (from {})",
                    v.get_ref(),
                    was.value,
                    was.origin
                ),
            );
            None
        });
        MessagingSection {
            enabled,
            max_body_bytes,
            max_pending_per_session,
            max_hops,
            max_inflight_per_pair,
        }
    }
}
