//! What a session is to the gate and the dispatcher (DESIGN.md §9, "Sessions in one process"):
//! its id, parent, agent type, posture, tool filter and its own grants. Every batch runs in one
//! and every [`crate::GateRequest`] carries it, so two sessions of one process never share a
//! grant, a todo list or a plan flag.
//!
//! Key decision: the "for this session" grants live here, not in a map the gate keys by session
//! id. They then end with the session (a server's closed clients leave nothing behind in the
//! gate), one gate serves every session without per-session state of its own, and a child
//! session starts with no grants of its parent's by construction. Rejected: keeping
//! `PolicyGate`'s map, which grows with every client a long-lived server ever had.

use std::sync::Mutex;

use tackle_gate::Grants;
use tackle_protocol::{Posture, SessionId};

use crate::tool_filter::ToolFilter;

/// How a session is opened: everything about it besides its id and root.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SessionOptions {
    /// The session this one works for (a subagent's caller).
    pub parent: Option<SessionId>,
    /// The agent type it runs, when it has a name; recorded as the author of the plans it files.
    pub agent: Option<String>,
    pub posture: Posture,
    pub tools: ToolFilter,
    /// A subagent's handle in its tree (`explore_1a2b3c4d`), shown with its approvals.
    pub handle: Option<String>,
    /// Rules added to the gate's policy for this session only.
    pub narrowing: Vec<Narrowing>,
}

/// A rule a session adds to the gate's policy. Only deny and ask exist: with the policy's
/// deny > ask > allow, an added rule can make a session's answers stricter, never looser.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Narrowing {
    Deny(String),
    Ask(String),
}

impl Narrowing {
    /// `deny <pattern>` or `ask <pattern>`, as `session_started` records it.
    pub fn recorded(&self) -> String {
        match self {
            Narrowing::Deny(p) => format!("deny {p}"),
            Narrowing::Ask(p) => format!("ask {p}"),
        }
    }

    /// The rule a `session_started` recorded; anything else is `None`.
    pub fn from_recorded(text: &str) -> Option<Self> {
        let (effect, pattern) = text.split_once(' ')?;
        match effect {
            "deny" => Some(Narrowing::Deny(pattern.to_owned())),
            "ask" => Some(Narrowing::Ask(pattern.to_owned())),
            _ => None,
        }
    }

    pub fn pattern(&self) -> &str {
        match self {
            Narrowing::Deny(p) | Narrowing::Ask(p) => p,
        }
    }
}

/// What a parent gives the child it opens ([`crate::Session::open_subagent`]).
#[derive(Clone, Debug, Default)]
pub struct ChildOptions {
    pub agent: Option<String>,
    /// Narrowed further by the parent's own filter.
    pub tools: ToolFilter,
    pub handle: Option<String>,
    /// Added to the parent's rules.
    pub narrowing: Vec<Narrowing>,
}

/// One session's identity, posture, tool filter and grants. Shared by the clones of a
/// [`crate::Session`].
#[derive(Debug)]
pub struct SessionContext {
    id: SessionId,
    parent: Option<SessionId>,
    agent: Option<String>,
    posture: Posture,
    tools: ToolFilter,
    handle: Option<String>,
    narrowing: Vec<Narrowing>,
    grants: Mutex<Grants>,
}

impl SessionContext {
    /// A context with no grants.
    pub fn new(id: SessionId, options: SessionOptions) -> Self {
        let SessionOptions {
            parent,
            agent,
            posture,
            tools,
            handle,
            narrowing,
        } = options;
        Self {
            id,
            parent,
            agent,
            posture,
            tools,
            handle,
            narrowing,
            grants: Mutex::new(Grants::new()),
        }
    }

    pub fn id(&self) -> &SessionId {
        &self.id
    }

    pub fn parent(&self) -> Option<&SessionId> {
        self.parent.as_ref()
    }

    pub fn agent(&self) -> Option<&str> {
        self.agent.as_deref()
    }

    pub fn posture(&self) -> Posture {
        self.posture
    }

    pub fn tools(&self) -> &ToolFilter {
        &self.tools
    }

    /// The subagent's handle, for a child session.
    pub fn handle(&self) -> Option<&str> {
        self.handle.as_deref()
    }

    /// The rules this session adds to the gate's policy (its ancestors' included).
    pub fn narrowing(&self) -> &[Narrowing] {
        &self.narrowing
    }

    /// Whether the session may see and call `tool`.
    pub fn offers(&self, tool: &str) -> bool {
        self.tools.allows(tool)
    }

    /// Answer from the session's grants.
    pub fn with_grants<R>(&self, read: impl FnOnce(&Grants) -> R) -> R {
        read(&self.grants.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Approve what `pattern` matches until the running run ends (a skill's `allowed-tools`;
    /// see [`Grants::grant_for_run`]).
    pub fn grant_for_run(&self, pattern: tackle_gate::Pattern) {
        self.grants
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .grant_for_run(pattern);
    }

    /// Take back every run grant: the agent loop's run ended, or a new one begins.
    pub fn end_run(&self) {
        self.grants
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .end_run();
    }

    /// Remember `key` as approved for the rest of this session (see [`Grants::grant_session`]).
    pub fn grant(&self, key: &str) -> bool {
        self.grants
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .grant_session(key)
    }
}
