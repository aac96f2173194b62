//! [`AgentBuilder`]: an [`Agent`] from its parts by name, the rest of [`AgentSetup`] at its
//! defaults, for a program that embeds the loop (`Agent::builder()`).
//!
//! Required: the runtime, the session, the provider, the model and the system prompt; a
//! missing one is an [`AgentBuildError`] naming every setter still to call. Defaulted: the
//! bounds (none), the watchdog ([`WatchdogSettings::default`]), the catalog form
//! ([`DescriptionsSetting::Auto`]), the observer ([`Unobserved`]), fresh task boundaries, and no
//! delegation tree.
//!
//! The builder also fills the [`LateAgent`] slots given to [`AgentBuilder::bind`]: a tool
//! registered in the runtime before the agent existed receives, once it is built, the handle it
//! runs subtasks through ([`crate::late`]).

use std::sync::Arc;

use tackle_llm::Provider;
use tackle_runtime::{Runtime, Session};

use crate::bounds::Bounds;
use crate::delegate::Tree;
use crate::events::{Observer, Unobserved};
use crate::late::{AgentHandle, LateAgent};
use crate::model::ModelSetup;
use crate::prompt::SystemPrompt;
use crate::run::{Agent, AgentSetup};
use crate::task_done::TaskBoundaries;
use crate::watchdog::WatchdogSettings;
use crate::window::DescriptionsSetting;

/// Assembles an [`Agent`]:
/// `Agent::builder().runtime(rt).session(s).provider(p).model(m).system("…").build()?`.
#[must_use = "a builder does nothing until `build` is called"]
#[derive(Default)]
pub struct AgentBuilder {
    runtime: Option<Arc<Runtime>>,
    session: Option<Session>,
    provider: Option<Arc<dyn Provider>>,
    model: Option<ModelSetup>,
    system: Option<SystemPrompt>,
    descriptions: DescriptionsSetting,
    bounds: Bounds,
    observer: Option<Arc<dyn Observer>>,
    boundaries: Option<Arc<TaskBoundaries>>,
    watchdog: WatchdogSettings,
    delegation: Option<Arc<Tree>>,
    slots: Vec<LateAgent>,
}

/// Why [`AgentBuilder::build`] made no agent.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AgentBuildError {
    /// Required parts were not given.
    #[error("the agent is missing {}; call {} on Agent::builder()", .setters.join(", "), calls(.setters))]
    Missing {
        /// The setters still to call, in the order [`AgentBuilder`] lists them.
        setters: Vec<&'static str>,
    },
    /// A [`LateAgent`] slot given to [`AgentBuilder::bind`] holds an agent already.
    #[error(
        "a LateAgent slot passed to .bind() already holds an agent; give each agent a slot of \
         its own (LateAgent::new())"
    )]
    AlreadyBound,
}

fn calls(setters: &[&'static str]) -> String {
    setters
        .iter()
        .map(|s| format!(".{s}(…)"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl Agent {
    /// An [`AgentBuilder`] with nothing set.
    pub fn builder() -> AgentBuilder {
        AgentBuilder::default()
    }
}

impl AgentBuilder {
    /// The runtime whose catalog and gate every call goes through (a `Runtime` or an
    /// `Arc<Runtime>`).
    pub fn runtime(mut self, runtime: impl Into<Arc<Runtime>>) -> Self {
        self.runtime = Some(runtime.into());
        self
    }

    /// The session the conversation is recorded in.
    pub fn session(mut self, session: Session) -> Self {
        self.session = Some(session);
        self
    }

    /// The provider the model is asked through.
    pub fn provider(mut self, provider: Arc<dyn Provider>) -> Self {
        self.provider = Some(provider);
        self
    }

    /// The model: its name, catalog entry, media family and output limit.
    pub fn model(mut self, model: ModelSetup) -> Self {
        self.model = Some(model);
        self
    }

    /// The system prompt (one text for both catalog forms, or a [`SystemPrompt`]).
    pub fn system(mut self, system: impl Into<SystemPrompt>) -> Self {
        self.system = Some(system.into());
        self
    }

    /// Which catalog form is sent (default [`DescriptionsSetting::Auto`]: by the window).
    pub fn descriptions(mut self, descriptions: DescriptionsSetting) -> Self {
        self.descriptions = descriptions;
        self
    }

    /// Turns, tokens, cost and wall clock of a run (default: none).
    pub fn bounds(mut self, bounds: Bounds) -> Self {
        self.bounds = bounds;
        self
    }

    /// Told of the loop's events (default: no one).
    pub fn observer(mut self, observer: Arc<dyn Observer>) -> Self {
        self.observer = Some(observer);
        self
    }

    /// Where mark_task_done, when the catalog offers it, leaves its boundaries; share the one
    /// the tool was built with (default: boundaries of the agent's own).
    pub fn boundaries(mut self, boundaries: Arc<TaskBoundaries>) -> Self {
        self.boundaries = Some(boundaries);
        self
    }

    /// The no-op and repeat watchdog ([`WatchdogSettings::default`] unless set).
    pub fn watchdog(mut self, watchdog: WatchdogSettings) -> Self {
        self.watchdog = watchdog;
        self
    }

    /// The delegation tree the session belongs to, when the catalog offers delegation
    /// (default: none).
    pub fn delegation(mut self, tree: Arc<Tree>) -> Self {
        self.delegation = Some(tree);
        self
    }

    /// Fills `slot` with this agent's [`AgentHandle`] when it is built, for a tool that was
    /// registered before the agent existed.
    pub fn bind(mut self, slot: &LateAgent) -> Self {
        self.slots.push(slot.clone());
        self
    }

    /// The agent, starting a new conversation in the session; or the setters still to call.
    pub fn build(self) -> Result<Agent, AgentBuildError> {
        let setup = self.setup()?;
        Ok(Agent::new(setup))
    }

    fn setup(self) -> Result<AgentSetup, AgentBuildError> {
        let missing: Vec<&'static str> = [
            ("runtime", self.runtime.is_none()),
            ("session", self.session.is_none()),
            ("provider", self.provider.is_none()),
            ("model", self.model.is_none()),
            ("system", self.system.is_none()),
        ]
        .into_iter()
        .filter_map(|(name, absent)| absent.then_some(name))
        .collect();
        let (Some(runtime), Some(session), Some(provider), Some(model), Some(system)) = (
            self.runtime,
            self.session,
            self.provider,
            self.model,
            self.system,
        ) else {
            return Err(AgentBuildError::Missing { setters: missing });
        };
        if self.slots.iter().any(LateAgent::is_bound) {
            return Err(AgentBuildError::AlreadyBound);
        }
        let handle = AgentHandle::new(
            runtime.clone(),
            session.clone(),
            provider.clone(),
            model.clone(),
        );
        for slot in &self.slots {
            if !slot.fill(handle.clone()) {
                return Err(AgentBuildError::AlreadyBound);
            }
        }
        Ok(AgentSetup {
            runtime,
            session,
            provider,
            model,
            system,
            descriptions: self.descriptions,
            bounds: self.bounds,
            observer: self.observer.unwrap_or_else(|| Arc::new(Unobserved)),
            boundaries: self.boundaries.unwrap_or_default(),
            watchdog: self.watchdog,
            delegation: self.delegation,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_missing_part_is_named_with_its_setter() {
        let err = Agent::builder().system("hi").build().err();
        assert_eq!(
            err,
            Some(AgentBuildError::Missing {
                setters: vec!["runtime", "session", "provider", "model"],
            })
        );
        let text = err.map(|e| e.to_string()).unwrap_or_default();
        assert!(
            text.contains(".runtime(…), .session(…), .provider(…), .model(…)"),
            "{text}"
        );
    }
}
