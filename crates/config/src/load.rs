//! The validated configuration a command runs with: settings files and flags, layered, checked,
//! and turned into the runtime's types before any work starts.
//!
//! Agent type files are read here too ([`crate::agent_types`]): what the project's would widen
//! joins the settings' widenings in the trust decision, and a file that cannot be used is a
//! refusal in [`Config::agent_types`], never a failed load.
//!
//! The project layer passes folder trust first ([`crate::trust`]): until the root is trusted
//! only its narrowing part applies and its MCP servers are not started, though the whole file
//! is still validated (a typo is an error whether or not it would apply). Every variable the
//! effective configuration names as a secret (alert `url_env`/`token_env`, MCP `headers_env`
//! and `${NAME}` values) is withheld from commands and MCP children, whatever `env_pass` says.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::{ConfigError, bail, config_error};
use tackle_runtime::{PreviewLimits, RuntimeConfig};

use crate::settings::{Flags, LoadedFile, Origin, RuleEffect, Settings, Sourced, nearest};
use tackle_gate::{Effect, Mode, PathScope, Pattern, Policy, Rule, RuleSource, UrlScope};
use tackle_net::PrivateHost;
use tackle_process::EnvPolicy;
use tackle_tool::PlanMode;
use tackle_tools::SearchGateMode;
use tackle_tools::{AlertTarget, BuiltinConfig, FetchSettings, PlanBook};

use crate::trust::consent::Consent;
use crate::trust::{ProjectTrust, TrustState, TrustStore, classify};

/// The validated configuration a command runs with.
#[derive(Debug, Clone)]
pub struct Config {
    pub root: PathBuf,
    pub runtime: RuntimeConfig,
    /// The compiled permission policy.
    pub policy: Policy,
    /// The effective settings with the origin of every value (for `tackle config`).
    pub settings: Settings,
    /// The files that were read, lowest layer first.
    pub files: Vec<PathBuf>,
    /// `[fetch] allow_private_hosts`, parsed.
    pub private_hosts: Vec<PrivateHost>,
    /// `[alert.targets]` whose environment variables are set in this process.
    pub alert_targets: Vec<AlertTarget>,
    /// Configured targets dropped at start-up, with the variable that is unset.
    pub undeliverable_targets: Vec<(String, String)>,
    /// `[safety] bash_search_gate`.
    pub search_gate: SearchGateMode,
    /// What commands and MCP children inherit of the environment (`[bash]`, and every
    /// configured secret withheld).
    pub process_env: EnvPolicy,
    /// The project layer's trust, and what it left out.
    pub trust: ProjectTrust,
    /// The MCP servers that may start: the user's `mcp.json` and, while the root is trusted,
    /// `.agents/mcp.json` ([`crate::mcp_scope::startable`]).
    pub mcp_servers: Vec<tackle_mcp::client::ServerConfig>,
    /// Servers declared in either scope, started or not.
    pub mcp_declared: usize,
    /// `permissions.plan_mode`.
    pub plan_mode: PlanMode,
    /// The project's `.agents/plans/`, shared by record_plan and the plan gate.
    pub plans: Arc<PlanBook>,
    /// `[tools.wait_and_verify]`, checked.
    pub wait: tackle_tools::WaitSettings,
    /// The model catalog: providers, entries, and the default and small model.
    pub models: crate::models::ModelCatalog,
    /// `[checkpoint]` and `[watchdog]`, checked.
    pub agent_loop: crate::loop_settings::LoopSettings,
    /// The hub's `sciontool`, when `[tools.sciontool_status] command` finds it.
    pub sciontool: Option<tackle_tools::SciontoolCommand>,
    /// `[tools.call_peer]`, checked: `Some` when the model may call peers (a daemon with a
    /// hub must then offer the tool; anything else refuses to start).
    pub call_peer: Option<crate::call_peer_settings::CallPeerSettings>,
    /// `[delegation]`, checked.
    pub delegation: tackle_agent::delegate::Limits,
    /// `[messaging]`, checked.
    pub messaging: tackle_agent::messaging::MessagingSettings,
    /// `[store]` and `[artifacts]` of the user's config, checked.
    pub storage: crate::storage_settings::StorageSettings,
    /// The agent types of the built-ins, the user's files and the project's (as far as trust
    /// lets them apply), with what was noted and refused in those files.
    pub agent_types: crate::agent_types::AgentTypes,
    /// The skills of the user's and the project's skills directories (the project's as far as
    /// trust lets them apply), with the warnings and the invalid skills.
    pub skills: crate::skills::Skills,
}

impl Config {
    /// Withhold `var` from every child (the server's own `--token-env`, for one).
    pub fn withhold(&mut self, var: &str) {
        self.process_env.withhold(var);
    }

    /// What the built-in tools are built with (before the catalog knows which are offered).
    pub fn builtin(&self) -> BuiltinConfig {
        BuiltinConfig {
            registered: Vec::new(),
            media_max_bytes: self.settings.media_max_bytes.value,
            url_scope: self.policy.url_scope().allow.clone(),
            fetch: FetchSettings {
                allow_private_hosts: self.private_hosts.clone(),
                ..FetchSettings::default()
            },
            alert_targets: self.alert_targets.clone(),
            bash_search_gate: self.search_gate,
            process_env: self.process_env.clone(),
            stdin: tackle_process::StdinRegistry::default(),
            bash_prestart: self.settings.bash_prestart.value,
            plan_mode: self.plan_mode,
            plans: Some(self.plans.clone()),
            wait: self.wait.clone(),
            sciontool: self.sciontool.clone(),
        }
    }
}

/// `$XDG_CONFIG_HOME/tackle`, else `~/.config/tackle`: user config and the trust store.
pub fn user_config_dir() -> Option<PathBuf> {
    let base = match std::env::var_os("XDG_CONFIG_HOME") {
        Some(x) if !x.is_empty() => PathBuf::from(x),
        _ => PathBuf::from(std::env::var_os("HOME")?).join(".config"),
    };
    Some(base.join("tackle"))
}

/// `$XDG_CONFIG_HOME/tackle/config.toml`, else `~/.config/tackle/config.toml`.
pub fn user_config_path() -> Option<PathBuf> {
    Some(user_config_dir()?.join("config.toml"))
}

/// The project's settings file, relative to its root.
pub const PROJECT_CONFIG: &str = ".agents/config.toml";

/// The user's `[store]` and `[artifacts]` alone, checked (a process that serves many projects
/// installs them before it knows which: they are the user's, the same for every project).
pub fn user_storage() -> crate::Result<crate::storage_settings::StorageSettings> {
    match user_config_path() {
        Some(path) => crate::storage_settings::from_user_file(LoadedFile::load(&path)?.as_ref()),
        None => Ok(crate::storage_settings::StorageSettings::default()),
    }
}

pub fn project_config_path(root: &Path) -> PathBuf {
    root.join(PROJECT_CONFIG)
}

/// Load with the user's trust store, never asking (see [`load_with`]); for tests.
#[cfg(test)]
pub fn load(root: &Path, flags: &Flags) -> crate::Result<Config> {
    load_with(
        root,
        flags,
        TrustStore::user().as_ref(),
        &crate::trust::consent::NeverAsk,
    )
}

/// The user layer, the project layer as far as trust lets it, then flags. `consent` may trust
/// the root on the spot (a person at a terminal); what it accepts is recorded in `store`.
pub fn load_with(
    root: &Path,
    flags: &Flags,
    store: Option<&TrustStore>,
    consent: &dyn Consent,
) -> crate::Result<Config> {
    let PreviewLimits {
        max_lines,
        max_bytes,
    } = PreviewLimits::DEFAULT;
    let mut lower = Settings::defaults(max_lines, max_bytes);
    let mut files = Vec::new();
    let mut storage = crate::storage_settings::StorageSettings::default();
    if let Some(path) = user_config_path()
        && let Some(file) = LoadedFile::load(&path)?
    {
        lower.apply_file(&file);
        lower.apply_user_catalog(&file);
        storage = crate::storage_settings::from_user_file(Some(&file))?;
        files.push(path);
    }
    let project_path = project_config_path(root);
    // The project's files are read through the root handle, as tackle reads every file of its
    // own: regular files only, capped, never blocking, never through a link out.
    let handle = tackle_fs::Root::open_shared(root)
        .map_err(|e| config_error!("opening the project root {}: {e}", root.display()))?;
    let project = LoadedFile::load_in(&handle, root, PROJECT_CONFIG)?;
    if let Some(file) = &project {
        refuse_project_catalog(file)?;
    }
    let mcp_text =
        tackle_mcp::client::config::read_project(root).map_err(|e| config_error!("{e}"))?;
    let mcp = tackle_mcp::client::config::parse_named(
        mcp_text.clone(),
        tackle_mcp::client::config::CONFIG_PATH,
    )
    .map_err(|e| config_error!("{e}"))?;
    let user_mcp = crate::mcp_scope::load_user()?;
    let split = project.as_ref().map(|f| classify::split_file(&lower, f));
    let mut widenings = split
        .as_ref()
        .map(|s| s.widenings.clone())
        .unwrap_or_default();
    // Agent type files never fail the load: a bad one is a refusal `tackle agents` shows.
    let agent_files =
        crate::agent_types::Scanned::read(Some(&handle), user_config_dir().as_deref());
    widenings.extend(agent_files.widenings());
    // Skills likewise: a bad one is listed by `tackle skills`, with the rule it breaks.
    let cwd = std::env::current_dir().unwrap_or_else(|_| root.to_path_buf());
    let skill_dirs = skill_dirs();
    let skill_files = crate::skills::Scanned::read(Some((&handle, root, &cwd)), &skill_dirs);
    widenings.extend(skill_files.widenings());
    let mcp_text = mcp_text.unwrap_or_default();
    let mcp_path = root.join(tackle_mcp::client::config::CONFIG_PATH);
    widenings.extend(classify::split_mcp(&mcp, |name| Origin::File {
        path: mcp_path.clone(),
        line: line_naming(&mcp_text, name),
    }));
    let mut trust = crate::trust::evaluate(root, widenings, store)?;
    if !trust.applies() && consent.ask(&trust) {
        match store {
            Some(store) => {
                if let Err(e) = store.record(&trust.root, trust.digests(), crate::trust::now()) {
                    eprintln!("tackle: trusted for this run only: {e:#}");
                }
            }
            None => eprintln!(
                "tackle: trusted for this run only: no user config directory ($XDG_CONFIG_HOME or $HOME) to record it in"
            ),
        }
        trust.state = TrustState::Trusted;
    }
    let mut settings = lower.clone();
    if let Some(file) = &project {
        if trust.applies() {
            settings.apply_file(file);
        } else {
            // The whole file is still checked: its errors are errors whether or not it applies.
            let mut whole = lower;
            whole.apply_file(file);
            whole.apply_flags(flags);
            validate(&whole)?;
            if let Some(split) = split {
                settings.apply_file(&file.with_settings(split.narrowed));
            }
        }
        files.push(project_path);
    }
    settings.apply_flags(flags);
    // Every secret the project names is withheld, trusted or not: withholding only narrows.
    let mut named_secrets: Vec<String> = mcp
        .iter()
        .chain(&user_mcp)
        .flat_map(|s| s.secrets())
        .map(|s| s.var)
        .collect();
    let project_targets = project
        .iter()
        .flat_map(|f| f.settings.alert.iter())
        .flat_map(|a| a.targets.iter().flatten());
    for (_, t) in project_targets {
        named_secrets.push(t.url_env.get_ref().clone());
        named_secrets.extend(t.token_env.as_ref().map(|v| v.get_ref().clone()));
    }
    let mcp_declared = mcp.len() + user_mcp.len();
    let mcp_servers = crate::mcp_scope::startable(&user_mcp, &mcp, trust.applies());
    let mut config = compile(root, settings, files, trust, mcp_servers, mcp_declared)?;
    config.storage = storage;
    for var in named_secrets {
        config.withhold(&var);
    }
    config.agent_types = agent_files.resolve(config.trust.applies(), &config.models);
    config.skills = skill_files.resolve(config.trust.applies());
    Ok(config)
}

/// The user's skills directories (`~/.agents/skills`, `$XDG_CONFIG_HOME/tackle/skills`).
pub fn skill_dirs() -> Vec<PathBuf> {
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from);
    crate::skills::user_dirs(home.as_deref(), user_config_dir().as_deref())
}

/// A project file may not say where a credential goes or what the catalog holds, trusted or
/// not: `[providers.*]` and `[models.*]` are the user's alone.
fn refuse_project_catalog(file: &LoadedFile) -> crate::Result<()> {
    let s = &file.settings;
    let tables = [
        (
            "providers",
            s.providers
                .as_ref()
                .map(|t| t.values().next().map(|v| file.origin(v))),
        ),
        (
            "models",
            s.models
                .as_ref()
                .map(|t| t.values().next().map(|v| file.origin(v))),
        ),
        (
            "store",
            s.store
                .as_ref()
                .map(|t| t.backend.as_ref().map(|v| file.origin(v))),
        ),
        (
            "artifacts",
            s.artifacts
                .as_ref()
                .map(|t| t.backend.as_ref().map(|v| file.origin(v))),
        ),
    ];
    for (table, present) in tables {
        if let Some(first) = present {
            let at = first.map_or_else(|| file.path.display().to_string(), |o| o.to_string());
            let user = user_config_path().map_or_else(
                || "your user config".to_owned(),
                |p| p.display().to_string(),
            );
            if matches!(table, "store" | "artifacts") {
                bail!(
                    "{at}: a project config may not define [{table}]: where session logs and tool output are kept (and who can read them) is read only from {user}; move the table there"
                );
            }
            bail!(
                "{at}: a project config may not define [{table}.*]: where a credential is sent and what the model catalog says are read only from {user} and flags; move the table there (a project may name its model in [model] default)"
            );
        }
    }
    Ok(())
}

/// The first line of `text` that names `name` in quotes (where a server entry starts).
fn line_naming(text: &str, name: &str) -> usize {
    let quoted = format!("\"{name}\"");
    text.lines()
        .position(|l| l.contains(&quoted))
        .map_or(1, |i| i + 1)
}

/// Check settings without keeping the result.
fn validate(settings: &Settings) -> crate::Result<()> {
    check_tool_names(settings)?;
    let _ = crate::models::resolve(settings)?;
    policy(settings)?;
    let _ = private_hosts(settings)?;
    let _ = search_gate(settings)?;
    let _ = plan_mode(settings)?;
    let _ = crate::loop_settings::loop_settings(settings)?;
    let _ = crate::delegation_settings::limits(settings)?;
    let _ = crate::messaging_settings::settings(settings)?;
    let _ = crate::wait_settings::wait_settings(settings, RuntimeConfig::DEFAULT_CALL_TIMEOUT)?;
    let _ = alert_targets(settings, |name| {
        std::env::var(name).ok().filter(|v| !v.is_empty())
    })?;
    Ok(())
}

fn check_tool_names(settings: &Settings) -> crate::Result<()> {
    for t in settings
        .disabled_tools
        .iter()
        .chain(&settings.enabled_tools)
    {
        if !tackle_tools::BUILTIN_TOOL_NAMES.contains(&t.value.as_str()) {
            let hint = match nearest(&t.value, tackle_tools::BUILTIN_TOOL_NAMES) {
                Some(n) => format!("did you mean `{n}`?"),
                None => format!(
                    "built-in tools are: {}",
                    tackle_tools::BUILTIN_TOOL_NAMES.join(", ")
                ),
            };
            bail!("unknown tool `{}` (from {}); {hint}", t.value, t.origin);
        }
    }
    Ok(())
}

fn private_hosts(settings: &Settings) -> crate::Result<Vec<PrivateHost>> {
    settings
        .fetch_private_hosts
        .iter()
        .map(|h| {
            PrivateHost::parse(&h.value).map_err(|e| config_error!("[fetch] {e} ({})", h.origin))
        })
        .collect()
}

fn search_gate(settings: &Settings) -> crate::Result<SearchGateMode> {
    let gate = &settings.bash_search_gate;
    gate.value
        .parse()
        .map_err(|e| config_error!("bash_search_gate \"{}\" ({}): {e}", gate.value, gate.origin))
}

fn plan_mode(settings: &Settings) -> crate::Result<PlanMode> {
    let mode = &settings.plan_mode;
    mode.value.parse().map_err(|e| {
        config_error!(
            "permissions.{e} ({}); use \"advisory\" to offer record_plan or \"required\" to hold mutating calls until a plan is on file",
            mode.origin
        )
    })
}

/// The effective settings turned into the runtime's types.
fn compile(
    root: &Path,
    settings: Settings,
    files: Vec<PathBuf>,
    trust: ProjectTrust,
    mcp_servers: Vec<tackle_mcp::client::ServerConfig>,
    mcp_declared: usize,
) -> crate::Result<Config> {
    check_tool_names(&settings)?;
    let (lines, bytes) = (&settings.preview_lines, &settings.preview_bytes);
    if lines.value == 0 || bytes.value == 0 {
        bail!(
            "[tool_output] lines and bytes must be at least 1 (lines = {} from {}, bytes = {} from {})",
            lines.value,
            lines.origin,
            bytes.value,
            bytes.origin
        );
    }
    let runtime = RuntimeConfig {
        preview: PreviewLimits {
            max_lines: lines.value,
            max_bytes: bytes.value,
        },
        digests: settings.digests.value,
        ..RuntimeConfig::default()
    };
    let policy = policy(&settings)?;
    let private_hosts = private_hosts(&settings)?;
    let (alert_targets, undeliverable_targets) = alert_targets(&settings, |name| {
        std::env::var(name).ok().filter(|v| !v.is_empty())
    })?;
    let search_gate = search_gate(&settings)?;
    let plan_mode = plan_mode(&settings)?;
    let agent_loop = crate::loop_settings::loop_settings(&settings)?;
    let delegation = crate::delegation_settings::limits(&settings)?;
    let messaging = crate::messaging_settings::settings(&settings)?;
    let wait = crate::wait_settings::wait_settings(&settings, runtime.call_timeout)?;
    let sciontool = crate::sciontool::command(&settings, root)?;
    let call_peer = crate::call_peer_settings::settings(&settings)?;
    let models = crate::models::resolve(&settings)?;
    let mut process_env = EnvPolicy::default();
    process_env
        .deny
        .extend(settings.bash_env_deny.iter().map(|d| d.value.clone()));
    process_env
        .pass
        .extend(settings.bash_env_pass.iter().map(|d| d.value.clone()));
    // A webhook URL carries its own secret, and a token is one: neither reaches a command.
    for t in &settings.alert_targets {
        process_env.withhold(&t.url_env.value);
        if let Some(token) = &t.token_env {
            process_env.withhold(&token.value);
        }
    }
    // A configured provider's key never reaches a command or an MCP server, whatever
    // `env_pass` says (the built-in providers' variables already match the default denylist).
    for p in &models.providers {
        if p.source == crate::models::EntrySource::BuiltIn {
            continue;
        }
        for var in [&p.spec.api_key_env, &p.spec.token_env]
            .into_iter()
            .flatten()
        {
            process_env.withhold(var);
        }
    }
    Ok(Config {
        models,
        root: root.to_path_buf(),
        runtime,
        policy,
        settings,
        files,
        private_hosts,
        alert_targets,
        undeliverable_targets,
        search_gate,
        process_env,
        trust,
        mcp_servers,
        mcp_declared,
        plan_mode,
        plans: PlanBook::new(root),
        wait,
        agent_loop,
        sciontool,
        call_peer,
        delegation,
        messaging,
        storage: crate::storage_settings::StorageSettings::default(),
        // Set by `load_with` once trust is decided and the model catalog resolved.
        agent_types: crate::agent_types::AgentTypes::default(),
        skills: crate::skills::Skills::default(),
    })
}

/// A configured alert target dropped at start-up: its name and the unset variable.
type DroppedTarget = (String, String);

/// Resolves `[alert.targets]` against the environment: a target whose URL or token variable is
/// unset is dropped (returned second, with the variable), so the alert tool never lists a
/// target it cannot deliver to. A set URL that is not http(s) is a configuration error; the
/// message names the variable, never its value (webhook URLs carry secrets).
fn alert_targets(
    settings: &Settings,
    env: impl Fn(&str) -> Option<String>,
) -> crate::Result<(Vec<AlertTarget>, Vec<DroppedTarget>)> {
    let mut deliverable = Vec::new();
    let mut dropped = Vec::new();
    for t in &settings.alert_targets {
        let valid_name = !t.name.is_empty()
            && t.name.len() <= 64
            && t.name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-');
        if !valid_name {
            bail!(
                "alert target name \"{}\" ({}): use lowercase letters, digits, _ and -",
                t.name,
                t.url_env.origin
            );
        }
        let Some(url) = env(&t.url_env.value) else {
            dropped.push((t.name.clone(), t.url_env.value.clone()));
            continue;
        };
        let token = match &t.token_env {
            None => None,
            Some(var) => match env(&var.value) {
                Some(token) => Some(token),
                None => {
                    dropped.push((t.name.clone(), var.value.clone()));
                    continue;
                }
            },
        };
        let url = url::Url::parse(&url)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some())
            .ok_or_else(|| {
                crate::config_error!(
                    "alert target {} ({}): ${} is not an http:// or https:// URL",
                    t.name,
                    t.url_env.origin,
                    t.url_env.value
                )
            })?;
        deliverable.push(AlertTarget {
            name: t.name.clone(),
            url,
            token,
        });
    }
    Ok((deliverable, dropped))
}

fn rule_source(origin: &Origin) -> RuleSource {
    match origin {
        Origin::BuiltIn => RuleSource::BuiltIn,
        Origin::File { path, line } => RuleSource::File {
            path: path.clone(),
            line: *line,
        },
        Origin::Flag { flag } => RuleSource::Flag {
            flag: (*flag).to_owned(),
        },
    }
}

fn parse_each(
    what: &str,
    list: &[Sourced<String>],
    parse: fn(&str) -> Result<Pattern, tackle_gate::PatternError>,
) -> crate::Result<Vec<Pattern>> {
    list.iter()
        .map(|p| {
            parse(&p.value)
                .map_err(|e| crate::config_error!("{what} \"{}\" ({}): {e}", p.value, p.origin))
        })
        .collect()
}

/// Compile the effective settings into a policy; every error names where the value came from.
fn policy(s: &Settings) -> crate::Result<Policy> {
    let mode: Mode =
        s.mode.value.parse().map_err(|e| {
            crate::config_error!("mode \"{}\" ({}): {e}", s.mode.value, s.mode.origin)
        })?;
    let mut rules = Vec::with_capacity(s.rules.len());
    for (effect, pattern) in &s.rules {
        let effect = match effect {
            RuleEffect::Allow => Effect::Allow,
            RuleEffect::Ask => Effect::Ask,
            RuleEffect::Deny => Effect::Deny,
        };
        let parsed = Pattern::parse(&pattern.value).map_err(|e| {
            crate::config_error!(
                "{effect} rule \"{}\" ({}): {e}",
                pattern.value,
                pattern.origin
            )
        })?;
        rules.push(Rule::new(effect, parsed, rule_source(&pattern.origin)));
    }
    let path_scope = PathScope {
        allow: parse_each("path_scope.allow", &s.path_scope_allow, Pattern::parse_path)?,
        deny: parse_each("path_scope.deny", &s.path_scope_deny, Pattern::parse_path)?,
    };
    let url_scope = UrlScope {
        allow: parse_each("url_scope.allow", &s.url_scope_allow, Pattern::parse)?,
    };
    Policy::new(rules, mode, path_scope, url_scope).map_err(ConfigError::msg)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_config(text: &str) -> crate::Result<Config> {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join(".agents")).unwrap();
        std::fs::write(t.path().join(".agents/config.toml"), text).unwrap();
        load(t.path(), &Flags::default())
    }

    #[test]
    fn tool_output_limits_and_typos() {
        let c = with_config("[tool_output]\nlines = 10\nbytes = 99\n").unwrap();
        assert_eq!(
            c.runtime.preview,
            PreviewLimits {
                max_lines: 10,
                max_bytes: 99
            }
        );
        let e = with_config("[tool_ouput]\nlines = 10\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("tool_ouput") && e.contains("tool_output"), "{e}");
        let e = with_config("[tool_output]\nline = 10\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("`line`") && e.contains("lines"), "{e}");
        assert!(with_config("[tool_output]\nlines = 0\n").is_err());
        assert!(with_config("[tool_output]\nlines = \"ten\"\n").is_err());
    }

    #[test]
    fn bad_modes_and_patterns_name_their_origin() {
        let e = with_config("[permissions]\nmode = \"yollo\"\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("yollo") && e.contains("yolo") && e.contains("config.toml:2"),
            "{e}"
        );
        let e = with_config("[permissions]\ndeny = [\"\"]\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("config.toml:2"), "{e}");
        let e = with_config("[path_scope]\nallow = [\"../outside/**\"]\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("path_scope"), "{e}");
        let e = with_config("[permissions]\nallow = [\"tool.bash.cmd:?\"]\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("tool.bash.cmd:?"), "{e}");
    }

    /// Says yes to every question, and counts them.
    struct Yes(std::sync::atomic::AtomicUsize);

    impl Consent for Yes {
        fn ask(&self, _: &ProjectTrust) -> bool {
            self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            true
        }
    }

    #[test]
    fn fetch_and_alert_sections() {
        let text = "[fetch]\nallow_private_hosts = [\"localhost:8080\", \"10.0.0.5\"]\n";
        let untrusted = with_config(text).unwrap();
        assert!(untrusted.private_hosts.is_empty(), "ignored until trusted");
        assert_eq!(untrusted.trust.ignored().len(), 2);

        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join(".agents")).unwrap();
        std::fs::write(t.path().join(".agents/config.toml"), text).unwrap();
        let store = TrustStore::in_dir(t.path().join("xdg/tackle"));
        let yes = Yes(Default::default());
        let c = load_with(t.path(), &Flags::default(), Some(&store), &yes).unwrap();
        let hosts: Vec<String> = c.private_hosts.iter().map(|h| h.to_string()).collect();
        assert_eq!(hosts, ["localhost:8080", "10.0.0.5"]);
        // Recorded: the next load is trusted without asking.
        let again = load_with(t.path(), &Flags::default(), Some(&store), &yes).unwrap();
        assert_eq!(again.trust.state, TrustState::Trusted);
        assert_eq!(again.private_hosts.len(), 2);
        assert_eq!(
            yes.0.load(std::sync::atomic::Ordering::Relaxed),
            1,
            "asked once"
        );
        let e = with_config("[fetch]\nallow_private_hosts = [\"*.internal\"]\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("*.internal") && e.contains("config.toml:2"),
            "{e}"
        );

        let t = tempfile::tempdir().unwrap();
        let file = t.path().join("c.toml");
        std::fs::write(
            &file,
            "[alert.targets.oncall]\nurl_env = \"ONCALL\"\ntoken_env = \"ONCALL_TOKEN\"\n\
             [alert.targets.chat]\nurl_env = \"CHAT\"\n\
             [alert.targets.pager]\nurl_env = \"PAGER\"\ntoken_env = \"PAGER_TOKEN\"\n",
        )
        .unwrap();
        let mut s = Settings::defaults(1, 1);
        s.apply_file(&LoadedFile::load(&file).unwrap().unwrap());
        let env = |name: &str| match name {
            "ONCALL" => Some("https://hooks.example/x".to_owned()),
            "ONCALL_TOKEN" => Some("t".to_owned()),
            "PAGER" => Some("http://10.0.0.9:9093/alert".to_owned()),
            _ => None,
        };
        let (ok, dropped) = alert_targets(&s, env).unwrap();
        let names: Vec<&str> = ok.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["oncall"]);
        assert_eq!(
            dropped,
            vec![
                ("chat".to_owned(), "CHAT".to_owned()),
                ("pager".to_owned(), "PAGER_TOKEN".to_owned())
            ]
        );
        let bad_env = |name: &str| (name == "CHAT").then(|| "ftp://x/".to_owned());
        let e = alert_targets(&s, bad_env).unwrap_err().to_string();
        assert!(e.contains("$CHAT") && !e.contains("ftp://x/"), "{e}");
    }

    #[test]
    fn misspelt_tool_names_fail_naming_the_nearest() {
        let e = with_config("[tools]\ndisable = [\"reed_file\"]\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`reed_file`") && e.contains("`read_file`") && e.contains(":2"),
            "{e}"
        );
        let t = tempfile::tempdir().unwrap();
        let flags = Flags {
            enable_tools: vec!["bsh".into()],
            ..Flags::default()
        };
        let e = load(t.path(), &flags).unwrap_err().to_string();
        assert!(
            e.contains("`bsh`") && e.contains("`bash`") && e.contains("--enable-tools"),
            "{e}"
        );
        assert!(with_config("[tools]\ndisable = [\"grep\", \"stat\"]\n").is_ok());
    }
}
