//! Late binding (seed 003, "Custom tools"): a tool registered in the runtime before the agent
//! exists holds a [`LateAgent`] slot; [`crate::AgentBuilder::bind`] fills it with the built
//! agent's [`AgentHandle`], through which the tool runs a [`Subtask`]: a side question or a
//! piece of work on the agent's provider and model, as a child run.
//!
//! A subtask runs as the agentic wrappers' research does (`crate::agentic::research`): a child
//! session from `Session::open_subagent` (the agent's root, store, posture and policy, its own
//! log naming the agent's session as parent and the subtask's name as its agent, its catalog cut
//! to the tools the subtask names), and a fresh [`Agent`] loop over it, bounded in turns. Its
//! calls pass the same gate and are recorded in its own log.
//!
//! Key decision: the handle holds the agent's parts (runtime, session, provider, model), never
//! the [`Agent`] itself. The agent is borrowed mutably for the whole of the turn whose batch
//! runs the tool, so a handle to it could not be used from inside that batch; a child run needs
//! nothing of the running conversation. Rejected: a handle that queues input into the running
//! conversation, which would make the tool's answer wait on the turn that is waiting on it.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use tackle_llm::Provider;
use tackle_protocol::{RunOutcome, SessionId};
use tackle_runtime::{ChildOptions, Runtime, RuntimeError, Session, ToolFilter};
use tokio_util::sync::CancellationToken;

use crate::bounds::Bounds;
use crate::events::Unobserved;
use crate::model::ModelSetup;
use crate::prompt::{SUBAGENT_NOTE, SystemPrompt};
use crate::run::{Agent, AgentSetup, RunEnd};
use crate::task_done::TaskBoundaries;
use crate::watchdog::WatchdogSettings;
use crate::window::DescriptionsSetting;

/// The most model turns of a subtask unless [`Subtask::max_turns`] says otherwise.
pub const SUBTASK_MAX_TURNS: u32 = 8;

/// A slot for the agent a tool is registered before: cloned into the tool, filled by
/// [`crate::AgentBuilder::bind`] when the agent is built. Clones share the slot.
#[derive(Clone, Default)]
pub struct LateAgent(Arc<OnceLock<AgentHandle>>);

/// A [`LateAgent`] read before its agent was built.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "no agent is bound to this tool yet; pass its LateAgent to Agent::builder().bind(&slot) \
     and build the agent before running the tool"
)]
pub struct NotBound;

impl LateAgent {
    /// An empty slot.
    pub fn new() -> Self {
        Self::default()
    }

    /// The handle of the agent bound to the slot.
    pub fn get(&self) -> Result<&AgentHandle, NotBound> {
        self.0.get().ok_or(NotBound)
    }

    pub(crate) fn is_bound(&self) -> bool {
        self.0.get().is_some()
    }

    /// Puts `handle` in the slot; false when it held one already.
    pub(crate) fn fill(&self, handle: AgentHandle) -> bool {
        self.0.set(handle).is_ok()
    }
}

/// What a built agent lends the tools bound to it: its runtime, session, provider and model,
/// to run [`Subtask`]s on. Clones share them.
#[derive(Clone)]
pub struct AgentHandle(Arc<Parts>);

struct Parts {
    runtime: Arc<Runtime>,
    session: Session,
    provider: Arc<dyn Provider>,
    model: ModelSetup,
}

/// One child run: a task for the model, under a name its log records.
#[derive(Clone, Debug)]
pub struct Subtask {
    name: String,
    task: String,
    system: SystemPrompt,
    tools: Vec<String>,
    max_turns: u32,
}

/// A subtask's answer: its last message, and the session it ran in.
#[derive(Clone, Debug, PartialEq)]
pub struct SubtaskAnswer {
    /// The model's last message.
    pub answer: String,
    /// The child session.
    pub session: SessionId,
    /// The child session's event log, which holds the subtask's conversation and calls.
    pub log: PathBuf,
}

/// Why a subtask gave no answer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SubtaskError {
    /// The child session could not be opened.
    #[error("opening the subtask's session: {0}")]
    Open(#[from] RuntimeError),
    /// The run ended without a last message (a bound, a provider failure, a cancellation).
    #[error(
        "the subtask in session {} ended without an answer ({:?}: {}); its log says what \
         happened",
        .session.0, .end.outcome, .end.reason
    )]
    Unanswered {
        /// The child session.
        session: SessionId,
        /// How its run ended.
        end: RunEnd,
    },
}

impl Subtask {
    /// `task` for the model, recorded as the child session's agent `name`. By default it is
    /// offered no tools, told its last message is the answer, and has
    /// [`SUBTASK_MAX_TURNS`] turns.
    pub fn new(name: impl Into<String>, task: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            task: task.into(),
            system: SystemPrompt::from(SUBAGENT_NOTE),
            tools: Vec::new(),
            max_turns: SUBTASK_MAX_TURNS,
        }
    }

    /// Its system prompt (default: the note every subagent gets, that its last message is its
    /// answer).
    pub fn system(mut self, system: impl Into<SystemPrompt>) -> Self {
        self.system = system.into();
        self
    }

    /// The tools of the agent's catalog it may call (default: none). Leave out the tool that
    /// runs the subtask unless it should recurse.
    pub fn tools<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.tools = names.into_iter().map(Into::into).collect();
        self
    }

    /// The most model turns it may take.
    pub fn max_turns(mut self, turns: u32) -> Self {
        self.max_turns = turns;
        self
    }
}

impl AgentHandle {
    pub(crate) fn new(
        runtime: Arc<Runtime>,
        session: Session,
        provider: Arc<dyn Provider>,
        model: ModelSetup,
    ) -> Self {
        Self(Arc::new(Parts {
            runtime,
            session,
            provider,
            model,
        }))
    }

    /// The agent's session, under which subtasks' sessions are opened.
    pub fn session(&self) -> &Session {
        &self.0.session
    }

    /// Runs `subtask` as a child run of the agent's session and returns its last message.
    /// Cancelling `cancel` (pass the calling tool's `cx.cancel`) ends it.
    pub async fn run_subtask(
        &self,
        subtask: Subtask,
        cancel: CancellationToken,
    ) -> Result<SubtaskAnswer, SubtaskError> {
        let parts = &self.0;
        let session = parts.session.open_subagent(ChildOptions {
            agent: Some(subtask.name),
            tools: ToolFilter::only(subtask.tools),
            handle: None,
            narrowing: Vec::new(),
        })?;
        let setup = AgentSetup {
            runtime: parts.runtime.clone(),
            session: session.clone(),
            provider: parts.provider.clone(),
            model: parts.model.clone(),
            system: subtask.system,
            descriptions: DescriptionsSetting::Auto,
            bounds: Bounds {
                max_turns: Some(subtask.max_turns),
                ..Bounds::default()
            },
            observer: Arc::new(Unobserved),
            boundaries: TaskBoundaries::new(),
            watchdog: WatchdogSettings::default(),
            delegation: None,
        };
        let end = Agent::new(setup).run(Some(&subtask.task), cancel).await;
        let id = session.id().clone();
        match (&end.outcome, &end.last_message) {
            (RunOutcome::Finished, Some(answer)) if !answer.trim().is_empty() => {
                Ok(SubtaskAnswer {
                    answer: answer.clone(),
                    session: id,
                    log: session.event_log_path(),
                })
            }
            _ => Err(SubtaskError::Unanswered { session: id, end }),
        }
    }
}
