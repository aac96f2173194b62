//! The delegation tree: the children a root session and its descendants started, by handle
//! and session id, with their status and final output, and the completion notices each
//! parent has not yet been shown.
//!
//! Children run in the background, each its own [`Agent`] on a task of its own, in a session
//! opened by [`Session::open_subagent`]: the parent's catalog narrowed to the type's tools, the
//! parent's rules plus the type's deny and ask rules, its own log naming its parent and handle.
//! A child's end leaves a notice for its parent, which the parent's loop takes at its next safe
//! boundary ([`Tree::take_notices`]); a parent whose model ends its turn while children run
//! waits for the next end instead of finishing ([`Tree::wait_for_change`]).
//!
//! Key decision: admission (type, depth, the running cap, the handle, the session) happens
//! under one lock, so parallel delegate calls cannot overshoot the cap or share a handle; the
//! child's model work happens outside it. Rejected: a reservation counter beside the map,
//! which a failed session open would have to give back.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, OnceLock};

use tackle_protocol::{RunOutcome, SessionId, Usage};
use tackle_runtime::{ChildOptions, Narrowing, Session, ToolFilter};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::delegate::agent_type::AgentType;
use crate::delegate::handle::new_handle;
use crate::delegate::limits::Limits;
use crate::delegate::notice;
use crate::events::{AgentEvent, Observer};
use crate::messaging::Mailbox;
use crate::run::{Agent, AgentSetup, RunEnd};

/// Builds the loop a child runs: its provider and model, prompt, bounds and the rest of an
/// [`AgentSetup`], for a session the tree has opened. Provided by the front end, which knows
/// the user's model catalog.
pub trait Spawn: Send + Sync {
    fn setup(&self, session: Session, agent_type: &AgentType) -> Result<AgentSetup, String>;

    /// A child session this process no longer holds (a tree rebuilt from its logs), reopened
    /// to continue it.
    fn reopen(&self, session: &SessionId) -> Result<Session, String>;
}

/// Where a child stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Running,
    Completed,
    /// It ended on an error or a provider failure.
    Failed,
    /// A bound (its type's turns, the parent's tokens or time) ended it.
    Bounded,
    Cancelled,
    /// The process running it stopped mid-turn; it was not re-run.
    Interrupted,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Running => "running",
            Status::Completed => "completed",
            Status::Failed => "failed",
            Status::Bounded => "bounded",
            Status::Cancelled => "cancelled",
            Status::Interrupted => "interrupted",
        }
    }

    fn of(outcome: RunOutcome) -> Self {
        match outcome {
            RunOutcome::Finished => Status::Completed,
            RunOutcome::BoundHit => Status::Bounded,
            RunOutcome::Cancelled => Status::Cancelled,
            RunOutcome::Error | RunOutcome::ProviderFailed => Status::Failed,
        }
    }
}

/// One child of the tree.
#[derive(Clone, Debug)]
pub struct Node {
    pub handle: String,
    pub session: SessionId,
    pub parent: SessionId,
    pub agent_type: String,
    pub description: String,
    /// 1 for a child of the root.
    pub depth: u32,
    pub status: Status,
    /// The child's last message (and, when it did not complete, why it ended).
    pub output: String,
    /// The child's tokens, all its runs together.
    pub usage: Usage,
    cancel: CancellationToken,
}

/// What delegate_subagent asks for.
#[derive(Clone, Debug)]
pub struct StartRequest {
    pub agent_type: String,
    pub prompt: String,
    pub description: Option<String>,
    /// A finished child of the caller to continue with `prompt`, by handle or session id.
    pub resume: Option<String>,
}

/// Why a child was not started, or a reference not resolved: the text the model reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refused {
    pub code: &'static str,
    pub message: String,
}

impl Refused {
    pub(crate) fn new(code: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

/// The trees of children of one front end's root sessions (`tackle run` has one root; a chat
/// has one per conversation).
pub struct Tree {
    limits: Limits,
    types: Vec<AgentType>,
    /// The names of the runtime's catalog, for a type that takes tools out of it; set with
    /// the spawner.
    catalog: OnceLock<Vec<String>>,
    observer: Arc<dyn Observer>,
    spawn: Mutex<Option<Arc<dyn Spawn>>>,
    state: Mutex<State>,
    /// Bumped whenever a child ends or a message is accepted.
    pub(crate) ends: watch::Sender<u64>,
    /// Woken whenever a message's record has been written (or failed): a repeat of that call
    /// waits for it (`crate::messaging::tree_side`).
    pub(crate) accepted: tokio::sync::Notify,
    /// Set when the front end shuts the tree down: sends fail with `engine_shutdown`.
    pub(crate) shut: AtomicBool,
    /// What the agentic subtasks of the tree's sessions spent, until each session's loop
    /// takes its own into its run's spend.
    pub(crate) ledger: crate::agentic::Ledger,
    /// The delivery of a fleet's posted messages, once started (`None`: no runtime to run
    /// it on) ([`crate::messaging::fleet_side`]).
    pub(crate) mail: OnceLock<Option<tokio::sync::mpsc::UnboundedSender<Option<SessionId>>>>,
}

#[derive(Default)]
pub(crate) struct State {
    /// Every session of the tree this process holds: the root and live children.
    pub(crate) sessions: HashMap<SessionId, Session>,
    pub(crate) nodes: Vec<Node>,
    /// Completion notices not yet shown, by parent.
    pending: HashMap<SessionId, Vec<String>>,
    /// Messages between the tree's sessions (`crate::messaging`).
    pub(crate) mailbox: Mailbox,
    /// Sessions whose loop is in a run (children: also their node's status).
    pub(crate) active: HashSet<SessionId>,
    /// Each session's current run, for the idempotency key of the messages it sends.
    pub(crate) runs: HashMap<SessionId, String>,
    /// The roots whose logs name a parent this process does not hold (a subagent's session
    /// opened as a root of its own, on another daemon of a fleet): the parent and the handle
    /// it knows the root by, so the root can still message it
    /// ([`crate::messaging::fleet_side`]).
    pub(crate) origins: HashMap<SessionId, crate::messaging::fleet_side::Origin>,
}

impl Tree {
    /// A tree whose roots may start children of `types` within `limits`; `observer` (the
    /// front end) hears of each child's start and end.
    pub fn new(limits: Limits, types: Vec<AgentType>, observer: Arc<dyn Observer>) -> Arc<Self> {
        Arc::new(Self {
            limits,
            types,
            catalog: OnceLock::new(),
            observer,
            spawn: Mutex::new(None),
            state: Mutex::new(State::default()),
            ends: watch::channel(0).0,
            accepted: tokio::sync::Notify::new(),
            shut: AtomicBool::new(false),
            ledger: crate::agentic::Ledger::default(),
            mail: OnceLock::new(),
        })
    }

    /// The front end's builder of child loops (replacing the last one: a chat that switches
    /// models gives later children the new one) and the names of the runtime's catalog, set
    /// once the runtime that holds the delegation tools exists.
    pub fn set_spawn(&self, spawn: Arc<dyn Spawn>, catalog: Vec<String>) {
        *self.spawn.lock().unwrap_or_else(|p| p.into_inner()) = Some(spawn);
        let _ = self.catalog.set(catalog);
    }

    /// The front end's builder of child loops, once set.
    pub(crate) fn spawner(&self) -> Option<Arc<dyn Spawn>> {
        self.spawn.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// A session that may start children: a root, at depth 0. With a fleet's mailbox, the
    /// tree delivers from now on what other daemons post for it.
    pub fn add_root(self: &Arc<Self>, root: Session) {
        let id = root.id().clone();
        let origin = crate::messaging::fleet_side::origin(&root);
        {
            let mut state = self.lock();
            state.sessions.insert(id.clone(), root);
            if let Some(origin) = origin {
                state.origins.insert(id.clone(), origin);
            }
        }
        crate::messaging::fleet_side::deliver_to(self, &id);
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// The session `id` of this tree that this process holds (a root or a live child): the
    /// parent an agentic subtask opens its session under, the session a skill's grants go to.
    pub fn session(&self, id: &SessionId) -> Option<Session> {
        self.lock().sessions.get(id).cloned()
    }

    /// A child the logs say existed, added as it ended (for a tree rebuilt on resume).
    pub fn restore(&self, node: RestoredNode) {
        let mut state = self.lock();
        if state.nodes.iter().any(|n| n.session == node.session) {
            return;
        }
        state.nodes.push(Node {
            handle: node.handle,
            session: node.session,
            parent: node.parent,
            agent_type: node.agent_type,
            description: node.description,
            depth: node.depth,
            status: node.status,
            output: node.output,
            usage: node.usage,
            cancel: CancellationToken::new(),
        });
    }

    /// How deep `session` is: 0 for the root (or a session the tree does not know).
    pub fn depth(&self, session: &SessionId) -> u32 {
        self.lock()
            .nodes
            .iter()
            .find(|n| &n.session == session)
            .map_or(0, |n| n.depth)
    }

    /// The types `session` may start: all of them while a child of it would be within the
    /// depth ceiling, none beyond it.
    pub fn eligible(&self, session: &SessionId) -> &[AgentType] {
        if self.depth(session) < self.limits.max_depth {
            &self.types
        } else {
            &[]
        }
    }

    /// Starts a child of `caller` (or continues a finished one), returning its node as it
    /// started.
    pub fn start(self: &Arc<Self>, caller: &SessionId, req: StartRequest) -> Result<Node, Refused> {
        let spawn = self
            .spawn
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .ok_or_else(|| Refused::new("unavailable", "delegation is not set up here"))?;
        let mut state = self.lock();
        let running = state
            .nodes
            .iter()
            .filter(|n| n.status == Status::Running)
            .count();
        if running >= self.limits.max_running as usize {
            return Err(Refused::new(
                "too_many_subagents",
                format!(
                    "{running} subagents are already running in this tree, the most \
                     [delegation] max_running allows; do not retry now: wait for a completion \
                     notice, or stop one with cancel_subagent"
                ),
            ));
        }
        let (session, agent_type, depth, handle, resumed) = match &req.resume {
            Some(reference) => {
                let node = resolve_in(&state, caller, reference)?;
                if node.status == Status::Running {
                    return Err(Refused::new(
                        "subagent_running",
                        format!(
                            "subagent {} is still running; wait for its completion notice, \
                             or cancel it first",
                            node.handle
                        ),
                    ));
                }
                if node.agent_type != req.agent_type {
                    return Err(Refused::new(
                        "invalid_arguments",
                        format!(
                            "subagent {} runs agent type `{}`, not `{}`; resume it with \
                             agent_type \"{}\"",
                            node.handle, node.agent_type, req.agent_type, node.agent_type
                        ),
                    ));
                }
                let ty = self.type_named(&req.agent_type)?;
                let session = match state.sessions.get(&node.session) {
                    Some(s) => s.clone(),
                    None => spawn
                        .reopen(&node.session)
                        .map_err(|e| Refused::new("unavailable", e))?,
                };
                (session, ty, node.depth, node.handle.clone(), true)
            }
            None => {
                let ty = self.type_named(&req.agent_type)?;
                let depth = state
                    .nodes
                    .iter()
                    .find(|n| &n.session == caller)
                    .map_or(0, |n| n.depth)
                    + 1;
                if depth > self.limits.max_depth {
                    return Err(Refused::new(
                        "depth_exceeded",
                        format!(
                            "a subagent at this depth may not delegate further ([delegation] \
                             max_depth = {}); do the work yourself",
                            self.limits.max_depth
                        ),
                    ));
                }
                let parent = state.sessions.get(caller).cloned().ok_or_else(|| {
                    Refused::new(
                        "unavailable",
                        "this session is not part of a delegation tree this process holds",
                    )
                })?;
                let handle = new_handle(&ty.name, |h| state.nodes.iter().any(|n| n.handle == h));
                let session = parent
                    .open_subagent(child_options(
                        &ty,
                        &handle,
                        self.catalog.get().map_or(&[][..], Vec::as_slice),
                        depth >= self.limits.max_depth,
                    ))
                    .map_err(|e| Refused::new("unavailable", format!("opening the child: {e}")))?;
                (session, ty, depth, handle, false)
            }
        };
        let cancel = CancellationToken::new();
        let id = session.id().clone();
        let description = req
            .description
            .clone()
            .unwrap_or_else(|| first_line(&req.prompt));
        let node = Node {
            handle,
            session: id.clone(),
            parent: caller.clone(),
            agent_type: agent_type.name.clone(),
            description,
            depth,
            status: Status::Running,
            output: String::new(),
            usage: Usage::default(),
            cancel: cancel.clone(),
        };
        // Reserved while the lock is held: parallel starts count it against the cap.
        let earlier = match state.nodes.iter_mut().find(|n| n.session == id) {
            Some(existing) => {
                let earlier = existing.clone();
                existing.status = Status::Running;
                existing.cancel = cancel.clone();
                Some(earlier)
            }
            None => {
                state.nodes.push(node.clone());
                None
            }
        };
        state.sessions.insert(id.clone(), session.clone());
        drop(state);
        // Building the child's loop reads the tree (its system prompt lists the types it may
        // start), so it happens after the lock is released; a failure gives the slot back.
        let launched = self.launch(
            spawn.as_ref(),
            session,
            &agent_type,
            resumed,
            cancel.clone(),
            Some(req.prompt),
        );
        match launched {
            Ok(()) => {}
            Err(e) => {
                let mut state = self.lock();
                match earlier {
                    Some(earlier) => {
                        if let Some(n) = state.nodes.iter_mut().find(|n| n.session == id) {
                            *n = earlier;
                        }
                    }
                    None => state.nodes.retain(|n| n.session != id),
                }
                return Err(Refused::new("unavailable", e));
            }
        }
        let node = match earlier {
            Some(earlier) => Node {
                status: Status::Running,
                cancel: cancel.clone(),
                ..earlier
            },
            None => node,
        };
        self.announce(&node);
        Ok(node)
    }

    /// Builds a child's loop for `session` (continuing its conversation when `resumed`) and
    /// runs it on a task of its own with `input`; its end is [`Tree::finish`]ed.
    fn launch(
        self: &Arc<Self>,
        spawn: &dyn Spawn,
        session: Session,
        agent_type: &AgentType,
        resumed: bool,
        cancel: CancellationToken,
        input: Option<String>,
    ) -> Result<(), String> {
        let id = session.id().clone();
        let usage = Arc::new(Mutex::new(Usage::default()));
        let mut setup = spawn.setup(session, agent_type)?;
        setup.observer = Arc::new(ChildObserver {
            usage: usage.clone(),
        });
        let mut agent = if resumed {
            Agent::resume(setup).map_err(|e| e.to_string())?
        } else {
            Agent::new(setup)
        };
        let tree = Arc::clone(self);
        tokio::spawn(async move {
            let end = agent.run(input.as_deref(), cancel).await;
            let spent = *usage.lock().unwrap_or_else(|p| p.into_inner());
            tree.finish(&id, end, spent);
        });
        Ok(())
    }

    /// Starts a new run of the child `id`, which is not running, with no input of its own:
    /// its pending messages are its input (a message woke it). Its node reports `running`
    /// until that run ends.
    pub(crate) fn wake(self: &Arc<Self>, id: &SessionId) -> Result<Node, Refused> {
        let spawn = self
            .spawn
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .ok_or_else(|| Refused::new("unavailable", "delegation is not set up here"))?;
        let mut state = self.lock();
        let Some(node) = state.nodes.iter().find(|n| &n.session == id).cloned() else {
            return Err(Refused::new("unavailable", "no such child in this tree"));
        };
        if node.status == Status::Running {
            return Ok(node);
        }
        let ty = self.type_named(&node.agent_type)?;
        let session = match state.sessions.get(id) {
            Some(s) => s.clone(),
            None => spawn
                .reopen(id)
                .map_err(|e| Refused::new("unavailable", e))?,
        };
        let cancel = CancellationToken::new();
        if let Some(n) = state.nodes.iter_mut().find(|n| &n.session == id) {
            n.status = Status::Running;
            n.cancel = cancel.clone();
        }
        state.sessions.insert(id.clone(), session.clone());
        drop(state);
        if let Err(e) = self.launch(spawn.as_ref(), session, &ty, true, cancel.clone(), None) {
            let mut state = self.lock();
            if let Some(n) = state.nodes.iter_mut().find(|n| &n.session == id) {
                *n = node;
            }
            return Err(Refused::new("unavailable", e));
        }
        let woken = Node {
            status: Status::Running,
            cancel,
            ..node
        };
        self.announce(&woken);
        Ok(woken)
    }

    /// The caller's child `reference` names (a handle or a session id).
    pub fn resolve(&self, caller: &SessionId, reference: &str) -> Result<Node, Refused> {
        resolve_in(&self.lock(), caller, reference)
    }

    /// Cancels the caller's child `reference` names, and waits for it to end.
    pub async fn cancel(&self, caller: &SessionId, reference: &str) -> Result<Node, Refused> {
        let node = self.resolve(caller, reference)?;
        if node.status != Status::Running {
            return Ok(node);
        }
        let mut ends = self.ends.subscribe();
        node.cancel.cancel();
        loop {
            let now = self.resolve(caller, &node.session.0)?;
            if now.status != Status::Running {
                return Ok(now);
            }
            if ends.changed().await.is_err() {
                return Ok(now);
            }
        }
    }

    /// Cancels every running child of `parent` (and so theirs) and waits for them: a parent
    /// whose run ends leaves none running.
    pub async fn cancel_children(&self, parent: &SessionId) {
        let mut ends = self.ends.subscribe();
        loop {
            let running: Vec<Node> = self
                .lock()
                .nodes
                .iter()
                .filter(|n| &n.parent == parent && n.status == Status::Running)
                .cloned()
                .collect();
            if running.is_empty() {
                return;
            }
            for node in &running {
                node.cancel.cancel();
            }
            if ends.changed().await.is_err() {
                return;
            }
        }
    }

    /// How many children of `parent` are running.
    pub fn running_children(&self, parent: &SessionId) -> usize {
        self.lock()
            .nodes
            .iter()
            .filter(|n| &n.parent == parent && n.status == Status::Running)
            .count()
    }

    /// Whether a child of `parent` runs, or has ended and its notice is still to be shown.
    pub fn awaits(&self, parent: &SessionId) -> bool {
        let state = self.lock();
        state.pending.get(parent).is_some_and(|p| !p.is_empty())
            || state
                .nodes
                .iter()
                .any(|n| &n.parent == parent && n.status == Status::Running)
    }

    /// The completion notices `parent` has not yet been shown, oldest first.
    pub fn take_notices(&self, parent: &SessionId) -> Vec<String> {
        self.lock().pending.remove(parent).unwrap_or_default()
    }

    /// Waits until some child of the tree ends or `cancel` fires; false when cancelled.
    /// Returns at once when a notice for `parent` is already pending.
    pub async fn wait_for_change(&self, parent: &SessionId, cancel: &CancellationToken) -> bool {
        let mut ends = self.ends.subscribe();
        let ready = {
            let state = self.lock();
            state.pending.get(parent).is_some_and(|p| !p.is_empty())
                || state.mailbox.has(parent, true)
        };
        if ready || self.running_children(parent) == 0 {
            return true;
        }
        tokio::select! {
            changed = ends.changed() => changed.is_ok(),
            () = cancel.cancelled() => false,
        }
    }

    /// The children of `parent`, in the order they started.
    pub fn children(&self, parent: &SessionId) -> Vec<Node> {
        self.lock()
            .nodes
            .iter()
            .filter(|n| &n.parent == parent)
            .cloned()
            .collect()
    }

    fn finish(self: &Arc<Self>, id: &SessionId, end: RunEnd, usage: Usage) {
        let mut state = self.lock();
        let Some(node) = state.nodes.iter_mut().find(|n| &n.session == id) else {
            return;
        };
        node.status = Status::of(end.outcome);
        node.output = end.last_message.unwrap_or_default();
        if node.status != Status::Completed {
            if !node.output.is_empty() {
                node.output.push('\n');
            }
            node.output.push_str(&format!("[ended: {}]", end.reason));
        }
        crate::conversation::add_usage(&mut node.usage, &usage);
        let node = node.clone();
        state
            .pending
            .entry(node.parent.clone())
            .or_default()
            .push(notice::completion(
                &node.handle,
                node.status.as_str(),
                &node.output,
            ));
        // A message accepted while its last boundary was already behind it wakes it again.
        let owed = state.mailbox.has(id, true);
        drop(state);
        self.announce(&node);
        self.ends.send_modify(|n| *n += 1);
        if owed {
            let _ = self.wake(id);
        }
    }

    fn announce(&self, node: &Node) {
        self.observer.on_event(&AgentEvent::Subagent {
            handle: node.handle.clone(),
            session: node.session.0.clone(),
            agent_type: node.agent_type.clone(),
            status: node.status.as_str().to_owned(),
            usage: node.usage,
        });
    }

    pub(crate) fn type_named(&self, name: &str) -> Result<AgentType, Refused> {
        self.types
            .iter()
            .find(|t| t.name == name)
            .cloned()
            .ok_or_else(|| {
                let names: Vec<&str> = self.types.iter().map(|t| t.name.as_str()).collect();
                Refused::new(
                    "unknown_agent_type",
                    format!(
                        "no agent type `{name}`; the types are: {} (tackle agents lists them)",
                        names.join(", ")
                    ),
                )
            })
    }

    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A child the logs say existed, for [`Tree::restore`].
#[derive(Clone, Debug)]
pub struct RestoredNode {
    pub handle: String,
    pub session: SessionId,
    pub parent: SessionId,
    pub agent_type: String,
    pub description: String,
    pub depth: u32,
    pub status: Status,
    pub output: String,
    pub usage: Usage,
}

/// The caller's child named by `reference`, or the self-repairing refusal listing the
/// caller's children.
fn resolve_in(state: &State, caller: &SessionId, reference: &str) -> Result<Node, Refused> {
    let reference = reference.trim();
    let own = state.nodes.iter().filter(|n| &n.parent == caller);
    if let Some(node) = own
        .clone()
        .find(|n| n.handle == reference || n.session.0 == reference)
    {
        return Ok(node.clone());
    }
    let candidates: Vec<String> = own
        .map(|n| {
            format!(
                "- {} — {} — {} (session_id {})",
                n.handle,
                n.description,
                n.status.as_str(),
                n.session.0
            )
        })
        .collect();
    let listed = if candidates.is_empty() {
        "you have started no subagents in this session".to_owned()
    } else {
        format!("your subagents are:\n{}", candidates.join("\n"))
    };
    Err(Refused::new(
        "unknown_subagent",
        format!(
            "unknown subagent reference `{reference}`: give a handle or session id exactly as \
             a notice showed it; {listed}"
        ),
    ))
}

/// The child's session options from its type: its tools within the parent's (without the
/// delegation tools when `at_ceiling`: it may not start children of its own), its deny and
/// ask rules added to the parent's.
fn child_options(
    ty: &AgentType,
    handle: &str,
    catalog: &[String],
    at_ceiling: bool,
) -> ChildOptions {
    let delegating = |name: &String| crate::delegate::tools::NAMES.contains(&name.as_str());
    let kept = |name: &String| {
        let dropped = ty.disallowed_tools.contains(name) || (at_ceiling && delegating(name));
        !dropped
    };
    // send_message goes with every child the catalog offers it to: whether a message may
    // go out is the gate's `message:` rules' to decide, not the type's tool list.
    let messaging = crate::messaging::send_message::NAME.to_owned();
    let with_messaging = |names: &Vec<String>| {
        let mut names: Vec<String> = names.iter().filter(|n| kept(n)).cloned().collect();
        if catalog.contains(&messaging) && !names.contains(&messaging) && kept(&messaging) {
            names.push(messaging.clone());
        }
        names
    };
    let tools = match &ty.tools {
        Some(names) => ToolFilter::only(with_messaging(names)),
        None if ty.disallowed_tools.is_empty() && !at_ceiling => ToolFilter::All,
        None => ToolFilter::only(catalog.iter().filter(|n| kept(n)).cloned()),
    };
    let mut narrowing: Vec<Narrowing> = ty
        .permissions
        .deny
        .iter()
        .map(|p| Narrowing::Deny(p.clone()))
        .collect();
    narrowing.extend(ty.permissions.ask.iter().map(|p| Narrowing::Ask(p.clone())));
    ChildOptions {
        agent: Some(ty.name.clone()),
        tools,
        handle: Some(handle.to_owned()),
        narrowing,
    }
}

/// The first line of a prompt, cut to 80 characters: a description when none was given.
fn first_line(prompt: &str) -> String {
    let line = prompt.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let mut out: String = line.trim().chars().take(80).collect();
    if line.trim().chars().count() > 80 {
        out.push('…');
    }
    out
}

/// A child's observer: its tokens counted for the tree; its text and calls are its own.
struct ChildObserver {
    usage: Arc<Mutex<Usage>>,
}

impl Observer for ChildObserver {
    fn on_event(&self, event: &AgentEvent) {
        if let AgentEvent::Usage { usage, .. } = event {
            let mut total = self.usage.lock().unwrap_or_else(|p| p.into_inner());
            crate::conversation::add_usage(&mut total, usage);
        }
    }
}
