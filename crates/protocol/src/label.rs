//! Information-flow labels carried by every tool result and retained artifact.
//!
//! A result's label starts as its tool's ([`Label::LOCAL`], [`Label::REMOTE`]) and only ever
//! loses trust or gains privacy on the way: [`Label::combine`] is the one rule by which labels
//! meet, used when a call reads back retained output (the runtime combines the producers'
//! labels, found in the event log's `call_finished` records, with the reader's). Content whose
//! producer is unknown is [`Label::UNKNOWN`], never trusted.

use serde::{Deserialize, Serialize};

/// Whether content may steer the agent. Network and MCP output is `Untrusted`; the sealed
/// posture quarantines it behind references.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Trust {
    Trusted,
    Untrusted,
}

/// Whether content may leave the machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Privacy {
    Public,
    Private,
}

/// The information-flow label of a result. Carried from day one so that the sealed posture can
/// enforce it without touching every tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Label {
    pub trust: Trust,
    pub privacy: Privacy,
}

impl Label {
    /// Local file and command output in the standard posture.
    pub const LOCAL: Label = Label {
        trust: Trust::Trusted,
        privacy: Privacy::Private,
    };
    /// Content that arrived from the network or a third-party server.
    pub const REMOTE: Label = Label {
        trust: Trust::Untrusted,
        privacy: Privacy::Private,
    };

    /// What a reader must assume about content whose producer tackle has no record of (a
    /// manual store edit, a log that lost its line): the least it could be.
    pub const UNKNOWN: Label = Label {
        trust: Trust::Untrusted,
        privacy: Privacy::Private,
    };

    /// The label of content that carries both `self` and `other`: the less trusted and the more
    /// private of the two. The one combine rule: an artifact read back carries its producers'
    /// labels combined with the reader's, so a re-read never launders remote text into trusted
    /// text. Commutative, associative and idempotent, so the order of producers never matters.
    pub fn combine(self, other: Label) -> Label {
        Label {
            trust: self.trust.least(other.trust),
            privacy: self.privacy.most(other.privacy),
        }
    }
}

impl Trust {
    /// The less trusted of the two.
    pub fn least(self, other: Trust) -> Trust {
        match (self, other) {
            (Trust::Trusted, Trust::Trusted) => Trust::Trusted,
            _ => Trust::Untrusted,
        }
    }
}

impl Privacy {
    /// The more private of the two.
    pub fn most(self, other: Privacy) -> Privacy {
        match (self, other) {
            (Privacy::Public, Privacy::Public) => Privacy::Public,
            _ => Privacy::Private,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PUBLIC_TRUSTED: Label = Label {
        trust: Trust::Trusted,
        privacy: Privacy::Public,
    };
    const PUBLIC_UNTRUSTED: Label = Label {
        trust: Trust::Untrusted,
        privacy: Privacy::Public,
    };
    const ALL: [Label; 4] = [
        PUBLIC_TRUSTED,
        PUBLIC_UNTRUSTED,
        Label::LOCAL,
        Label::REMOTE,
    ];

    #[test]
    fn combine_takes_the_less_trusted_and_the_more_private() {
        let table = [
            (Label::LOCAL, Label::LOCAL, Label::LOCAL),
            (Label::LOCAL, Label::REMOTE, Label::REMOTE),
            (Label::REMOTE, Label::LOCAL, Label::REMOTE),
            (PUBLIC_TRUSTED, PUBLIC_TRUSTED, PUBLIC_TRUSTED),
            (PUBLIC_TRUSTED, Label::LOCAL, Label::LOCAL),
            (PUBLIC_TRUSTED, PUBLIC_UNTRUSTED, PUBLIC_UNTRUSTED),
            (PUBLIC_UNTRUSTED, Label::LOCAL, Label::REMOTE),
            (PUBLIC_TRUSTED, Label::UNKNOWN, Label::REMOTE),
        ];
        for (a, b, want) in table {
            assert_eq!(a.combine(b), want, "{a:?} with {b:?}");
        }
    }

    #[test]
    fn combine_is_commutative_associative_and_idempotent() {
        for a in ALL {
            assert_eq!(a.combine(a), a);
            for b in ALL {
                assert_eq!(a.combine(b), b.combine(a), "{a:?} {b:?}");
                for c in ALL {
                    assert_eq!(a.combine(b).combine(c), a.combine(b.combine(c)));
                }
            }
        }
    }

    #[test]
    fn nothing_combined_with_unknown_is_trusted() {
        for a in ALL {
            assert_eq!(a.combine(Label::UNKNOWN).trust, Trust::Untrusted, "{a:?}");
            assert_eq!(a.combine(Label::UNKNOWN).privacy, Privacy::Private, "{a:?}");
        }
    }
}
