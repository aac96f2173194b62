//! `[tools.call_peer]` checked into [`CallPeerSettings`]: whether the model may hand prompts to
//! peer daemons, and the bounds on each call.

use std::time::Duration;

use crate::bail;
use crate::settings::Settings;

/// The longest deadline one call may be given.
const MOST_DEADLINE_SECONDS: f64 = 3600.0;

/// The most bytes of an answer a call may be set to read.
const MOST_RESPONSE_BYTES: u64 = 16 * 1024 * 1024;

/// The bounds of every call_peer call.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CallPeerSettings {
    /// From the peer's session creation to the end of its turn.
    pub deadline: Duration,
    /// The most bytes of the answer read.
    pub max_response_bytes: usize,
}

/// `None` when call_peer is not enabled.
pub fn settings(settings: &Settings) -> crate::Result<Option<CallPeerSettings>> {
    if !settings.call_peer_enabled.value {
        return Ok(None);
    }
    let deadline = &settings.call_peer_deadline_seconds;
    if !(deadline.value > 0.0 && deadline.value <= MOST_DEADLINE_SECONDS) {
        bail!(
            "[tools.call_peer] deadline_seconds = {} ({}) must be above 0 and at most {MOST_DEADLINE_SECONDS}",
            deadline.value,
            deadline.origin
        );
    }
    let bytes = &settings.call_peer_max_response_bytes;
    if !(1..=MOST_RESPONSE_BYTES).contains(&bytes.value) {
        bail!(
            "[tools.call_peer] max_response_bytes = {} ({}) must be 1 to {MOST_RESPONSE_BYTES}",
            bytes.value,
            bytes.origin
        );
    }
    Ok(Some(CallPeerSettings {
        deadline: Duration::from_secs_f64(deadline.value),
        max_response_bytes: bytes.value as usize,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::{Origin, Sourced};

    #[test]
    fn off_by_default_and_bounded_when_on() {
        let mut s = Settings::defaults(1, 1);
        assert_eq!(settings(&s).unwrap(), None);
        s.call_peer_enabled = Sourced::new(true, Origin::BuiltIn);
        let on = settings(&s).unwrap().unwrap();
        assert_eq!(on.deadline, Duration::from_secs(300));
        assert_eq!(on.max_response_bytes, 64 * 1024);
        s.call_peer_deadline_seconds = Sourced::new(0.0, Origin::BuiltIn);
        assert!(settings(&s).unwrap_err().to_string().contains("above 0"));
        s.call_peer_deadline_seconds = Sourced::new(30.0, Origin::BuiltIn);
        s.call_peer_max_response_bytes = Sourced::new(0, Origin::BuiltIn);
        assert!(settings(&s).unwrap_err().to_string().contains("1 to"));
    }
}
