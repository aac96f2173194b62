//! `[checkpoint]` and `[watchdog]` from an untrusted project: a value that declares fewer task
//! boundaries for the model, or watches the loop more closely, is kept; one that hands the model
//! back mark_task_done or loosens the watchdog the user chose is a widening.

use tackle_agent::WatchdogMode;

use super::Splitter;
use crate::settings::{CheckpointSection, PostureSection, WatchdogSection};

impl Splitter<'_> {
    pub(super) fn checkpoint(&mut self, c: &CheckpointSection) -> CheckpointSection {
        let mode = c.mode.as_ref().and_then(|m| {
            let lower = &self.lower.checkpoint_mode;
            // "operator" only withholds a tool; "model" over a lower "operator" gives it back.
            // A value that is neither is kept, so its error names the file and line.
            if m.get_ref() != "model" || lower.value != "operator" {
                return Some(m.clone());
            }
            let effect = format!(
                "lets the model declare task boundaries (mark_task_done), withheld by {}",
                lower.origin
            );
            self.widen("checkpoint.mode", m, effect);
            None
        });
        CheckpointSection { mode }
    }

    pub(super) fn posture(&mut self, p: &PostureSection) -> PostureSection {
        let mode = p.mode.as_ref().and_then(|m| {
            let lower = &self.lower.posture_mode;
            // "sealed" only takes away; "standard" over a lower "sealed" gives everything back.
            // A value that is neither is kept, so its error names the file and line.
            if m.get_ref() != "standard" || lower.value != "sealed" {
                return Some(m.clone());
            }
            let effect = format!(
                "runs the agent in the standard posture (shell, every file shown) instead of sealed, set by {}",
                lower.origin
            );
            self.widen("posture.mode", m, effect);
            None
        });
        PostureSection { mode }
    }

    pub(super) fn watchdog(&mut self, w: &WatchdogSection) -> WatchdogSection {
        let mode = w.mode.as_ref().and_then(|m| {
            let lower = &self.lower.watchdog_mode;
            if watchdog_is_no_laxer(&lower.value, m.get_ref()) {
                return Some(m.clone());
            }
            let effect = format!(
                "watchdog {} instead of {} (from {})",
                m.get_ref(),
                lower.value,
                lower.origin
            );
            self.widen("watchdog.mode", m, effect);
            None
        });
        let repeat_limit = w.repeat_limit.as_ref().and_then(|n| {
            let lower = &self.lower.watchdog_repeat_limit;
            if repeat_limit_is_no_laxer(lower.value, *n.get_ref()) {
                return Some(n.clone());
            }
            let effect = match *n.get_ref() {
                0 => format!(
                    "stops reporting repeated identical calls (limit {} from {})",
                    lower.value, lower.origin
                ),
                n => format!(
                    "reports repeated identical calls after {n} instead of {} (from {})",
                    lower.value, lower.origin
                ),
            };
            self.widen("watchdog.repeat_limit", n, effect);
            None
        });
        WatchdogSection { mode, repeat_limit }
    }
}

fn watchdog_rank(mode: WatchdogMode) -> u8 {
    match mode {
        WatchdogMode::Off => 0,
        WatchdogMode::Warn => 1,
        WatchdogMode::Enforce => 2,
    }
}

/// Whether `project` watches no less than `lower` (enforce > warn > off). One that does not
/// parse is kept, so its error is what the user sees.
fn watchdog_is_no_laxer(lower: &str, project: &str) -> bool {
    match (
        lower.parse::<WatchdogMode>(),
        project.parse::<WatchdogMode>(),
    ) {
        (Ok(l), Ok(p)) => watchdog_rank(p) >= watchdog_rank(l),
        _ => true,
    }
}

/// A limit reports repeats no later than `lower` does: 0 (off) is the laxest of all.
fn repeat_limit_is_no_laxer(lower: u32, project: u32) -> bool {
    project != 0 && (lower == 0 || project <= lower)
}
