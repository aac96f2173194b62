//! What `prepare` declares: routing (for the gate), serialization, and the staged plan.

use std::fmt;

/// The action half of a permission key.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    Read,
    Write,
    Fetch,
    Message,
    CallPeer,
    /// A namespaced action such as `tool.bash.cmd`.
    Custom(&'static str),
}

impl Action {
    pub fn as_str(&self) -> &str {
        match self {
            Self::Read => "read",
            Self::Write => "write",
            Self::Fetch => "fetch",
            Self::Message => "message",
            Self::CallPeer => "call_peer",
            Self::Custom(s) => s,
        }
    }
}

/// One place a call lands: a path, URL, command, peer. Rendered as the permission key
/// `<action>:<target>` (`read:src/main.rs`, `read:artifact://<digest>`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PermissionResource {
    pub action: Action,
    pub target: String,
}

impl PermissionResource {
    pub fn read(target: impl Into<String>) -> Self {
        Self {
            action: Action::Read,
            target: target.into(),
        }
    }

    pub fn write(target: impl Into<String>) -> Self {
        Self {
            action: Action::Write,
            target: target.into(),
        }
    }

    pub fn key(&self) -> String {
        format!("{}:{}", self.action.as_str(), self.target)
    }
}

impl fmt::Display for PermissionResource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.action.as_str(), self.target)
    }
}

/// Where a call lands, separated from what it carries. The gate (and, later, the sealed
/// posture) decides from routing alone.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Routing {
    pub resources: Vec<PermissionResource>,
}

/// Calls of one batch with equal keys run one after another in turn order (writes to the same
/// file, calls to the same MCP server).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SerializationKey(pub String);

/// The outcome of `prepare`.
pub struct Prepared<P> {
    pub routing: Routing,
    pub serialization_key: Option<SerializationKey>,
    /// Tool-private state for `execute` (resolved targets, staged bytes, base hashes).
    pub plan: P,
    /// `read:` resources the call may read that the gate is not asked about one by one (a
    /// command line's path arguments, which its command keys already name): recorded as the
    /// sources of its retained output, so a later deny on one covers the copy. Never widens
    /// what the call may do.
    pub sources: Vec<PermissionResource>,
    /// What the call will do, as the person asked to approve it must see it when the
    /// arguments alone do not say (a write through a reference shown with the file's real name
    /// and its diff, a pipeline's exact argv): shown beside the arguments, never to the model.
    pub effect: Option<String>,
}

impl<P> Prepared<P> {
    pub fn new(routing: Routing, plan: P) -> Self {
        Self {
            routing,
            serialization_key: None,
            plan,
            sources: Vec::new(),
            effect: None,
        }
    }

    /// Says what the call will do for the person asked to approve it (see [`Prepared::effect`]).
    pub fn with_effect(mut self, effect: impl Into<String>) -> Self {
        self.effect = Some(effect.into());
        self
    }

    /// Records `sources` as what the call's output may copy (see [`Prepared::sources`]).
    pub fn with_sources(mut self, sources: Vec<PermissionResource>) -> Self {
        self.sources = sources;
        self
    }

    pub fn serialized_by(mut self, key: SerializationKey) -> Self {
        self.serialization_key = Some(key);
        self
    }
}
