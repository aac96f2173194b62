//! How every front end builds what a session runs on: the configuration's catalog (built-ins,
//! the runtime's own tools, the goal tools while a goal is open, the MCP servers folder trust
//! lets start) and its gate (the compiled policy, with the plan gate in front under
//! `plan_mode = "required"`).

use std::sync::Arc;

use tackle_runtime::{Catalog, GateHook, PlanGate, PolicyGate, Session};
use tackle_tool::{DynTool, PlanMode};
use tackle_tools::BuiltinConfig;

use crate::error::{ConfigError, Result};
use crate::load::Config;

/// The catalog this configuration offers: built-ins minus disabled tools and minus tools no
/// rule could ever allow, with descriptions rewritten to name only what is registered.
pub fn catalog(config: &Config) -> Result<Catalog> {
    catalog_with(config, Vec::new())
}

/// [`catalog`] with tools the host itself provides (the agent loop's mark_task_done), held to
/// the same rules: a disabled tool, or one no rule could allow, is left out.
pub fn catalog_with(config: &Config, host_tools: Vec<Arc<dyn DynTool>>) -> Result<Catalog> {
    let tools_config = builtin_config(config);
    let mut registered = tools_config.registered.clone();
    let mut tools: Vec<Arc<dyn DynTool>> =
        with_runtime_tools(config, tackle_tools::builtin_tools(&tools_config))
            .into_iter()
            .filter(|t| registered.iter().any(|r| r == t.name()))
            .collect();
    for tool in host_tools.into_iter().filter(|t| offered(config, t)) {
        registered.push(tool.name().to_owned());
        tools.push(tool);
    }
    tools.extend(mcp_tools(config, &registered));
    let catalog = Catalog::build(tools, tackle_tools::BUILTIN_TOOL_NAMES)
        .map_err(|e| ConfigError::msg(format!("building the catalog: {e}")))?;
    // This host registered the tools, so it reports which of them wait for a plan.
    config.plans.report_gated(catalog.plan_gated());
    Ok(catalog)
}

/// Whether a tool is offered: not disabled, and some rule could allow it.
fn offered(config: &Config, tool: &Arc<dyn DynTool>) -> bool {
    let disabled = config
        .settings
        .disabled_tools
        .iter()
        .any(|t| t.value == tool.name());
    !disabled
        && config
            .policy
            .advertises(tool.name(), tool.permission_actions())
}

/// The gate every call passes: the compiled policy, and under `plan_mode = "required"` the
/// plan gate in front of it.
pub fn gate(config: &Config) -> Arc<dyn GateHook> {
    gate_maker(config)(config.policy.mode())
}

/// What builds [`gate`] in any permission mode, for a front end whose sessions switch modes
/// (an editor's mode menu): it holds the policy and the plan book, not the configuration.
pub fn gate_maker(config: &Config) -> impl Fn(tackle_gate::Mode) -> Arc<dyn GateHook> + use<> {
    let (policy, plan_mode, plans) = (
        config.policy.clone(),
        config.plan_mode,
        config.plans.clone(),
    );
    move |mode| {
        let mut policy = policy.clone();
        policy.set_mode(mode);
        let policy: Arc<dyn GateHook> = Arc::new(PolicyGate::new(policy));
        match plan_mode {
            PlanMode::Required => Arc::new(PlanGate::new(policy, plans.clone())),
            PlanMode::Advisory | PlanMode::Off => policy,
        }
    }
}

/// The tools of the third-party MCP servers in `.agents/mcp.json` that folder trust lets start.
/// A server that cannot start is reported on stderr and costs only its own tools.
fn mcp_tools(config: &Config, registered: &[String]) -> Vec<Arc<dyn DynTool>> {
    let mut taken: Vec<&str> = registered.iter().map(String::as_str).collect();
    taken.extend(tackle_tools::BUILTIN_TOOL_NAMES.iter().copied());
    let (tools, problems) = tackle_mcp::client::start_servers(
        config.mcp_servers.clone(),
        &config.root,
        &taken,
        &config.process_env,
        &crate::mcp_scope::tokens(),
    );
    for problem in problems {
        eprintln!("tackle: {problem}");
    }
    let disabled = |name: &str| {
        config
            .settings
            .disabled_tools
            .iter()
            .any(|t| t.value == name)
    };
    tools
        .into_iter()
        .filter(|t| !disabled(t.name()) && config.policy.advertises(&t.gate_name(), &[]))
        .map(|t| t as Arc<dyn DynTool>)
        .collect()
}

/// The tools the runtime itself provides, added to the built-ins: retrieve_raw undoes digests,
/// so it exists exactly when digests are on.
fn with_runtime_tools(config: &Config, mut tools: Vec<Arc<dyn DynTool>>) -> Vec<Arc<dyn DynTool>> {
    if config.runtime.digests {
        tools.push(Arc::new(tackle_runtime::RetrieveRaw));
    }
    tools.extend(goal_tools(config));
    tools
}

/// goal_get and goal_update, offered exactly when the project's goal is active or paused as
/// the catalog is built (run admission, seed 000); a later change of the goal's lifecycle does
/// not change an admitted catalog.
fn goal_tools(config: &Config) -> Vec<Arc<dyn DynTool>> {
    let book = Arc::new(tackle_goals::GoalBook::new(&Session::store_dir_for(
        &config.root,
    )));
    match book.current() {
        Ok(Some(goal)) if goal.status.offers_tools() => vec![
            Arc::new(tackle_goals::GoalGet::new(book.clone())),
            Arc::new(tackle_goals::GoalUpdate::new(book)),
        ],
        Ok(_) => Vec::new(),
        Err(e) => {
            eprintln!("tackle: goal tools not offered: {e}");
            Vec::new()
        }
    }
}

/// The built-in tools' configuration, with the names of the tools that will be offered.
pub fn builtin_config(config: &Config) -> BuiltinConfig {
    let offered = |t: &Arc<dyn DynTool>| offered(config, t);
    // Two passes: learn which tools will be offered, then build them knowing that, so no tool
    // refers the model to one that is absent.
    let base = config.builtin();
    let registered: Vec<String> = with_runtime_tools(config, tackle_tools::builtin_tools(&base))
        .iter()
        .filter(|t| offered(t))
        .map(|t| t.name().to_owned())
        .collect();
    BuiltinConfig { registered, ..base }
}
