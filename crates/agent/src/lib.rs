//! The agent loop (`tackle-agent`): a session's conversation with a model, driven turn by turn
//! through the runtime's catalog and gate, recorded in the session's own event log so that a
//! crash or a Ctrl-C at any point can be resumed.
//!
//! Owns: the records of the conversation ([`record`], shapes in `tackle_protocol`), the
//! rebuild of a conversation from them ([`rebuild`]), the turn ([`turn`]) and the loop
//! ([`run`]), its bounds ([`bounds`]), the system prompt and project instructions
//! ([`prompt`]), the context window ([`context`], [`checkpoint`]), the loop's own tools
//! ([`task_done`]), the watchdog over their results ([`watchdog`]), what front ends observe
//! ([`events`]), the delegation tree's children ([`delegate`]) and messages ([`messaging`]),
//! the agentic wrappers' subtasks on the small model ([`agentic`]), the embedder's
//! `Agent::builder()` (`builder.rs`) and the late binding of a tool to the agent it serves
//! ([`late`]: a child run on the agent's model, as the research subtask runs).
//!
//! **Refuses** to run a tool itself, check a permission, truncate output (the runtime's
//! layers do, through `Runtime::run_batch`), to know a vendor's JSON (`tackle-llm`) or to read
//! configuration files (the front end builds the runtime, the provider and the model entry).
//!
//! Key decision: the session log is the conversation. Every model turn and every batch is
//! recorded before the loop acts on it, and [`rebuild`] applies the same records through the
//! same functions the live loop uses; rejected: a separate transcript file, which a crash can
//! leave disagreeing with the calls the log says ran.

pub mod agentic;
pub mod ask_user;
pub mod autonomous;
pub mod batch;
pub mod bounds;
mod builder;
pub mod checkpoint;
pub mod context;
pub mod conversation;
pub mod delegate;
mod error;
pub mod events;
pub mod late;
pub mod messaging;
pub mod model;
pub mod prompt;
pub mod rebuild;
pub mod record;
pub mod run;
pub mod schedule;
pub mod skills;
pub mod task_done;
pub mod text_calls;
pub mod turn;
pub mod wake_record;
pub mod watchdog;
pub mod window;

pub use ask_user::{Answer, AskUser, Prompter, Question};
pub use autonomous::{
    AutonomyBounds, Inbox, Scheduler, SleepScheduler, Woken, run_autonomous, woken_input,
};
pub use bounds::Bounds;
pub use builder::{AgentBuildError, AgentBuilder};
pub use conversation::Conversation;
pub use error::AgentError;
pub use events::{
    AgentEvent, CallEvents, ObservedApprover, Observer, SubtaskUsage, ToolResultView, Unobserved,
};
pub use late::{AgentHandle, LateAgent, NotBound, Subtask, SubtaskAnswer, SubtaskError};
pub use model::ModelSetup;
pub use prompt::SystemPrompt;
pub use rebuild::{INTERRUPTED, Rebuilt, rebuild};
pub use run::{Agent, AgentSetup, Compacted, RunEnd, Steering};
pub use schedule::{ScheduleNextTurn, WakeRequest, Wakes};
pub use task_done::{MarkTaskDone, TaskBoundaries};
pub use watchdog::{WatchdogMode, WatchdogSettings};
pub use window::{DescriptionsSetting, Window, WindowSource};
