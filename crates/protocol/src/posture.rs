//! The posture a session runs in (DESIGN.md §9): how strictly the runtime holds its calls to
//! their labels.

use serde::{Deserialize, Serialize};

/// A session's posture, recorded in its `session_started` as the word it displays as
/// (`standard`, `gated`, `sealed`): every log written while the posture was a plain string
/// still reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Posture {
    /// Labels are carried; the gate decides every call.
    #[default]
    Standard,
    /// Standard, with every mutating call put to a person.
    Gated,
    /// Labels are enforced: quarantined results become references the planner never sees.
    Sealed,
}

impl Posture {
    /// The posture's word, as recorded and shown.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Standard => "standard",
            Self::Gated => "gated",
            Self::Sealed => "sealed",
        }
    }
}

impl std::fmt::Display for Posture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postures_serialize_as_their_words() {
        for posture in [Posture::Standard, Posture::Gated, Posture::Sealed] {
            let json = serde_json::to_string(&posture).unwrap();
            assert_eq!(json, format!("\"{posture}\""));
            assert_eq!(serde_json::from_str::<Posture>(&json).unwrap(), posture);
        }
        assert!(serde_json::from_str::<Posture>("\"lax\"").is_err());
    }

    #[test]
    fn a_session_started_written_before_parents_still_reads_and_is_written_the_same() {
        let old = r#"{"type":"session_started","session":"s1","root":"/p","posture":"standard","at_ms":7}"#;
        let event: crate::Event = serde_json::from_str(old).unwrap();
        let crate::Event::SessionStarted(started) = &event else {
            panic!("not a session_started: {event:?}");
        };
        assert_eq!(started.posture, Posture::Standard);
        assert_eq!(
            (&started.parent, &started.agent, &started.tools),
            (&None, &None, &None)
        );
        assert_eq!(serde_json::to_string(&event).unwrap(), old);
    }
}
