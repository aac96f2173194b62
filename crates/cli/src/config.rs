//! The validated configuration a command runs with: settings files and flags, layered, checked,
//! and turned into the runtime's types before any work starts.

use std::path::{Path, PathBuf};

use anyhow::bail;
use tackle_runtime::{PreviewLimits, RuntimeConfig};

use crate::settings::{Flags, LoadedFile, Origin, RuleEffect, Settings, Sourced, nearest};
use tackle_gate::{Effect, Mode, PathScope, Pattern, Policy, Rule, RuleSource, UrlScope};
use tackle_process::EnvPolicy;
use tackle_tools::SearchGateMode;
use tackle_tools::net::PrivateHost;
use tackle_tools::{AlertTarget, BuiltinConfig, FetchSettings};

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
    /// What commands inherit of the environment (`[bash]`).
    pub process_env: EnvPolicy,
}

impl Config {
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
        }
    }
}

/// `$XDG_CONFIG_HOME/tackle/config.toml`, else `~/.config/tackle/config.toml`.
pub fn user_config_path() -> Option<PathBuf> {
    let base = match std::env::var_os("XDG_CONFIG_HOME") {
        Some(x) if !x.is_empty() => PathBuf::from(x),
        _ => PathBuf::from(std::env::var_os("HOME")?).join(".config"),
    };
    Some(base.join("tackle").join("config.toml"))
}

pub fn project_config_path(root: &Path) -> PathBuf {
    root.join(".agents").join("config.toml")
}

pub fn load(root: &Path, flags: &Flags) -> anyhow::Result<Config> {
    let PreviewLimits {
        max_lines,
        max_bytes,
    } = PreviewLimits::DEFAULT;
    let mut settings = Settings::defaults(max_lines, max_bytes);
    let mut files = Vec::new();
    for path in user_config_path()
        .into_iter()
        .chain([project_config_path(root)])
    {
        if let Some(file) = LoadedFile::load(&path)? {
            settings.apply_file(&file);
            files.push(path);
        }
    }
    settings.apply_flags(flags);
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
    let private_hosts = settings
        .fetch_private_hosts
        .iter()
        .map(|h| {
            PrivateHost::parse(&h.value).map_err(|e| anyhow::anyhow!("[fetch] {e} ({})", h.origin))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let (alert_targets, undeliverable_targets) = alert_targets(&settings, |name| {
        std::env::var(name).ok().filter(|v| !v.is_empty())
    })?;
    let gate = &settings.bash_search_gate;
    let search_gate: SearchGateMode = gate.value.parse().map_err(|e| {
        anyhow::anyhow!("bash_search_gate \"{}\" ({}): {e}", gate.value, gate.origin)
    })?;
    let mut process_env = EnvPolicy::default();
    process_env
        .deny
        .extend(settings.bash_env_deny.iter().map(|d| d.value.clone()));
    process_env
        .pass
        .extend(settings.bash_env_pass.iter().map(|d| d.value.clone()));
    Ok(Config {
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
) -> anyhow::Result<(Vec<AlertTarget>, Vec<DroppedTarget>)> {
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
                anyhow::anyhow!(
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
) -> anyhow::Result<Vec<Pattern>> {
    list.iter()
        .map(|p| {
            parse(&p.value)
                .map_err(|e| anyhow::anyhow!("{what} \"{}\" ({}): {e}", p.value, p.origin))
        })
        .collect()
}

/// Compile the effective settings into a policy; every error names where the value came from.
fn policy(s: &Settings) -> anyhow::Result<Policy> {
    let mode: Mode = s
        .mode
        .value
        .parse()
        .map_err(|e| anyhow::anyhow!("mode \"{}\" ({}): {e}", s.mode.value, s.mode.origin))?;
    let mut rules = Vec::with_capacity(s.rules.len());
    for (effect, pattern) in &s.rules {
        let effect = match effect {
            RuleEffect::Allow => Effect::Allow,
            RuleEffect::Ask => Effect::Ask,
            RuleEffect::Deny => Effect::Deny,
        };
        let parsed = Pattern::parse(&pattern.value).map_err(|e| {
            anyhow::anyhow!(
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
    Ok(Policy::new(rules, mode, path_scope, url_scope)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_config(text: &str) -> anyhow::Result<Config> {
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

    #[test]
    fn fetch_and_alert_sections() {
        let c = with_config("[fetch]\nallow_private_hosts = [\"localhost:8080\", \"10.0.0.5\"]\n")
            .unwrap();
        let hosts: Vec<String> = c.private_hosts.iter().map(|h| h.to_string()).collect();
        assert_eq!(hosts, ["localhost:8080", "10.0.0.5"]);
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
