//! What the built-in tools are built from: [`BuiltinConfig`], filled by the binary from the
//! validated configuration and read by each entry of [`crate::registry::REGISTRY`].

use std::sync::Arc;

use tackle_tool::PlanMode;

use crate::{
    AlertTarget, FetchSettings, PlanBook, SearchGate, SearchGateMode, WaitSettings, media,
};

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
    /// The hub's `sciontool`, when found (`sciontool_status::discover`). `None`: no
    /// sciontool_status tool.
    pub sciontool: Option<crate::SciontoolCommand>,
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
            sciontool: None,
        }
    }
}

impl BuiltinConfig {
    /// The bash search gate as armed by the registered tools.
    pub fn search_gate(&self) -> SearchGate {
        SearchGate::new(self.bash_search_gate, &self.registered)
    }
}
