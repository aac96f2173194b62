//! Layering: built-in defaults < user config < project config < command-line flags, keeping the
//! origin of every effective value.

use super::file::{LoadedFile, Origin, Sourced};
use super::models_file::{ModelEntrySection, ProviderSection};

/// The built-in `[messaging]` settings.
const MESSAGING: tackle_agent::messaging::MessagingSettings =
    tackle_agent::messaging::MessagingSettings::DEFAULT;

/// The effect of a permission rule, as written in config (`allow`/`ask`/`deny`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuleEffect {
    Allow,
    Ask,
    Deny,
}

/// Settings given on the command line.
#[derive(Clone, Debug, Default)]
pub struct Flags {
    pub allow: Vec<String>,
    pub ask: Vec<String>,
    pub deny: Vec<String>,
    pub mode: Option<String>,
    pub disable_tools: Vec<String>,
    pub enable_tools: Vec<String>,
    /// `--no-digest`: survey results are shown raw and retrieve_raw is not offered.
    pub no_digest: bool,
    pub bash_search_gate: Option<String>,
    /// `--plan-mode`.
    pub plan_mode: Option<String>,
    /// `--task`: drops tools, as if each were in `--disable-tools`.
    pub task: Option<crate::task::TaskClass>,
    /// `--model provider:model`.
    pub model: Option<String>,
    /// `--agentic-small-model provider:model`: `[model] small`, the model of the agentic
    /// tools' subtasks.
    pub agentic_small_model: Option<String>,
    /// `--checkpoint`.
    pub checkpoint: Option<String>,
    /// `--posture`.
    pub posture: Option<String>,
    /// `--watchdog`.
    pub watchdog: Option<String>,
}

/// The effective settings, each value with its origin.
#[derive(Clone, Debug)]
pub struct Settings {
    pub mode: Sourced<String>,
    /// `permissions.plan_mode` (seed 003, record_plan).
    pub plan_mode: Sourced<String>,
    /// `--task`, when given (its dropped tools are in `disabled_tools`).
    pub task: Option<crate::task::TaskClass>,
    /// Every rule from every layer; precedence is by effect (deny > ask > allow), not by layer.
    pub rules: Vec<(RuleEffect, Sourced<String>)>,
    /// Replaced wholesale by the highest layer that sets it.
    pub path_scope_allow: Vec<Sourced<String>>,
    /// Accumulated across layers: a deny anywhere holds.
    pub path_scope_deny: Vec<Sourced<String>>,
    /// Replaced wholesale by the highest layer that sets it.
    pub url_scope_allow: Vec<Sourced<String>>,
    /// Tool names disabled (after later layers' `enable`), with where each was disabled.
    pub disabled_tools: Vec<Sourced<String>>,
    /// Tool names mentioned by any `enable` (validated like disabled ones).
    pub enabled_tools: Vec<Sourced<String>>,
    pub preview_lines: Sourced<usize>,
    pub preview_bytes: Sourced<usize>,
    pub digests: Sourced<bool>,
    pub media_max_bytes: Sourced<u64>,
    /// `[fetch] allow_private_hosts`; replaced wholesale by the highest layer that sets it.
    pub fetch_private_hosts: Vec<Sourced<String>>,
    /// `[alert.targets]`, by name; a later layer replaces a target of the same name.
    pub alert_targets: Vec<AlertTargetSetting>,
    /// `[safety] bash_search_gate`.
    pub bash_search_gate: Sourced<String>,
    /// Accumulated across layers, on top of the built-in denylist.
    pub bash_env_deny: Vec<Sourced<String>>,
    /// Accumulated across layers.
    pub bash_env_pass: Vec<Sourced<String>>,
    /// `[bash] prestart`.
    pub bash_prestart: Sourced<bool>,
    /// `[tools.wait_and_verify] max_timeout_seconds`.
    pub wait_max_timeout_seconds: Sourced<f64>,
    /// `[tools.wait_and_verify] max_attempts`.
    pub wait_max_attempts: Sourced<u32>,
    /// `[tools.wait_and_verify] poll_allow`, accumulated across layers.
    pub wait_poll_allow: Vec<Sourced<String>>,
    /// `[tools.sciontool_status] command`: the program and its leading arguments.
    pub sciontool_command: Sourced<Vec<String>>,
    /// `[tools.call_peer]`.
    pub call_peer_enabled: Sourced<bool>,
    pub call_peer_deadline_seconds: Sourced<f64>,
    pub call_peer_max_response_bytes: Sourced<u64>,
    /// `[checkpoint] mode` (or `--checkpoint`).
    pub checkpoint_mode: Sourced<String>,
    /// `[posture] mode` (or `--posture`).
    pub posture_mode: Sourced<String>,
    /// `[watchdog] mode` (or `--watchdog`).
    pub watchdog_mode: Sourced<String>,
    /// `[tools] descriptions`: `auto`, `full` or `compact`.
    pub tool_descriptions: Sourced<String>,
    /// `[watchdog] repeat_limit`.
    pub watchdog_repeat_limit: Sourced<u32>,
    /// `[delegation] max_depth`.
    pub delegation_max_depth: Sourced<u32>,
    /// `[delegation] max_running`.
    pub delegation_max_running: Sourced<u32>,
    /// `[messaging] enabled`.
    pub messaging_enabled: Sourced<bool>,
    /// `[messaging] max_body_bytes`.
    pub messaging_max_body_bytes: Sourced<usize>,
    /// `[messaging] max_pending_per_session`.
    pub messaging_max_pending: Sourced<usize>,
    /// `[messaging] max_hops`.
    pub messaging_max_hops: Sourced<i64>,
    /// `[messaging] max_inflight_per_pair`.
    pub messaging_max_inflight: Sourced<usize>,
    /// `[model] default` (or `--model`), unchecked text: [`crate::models`] resolves it.
    pub model_default: Option<Sourced<String>>,
    /// `[model] small`.
    pub model_small: Option<Sourced<String>>,
    /// `[providers.*]` of the user's config, by name, with the line of each table.
    pub providers: Vec<(String, Sourced<ProviderSection>)>,
    /// `[models.*]` of the user's config, by id, with the line of each table.
    pub model_entries: Vec<(String, Sourced<ModelEntrySection>)>,
}

/// One configured alert target (deliverable or not: that depends on the environment).
#[derive(Clone, Debug)]
pub struct AlertTargetSetting {
    pub name: String,
    pub url_env: Sourced<String>,
    pub token_env: Option<Sourced<String>>,
}

impl Settings {
    pub fn defaults(preview_lines: usize, preview_bytes: usize) -> Self {
        Self {
            mode: Sourced::new("ask".to_owned(), Origin::BuiltIn),
            plan_mode: Sourced::new("off".to_owned(), Origin::BuiltIn),
            task: None,
            rules: Vec::new(),
            path_scope_allow: vec![Sourced::new("**".to_owned(), Origin::BuiltIn)],
            path_scope_deny: Vec::new(),
            url_scope_allow: Vec::new(),
            disabled_tools: Vec::new(),
            enabled_tools: Vec::new(),
            preview_lines: Sourced::new(preview_lines, Origin::BuiltIn),
            preview_bytes: Sourced::new(preview_bytes, Origin::BuiltIn),
            digests: Sourced::new(true, Origin::BuiltIn),
            media_max_bytes: Sourced::new(
                tackle_tools::media::DEFAULT_MEDIA_MAX_BYTES,
                Origin::BuiltIn,
            ),
            fetch_private_hosts: Vec::new(),
            alert_targets: Vec::new(),
            bash_search_gate: Sourced::new("enforce".to_owned(), Origin::BuiltIn),
            bash_env_deny: Vec::new(),
            bash_env_pass: Vec::new(),
            bash_prestart: Sourced::new(true, Origin::BuiltIn),
            wait_max_timeout_seconds: Sourced::new(
                tackle_tools::WaitSettings::DEFAULT.max_timeout_seconds,
                Origin::BuiltIn,
            ),
            wait_max_attempts: Sourced::new(
                tackle_tools::WaitSettings::DEFAULT.max_attempts,
                Origin::BuiltIn,
            ),
            wait_poll_allow: Vec::new(),
            call_peer_enabled: Sourced::new(false, Origin::BuiltIn),
            call_peer_deadline_seconds: Sourced::new(300.0, Origin::BuiltIn),
            call_peer_max_response_bytes: Sourced::new(64 * 1024, Origin::BuiltIn),
            sciontool_command: Sourced::new(
                std::iter::once(tackle_tools::sciontool_status::BINARY)
                    .chain(tackle_tools::sciontool_status::DEFAULT_ARGS.iter().copied())
                    .map(str::to_owned)
                    .collect(),
                Origin::BuiltIn,
            ),
            checkpoint_mode: Sourced::new("model".to_owned(), Origin::BuiltIn),
            posture_mode: Sourced::new("standard".to_owned(), Origin::BuiltIn),
            watchdog_mode: Sourced::new("enforce".to_owned(), Origin::BuiltIn),
            tool_descriptions: Sourced::new("auto".to_owned(), Origin::BuiltIn),
            watchdog_repeat_limit: Sourced::new(
                tackle_agent::watchdog::DEFAULT_REPEAT_LIMIT,
                Origin::BuiltIn,
            ),
            delegation_max_depth: Sourced::new(
                tackle_agent::delegate::Limits::default().max_depth,
                Origin::BuiltIn,
            ),
            delegation_max_running: Sourced::new(
                tackle_agent::delegate::Limits::default().max_running,
                Origin::BuiltIn,
            ),
            messaging_enabled: Sourced::new(MESSAGING.enabled, Origin::BuiltIn),
            messaging_max_body_bytes: Sourced::new(MESSAGING.max_body_bytes, Origin::BuiltIn),
            messaging_max_pending: Sourced::new(MESSAGING.max_pending_per_session, Origin::BuiltIn),
            messaging_max_hops: Sourced::new(MESSAGING.max_hops, Origin::BuiltIn),
            messaging_max_inflight: Sourced::new(MESSAGING.max_inflight_per_pair, Origin::BuiltIn),
            model_default: None,
            model_small: None,
            providers: Vec::new(),
            model_entries: Vec::new(),
        }
    }

    /// The user's provider and model tables. Never called for a project file: where a
    /// credential goes is the user's decision alone.
    pub fn apply_user_catalog(&mut self, f: &LoadedFile) {
        let s = &f.settings;
        for (name, table) in s.providers.iter().flatten() {
            self.providers.retain(|(n, _)| n != name);
            self.providers.push((
                name.clone(),
                Sourced::new(table.get_ref().clone(), f.origin(table)),
            ));
        }
        for (id, table) in s.models.iter().flatten() {
            self.model_entries.retain(|(i, _)| i != id);
            self.model_entries.push((
                id.clone(),
                Sourced::new(table.get_ref().clone(), f.origin(table)),
            ));
        }
    }

    /// Apply one file on top (user, then project).
    pub fn apply_file(&mut self, f: &LoadedFile) {
        let s = &f.settings;
        if let Some(m) = &s.model {
            if let Some(d) = &m.default {
                self.model_default = Some(f.sourced(d));
            }
            if let Some(small) = &m.small {
                self.model_small = Some(f.sourced(small));
            }
        }
        if let Some(m) = &s.messaging {
            if let Some(v) = &m.enabled {
                self.messaging_enabled = f.sourced(v);
            }
            if let Some(v) = &m.max_body_bytes {
                self.messaging_max_body_bytes = f.sourced(v);
            }
            if let Some(v) = &m.max_pending_per_session {
                self.messaging_max_pending = f.sourced(v);
            }
            if let Some(v) = &m.max_hops {
                self.messaging_max_hops = f.sourced(v);
            }
            if let Some(v) = &m.max_inflight_per_pair {
                self.messaging_max_inflight = f.sourced(v);
            }
        }
        if let Some(d) = &s.delegation {
            if let Some(n) = &d.max_depth {
                self.delegation_max_depth = f.sourced(n);
            }
            if let Some(n) = &d.max_running {
                self.delegation_max_running = f.sourced(n);
            }
        }
        if let Some(m) = s.checkpoint.as_ref().and_then(|c| c.mode.as_ref()) {
            self.checkpoint_mode = f.sourced(m);
        }
        if let Some(m) = s.posture.as_ref().and_then(|p| p.mode.as_ref()) {
            self.posture_mode = f.sourced(m);
        }
        if let Some(w) = &s.watchdog {
            if let Some(m) = &w.mode {
                self.watchdog_mode = f.sourced(m);
            }
            if let Some(n) = &w.repeat_limit {
                self.watchdog_repeat_limit = f.sourced(n);
            }
        }
        if let Some(p) = &s.permissions {
            if let Some(m) = &p.mode {
                self.mode = f.sourced(m);
            }
            if let Some(m) = &p.plan_mode {
                self.plan_mode = f.sourced(m);
            }
            for (effect, list) in [
                (RuleEffect::Allow, &p.allow),
                (RuleEffect::Ask, &p.ask),
                (RuleEffect::Deny, &p.deny),
            ] {
                for r in list.iter().flatten() {
                    self.rules.push((effect, f.sourced(r)));
                }
            }
        }
        if let Some(ps) = &s.path_scope {
            if let Some(allow) = &ps.allow {
                self.path_scope_allow = allow.iter().map(|a| f.sourced(a)).collect();
            }
            self.path_scope_deny
                .extend(ps.deny.iter().flatten().map(|d| f.sourced(d)));
        }
        if let Some(allow) = s.url_scope.as_ref().and_then(|u| u.allow.as_ref()) {
            self.url_scope_allow = allow.iter().map(|a| f.sourced(a)).collect();
        }
        if let Some(t) = &s.tools {
            let disable: Vec<Sourced<String>> =
                t.disable.iter().flatten().map(|d| f.sourced(d)).collect();
            let enable: Vec<Sourced<String>> =
                t.enable.iter().flatten().map(|e| f.sourced(e)).collect();
            self.toggle(disable, enable);
            if let Some(d) = &t.descriptions {
                self.tool_descriptions = f.sourced(d);
            }
            if let Some(c) = t.sciontool_status.as_ref().and_then(|s| s.command.as_ref()) {
                self.sciontool_command = f.sourced(c);
            }
            if let Some(c) = &t.call_peer {
                if let Some(e) = &c.enabled {
                    self.call_peer_enabled = f.sourced(e);
                }
                if let Some(d) = &c.deadline_seconds {
                    self.call_peer_deadline_seconds = f.sourced(d);
                }
                if let Some(m) = &c.max_response_bytes {
                    self.call_peer_max_response_bytes = f.sourced(m);
                }
            }
            if let Some(w) = &t.wait_and_verify {
                if let Some(m) = &w.max_timeout_seconds {
                    self.wait_max_timeout_seconds = f.sourced(m);
                }
                if let Some(m) = &w.max_attempts {
                    self.wait_max_attempts = f.sourced(m);
                }
                self.wait_poll_allow
                    .extend(w.poll_allow.iter().flatten().map(|p| f.sourced(p)));
            }
        }
        if let Some(hosts) = s
            .fetch
            .as_ref()
            .and_then(|f| f.allow_private_hosts.as_ref())
        {
            self.fetch_private_hosts = hosts.iter().map(|h| f.sourced(h)).collect();
        }
        for (name, t) in s.alert.iter().flat_map(|a| a.targets.iter().flatten()) {
            self.alert_targets.retain(|x| &x.name != name);
            self.alert_targets.push(AlertTargetSetting {
                name: name.clone(),
                url_env: f.sourced(&t.url_env),
                token_env: t.token_env.as_ref().map(|e| f.sourced(e)),
            });
        }
        if let Some(g) = s.safety.as_ref().and_then(|x| x.bash_search_gate.as_ref()) {
            self.bash_search_gate = f.sourced(g);
        }
        if let Some(b) = &s.bash {
            self.bash_env_deny
                .extend(b.env_deny.iter().flatten().map(|d| f.sourced(d)));
            self.bash_env_pass
                .extend(b.env_pass.iter().flatten().map(|d| f.sourced(d)));
            if let Some(p) = &b.prestart {
                self.bash_prestart = f.sourced(p);
            }
        }
        if let Some(o) = &s.tool_output {
            if let Some(l) = &o.lines {
                self.preview_lines = f.sourced(l);
            }
            if let Some(b) = &o.bytes {
                self.preview_bytes = f.sourced(b);
            }
            if let Some(d) = &o.digests {
                self.digests = f.sourced(d);
            }
            if let Some(m) = &o.media_max_bytes {
                self.media_max_bytes = f.sourced(m);
            }
        }
    }

    /// Apply command-line flags on top of everything.
    pub fn apply_flags(&mut self, flags: &Flags) {
        if flags.no_digest {
            self.digests = Sourced::new(
                false,
                Origin::Flag {
                    flag: "--no-digest",
                },
            );
        }
        if let Some(m) = &flags.mode {
            self.mode = Sourced::new(m.clone(), Origin::Flag { flag: "--mode" });
        }
        if let Some(m) = &flags.plan_mode {
            self.plan_mode = Sourced::new(
                m.clone(),
                Origin::Flag {
                    flag: "--plan-mode",
                },
            );
        }
        if let Some(m) = &flags.checkpoint {
            self.checkpoint_mode = Sourced::new(
                m.clone(),
                Origin::Flag {
                    flag: "--checkpoint",
                },
            );
        }
        if let Some(m) = &flags.posture {
            self.posture_mode = Sourced::new(m.clone(), Origin::Flag { flag: "--posture" });
        }
        if let Some(m) = &flags.watchdog {
            self.watchdog_mode = Sourced::new(m.clone(), Origin::Flag { flag: "--watchdog" });
        }
        if let Some(m) = &flags.model {
            self.model_default = Some(Sourced::new(m.clone(), Origin::Flag { flag: "--model" }));
        }
        if let Some(m) = &flags.agentic_small_model {
            self.model_small = Some(Sourced::new(
                m.clone(),
                Origin::Flag {
                    flag: "--agentic-small-model",
                },
            ));
        }
        if let Some(g) = &flags.bash_search_gate {
            self.bash_search_gate = Sourced::new(
                g.clone(),
                Origin::Flag {
                    flag: "--bash-search-gate",
                },
            );
        }
        for (effect, list, flag) in [
            (RuleEffect::Allow, &flags.allow, "--allow"),
            (RuleEffect::Ask, &flags.ask, "--ask"),
            (RuleEffect::Deny, &flags.deny, "--deny"),
        ] {
            for r in list {
                self.rules
                    .push((effect, Sourced::new(r.clone(), Origin::Flag { flag })));
            }
        }
        self.task = flags.task;
        let dropped = flags
            .task
            .iter()
            .flat_map(|t| t.drops())
            .map(|t| Sourced::new((*t).to_owned(), Origin::Flag { flag: "--task" }));
        let disable = dropped
            .chain(flags.disable_tools.iter().map(|t| {
                Sourced::new(
                    t.clone(),
                    Origin::Flag {
                        flag: "--disable-tools",
                    },
                )
            }))
            .collect();
        let enable = flags
            .enable_tools
            .iter()
            .map(|t| {
                Sourced::new(
                    t.clone(),
                    Origin::Flag {
                        flag: "--enable-tools",
                    },
                )
            })
            .collect();
        self.toggle(disable, enable);
    }

    /// Within one layer, `enable` wins over `disable`; a later layer overrides earlier ones.
    fn toggle(&mut self, disable: Vec<Sourced<String>>, enable: Vec<Sourced<String>>) {
        for d in disable {
            if !self.disabled_tools.iter().any(|x| x.value == d.value) {
                self.disabled_tools.push(d);
            }
        }
        for e in &enable {
            self.disabled_tools.retain(|d| d.value != e.value);
        }
        self.enabled_tools.extend(enable);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str, name: &str) -> (tempfile::TempDir, LoadedFile) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let f = LoadedFile::load(&path).unwrap().unwrap();
        (dir, f)
    }

    #[test]
    fn layers_apply_in_order_with_origins() {
        let (_u, user) = file(
            "[permissions]\nmode = \"accept-edits\"\ndeny = [\"write:.git/**\"]\n[tool_output]\nlines = 50\n[url_scope]\nallow = [\"https://docs.rs/**\"]\n",
            "user.toml",
        );
        let (_p, project) = file(
            "[permissions]\nallow = [\"write:src/**\"]\n[path_scope]\nallow = [\"src/**\", \"tests/**\"]\ndeny = [\".env\"]\n[tools]\ndisable = [\"stat\", \"list_dir\"]\n",
            "project.toml",
        );
        let mut s = Settings::defaults(400, 30_000);
        s.apply_file(&user);
        s.apply_file(&project);
        s.apply_flags(&Flags {
            deny: vec!["read:secrets/**".into()],
            mode: Some("plan".into()),
            enable_tools: vec!["list_dir".into()],
            ..Flags::default()
        });
        assert_eq!(s.mode.value, "plan");
        assert_eq!(s.mode.origin, Origin::Flag { flag: "--mode" });
        let rules: Vec<(RuleEffect, &str)> = s
            .rules
            .iter()
            .map(|(e, r)| (*e, r.value.as_str()))
            .collect();
        assert_eq!(
            rules,
            vec![
                (RuleEffect::Deny, "write:.git/**"),
                (RuleEffect::Allow, "write:src/**"),
                (RuleEffect::Deny, "read:secrets/**"),
            ]
        );
        assert!(matches!(&s.rules[0].1.origin, Origin::File { line: 3, .. }));
        assert_eq!(s.preview_lines.value, 50);
        assert_eq!(s.preview_bytes.origin, Origin::BuiltIn);
        let scope: Vec<&str> = s
            .path_scope_allow
            .iter()
            .map(|x| x.value.as_str())
            .collect();
        assert_eq!(scope, vec!["src/**", "tests/**"]);
        assert_eq!(s.url_scope_allow.len(), 1);
        let disabled: Vec<&str> = s.disabled_tools.iter().map(|x| x.value.as_str()).collect();
        assert_eq!(disabled, vec!["stat"]);
    }
}
