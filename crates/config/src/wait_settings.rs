//! `[tools.wait_and_verify]` checked and turned into the tool's [`WaitSettings`].

use std::time::Duration;

use crate::bail;
use tackle_tools::WaitSettings;

use crate::settings::Settings;

/// The ceilings and `poll_allow` as wait_and_verify gets them. A ceiling must leave the wait
/// inside the runtime's call timeout (a wait cut by it would report nothing), and `poll_allow`
/// names only tools that are not built-ins: a built-in is pollable exactly when it is read-only.
pub fn wait_settings(settings: &Settings, call_timeout: Duration) -> crate::Result<WaitSettings> {
    let timeout = &settings.wait_max_timeout_seconds;
    let limit = call_timeout.as_secs_f64();
    if !(timeout.value > 0.0 && timeout.value < limit) {
        bail!(
            "[tools.wait_and_verify] max_timeout_seconds = {} ({}) must be above 0 and below the \
             call timeout of {limit} s; a wait longer than its call would be cut off unreported",
            timeout.value,
            timeout.origin
        );
    }
    let attempts = &settings.wait_max_attempts;
    if attempts.value == 0 {
        bail!(
            "[tools.wait_and_verify] max_attempts = 0 ({}) allows no poll; set at least 1",
            attempts.origin
        );
    }
    let mut poll_allow = Vec::new();
    for name in &settings.wait_poll_allow {
        if tackle_tools::BUILTIN_TOOL_NAMES.contains(&name.value.as_str()) {
            bail!(
                "[tools.wait_and_verify] poll_allow names the built-in `{}` ({}); built-ins are \
                 polled exactly when they are read-only, so remove it (poll_allow is for MCP \
                 tools, named mcp__<server>__<tool>)",
                name.value,
                name.origin
            );
        }
        poll_allow.push(name.value.clone());
    }
    Ok(WaitSettings {
        max_timeout_seconds: timeout.value,
        max_attempts: attempts.value,
        poll_allow,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::{Origin, Sourced};

    fn with(timeout: f64, attempts: u32, allow: &[&str]) -> Settings {
        let mut s = Settings::defaults(1, 1);
        s.wait_max_timeout_seconds = Sourced::new(timeout, Origin::BuiltIn);
        s.wait_max_attempts = Sourced::new(attempts, Origin::BuiltIn);
        s.wait_poll_allow = allow
            .iter()
            .map(|a| Sourced::new((*a).to_owned(), Origin::BuiltIn))
            .collect();
        s
    }

    /// One row per setting: accepted, or the words of its refusal.
    #[test]
    fn settings_are_checked_as_the_table_says() {
        let rows: &[(f64, u32, &[&str], Option<&str>)] = &[
            (300.0, 60, &[], None),
            (599.0, 1, &["mcp__ci__status"], None),
            (600.0, 60, &[], Some("below the call timeout")),
            (0.0, 60, &[], Some("above 0")),
            (30.0, 0, &[], Some("allows no poll")),
            (30.0, 5, &["write_file"], Some("built-in `write_file`")),
        ];
        for (timeout, attempts, allow, want) in rows {
            let got = wait_settings(&with(*timeout, *attempts, allow), Duration::from_secs(600));
            match (got, want) {
                (Ok(w), None) => assert_eq!(w.max_attempts, *attempts),
                (Err(e), Some(words)) => assert!(e.to_string().contains(words), "{e}"),
                (got, want) => panic!("{timeout} {attempts} {allow:?}: {got:?}, want {want:?}"),
            }
        }
    }
}
