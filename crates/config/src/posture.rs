//! The one-line posture summary `tackle serve` and `tackle run` print at start-up, and
//! `tackle config` shows: mode, scopes, fetch and alert state, disabled tools, gates armed or
//! inert.

use crate::load::Config;

pub fn line(config: &Config) -> String {
    let s = &config.settings;
    let scope = if s.path_scope_allow.len() == 1 && s.path_scope_allow[0].value == "**" {
        "project root".to_owned()
    } else {
        s.path_scope_allow
            .iter()
            .map(|a| a.value.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let scope = if s.path_scope_deny.is_empty() {
        scope
    } else {
        let deny: Vec<&str> = s.path_scope_deny.iter().map(|d| d.value.as_str()).collect();
        format!("{scope} minus {}", deny.join(", "))
    };
    let fetch = if s.url_scope_allow.is_empty() {
        "off (url_scope.allow is empty)".to_owned()
    } else if !config.policy.advertises("fetch_url", &["fetch"]) {
        format!(
            "off ({} url pattern(s), but no allow or ask rule for fetch:)",
            s.url_scope_allow.len()
        )
    } else {
        let private = if config.private_hosts.is_empty() {
            "none".to_owned()
        } else {
            config
                .private_hosts
                .iter()
                .map(|h| h.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        format!(
            "on ({} url pattern(s), every redirect hop re-checked; private hosts: {private})",
            s.url_scope_allow.len()
        )
    };
    let alert = if config.alert_targets.is_empty() {
        "off".to_owned()
    } else {
        config
            .alert_targets
            .iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let disabled = if s.disabled_tools.is_empty() {
        "none".to_owned()
    } else {
        s.disabled_tools
            .iter()
            .map(|t| t.value.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let tools = crate::host::builtin_config(config);
    let search_gate = if tools.registered.iter().any(|t| t == "bash") {
        let shell = tackle_tools::bash::shell_posture(tackle_process::ShellProgram::discover());
        format!("{} · {shell}", tools.search_gate().posture())
    } else {
        "bash search gate: inert (no bash tool)".to_owned()
    };
    let plan = match config.plan_mode {
        tackle_tool::PlanMode::Off => String::new(),
        tackle_tool::PlanMode::Advisory => {
            " · plan mode: advisory (record_plan offered)".to_owned()
        }
        tackle_tool::PlanMode::Required => {
            " · plan mode: required (mutating calls wait for record_plan)".to_owned()
        }
    };
    let task = s.task.map_or_else(String::new, |t| {
        let dropped: Vec<&str> = t
            .drops()
            .iter()
            .copied()
            .filter(|d| s.disabled_tools.iter().any(|x| x.value == *d))
            .collect();
        let back: Vec<&str> = t
            .drops()
            .iter()
            .copied()
            .filter(|d| !dropped.contains(d))
            .collect();
        let dropped = if dropped.is_empty() {
            "nothing".to_owned()
        } else {
            dropped.join(", ")
        };
        let back = if back.is_empty() {
            String::new()
        } else {
            format!("; put back by --enable-tools: {}", back.join(", "))
        };
        format!(" · task {}: drops {dropped}{back}", t.as_str())
    });
    let rules = |e| s.rules.iter().filter(|(x, _)| *x == e).count();
    use crate::settings::RuleEffect::*;
    format!(
        "posture: mode {} · paths: {scope} · fetch: {fetch} · alert: {alert} · rules: {} allow, {} ask, {} deny · disabled tools: {disabled}{task} · {search_gate}{plan}",
        s.mode.value,
        rules(Allow),
        rules(Ask),
        rules(Deny)
    )
}
