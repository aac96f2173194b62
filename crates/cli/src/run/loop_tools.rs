//! The catalog of an agent session: the configuration's, plus the tools the loop itself
//! provides. mark_task_done is offered unless `[checkpoint] mode = "operator"` keeps task
//! boundaries for the user (chat's /done); the same disabled and advertised rules hold for it
//! as for every tool. ask_user is offered when the front end has someone to answer it,
//! schedule_next_turn in an autonomous run, the delegation tools when `[delegation]
//! max_depth` lets the session start subagents, and the agentic wrappers when a small model is
//! connected, each only beside the tool it wraps; `skill` when there are skills.

use std::sync::Arc;

use tackle_agent::agentic::{
    AgenticFetchUrl, AgenticGrep, AgenticReadFile, AgenticResearch, SmallModel, Subtasks,
};
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
    small: Option<&SmallModel>,
    extra: Vec<Arc<dyn DynTool>>,
) -> anyhow::Result<(Catalog, Arc<TaskBoundaries>)> {
    if config.call_peer.is_some()
        && !extra
            .iter()
            .any(|t| t.name() == crate::daemon::call_peer::NAME)
    {
        anyhow::bail!(
            "[tools.call_peer] is enabled, but call_peer runs only in sessions of `tackle daemon` with a peer hub (--peer-hub, or --hub URL --name NAME); remove the setting here, or run the session on such a daemon"
        );
    }
    let boundaries = TaskBoundaries::new();
    let mut tools: Vec<Arc<dyn DynTool>> = extra;
    if let (Some(tree), Some(small)) = (tree, small) {
        tools.extend(agentic_tools(config, tree, small));
    }
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

/// The agentic wrappers whose underlying tool the catalog offers (agentic_research: any of the
/// read-only tools it may use), sharing one [`Subtasks`].
fn agentic_tools(config: &Config, tree: &Arc<Tree>, small: &SmallModel) -> Vec<Arc<dyn DynTool>> {
    let subtasks = Subtasks::new(tree.clone(), small.clone());
    let registered = tackle_config::host::builtin_config(config).registered;
    let offered = |name: &str| registered.iter().any(|r| r == name);
    let research = tackle_agent::agentic::research::TOOLS
        .iter()
        .any(|t| offered(t));
    let mut tools: Vec<Arc<dyn DynTool>> = Vec::new();
    if offered("read_file") {
        tools.push(Arc::new(AgenticReadFile::new(subtasks.clone())));
    }
    if offered("grep") {
        tools.push(Arc::new(AgenticGrep::new(subtasks.clone())));
    }
    if offered("fetch_url") {
        tools.push(Arc::new(AgenticFetchUrl::new(subtasks.clone())));
    }
    if research {
        tools.push(Arc::new(AgenticResearch::new(subtasks)));
    }
    tools
}
