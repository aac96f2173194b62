//! The catalog of an agent session: the configuration's, plus the tools the loop itself
//! provides. mark_task_done is offered unless `[checkpoint] mode = "operator"` keeps task
//! boundaries for the user (chat's /done); the same disabled and advertised rules hold for it
//! as for every tool. ask_user is offered when the front end has someone to answer it,
//! schedule_next_turn in an autonomous run, and the delegation tools when `[delegation]
//! max_depth` lets the session start subagents, and `skill` when there are skills.

use std::sync::Arc;

use tackle_agent::delegate::{CancelSubagent, DelegateSubagent, GetSubagentResult, Tree};
use tackle_agent::messaging::SendMessage;
use tackle_agent::skills::SkillTool;
use tackle_agent::{AskUser, MarkTaskDone, Prompter, ScheduleNextTurn, TaskBoundaries, Wakes};
use tackle_config::Config;
use tackle_config::loop_settings::CheckpointMode;
use tackle_runtime::Catalog;
use tackle_tool::DynTool;

/// The session catalog and where its mark_task_done leaves boundaries for the loop.
pub fn catalog(
    config: &Config,
    prompter: Option<Arc<dyn Prompter>>,
    wakes: Option<Arc<Wakes>>,
    tree: Option<&Arc<Tree>>,
) -> anyhow::Result<(Catalog, Arc<TaskBoundaries>)> {
    let boundaries = TaskBoundaries::new();
    let mut tools: Vec<Arc<dyn DynTool>> = Vec::new();
    if let Some(tree) = tree.filter(|t| t.limits().max_depth > 0) {
        tools.push(Arc::new(DelegateSubagent::new(tree.clone())));
        tools.push(Arc::new(GetSubagentResult::new(tree.clone())));
        tools.push(Arc::new(CancelSubagent::new(tree.clone())));
        // Offered only where a `message` allow or ask rule exists (the gate's advertising).
        tools.push(Arc::new(SendMessage::new(tree.clone(), config.messaging)));
    }
    if !config.skills.set().is_empty() {
        tools.push(Arc::new(SkillTool::new(
            config.skills.set().clone(),
            tree.cloned(),
        )));
    }
    if let Some(wakes) = wakes {
        tools.push(Arc::new(ScheduleNextTurn::new(wakes)));
    }
    if let Some(prompter) = prompter {
        tools.push(Arc::new(AskUser::new(prompter)));
    }
    if config.agent_loop.checkpoint == CheckpointMode::Model {
        tools.push(Arc::new(MarkTaskDone::new(boundaries.clone())));
    }
    Ok((
        tackle_config::host::catalog_with(config, tools)?,
        boundaries,
    ))
}
