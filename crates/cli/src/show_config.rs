//! `tackle config`: the effective settings, each with its origin.

use std::io::Write;

use anyhow::Context;
use serde_json::json;

use crate::config::Config;
use crate::settings::{RuleEffect, Sourced};
use crate::trust::classify;
use crate::trust::prompt::visible;

fn effect_name(e: RuleEffect) -> &'static str {
    match e {
        RuleEffect::Allow => "allow",
        RuleEffect::Ask => "ask",
        RuleEffect::Deny => "deny",
    }
}

fn sourced_json<T: serde::Serialize>(s: &Sourced<T>) -> serde_json::Value {
    json!({ "value": s.value, "from": s.origin.to_string() })
}

/// Which shell runs bash lines, and whether one is started ahead.
fn shell_json(program: &tackle_process::ShellProgram, prestart: bool) -> serde_json::Value {
    let kind = match program.kind() {
        tackle_process::ShellKind::Bash => "bash",
        tackle_process::ShellKind::Sh => "sh",
    };
    json!({
        "path": program.path().display().to_string(),
        "kind": kind,
        "invocation": program.invocation(),
        "started_ahead": tackle_process::Shell::starts_ahead(program, prestart),
    })
}

pub fn print(config: &Config, posture: &str, json_out: bool) -> anyhow::Result<()> {
    let s = &config.settings;
    let mut out = std::io::stdout().lock();
    if json_out {
        let list = |v: &[Sourced<String>]| v.iter().map(sourced_json).collect::<Vec<_>>();
        let value = json!({
            "root": config.root.display().to_string(),
            "files": config.files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>(),
            "mode": sourced_json(&s.mode),
            "plan_mode": sourced_json(&s.plan_mode),
            "checkpoint": { "mode": sourced_json(&s.checkpoint_mode) },
            "posture": { "mode": sourced_json(&s.posture_mode) },
            "tools": { "descriptions": sourced_json(&s.tool_descriptions) },
            "watchdog": {
                "mode": sourced_json(&s.watchdog_mode),
                "repeat_limit": sourced_json(&s.watchdog_repeat_limit),
            },
            "delegation": {
                "max_depth": sourced_json(&s.delegation_max_depth),
                "max_running": sourced_json(&s.delegation_max_running),
            },
            "messaging": {
                "enabled": sourced_json(&s.messaging_enabled),
                "max_body_bytes": sourced_json(&s.messaging_max_body_bytes),
                "max_pending_per_session": sourced_json(&s.messaging_max_pending),
                "max_hops": sourced_json(&s.messaging_max_hops),
                "max_inflight_per_pair": sourced_json(&s.messaging_max_inflight),
            },
            "rules": s.rules.iter().map(|(e, r)| json!({
                "effect": effect_name(*e), "pattern": r.value, "from": r.origin.to_string()
            })).collect::<Vec<_>>(),
            "storage": config.storage.describe(),
            "path_scope": { "allow": list(&s.path_scope_allow), "deny": list(&s.path_scope_deny) },
            "url_scope": { "allow": list(&s.url_scope_allow) },
            "disabled_tools": list(&s.disabled_tools),
            "fetch": { "allow_private_hosts": list(&s.fetch_private_hosts) },
            "alert": { "targets": s.alert_targets.iter().map(|t| json!({
                "name": t.name,
                "url_env": sourced_json(&t.url_env),
                "token_env": t.token_env.as_ref().map(sourced_json),
                "deliverable": config.alert_targets.iter().any(|d| d.name == t.name),
            })).collect::<Vec<_>>() },
            "tool_output": {
                "lines": sourced_json(&s.preview_lines),
                "bytes": sourced_json(&s.preview_bytes),
                "digests": sourced_json(&s.digests),
                "media_max_bytes": sourced_json(&s.media_max_bytes),
            },
            "bash": {
                "prestart": sourced_json(&s.bash_prestart),
                "shell": shell_json(
                    tackle_process::ShellProgram::discover(),
                    s.bash_prestart.value,
                ),
                "env_withheld": &config.process_env.withhold,
            },
            "mcp": { "declared": config.mcp_declared, "started": config.mcp_servers.len() },
            "trust": {
                "state": config.trust.state.as_str(),
                "root": config.trust.root,
                "store": crate::trust::TrustStore::user().map(|t| t.path().display().to_string()),
                "store_problem": config.trust.store_problem,
                "ignored": config.trust.ignored().iter().map(|w| json!({
                    "key": w.key,
                    "value": w.value,
                    "from": w.origin.to_string(),
                    "effect": w.effect,
                    "why": classify::rule(w.key).map(|r| r.why),
                    "treatment": classify::rule(w.key).map(|r| r.treatment.as_str()),
                    "secrets": w.secrets.iter().map(|m| json!({
                        "var": m.var, "destination": m.destination,
                    })).collect::<Vec<_>>(),
                })).collect::<Vec<_>>(),
                "how_to_trust": (!config.trust.ignored().is_empty()).then_some("tackle trust"),
            },
            "posture": posture,
        });
        serde_json::to_writer_pretty(&mut out, &value).context("writing the configuration")?;
        writeln!(out).context("writing the configuration")?;
        return Ok(());
    }
    let mut text = String::new();
    let row = |text: &mut String, key: &str, value: &str, from: &dyn std::fmt::Display| {
        text.push_str(&format!("{key:<22} {value:<34} # {from}\n"));
    };
    text.push_str(&format!(
        "root                   {}\n",
        config.root.display()
    ));
    if config.files.is_empty() {
        text.push_str("files                  (none; built-in defaults and flags only)\n");
    }
    for f in &config.files {
        text.push_str(&format!("file                   {}\n", f.display()));
    }
    row(&mut text, "mode", &s.mode.value, &s.mode.origin);
    row(
        &mut text,
        "plan_mode",
        &s.plan_mode.value,
        &s.plan_mode.origin,
    );
    row(
        &mut text,
        "checkpoint.mode",
        &s.checkpoint_mode.value,
        &s.checkpoint_mode.origin,
    );
    row(
        &mut text,
        "posture.mode",
        &s.posture_mode.value,
        &s.posture_mode.origin,
    );
    row(
        &mut text,
        "tools.descriptions",
        &s.tool_descriptions.value,
        &s.tool_descriptions.origin,
    );
    row(
        &mut text,
        "watchdog.mode",
        &s.watchdog_mode.value,
        &s.watchdog_mode.origin,
    );
    row(
        &mut text,
        "watchdog.repeat_limit",
        &s.watchdog_repeat_limit.value.to_string(),
        &s.watchdog_repeat_limit.origin,
    );
    row(
        &mut text,
        "delegation.max_depth",
        &s.delegation_max_depth.value.to_string(),
        &s.delegation_max_depth.origin,
    );
    row(
        &mut text,
        "delegation.max_running",
        &s.delegation_max_running.value.to_string(),
        &s.delegation_max_running.origin,
    );
    for (key, value, origin) in [
        (
            "messaging.enabled",
            s.messaging_enabled.value.to_string(),
            &s.messaging_enabled.origin,
        ),
        (
            "messaging.max_body_bytes",
            s.messaging_max_body_bytes.value.to_string(),
            &s.messaging_max_body_bytes.origin,
        ),
        (
            "messaging.max_pending",
            s.messaging_max_pending.value.to_string(),
            &s.messaging_max_pending.origin,
        ),
        (
            "messaging.max_hops",
            s.messaging_max_hops.value.to_string(),
            &s.messaging_max_hops.origin,
        ),
        (
            "messaging.max_inflight",
            s.messaging_max_inflight.value.to_string(),
            &s.messaging_max_inflight.origin,
        ),
    ] {
        row(&mut text, key, &value, origin);
    }
    row(
        &mut text,
        "storage",
        &config.storage.describe(),
        &"[store], [artifacts] of the user config",
    );
    if s.rules.is_empty() {
        text.push_str("rules                  (none; each key falls to its tool's default)\n");
    }
    for (e, r) in &s.rules {
        row(&mut text, effect_name(*e), &r.value, &r.origin);
    }
    for a in &s.path_scope_allow {
        row(&mut text, "path_scope.allow", &a.value, &a.origin);
    }
    for d in &s.path_scope_deny {
        row(&mut text, "path_scope.deny", &d.value, &d.origin);
    }
    if s.url_scope_allow.is_empty() {
        text.push_str("url_scope.allow        (empty: fetch_url is not offered)\n");
    }
    for a in &s.url_scope_allow {
        row(&mut text, "url_scope.allow", &a.value, &a.origin);
    }
    for t in &s.disabled_tools {
        row(&mut text, "tools.disable", &t.value, &t.origin);
    }
    for h in &s.fetch_private_hosts {
        row(&mut text, "fetch.allow_private_hosts", &h.value, &h.origin);
    }
    for t in &s.alert_targets {
        let state = match config
            .undeliverable_targets
            .iter()
            .find(|(n, _)| *n == t.name)
        {
            Some((_, var)) => format!("dropped: ${var} is unset"),
            None => "deliverable".to_owned(),
        };
        let token = t
            .token_env
            .as_ref()
            .map(|e| format!(" token_env={}", e.value))
            .unwrap_or_default();
        row(
            &mut text,
            &format!("alert.targets.{}", t.name),
            &format!("url_env={}{token} ({state})", t.url_env.value),
            &t.url_env.origin,
        );
    }
    row(
        &mut text,
        "tool_output.lines",
        &s.preview_lines.value.to_string(),
        &s.preview_lines.origin,
    );
    row(
        &mut text,
        "tool_output.bytes",
        &s.preview_bytes.value.to_string(),
        &s.preview_bytes.origin,
    );
    row(
        &mut text,
        "tool_output.digests",
        &s.digests.value.to_string(),
        &s.digests.origin,
    );
    row(
        &mut text,
        "tool_output.media_max_bytes",
        &s.media_max_bytes.value.to_string(),
        &s.media_max_bytes.origin,
    );
    let prestart = match tackle_process::ShellProgram::discover().kind() {
        tackle_process::ShellKind::Bash if s.bash_prestart.value => {
            "true (unused: bash is never started ahead)".to_owned()
        }
        _ => s.bash_prestart.value.to_string(),
    };
    row(
        &mut text,
        "bash.prestart",
        &prestart,
        &s.bash_prestart.origin,
    );
    for v in &config.process_env.withhold {
        row(
            &mut text,
            "bash.env_withheld",
            v,
            &"named as a secret by the configuration",
        );
    }
    if config.mcp_declared > 0 {
        text.push_str(&format!(
            "mcp.servers            {} declared, {} may start\n",
            config.mcp_declared,
            config.mcp_servers.len()
        ));
    }
    let trust = &config.trust;
    text.push_str(&format!(
        "trust                  {}\n",
        trust.state.as_str()
    ));
    if let Some(problem) = &trust.store_problem {
        text.push_str(&format!("trust.store            {}\n", visible(problem)));
    }
    for w in trust.ignored() {
        row(
            &mut text,
            &format!("ignored {}", w.key),
            &visible(&w.value),
            &visible(&w.origin.to_string()),
        );
        for m in &w.secrets {
            text.push_str(&format!(
                "  would move ${} → {}\n",
                visible(&m.var),
                visible(&m.destination)
            ));
        }
    }
    if !trust.ignored().is_empty() {
        text.push_str(
            "trust                  the settings marked ignored apply once you run `tackle trust` in this folder\n",
        );
    }
    text.push_str(&format!("\n{posture}\n"));
    out.write_all(text.as_bytes())
        .context("writing the configuration")?;
    Ok(())
}
