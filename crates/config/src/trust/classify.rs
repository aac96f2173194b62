//! What an untrusted project layer may do: every key of `.agents/config.toml` and every entry of
//! `.agents/mcp.json`, judged against the layers beneath it (built-in defaults and the user's
//! config), split into the part that only narrows (applied) and the widenings (ignored until the
//! folder is trusted).
//!
//! Pure: no I/O, so the decision for every key is a table ([`KEYS`]) tested as data. A value
//! this module cannot judge (an unparseable mode, a pattern it cannot prove inside the scope
//! below) is judged the safe way: a malformed value is kept so that its error surfaces, and a
//! well-formed value whose reach is unclear widens.

mod delegation_keys;
mod loop_keys;
mod messaging_keys;

use tackle_gate::Mode;
use tackle_mcp::client::{SecretUse, ServerConfig, Transport};
use tackle_tools::SearchGateMode;
use toml::Spanned;

use crate::settings::{
    AlertSection, BashSection, CallPeerSection, FetchSection, LoadedFile, ModelSection, Origin,
    PathScopeSection, PermissionsSection, SafetySection, SciontoolStatusSection, Settings,
    SettingsFile, ToolOutputSection, ToolsSection, UrlScopeSection, WaitAndVerifySection,
};

/// How an untrusted project's value for a key is treated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Treatment {
    /// Always applied: it can only take something away.
    Kept,
    /// Applied when it is at least as strict as the layers below; ignored otherwise.
    KeptIfNarrower,
    /// Never applied until the folder is trusted.
    Ignored,
    /// Never applied until trusted, and it hands a secret to someone.
    IgnoredMovesSecret,
}

impl Treatment {
    pub fn as_str(self) -> &'static str {
        match self {
            Treatment::Kept => "kept",
            Treatment::KeptIfNarrower => "kept if narrower",
            Treatment::Ignored => "ignored until trusted",
            Treatment::IgnoredMovesSecret => "ignored until trusted (moves a secret)",
        }
    }
}

/// One row of the decision table.
#[derive(Debug)]
pub struct KeyRule {
    /// `section.key` as written in `.agents/config.toml`, `mcp.servers` for `.agents/mcp.json`,
    /// `agent_types.*` for the project's agent type files (`crate::agent_types`), or `skills.*`
    /// for its skills (`crate::skills`).
    pub key: &'static str,
    pub treatment: Treatment,
    /// Why, for the reader of the table and of `tackle trust`.
    pub why: &'static str,
}

const fn row(key: &'static str, treatment: Treatment, why: &'static str) -> KeyRule {
    KeyRule {
        key,
        treatment,
        why,
    }
}

/// Every key a project layer can set, and what an untrusted project may do with it.
pub const KEYS: &[KeyRule] = &[
    row(
        "permissions.plan_mode",
        Treatment::KeptIfNarrower,
        "a project may ask for plans (required > advisory > off): that only adds a plan file and holds mutating calls back; a laxer mode would release calls the user holds",
    ),
    row(
        "permissions.mode",
        Treatment::KeptIfNarrower,
        "a stricter mode is kept (plan > ask > accept-edits > yolo); a laxer one would let calls run unasked",
    ),
    row(
        "permissions.allow",
        Treatment::Ignored,
        "an allow rule lets matching calls run unasked",
    ),
    row(
        "permissions.ask",
        Treatment::KeptIfNarrower,
        "an ask rule on read:, write:, tool. or call_peer: keys only adds a question; one that could match fetch: or message: keys (denied by default) would make them askable, and allowed in yolo",
    ),
    row(
        "permissions.deny",
        Treatment::Kept,
        "a deny rule only takes away",
    ),
    row(
        "path_scope.allow",
        Treatment::KeptIfNarrower,
        "patterns inside the scope below are kept; one reaching beyond it would open files the user's scope keeps out",
    ),
    row(
        "path_scope.deny",
        Treatment::Kept,
        "a deny pattern only takes away",
    ),
    row(
        "url_scope.allow",
        Treatment::KeptIfNarrower,
        "patterns inside the URL scope below are kept; a wider one would let fetch_url reach new URLs",
    ),
    row(
        "tools.descriptions",
        Treatment::Kept,
        "how tools are described changes only the prose a model reads: the same tools, schemas and rules apply",
    ),
    row(
        "tools.disable",
        Treatment::Kept,
        "removing a tool only takes away",
    ),
    row(
        "tools.enable",
        Treatment::KeptIfNarrower,
        "enabling a tool no layer below disabled changes nothing; re-enabling one the user disabled is a widening",
    ),
    row(
        "tools.wait_and_verify",
        Treatment::KeptIfNarrower,
        "ceilings (max_timeout_seconds, max_attempts) no higher than those below are kept; a higher one lets waits poll longer, and a poll_allow name the layers below do not list makes a tool that may change things pollable",
    ),
    row(
        "tools.call_peer",
        Treatment::Ignored,
        "it lets the model send prompts, and with them the project's content, to other daemons",
    ),
    row(
        "tools.sciontool_status",
        Treatment::Ignored,
        "its command is a program tackle runs, with tackle's environment, whenever the model signals the hub",
    ),
    row(
        "tool_output.lines",
        Treatment::Kept,
        "shapes only the model's preview: every byte stays retained, a cut stream says how to read the rest, and the rendering is bounded at 2 MiB",
    ),
    row(
        "tool_output.bytes",
        Treatment::Kept,
        "shapes only the model's preview (as tool_output.lines)",
    ),
    row(
        "tool_output.digests",
        Treatment::KeptIfNarrower,
        "false (raw survey output, no retrieve_raw) is kept; true over a lower false would add retrieve_raw back",
    ),
    row(
        "tool_output.media_max_bytes",
        Treatment::KeptIfNarrower,
        "a lower limit is kept; a higher one lets read_file hold and attach larger files",
    ),
    row(
        "fetch.allow_private_hosts",
        Treatment::KeptIfNarrower,
        "hosts the layers below already allow are kept; a new one would let fetch_url reach loopback or private services",
    ),
    row(
        "alert.targets",
        Treatment::IgnoredMovesSecret,
        "an alert target posts model-written text to the URL in url_env, with token_env as its bearer token",
    ),
    row(
        "safety.bash_search_gate",
        Treatment::KeptIfNarrower,
        "a stricter gate is kept (enforce > warn > allow); a laxer one lets bash searches through",
    ),
    row(
        "bash.env_deny",
        Treatment::Kept,
        "withholding more variables only takes away",
    ),
    row(
        "bash.env_pass",
        Treatment::IgnoredMovesSecret,
        "hands the named variables, withheld as secrets, to every command",
    ),
    row(
        "bash.prestart",
        Treatment::KeptIfNarrower,
        "false is kept; true over a lower false starts a shell the user turned off",
    ),
    row(
        "checkpoint.mode",
        Treatment::KeptIfNarrower,
        "\"operator\" only withholds mark_task_done; \"model\" over a lower \"operator\" lets the model declare task boundaries the user keeps for /done",
    ),
    row(
        "posture.mode",
        Treatment::KeptIfNarrower,
        "\"sealed\" is kept (fewer tools, content nobody vouched for hidden from the model); \"standard\" over a lower \"sealed\" gives the model the shell and every file back",
    ),
    row(
        "watchdog.mode",
        Treatment::KeptIfNarrower,
        "a closer watch is kept (enforce > warn > off); a laxer one lets a loop of calls that change nothing run on",
    ),
    row(
        "watchdog.repeat_limit",
        Treatment::KeptIfNarrower,
        "a lower limit reports repeated identical calls sooner and is kept; a higher one, or 0 (off), reports them later or never",
    ),
    row(
        "model.default",
        Treatment::Ignored,
        "chooses which of the user's providers receives the conversation (and the code in it)",
    ),
    row(
        "model.small",
        Treatment::Ignored,
        "chooses which of the user's providers receives side work: compaction, and the agentic tools' subtasks with the files and pages they read",
    ),
    row(
        "delegation.max_depth",
        Treatment::KeptIfNarrower,
        "a lower depth is kept (0 turns delegation off); a higher one lets a repository grow a deeper tree of model calls than the user allows",
    ),
    row(
        "delegation.max_running",
        Treatment::KeptIfNarrower,
        "fewer children at once is kept; more would run more model calls at once than the user allows",
    ),
    row(
        "messaging.enabled",
        Treatment::KeptIfNarrower,
        "false is kept; true where the user turned messaging off lets a repository's agents message each other",
    ),
    row(
        "messaging.max_body_bytes",
        Treatment::KeptIfNarrower,
        "a smaller body is kept; a larger one is more text one agent may push into another's context",
    ),
    row(
        "messaging.max_pending_per_session",
        Treatment::KeptIfNarrower,
        "fewer unread messages is kept; more lets a recipient's inbox grow past what the user allows",
    ),
    row(
        "messaging.max_hops",
        Treatment::KeptIfNarrower,
        "a shorter chain is kept; a longer one, or <= 0 (no count), lets agents message each other in longer loops",
    ),
    row(
        "messaging.max_inflight_per_pair",
        Treatment::KeptIfNarrower,
        "a smaller window is kept; a larger one, or 0 (no window), lets one agent flood another",
    ),
    row(
        "agent_types.tools",
        Treatment::Kept,
        "a project type's tools only narrow: a child is offered the intersection with its parent's catalog",
    ),
    row(
        "agent_types.permissions.ask",
        Treatment::Kept,
        "a project type's ask rules join its parent's policy: they only add questions",
    ),
    row(
        "agent_types.permissions.deny",
        Treatment::Kept,
        "a project type's deny rules join its parent's policy: they only take away",
    ),
    row(
        "agent_types.model",
        Treatment::Ignored,
        "a project type's model sends the child's conversation (and the code in it) to another of the user's models; untrusted, the child runs its parent's",
    ),
    row(
        "agent_types.permissions.allow",
        Treatment::Ignored,
        "an allow rule of a project type is the repository's word that calls may run unasked",
    ),
    row(
        "agent_types.replace",
        Treatment::Ignored,
        "a project type named as a built-in or user type would change what the parent's model gets when it asks for that type",
    ),
    row(
        "skills.allowed_tools",
        Treatment::Ignored,
        "a project skill's allowed-tools would let the calls it names run unasked while it is loaded",
    ),
    row(
        "skills.replace",
        Treatment::Ignored,
        "a project skill named as a user skill would replace the user's instructions when that name is loaded",
    ),
    row(
        "mcp.servers",
        Treatment::IgnoredMovesSecret,
        "a server runs a program of the project's choosing, or connects to a URL, and may be handed credentials (env ${NAME}, headers_env)",
    ),
];

/// The rule for a key.
pub fn rule(key: &str) -> Option<&'static KeyRule> {
    KEYS.iter().find(|r| r.key == key)
}

/// A secret a project setting hands over: the variable, and where its value would go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SecretMove {
    pub var: String,
    pub destination: String,
}

impl From<SecretUse> for SecretMove {
    fn from(s: SecretUse) -> Self {
        SecretMove {
            var: s.var,
            destination: s.destination,
        }
    }
}

/// One project setting that widens what the layers below allow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Widening {
    /// The row of [`KEYS`] it falls under (`permissions.allow`, `mcp.servers`…).
    pub key: &'static str,
    /// The value as a person reads it: a pattern, a mode, a variable name, a server's name.
    pub value: String,
    /// What identifies the value for trust: the value itself, or a server entry's every field.
    pub identity: String,
    /// Where it is written.
    pub origin: Origin,
    /// What it would change, for a person.
    pub effect: String,
    /// Secrets it would hand over.
    pub secrets: Vec<SecretMove>,
}

impl Widening {
    /// The text a trust record recognises this widening by: the key and the value, not the
    /// line (moving a line keeps trust; changing a value asks again).
    pub fn item(&self) -> String {
        format!("{}\n{}", self.key, self.identity)
    }
}

/// A project config file split by reach.
pub struct SplitFile {
    /// What applies while the folder is untrusted.
    pub narrowed: SettingsFile,
    pub widenings: Vec<Widening>,
}

/// Split `file` (the project's `.agents/config.toml`) against `lower`, the settings of the
/// layers beneath it (built-in defaults and user config, before flags).
pub fn split_file(lower: &Settings, file: &LoadedFile) -> SplitFile {
    let mut out = Splitter {
        lower,
        file,
        widenings: Vec::new(),
    };
    let s = &file.settings;
    let narrowed = SettingsFile {
        permissions: s.permissions.as_ref().map(|p| out.permissions(p)),
        path_scope: s.path_scope.as_ref().map(|p| out.path_scope(p)),
        url_scope: s.url_scope.as_ref().map(|u| out.url_scope(u)),
        tools: s.tools.as_ref().map(|t| out.tools(t)),
        tool_output: s.tool_output.as_ref().map(|o| out.tool_output(o)),
        fetch: s.fetch.as_ref().map(|f| out.fetch(f)),
        alert: s.alert.as_ref().map(|a| out.alert(a)),
        safety: s.safety.as_ref().map(|x| out.safety(x)),
        bash: s.bash.as_ref().map(|b| out.bash(b)),
        checkpoint: s.checkpoint.as_ref().map(|c| out.checkpoint(c)),
        posture: s.posture.as_ref().map(|p| out.posture(p)),
        watchdog: s.watchdog.as_ref().map(|w| out.watchdog(w)),
        model: s.model.as_ref().map(|m| out.model(m)),
        delegation: s.delegation.as_ref().map(|d| out.delegation(d)),
        messaging: s.messaging.as_ref().map(|m| out.messaging(m)),
        // Never applied from a project, trusted or not: `config::load_with` refuses a project
        // file that has them before it is split.
        providers: None,
        models: None,
        store: None,
        artifacts: None,
    };
    SplitFile {
        narrowed,
        widenings: out.widenings,
    }
}

/// Every server of the project's `.agents/mcp.json` is a widening; `origin` finds its line.
pub fn split_mcp(servers: &[ServerConfig], origin: impl Fn(&str) -> Origin) -> Vec<Widening> {
    servers
        .iter()
        .map(|server| {
            let effect = match &server.transport {
                Transport::Stdio { command, args, .. } => {
                    let mut line = command.clone();
                    for a in args {
                        line.push(' ');
                        line.push_str(a);
                    }
                    format!("starts MCP server `{}`: runs {line}", server.name)
                }
                Transport::Http { url, .. } => {
                    format!("starts MCP server `{}`: connects to {url}", server.name)
                }
            };
            Widening {
                key: "mcp.servers",
                value: server.name.clone(),
                identity: server.canonical(),
                origin: origin(&server.name),
                effect,
                secrets: server.secrets().into_iter().map(SecretMove::from).collect(),
            }
        })
        .collect()
}

struct Splitter<'a> {
    lower: &'a Settings,
    file: &'a LoadedFile,
    widenings: Vec<Widening>,
}

impl Splitter<'_> {
    fn widen<T: ToString>(&mut self, key: &'static str, value: &Spanned<T>, effect: String) {
        self.widen_with(key, value, effect, Vec::new());
    }

    fn widen_with<T: ToString>(
        &mut self,
        key: &'static str,
        value: &Spanned<T>,
        effect: String,
        secrets: Vec<SecretMove>,
    ) {
        let text = value.get_ref().to_string();
        self.widenings.push(Widening {
            key,
            identity: text.clone(),
            value: text,
            origin: self.file.origin(value),
            effect,
            secrets,
        });
    }

    fn permissions(&mut self, p: &PermissionsSection) -> PermissionsSection {
        let mode = p.mode.as_ref().and_then(|m| {
            if mode_is_no_laxer(&self.lower.mode.value, m.get_ref()) {
                return Some(m.clone());
            }
            self.widen(
                "permissions.mode",
                m,
                format!(
                    "mode {} instead of {} (from {})",
                    m.get_ref(),
                    self.lower.mode.value,
                    self.lower.mode.origin
                ),
            );
            None
        });
        let plan_mode = p.plan_mode.as_ref().and_then(|m| {
            let lower = &self.lower.plan_mode;
            if plan_mode_is_no_laxer(&lower.value, m.get_ref()) {
                return Some(m.clone());
            }
            let effect = format!(
                "plan_mode {} instead of {} (from {})",
                m.get_ref(),
                lower.value,
                lower.origin
            );
            self.widen("permissions.plan_mode", m, effect);
            None
        });
        for a in p.allow.iter().flatten() {
            self.widen(
                "permissions.allow",
                a,
                format!("calls matching {} run unasked", a.get_ref()),
            );
        }
        let ask = p.ask.as_ref().map(|list| {
            list.iter()
                .filter(|a| {
                    if ask_only_narrows(a.get_ref()) {
                        return true;
                    }
                    self.widen(
                        "permissions.ask",
                        a,
                        format!(
                            "{} could match fetch: or message: keys, which are denied unless a rule names them",
                            a.get_ref()
                        ),
                    );
                    false
                })
                .cloned()
                .collect()
        });
        PermissionsSection {
            mode,
            plan_mode,
            allow: None,
            ask,
            deny: p.deny.clone(),
        }
    }

    fn path_scope(&mut self, p: &PathScopeSection) -> PathScopeSection {
        let lower: Vec<&str> = self
            .lower
            .path_scope_allow
            .iter()
            .map(|a| a.value.as_str())
            .collect();
        let allow = p.allow.as_ref().and_then(|list| {
            self.subset(list, "path_scope.allow", |pattern| {
                lower
                    .iter()
                    .any(|l| path_pattern_within(pattern, l))
                    .then_some(())
                    .ok_or_else(|| {
                        format!(
                            "file tools may reach {pattern}, outside path_scope.allow below ({})",
                            lower.join(", ")
                        )
                    })
            })
        });
        PathScopeSection {
            allow,
            deny: p.deny.clone(),
        }
    }

    fn url_scope(&mut self, u: &UrlScopeSection) -> UrlScopeSection {
        let lower: Vec<&str> = self
            .lower
            .url_scope_allow
            .iter()
            .map(|a| a.value.as_str())
            .collect();
        let allow = u.allow.as_ref().and_then(|list| {
            self.subset(list, "url_scope.allow", |pattern| {
                lower
                    .iter()
                    .any(|l| key_pattern_within(pattern, l))
                    .then_some(())
                    .ok_or_else(|| format!("fetch_url may reach {pattern}"))
            })
        });
        UrlScopeSection { allow }
    }

    fn fetch(&mut self, f: &FetchSection) -> FetchSection {
        let lower: Vec<&str> = self
            .lower
            .fetch_private_hosts
            .iter()
            .map(|h| h.value.as_str())
            .collect();
        let allow_private_hosts = f.allow_private_hosts.as_ref().and_then(|list| {
            self.subset(list, "fetch.allow_private_hosts", |host| {
                lower
                    .iter()
                    .any(|l| l.eq_ignore_ascii_case(host))
                    .then_some(())
                    .ok_or_else(|| {
                        format!("fetch_url may reach {host} on loopback or private addresses")
                    })
            })
        });
        FetchSection {
            allow_private_hosts,
        }
    }

    /// A list that replaces the one below: each value `within` the lower list is kept, the
    /// others widen. `None` (the lower list stays) when every value widened; an empty list
    /// written as such is kept (it narrows to nothing).
    fn subset(
        &mut self,
        list: &[Spanned<String>],
        key: &'static str,
        within: impl Fn(&str) -> Result<(), String>,
    ) -> Option<Vec<Spanned<String>>> {
        let mut kept = Vec::new();
        for item in list {
            match within(item.get_ref()) {
                Ok(()) => kept.push(item.clone()),
                Err(effect) => self.widen(key, item, effect),
            }
        }
        (!kept.is_empty() || list.is_empty()).then_some(kept)
    }

    fn tools(&mut self, t: &ToolsSection) -> ToolsSection {
        let enable = t.enable.as_ref().map(|list| {
            list.iter()
                .filter(|e| {
                    let lower_disabled = self
                        .lower
                        .disabled_tools
                        .iter()
                        .find(|d| &d.value == e.get_ref());
                    let Some(d) = lower_disabled else {
                        return true;
                    };
                    let effect = format!("re-enables {}, disabled by {}", e.get_ref(), d.origin);
                    self.widen("tools.enable", e, effect);
                    false
                })
                .cloned()
                .collect()
        });
        ToolsSection {
            descriptions: t.descriptions.clone(),
            disable: t.disable.clone(),
            enable,
            wait_and_verify: t.wait_and_verify.as_ref().map(|w| self.wait_and_verify(w)),
            sciontool_status: t.sciontool_status.as_ref().map(|s| {
                if let Some(c) = &s.command {
                    let line = Spanned::new(c.span(), c.get_ref().join(" "));
                    let effect = format!("sciontool_status runs {}", line.get_ref());
                    self.widen("tools.sciontool_status", &line, effect);
                }
                SciontoolStatusSection { command: None }
            }),
            call_peer: t.call_peer.as_ref().map(|c| {
                if let Some(e) = &c.enabled {
                    let line = Spanned::new(e.span(), format!("enabled = {}", e.get_ref()));
                    let effect =
                        "call_peer sends prompts to the daemons a hub registers".to_owned();
                    self.widen("tools.call_peer", &line, effect);
                }
                CallPeerSection::default()
            }),
        }
    }

    fn wait_and_verify(&mut self, w: &WaitAndVerifySection) -> WaitAndVerifySection {
        const KEY: &str = "tools.wait_and_verify";
        let max_timeout_seconds = w.max_timeout_seconds.as_ref().and_then(|m| {
            let lower = &self.lower.wait_max_timeout_seconds;
            if *m.get_ref() <= lower.value {
                return Some(m.clone());
            }
            let effect = format!(
                "waits may run {} s instead of {} (from {})",
                m.get_ref(),
                lower.value,
                lower.origin
            );
            self.widen(KEY, m, effect);
            None
        });
        let max_attempts = w.max_attempts.as_ref().and_then(|m| {
            let lower = &self.lower.wait_max_attempts;
            if *m.get_ref() <= lower.value {
                return Some(m.clone());
            }
            let effect = format!(
                "waits may poll {} times instead of {} (from {})",
                m.get_ref(),
                lower.value,
                lower.origin
            );
            self.widen(KEY, m, effect);
            None
        });
        let lower: Vec<String> = self
            .lower
            .wait_poll_allow
            .iter()
            .map(|p| p.value.clone())
            .collect();
        let poll_allow = w.poll_allow.as_ref().map(|list| {
            list.iter()
                .filter(|p| {
                    if lower.contains(p.get_ref()) {
                        return true;
                    }
                    let effect = format!(
                        "wait_and_verify may poll {} repeatedly, though it does not declare itself read-only",
                        p.get_ref()
                    );
                    self.widen(KEY, p, effect);
                    false
                })
                .cloned()
                .collect()
        });
        WaitAndVerifySection {
            max_timeout_seconds,
            max_attempts,
            poll_allow,
        }
    }

    fn tool_output(&mut self, o: &ToolOutputSection) -> ToolOutputSection {
        let digests = o.digests.as_ref().and_then(|d| {
            if !*d.get_ref() || self.lower.digests.value {
                return Some(d.clone());
            }
            let effect = format!(
                "turns digests and retrieve_raw back on, off by {}",
                self.lower.digests.origin
            );
            self.widen("tool_output.digests", d, effect);
            None
        });
        let media_max_bytes = o.media_max_bytes.as_ref().and_then(|m| {
            let lower = &self.lower.media_max_bytes;
            if *m.get_ref() <= lower.value {
                return Some(m.clone());
            }
            let effect = format!(
                "read_file attaches media up to {} bytes instead of {} (from {})",
                m.get_ref(),
                lower.value,
                lower.origin
            );
            self.widen("tool_output.media_max_bytes", m, effect);
            None
        });
        ToolOutputSection {
            lines: o.lines.clone(),
            bytes: o.bytes.clone(),
            digests,
            media_max_bytes,
        }
    }

    fn alert(&mut self, a: &AlertSection) -> AlertSection {
        for (name, target) in a.targets.iter().flatten() {
            let url_var = target.url_env.get_ref();
            let mut secrets = vec![SecretMove {
                var: url_var.clone(),
                destination: format!("alert target `{name}` posts model-written text to it"),
            }];
            let mut value = format!("{name}: url_env={url_var}");
            if let Some(token) = &target.token_env {
                value.push_str(&format!(" token_env={}", token.get_ref()));
                secrets.push(SecretMove {
                    var: token.get_ref().clone(),
                    destination: format!(
                        "bearer token of alert target `{name}`, sent to the URL in ${url_var}"
                    ),
                });
            }
            let spanned = Spanned::new(target.url_env.span(), value);
            self.widen_with(
                "alert.targets",
                &spanned,
                format!("adds alert target `{name}`"),
                secrets,
            );
        }
        AlertSection { targets: None }
    }

    fn safety(&mut self, x: &SafetySection) -> SafetySection {
        let bash_search_gate = x.bash_search_gate.as_ref().and_then(|g| {
            let lower = &self.lower.bash_search_gate;
            if gate_is_no_laxer(&lower.value, g.get_ref()) {
                return Some(g.clone());
            }
            let effect = format!(
                "bash search gate {} instead of {} (from {})",
                g.get_ref(),
                lower.value,
                lower.origin
            );
            self.widen("safety.bash_search_gate", g, effect);
            None
        });
        SafetySection { bash_search_gate }
    }

    fn model(&mut self, m: &ModelSection) -> ModelSection {
        for (key, value, what) in [
            ("model.default", &m.default, "the conversation"),
            (
                "model.small",
                &m.small,
                "side work (the agentic tools' subtasks, with what they read)",
            ),
        ] {
            if let Some(v) = value {
                let lower = match key {
                    "model.default" => &self.lower.model_default,
                    _ => &self.lower.model_small,
                };
                let instead = lower.as_ref().map_or_else(
                    || "no model chosen".to_owned(),
                    |l| format!("{} (from {})", l.value, l.origin),
                );
                let effect = format!("sends {what} to {} instead of {instead}", v.get_ref());
                self.widen(key, v, effect);
            }
        }
        ModelSection::default()
    }

    fn bash(&mut self, b: &BashSection) -> BashSection {
        for name in b.env_pass.iter().flatten() {
            let secret = SecretMove {
                var: name.get_ref().clone(),
                destination: "the environment of every bash command".to_owned(),
            };
            self.widen_with(
                "bash.env_pass",
                name,
                format!("commands see ${}", name.get_ref()),
                vec![secret],
            );
        }
        let prestart = b.prestart.as_ref().and_then(|p| {
            if !*p.get_ref() || self.lower.bash_prestart.value {
                return Some(p.clone());
            }
            let effect = format!(
                "keeps a shell started ahead, off by {}",
                self.lower.bash_prestart.origin
            );
            self.widen("bash.prestart", p, effect);
            None
        });
        BashSection {
            env_deny: b.env_deny.clone(),
            env_pass: None,
            prestart,
        }
    }
}

/// Strictness of a mode: a higher rank allows less.
fn mode_rank(mode: Mode) -> u8 {
    match mode {
        Mode::Yolo => 0,
        Mode::AcceptEdits => 1,
        Mode::Ask => 2,
        Mode::Plan => 3,
    }
}

/// Whether `project` allows no more than `lower`. A mode that does not parse is kept, so its
/// error (with the file and line) is what the user sees.
fn mode_is_no_laxer(lower: &str, project: &str) -> bool {
    match (lower.parse::<Mode>(), project.parse::<Mode>()) {
        (Ok(l), Ok(p)) => mode_rank(p) >= mode_rank(l),
        _ => true,
    }
}

/// Whether `project`'s plan mode holds back no less than `lower`'s (required > advisory > off).
/// One that does not parse is kept, so its error is what the user sees.
fn plan_mode_is_no_laxer(lower: &str, project: &str) -> bool {
    use tackle_tool::PlanMode;
    let rank = |m: PlanMode| match m {
        PlanMode::Off => 0,
        PlanMode::Advisory => 1,
        PlanMode::Required => 2,
    };
    match (lower.parse::<PlanMode>(), project.parse::<PlanMode>()) {
        (Ok(l), Ok(p)) => rank(p) >= rank(l),
        _ => true,
    }
}

fn gate_rank(mode: SearchGateMode) -> u8 {
    match mode {
        SearchGateMode::Allow => 0,
        SearchGateMode::Warn => 1,
        SearchGateMode::Enforce => 2,
    }
}

fn gate_is_no_laxer(lower: &str, project: &str) -> bool {
    match (
        lower.parse::<SearchGateMode>(),
        project.parse::<SearchGateMode>(),
    ) {
        (Ok(l), Ok(p)) => gate_rank(p) >= gate_rank(l),
        _ => true,
    }
}

/// Key prefixes whose every key defaults to allow or ask (never deny), so an ask rule confined
/// to them can only add a question. A test checks each against the gate's defaults.
pub(crate) const ASK_NARROWS_UNDER: &[&str] = &["read:", "write:", "tool.", "call_peer:"];

/// The pattern text before its first wildcard, class or escape: every key it matches starts so.
fn literal_prefix(pattern: &str) -> &str {
    let end = pattern.find(['*', '?', '[', '\\']).unwrap_or(pattern.len());
    &pattern[..end]
}

/// Whether an ask rule only narrows: every key it could match has a non-deny default.
fn ask_only_narrows(pattern: &str) -> bool {
    let prefix = literal_prefix(pattern);
    ASK_NARROWS_UNDER.iter().any(|p| prefix.starts_with(p))
}

/// A path-scope pattern rewritten as the gate reads it (gitignore style): the gate's own
/// rewrite, so the two can never disagree.
fn path_glob(pattern: &str) -> String {
    tackle_gate::gitignore_glob(pattern)
}

/// Whether every path `inner` matches is matched by `outer` (both path-scope patterns), proven
/// from their text: `outer` is everything, the same glob, or a literal directory's `/**` that
/// `inner` starts inside. Anything else is not proven, and so is a widening.
fn path_pattern_within(inner: &str, outer: &str) -> bool {
    let (inner, outer) = (path_glob(inner), path_glob(outer));
    if outer == "**" || inner == outer {
        return true;
    }
    if inner.split('/').any(|s| s == "..") {
        return false;
    }
    let Some(dir) = outer.strip_suffix("/**") else {
        return false;
    };
    literal_prefix(dir) == dir && inner.starts_with(&format!("{dir}/"))
}

/// The same for key patterns (URL scope), where `*` crosses `/`: `outer` is the same pattern,
/// or a literal prefix followed only by `*`s that `inner` starts with.
fn key_pattern_within(inner: &str, outer: &str) -> bool {
    if inner == outer {
        return true;
    }
    let prefix = literal_prefix(outer);
    let rest = &outer[prefix.len()..];
    !rest.is_empty() && rest.bytes().all(|b| b == b'*') && inner.starts_with(prefix)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings_with(user: &str) -> (tempfile::TempDir, Settings) {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Settings::defaults(400, 30_000);
        if !user.is_empty() {
            let path = dir.path().join("user.toml");
            std::fs::write(&path, user).unwrap();
            s.apply_file(&LoadedFile::load(&path).unwrap().unwrap());
        }
        (dir, s)
    }

    fn split(user: &str, project: &str) -> SplitFile {
        let (dir, lower) = settings_with(user);
        let path = dir.path().join("project.toml");
        std::fs::write(&path, project).unwrap();
        let file = LoadedFile::load(&path).unwrap().unwrap();
        split_file(&lower, &file)
    }

    /// Whether `key` is a key of `.agents/config.toml` (the rest are judged by `split_mcp` and
    /// `agent_types` and `skills`, and tested there).
    fn in_settings_file(key: &str) -> bool {
        key != "mcp.servers" && !key.starts_with("agent_types.") && !key.starts_with("skills.")
    }

    /// One case a row: `key | user config | project config | kept or ignored`. `\n` in the
    /// configs is a line break. Every row of [`KEYS`] has at least one case, and a
    /// `KeptIfNarrower` key one of each outcome.
    const CASES: &str = r#"
permissions.mode | | [permissions]\nmode = "plan" | kept
permissions.plan_mode | | [permissions]\nplan_mode = "required" | kept
permissions.plan_mode | | [permissions]\nplan_mode = "advisory" | kept
permissions.plan_mode | [permissions]\nplan_mode = "required" | [permissions]\nplan_mode = "advisory" | ignored
permissions.plan_mode | [permissions]\nplan_mode = "advisory" | [permissions]\nplan_mode = "off" | ignored
permissions.plan_mode | [permissions]\nplan_mode = "advisory" | [permissions]\nplan_mode = "required" | kept
permissions.plan_mode | | [permissions]\nplan_mode = "sometimes" | kept
permissions.mode | | [permissions]\nmode = "ask" | kept
permissions.mode | | [permissions]\nmode = "yolo" | ignored
permissions.mode | | [permissions]\nmode = "accept-edits" | ignored
permissions.mode | [permissions]\nmode = "plan" | [permissions]\nmode = "ask" | ignored
permissions.mode | [permissions]\nmode = "yolo" | [permissions]\nmode = "accept-edits" | kept
permissions.mode | | [permissions]\nmode = "yollo" | kept
permissions.allow | | [permissions]\nallow = ["tool.bash.cmd:*"] | ignored
permissions.allow | | [permissions]\nallow = ["read:**"] | ignored
permissions.ask | | [permissions]\nask = ["read:.env"] | kept
permissions.ask | | [permissions]\nask = ["write:src/**"] | kept
permissions.ask | | [permissions]\nask = ["tool.bash.cmd:git *"] | kept
permissions.ask | | [permissions]\nask = ["call_peer:*"] | kept
permissions.ask | | [permissions]\nask = ["fetch:**"] | ignored
permissions.ask | | [permissions]\nask = ["message:*"] | ignored
permissions.ask | | [permissions]\nask = ["*"] | ignored
permissions.ask | | [permissions]\nask = ["[fm]etch:*"] | ignored
permissions.ask | | [permissions]\nask = ["fe*"] | ignored
permissions.deny | | [permissions]\ndeny = ["read:secrets/**"] | kept
permissions.deny | | [permissions]\ndeny = ["*"] | kept
path_scope.allow | | [path_scope]\nallow = ["src/**"] | kept
path_scope.allow | | [path_scope]\nallow = ["**"] | kept
path_scope.allow | | [path_scope]\nallow = [] | kept
path_scope.allow | [path_scope]\nallow = ["src/**"] | [path_scope]\nallow = ["src/a/**"] | kept
path_scope.allow | [path_scope]\nallow = ["src/**"] | [path_scope]\nallow = ["src/*.rs"] | kept
path_scope.allow | [path_scope]\nallow = ["/src/"] | [path_scope]\nallow = ["src/lib.rs"] | kept
path_scope.allow | [path_scope]\nallow = ["src/"] | [path_scope]\nallow = ["src/lib.rs"] | ignored
path_scope.allow | [path_scope]\nallow = ["src/**"] | [path_scope]\nallow = ["**"] | ignored
path_scope.allow | [path_scope]\nallow = ["src/**"] | [path_scope]\nallow = ["secrets/**"] | ignored
path_scope.allow | [path_scope]\nallow = ["src/**"] | [path_scope]\nallow = ["src2/**"] | ignored
path_scope.allow | [path_scope]\nallow = ["src/**"] | [path_scope]\nallow = ["*.rs"] | ignored
path_scope.allow | [path_scope]\nallow = ["src/**"] | [path_scope]\nallow = ["src/../x/**"] | ignored
path_scope.allow | [path_scope]\nallow = ["s?c/**"] | [path_scope]\nallow = ["sxc/a"] | ignored
path_scope.deny | | [path_scope]\ndeny = [".env"] | kept
url_scope.allow | | [url_scope]\nallow = ["http://127.0.0.1:*/**"] | ignored
url_scope.allow | | [url_scope]\nallow = [] | kept
url_scope.allow | [url_scope]\nallow = ["https://docs.rs/*"] | [url_scope]\nallow = ["https://docs.rs/tokio/*"] | kept
url_scope.allow | [url_scope]\nallow = ["https://docs.rs/*"] | [url_scope]\nallow = ["https://docs.rs/*"] | kept
url_scope.allow | [url_scope]\nallow = ["https://docs.rs/*"] | [url_scope]\nallow = ["https://docs.rs.evil.example/*"] | ignored
url_scope.allow | [url_scope]\nallow = ["https://docs.rs/*"] | [url_scope]\nallow = ["https://*"] | ignored
tools.descriptions | | [tools]\ndescriptions = "compact" | kept
tools.descriptions | | [tools]\ndescriptions = "full" | kept
tools.disable | | [tools]\ndisable = ["stat"] | kept
tools.enable | | [tools]\nenable = ["stat"] | kept
tools.enable | [tools]\ndisable = ["stat"] | [tools]\nenable = ["stat"] | ignored
tools.wait_and_verify | | [tools.wait_and_verify]\nmax_timeout_seconds = 60\nmax_attempts = 10 | kept
tools.wait_and_verify | | [tools.wait_and_verify]\nmax_timeout_seconds = 301 | ignored
tools.wait_and_verify | | [tools.wait_and_verify]\nmax_attempts = 61 | ignored
tools.wait_and_verify | | [tools.wait_and_verify]\npoll_allow = ["mcp__ci__rerun"] | ignored
tools.wait_and_verify | [tools.wait_and_verify]\npoll_allow = ["mcp__ci__rerun"] | [tools.wait_and_verify]\npoll_allow = ["mcp__ci__rerun"] | kept
tool_output.lines | | [tool_output]\nlines = 3 | kept
tool_output.lines | | [tool_output]\nlines = 5000 | kept
tool_output.bytes | | [tool_output]\nbytes = 1000000 | kept
tool_output.digests | | [tool_output]\ndigests = false | kept
tool_output.digests | | [tool_output]\ndigests = true | kept
tool_output.digests | [tool_output]\ndigests = false | [tool_output]\ndigests = true | ignored
tool_output.media_max_bytes | | [tool_output]\nmedia_max_bytes = 10 | kept
tool_output.media_max_bytes | | [tool_output]\nmedia_max_bytes = 99999999999 | ignored
fetch.allow_private_hosts | | [fetch]\nallow_private_hosts = ["localhost:8080"] | ignored
fetch.allow_private_hosts | [fetch]\nallow_private_hosts = ["localhost:8080", "10.0.0.5"] | [fetch]\nallow_private_hosts = ["10.0.0.5"] | kept
fetch.allow_private_hosts | | [fetch]\nallow_private_hosts = [] | kept
alert.targets | | [alert.targets.x]\nurl_env = "HOOK"\ntoken_env = "OPENAI_API_KEY" | ignored
alert.targets | | [alert.targets.x]\nurl_env = "HOOK" | ignored
safety.bash_search_gate | | [safety]\nbash_search_gate = "enforce" | kept
safety.bash_search_gate | | [safety]\nbash_search_gate = "allow" | ignored
safety.bash_search_gate | | [safety]\nbash_search_gate = "warn" | ignored
safety.bash_search_gate | [safety]\nbash_search_gate = "allow" | [safety]\nbash_search_gate = "warn" | kept
safety.bash_search_gate | | [safety]\nbash_search_gate = "off" | kept
bash.env_deny | | [bash]\nenv_deny = ["CORP_*"] | kept
bash.env_pass | | [bash]\nenv_pass = ["GITHUB_TOKEN", "SSH_AUTH_SOCK"] | ignored
bash.prestart | | [bash]\nprestart = false | kept
bash.prestart | | [bash]\nprestart = true | kept
bash.prestart | [bash]\nprestart = false | [bash]\nprestart = true | ignored
checkpoint.mode | | [checkpoint]\nmode = "operator" | kept
checkpoint.mode | | [checkpoint]\nmode = "model" | kept
checkpoint.mode | [checkpoint]\nmode = "operator" | [checkpoint]\nmode = "model" | ignored
posture.mode | | [posture]\nmode = "sealed" | kept
posture.mode | | [posture]\nmode = "standard" | kept
posture.mode | [posture]\nmode = "sealed" | [posture]\nmode = "standard" | ignored
posture.mode | [posture]\nmode = "sealed" | [posture]\nmode = "sealed" | kept
watchdog.mode | | [watchdog]\nmode = "enforce" | kept
watchdog.mode | | [watchdog]\nmode = "off" | ignored
watchdog.mode | | [watchdog]\nmode = "warn" | ignored
watchdog.mode | [watchdog]\nmode = "off" | [watchdog]\nmode = "warn" | kept
watchdog.mode | [watchdog]\nmode = "enforce" | [watchdog]\nmode = "warn" | ignored
watchdog.repeat_limit | | [watchdog]\nrepeat_limit = 2 | kept
watchdog.repeat_limit | | [watchdog]\nrepeat_limit = 5 | ignored
watchdog.repeat_limit | | [watchdog]\nrepeat_limit = 0 | ignored
watchdog.repeat_limit | [watchdog]\nrepeat_limit = 0 | [watchdog]\nrepeat_limit = 9 | kept
tools.call_peer | | [tools.call_peer]\nenabled = true | ignored
tools.sciontool_status | | [tools.sciontool_status]\ncommand = ["./sciontool", "status"] | ignored
model.default | | [model]\ndefault = "openai:gpt-5" | ignored
model.default | [model]\ndefault = "anthropic:claude-sonnet-4-5" | [model]\ndefault = "anthropic:claude-sonnet-4-5" | ignored
model.small | | [model]\nsmall = "openai:gpt-5-mini" | ignored
delegation.max_depth | | [delegation]\nmax_depth = 0 | kept
delegation.max_depth | | [delegation]\nmax_depth = 2 | kept
delegation.max_depth | | [delegation]\nmax_depth = 3 | ignored
delegation.max_depth | [delegation]\nmax_depth = 5 | [delegation]\nmax_depth = 4 | kept
delegation.max_running | | [delegation]\nmax_running = 1 | kept
delegation.max_running | | [delegation]\nmax_running = 5 | ignored
delegation.max_running | [delegation]\nmax_running = 1 | [delegation]\nmax_running = 2 | ignored
messaging.enabled | | [messaging]\nenabled = false | kept
messaging.enabled | | [messaging]\nenabled = true | kept
messaging.enabled | [messaging]\nenabled = false | [messaging]\nenabled = true | ignored
messaging.max_body_bytes | | [messaging]\nmax_body_bytes = 100 | kept
messaging.max_body_bytes | | [messaging]\nmax_body_bytes = 100000 | ignored
messaging.max_pending_per_session | | [messaging]\nmax_pending_per_session = 1 | kept
messaging.max_pending_per_session | | [messaging]\nmax_pending_per_session = 33 | ignored
messaging.max_hops | | [messaging]\nmax_hops = 3 | kept
messaging.max_hops | | [messaging]\nmax_hops = 9 | ignored
messaging.max_hops | | [messaging]\nmax_hops = 0 | ignored
messaging.max_hops | [messaging]\nmax_hops = 0 | [messaging]\nmax_hops = 100 | kept
messaging.max_hops | [messaging]\nmax_hops = 0 | [messaging]\nmax_hops = -1 | kept
messaging.max_inflight_per_pair | | [messaging]\nmax_inflight_per_pair = 2 | kept
messaging.max_inflight_per_pair | | [messaging]\nmax_inflight_per_pair = 0 | ignored
messaging.max_inflight_per_pair | [messaging]\nmax_inflight_per_pair = 0 | [messaging]\nmax_inflight_per_pair = 7 | kept
"#;

    #[test]
    fn every_key_is_judged_as_the_table_says() {
        let mut seen: Vec<(&str, &str)> = Vec::new();
        for line in CASES.lines().filter(|l| !l.trim().is_empty()) {
            let cols: Vec<&str> = line.split('|').map(str::trim).collect();
            let [key, user, project, want] = cols[..] else {
                panic!("bad case line {line:?}");
            };
            let rule = rule(key).unwrap_or_else(|| panic!("{key} has no row in KEYS"));
            let user = user.replace("\\n", "\n");
            let project = project.replace("\\n", "\n");
            let out = split(&user, &project);
            let ignored = out.widenings.iter().any(|w| w.key == key);
            assert_eq!(ignored, want == "ignored", "{line}\n{:#?}", out.widenings);
            assert!(
                out.widenings.iter().all(|w| w.key == key),
                "{line}: only {key} may widen: {:#?}",
                out.widenings
            );
            match rule.treatment {
                Treatment::Kept => assert_eq!(want, "kept", "{line}: {key} is always kept"),
                Treatment::Ignored | Treatment::IgnoredMovesSecret => {
                    assert_eq!(want, "ignored", "{line}: {key} is always ignored")
                }
                Treatment::KeptIfNarrower => {}
            }
            if rule.treatment == Treatment::IgnoredMovesSecret {
                assert!(
                    out.widenings.iter().all(|w| !w.secrets.is_empty()),
                    "{line}: the secrets are named"
                );
            }
            seen.push((key, want));
        }
        for r in KEYS.iter().filter(|r| in_settings_file(r.key)) {
            for want in ["kept", "ignored"] {
                let needed = match r.treatment {
                    Treatment::Kept => want == "kept",
                    Treatment::Ignored | Treatment::IgnoredMovesSecret => want == "ignored",
                    Treatment::KeptIfNarrower => true,
                };
                assert!(
                    !needed || seen.contains(&(r.key, want)),
                    "{} has no {want} case",
                    r.key
                );
            }
        }
    }

    /// The keys the parser accepts, read from its own "expected one of" error, so a key added
    /// to `settings/file.rs` without a row in [`KEYS`] fails here.
    #[test]
    fn the_table_covers_every_key_the_parser_accepts() {
        fn expected(text: &str) -> Vec<String> {
            let err = toml::from_str::<SettingsFile>(text)
                .unwrap_err()
                .to_string();
            let list = err.split("expected").nth(1).unwrap_or_else(|| {
                panic!("no list of keys in {err:?}");
            });
            list.split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_owned)
                .collect()
        }
        let sections = expected("[no_such_section]\n");
        assert!(sections.len() >= 9, "{sections:?}");
        let mut keys = Vec::new();
        // Refused whole from any project file (`load.rs`), trusted or not: no row to judge.
        let refused = ["store", "artifacts"];
        for section in sections.iter().filter(|s| !refused.contains(&s.as_str())) {
            for key in expected(&format!("[{section}]\nno_such_key = 1\n")) {
                keys.push(format!("{section}.{key}"));
            }
        }
        for key in &keys {
            assert!(rule(key).is_some(), "{key} has no row in KEYS");
        }
        for r in KEYS.iter().filter(|r| in_settings_file(r.key)) {
            assert!(keys.iter().any(|k| k == r.key), "{} is not a key", r.key);
        }
    }

    #[test]
    fn ask_prefixes_never_default_to_deny() {
        let policy = tackle_gate::Policy::new(
            Vec::new(),
            Mode::Ask,
            tackle_gate::PathScope::default(),
            tackle_gate::UrlScope::default(),
        )
        .unwrap();
        for prefix in ASK_NARROWS_UNDER {
            let key = format!("{prefix}x");
            let req = tackle_gate::Request {
                tool: "t",
                keys: std::slice::from_ref(&key),
                mutating: false,
            };
            assert!(
                !matches!(
                    policy.evaluate(&req, &tackle_gate::Grants::default()),
                    tackle_gate::Decision::Deny { .. }
                ),
                "{key} defaults to deny"
            );
        }
        for key in ["fetch:https://x/", "message:parent"] {
            let key = key.to_owned();
            let req = tackle_gate::Request {
                tool: "t",
                keys: std::slice::from_ref(&key),
                mutating: false,
            };
            assert!(matches!(
                policy.evaluate(&req, &tackle_gate::Grants::default()),
                tackle_gate::Decision::Deny { .. }
            ));
        }
    }

    #[test]
    fn a_partly_wider_list_keeps_its_narrow_part() {
        let out = split(
            "[path_scope]\nallow = [\"src/**\", \"docs/**\"]\n",
            "[path_scope]\nallow = [\"src/**\", \"etc/**\"]\n",
        );
        let kept: Vec<String> = out
            .narrowed
            .path_scope
            .unwrap()
            .allow
            .unwrap()
            .iter()
            .map(|s| s.get_ref().clone())
            .collect();
        assert_eq!(kept, ["src/**"]);
        let wide = split("", "[path_scope]\nallow = [\"../x/**\"]\n");
        assert!(
            wide.widenings.is_empty(),
            "a malformed pattern is kept so its error shows"
        );
    }

    #[test]
    fn items_ignore_the_line_but_not_the_value() {
        let a = split("", "[permissions]\nallow = [\"read:**\"]\n");
        let b = split("", "\n\n[permissions]\nallow = [\n\"read:**\"]\n");
        let c = split("", "[permissions]\nallow = [\"read:**/x\"]\n");
        assert_eq!(a.widenings[0].item(), b.widenings[0].item());
        assert_ne!(a.widenings[0].origin, b.widenings[0].origin);
        assert_ne!(a.widenings[0].item(), c.widenings[0].item());
    }
}
