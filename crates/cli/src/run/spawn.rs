//! How `tackle run` and `tackle chat` build a subagent's loop: the same runtime (so the same
//! gate, approver and catalog, narrowed per child by its session), the parent's model unless
//! the type names one of the user's, the type's prompt with the environment, and the type's
//! turn bound. The tree opens the child's session; this fills in the rest.

use std::path::PathBuf;
use std::sync::Arc;

use tackle_agent::WatchdogSettings;
use tackle_agent::delegate::{AgentType, ModelChoice, Spawn};
use tackle_agent::prompt::Environment;
use tackle_agent::{
    AgentSetup, Bounds, DescriptionsSetting, ModelSetup, TaskBoundaries, Unobserved,
};
use tackle_config::models::ModelCatalog;
use tackle_llm::Provider;
use tackle_protocol::SessionId;
use tackle_runtime::{ForeignLogs, Runtime, Session};

/// What every child of one root is built from.
pub struct RunSpawn {
    pub runtime: Arc<Runtime>,
    /// The parent's provider and model, for types that inherit it.
    pub provider: Arc<dyn Provider>,
    pub model: ModelSetup,
    pub models: ModelCatalog,
    pub env: Environment,
    /// The root run's bounds: a child has the same, its type's turn bound in place of the
    /// root's when it sets one.
    pub bounds: Bounds,
    pub watchdog: WatchdogSettings,
    pub descriptions: DescriptionsSetting,
    pub tree: Arc<tackle_agent::delegate::Tree>,
    pub root: PathBuf,
    /// The run's skills, listed to a child whose catalog keeps the skill tool.
    pub skills: Arc<tackle_agent::skills::SkillSet>,
}

impl Spawn for RunSpawn {
    fn setup(&self, session: Session, agent_type: &AgentType) -> Result<AgentSetup, String> {
        let (provider, model) = match &agent_type.model {
            ModelChoice::Inherit => (self.provider.clone(), self.model.clone()),
            ModelChoice::Named(id) => {
                let choice = super::model::choose(&self.models, Some(id), None).map_err(|e| {
                    format!(
                        "agent type `{}` names model `{id}`: {e}; configure it or write `model: inherit`",
                        agent_type.name
                    )
                })?;
                let provider = choice.connect(0).map_err(|e| {
                    format!("agent type `{}`: connecting `{id}`: {e}", agent_type.name)
                })?;
                (provider, choice.setup)
            }
        };
        let specs: Vec<_> = self
            .runtime
            .offered(&session)
            .into_iter()
            .collect::<Vec<_>>();
        let mut system =
            tackle_agent::prompt::subagent_prompts(&agent_type.prompt, &specs, &self.env);
        tackle_agent::skills::listing::add_to(&mut system, &specs, &self.skills);
        let mut bounds = self.bounds.clone();
        if let Some(turns) = agent_type.max_turns {
            bounds.max_turns = Some(turns);
        }
        Ok(AgentSetup {
            runtime: self.runtime.clone(),
            session,
            provider,
            model,
            system,
            descriptions: self.descriptions,
            bounds,
            // The tree puts its own observer here (the child's tokens, counted).
            observer: Arc::new(Unobserved),
            boundaries: TaskBoundaries::new(),
            watchdog: self.watchdog,
            delegation: Some(self.tree.clone()),
        })
    }

    fn reopen(&self, session: &SessionId) -> Result<Session, String> {
        // Only a log this user's tackle wrote: a child is never continued from a foreign one.
        let key = crate::own_sessions::key()?;
        Session::resume(&self.root, &session.0, &key, ForeignLogs::Refuse)
            .map(|r| r.session)
            .map_err(|e| format!("reopening subagent session {}: {e}", session.0))
    }
}
