//! Information-flow labels carried by every tool result and retained artifact.

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
}
