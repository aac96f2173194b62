//! The catalog of an agent session: the configuration's, plus the tools the loop itself
//! provides. mark_task_done is offered unless `[checkpoint] mode = "operator"` keeps task
//! boundaries for the user (chat's /done); the same disabled and advertised rules hold for it
//! as for every tool.

use std::sync::Arc;

use tackle_agent::{MarkTaskDone, TaskBoundaries};
use tackle_config::Config;
use tackle_config::loop_settings::CheckpointMode;
use tackle_runtime::Catalog;
use tackle_tool::DynTool;

/// The session catalog and where its mark_task_done leaves boundaries for the loop.
pub fn catalog(config: &Config) -> anyhow::Result<(Catalog, Arc<TaskBoundaries>)> {
    let boundaries = TaskBoundaries::new();
    let mut tools: Vec<Arc<dyn DynTool>> = Vec::new();
    if config.agent_loop.checkpoint == CheckpointMode::Model {
        tools.push(Arc::new(MarkTaskDone::new(boundaries.clone())));
    }
    Ok((
        tackle_config::host::catalog_with(config, tools)?,
        boundaries,
    ))
}
