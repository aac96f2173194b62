//! agentic_research's subtask: the agent loop itself, on the small model, in the subtask's
//! session, offered only the read-only tools the parent has, for at most [`MAX_TURNS`] turns.
//! Its calls are the session's own calls, gated and recorded like any; its last message is
//! the answer.
//!
//! The loop is built by the front end's [`Spawn`], as a subagent's is (the runtime, the
//! prompt with the tools and project instructions, the bounds), from a hidden agent type no
//! model can name in delegate_subagent; the wrapper then puts the small model in, an observer
//! that counts its tokens, and no delegation: a subtask starts no subagents and takes no
//! messages.

use std::sync::{Arc, Mutex};

use tackle_protocol::{RunOutcome, Usage};
use tackle_runtime::Session;
use tokio_util::sync::CancellationToken;

use crate::agentic::exchange::SmallModel;
use crate::agentic::prompt;
use crate::delegate::{AgentType, ModelChoice, Origin, Overlay, Spawn};
use crate::events::{AgentEvent, Observer};
use crate::run::Agent;

/// The most model turns of one research subtask.
pub const MAX_TURNS: u32 = 8;

/// The tools a research subtask may use, those of them its parent is offered.
pub const TOOLS: &[&str] = &[
    "read_file",
    "read_many_files",
    "list_dir",
    "stat",
    "glob",
    "grep",
    "view_file_outline",
    "json_query",
    "fetch_url",
];

/// The research subtask's hidden type.
pub fn agent_type(name: &str) -> AgentType {
    AgentType {
        name: name.to_owned(),
        description: "Researches a question with read-only tools for another agent.".to_owned(),
        prompt: prompt::RESEARCH.to_owned(),
        tools: Some(TOOLS.iter().map(|t| (*t).to_owned()).collect()),
        disallowed_tools: Vec::new(),
        model: ModelChoice::Inherit,
        max_turns: Some(MAX_TURNS),
        permissions: Overlay::default(),
        origin: Origin::BuiltIn,
    }
}

/// How a research run ended without an answer.
pub struct Unanswered {
    pub why: String,
    pub cancelled: bool,
    pub usage: Usage,
}

/// Runs the research loop in `subtask` and returns its answer and its tokens.
pub async fn research(
    spawn: &dyn Spawn,
    subtask: Session,
    small: &SmallModel,
    ty: &AgentType,
    task: String,
    cancel: CancellationToken,
) -> Result<(String, Usage), Unanswered> {
    let usage = Arc::new(Mutex::new(Usage::default()));
    let spent = || *usage.lock().unwrap_or_else(|p| p.into_inner());
    let mut setup = spawn.setup(subtask, ty).map_err(|why| Unanswered {
        why: format!("the research subtask could not be set up: {why}"),
        cancelled: false,
        usage: Usage::default(),
    })?;
    setup.provider = small.provider.clone();
    setup.model = small.model.clone();
    setup.observer = Arc::new(Spend {
        usage: usage.clone(),
    });
    setup.delegation = None;
    setup.bounds.max_turns = Some(ty.max_turns.unwrap_or(MAX_TURNS));
    let end = Agent::new(setup).run(Some(&task), cancel).await;
    let last = end.last_message.filter(|m| !m.trim().is_empty());
    match (end.outcome, last) {
        (RunOutcome::Finished, Some(answer)) => Ok((answer, spent())),
        (outcome, last) => {
            let said = last
                .map(|m| format!("; its last words: {}", m.trim()))
                .unwrap_or_default();
            Err(Unanswered {
                why: format!("the research ended without an answer: {}{said}", end.reason),
                cancelled: outcome == RunOutcome::Cancelled,
                usage: spent(),
            })
        }
    }
}

/// Counts the research loop's tokens; its text and calls are its own.
struct Spend {
    usage: Arc<Mutex<Usage>>,
}

impl Observer for Spend {
    fn on_event(&self, event: &AgentEvent) {
        if let AgentEvent::Usage { usage, .. } = event {
            let mut total = self.usage.lock().unwrap_or_else(|p| p.into_inner());
            crate::conversation::add_usage(&mut total, usage);
        }
    }
}
