//! The built-in tools. Each tool is a file named after it; the shared pieces (directory
//! listing, line paging) are modules of their own, and path confinement is the `tackle-fs`
//! crate.
//!
//! Refuses to own: permission checks, truncation, retention and event recording — a tool here
//! declares what it touches in `prepare` and produces output in `execute`; the runtime decides
//! the rest.
//!
//! Key decision: every path a model passes is resolved lexically against the session root in
//! `prepare` (so the gate sees the normalized root-relative path), and `execute` opens it only
//! through a `tackle_fs::Root` handle, which refuses symlinks and races that lead outside.

pub mod alert;
pub mod bash;
pub mod bash_stdin;
pub mod delete_file;
pub mod edit;
pub mod edit_file;
pub mod fetch_url;
pub mod glob;
pub mod grep;
pub mod ignore_files;
pub mod json_query;
pub mod list;
pub mod list_dir;
pub mod media;
#[cfg(feature = "outline")]
pub mod outline;
pub mod page;
pub mod path_keys;
pub mod read_file;
pub mod read_many_files;
pub mod record_plan;
pub mod shell;
pub mod stack;
pub mod stat;
pub mod survey_walk;
pub mod todo;
pub mod wait_and_verify;
pub mod walk;
pub mod write_file;

use std::path::Path;
use std::sync::Arc;

use tackle_fs::{FsError, Root};
use tackle_tool::protocol::ErrorCode;
use tackle_tool::{DynTool, PlanMode, ToolError};

pub use alert::{Alert, AlertTarget};
pub use bash::{Bash, SearchGate, SearchGateMode};
pub use bash_stdin::BashStdin;
pub use delete_file::DeleteFile;
pub use edit_file::EditFile;
pub use fetch_url::{FetchSettings, FetchUrl};
pub use glob::Glob;
pub use grep::Grep;
pub use json_query::JsonQuery;
pub use list_dir::ListDir;
pub use read_file::ReadFile;
pub use read_many_files::ReadManyFiles;
pub use record_plan::{PlanBook, RecordPlan};

pub use stat::Stat;
pub use todo::Todo;
pub use wait_and_verify::{WaitAndVerify, WaitSettings};
pub use write_file::WriteFile;

/// Every built-in tool name of the standard catalog (DESIGN.md §5), implemented or not. Used to
/// validate `--disable-tools`/`tools.disable` (a typo fails loudly) and to drop description
/// sentences that name a built-in this build does not register.
pub const BUILTIN_TOOL_NAMES: &[&str] = &[
    "read_file",
    "read_many_files",
    "view_file_outline",
    "write_file",
    "edit_file",
    "delete_file",
    "stat",
    "list_dir",
    "glob",
    "grep",
    "json_query",
    "fetch_url",
    "alert",
    "bash",
    "bash_stdin",
    "todo",
    "record_plan",
    "wait_and_verify",
    "retrieve_raw",
    "ask_user",
    "mark_task_done",
    "goal_get",
    "goal_update",
    "delegate_subagent",
    "get_subagent_result",
    "cancel_subagent",
    "send_message",
    "load_skill",
    "call_peer",
    "schedule_next_turn",
];

/// The standard catalog's built-in tools, in catalog order.
pub fn builtin_tools(config: &BuiltinConfig) -> Vec<Arc<dyn DynTool>> {
    let mut tools: Vec<Arc<dyn DynTool>> = vec![
        Arc::new(ReadFile::new().with_media_limit(config.media_max_bytes)),
        Arc::new(ReadManyFiles),
        Arc::new(WriteFile),
        Arc::new(EditFile),
        Arc::new(DeleteFile),
        Arc::new(Stat),
        Arc::new(ListDir),
        Arc::new(Glob),
        Arc::new(Grep),
    ];
    #[cfg(feature = "outline")]
    tools.push(Arc::new(outline::ViewFileOutline));
    tools.push(Arc::new(JsonQuery));
    tools.push(Arc::new(Todo::new()));
    tools.push(Arc::new(WaitAndVerify::new(config.wait.clone())));
    tools.push(Arc::new(Bash::new(
        config.search_gate(),
        config.process_env.clone(),
        config.stdin.clone(),
        config.bash_prestart,
    )));
    // Only beside bash: without it no interactive call can exist to feed.
    if config.registered.is_empty() || config.registered.iter().any(|n| n == "bash") {
        tools.push(Arc::new(BashStdin::new(config.stdin.clone())));
    }
    // Offered only when the URL scope allows something (the catalog also asks the policy).
    if !config.url_scope.is_empty() {
        tools.push(Arc::new(FetchUrl::new(
            &config.url_scope,
            config.fetch.clone(),
        )));
    }
    if let Some(alert) = Alert::new(config.alert_targets.clone(), &config.fetch) {
        tools.push(Arc::new(alert));
    }
    // Only under plan_mode advisory or required (seed 003).
    if let (PlanMode::Advisory | PlanMode::Required, Some(book)) = (config.plan_mode, &config.plans)
    {
        tools.push(Arc::new(RecordPlan::new(
            config.plan_mode,
            book.clone(),
            config.registered.clone(),
        )));
    }
    tools
}

/// What the built-in tools are configured with. Each tool that needs settings reads its own
/// fields; the binary fills them from the validated configuration.
#[derive(Clone, Debug)]
pub struct BuiltinConfig {
    /// Names of the built-in tools that will be in the catalog (after `tools.disable` and
    /// advertising). Tools that point the model at other tools consult it, so they never
    /// name one that is absent. Empty means "not known yet" (the first of the binary's two
    /// passes, which only collects names).
    pub registered: Vec<String>,
    /// Largest media file read_file attaches (`[tool_output] media_max_bytes`).
    pub media_max_bytes: u64,
    /// `url_scope.allow`, compiled: `fetch_url` checks every redirect hop against it (the gate
    /// sees only the first URL). Empty: `fetch_url` is not built.
    pub url_scope: Vec<tackle_gate::Pattern>,
    /// `[fetch]`: private hosts, timeout, and the resolver and dialer (tests inject stubs).
    pub fetch: FetchSettings,
    /// `[alert.targets]` whose environment variables are set. Empty: no `alert` tool.
    pub alert_targets: Vec<AlertTarget>,
    /// `[safety] bash_search_gate` (default enforce).
    pub bash_search_gate: SearchGateMode,
    /// What commands inherit of tackle's environment (default: all but
    /// [`tackle_process::DEFAULT_ENV_DENY`]).
    pub process_env: tackle_process::EnvPolicy,
    /// Live stdin of interactive bash calls; a front end keeps a clone to send input.
    pub stdin: tackle_process::StdinRegistry,
    /// `[bash] prestart` (default on): keep a shell started ahead of the next bash call where
    /// that is exact (lines run with `/bin/sh` and it is dash; never bash).
    pub bash_prestart: bool,
    /// `permissions.plan_mode`: `record_plan` is registered under advisory or required.
    pub plan_mode: PlanMode,
    /// The project's plans directory, shared with the plan gate. `None`: no `record_plan`.
    pub plans: Option<Arc<PlanBook>>,
    /// `[tools.wait_and_verify]`: the ceilings no wait may pass, and the tools the operator
    /// vouches for as pollable.
    pub wait: WaitSettings,
}

impl Default for BuiltinConfig {
    fn default() -> Self {
        Self {
            registered: Vec::new(),
            media_max_bytes: media::DEFAULT_MEDIA_MAX_BYTES,
            url_scope: Vec::new(),
            fetch: FetchSettings::default(),
            alert_targets: Vec::new(),
            bash_search_gate: SearchGateMode::default(),
            process_env: tackle_process::EnvPolicy::default(),
            stdin: tackle_process::StdinRegistry::default(),
            bash_prestart: true,
            plan_mode: PlanMode::Off,
            plans: None,
            wait: WaitSettings::DEFAULT,
        }
    }
}

impl BuiltinConfig {
    /// The bash search gate as armed by the registered tools.
    pub fn search_gate(&self) -> SearchGate {
        SearchGate::new(self.bash_search_gate, &self.registered)
    }
}

pub const PATH_OUTSIDE_ROOT: ErrorCode = ErrorCode::new("path_outside_root");
pub const INVALID_PATH: ErrorCode = ErrorCode::new("invalid_path");

/// The session root's handle, shared across calls while the path still names the same
/// directory (see [`Root::open_shared`]).
pub(crate) fn open_root(tool: &str, root: &Path) -> Result<Arc<Root>, ToolError> {
    Root::open_shared(root).map_err(|e| fs_error(tool, e))
}

/// Resolves a model-supplied path against the root, and follows its symlinks (for the keys).
pub(crate) fn resolve_real(
    tool: &str,
    root: &Path,
    input: &str,
) -> Result<path_keys::ResolvedPath, ToolError> {
    path_keys::ResolvedPath::new(tool, &*open_root(tool, root)?, input)
}

/// A `tackle-fs` refusal as a tool result, keeping its code (`path_outside_root`, ...).
pub(crate) fn fs_error(tool: &str, e: FsError) -> ToolError {
    ToolError::new(ErrorCode::new(e.code()), format!("{tool}: {e}"))
}
