//! `[checkpoint]`, `[watchdog]` and `[tools] descriptions` checked: who may declare a task
//! boundary, how the loop treats calls that change nothing, and how tools are described to the
//! model. None widens what runs or where data goes (one withholds a tool, one ends runs sooner,
//! one changes prose only), so a project file may set them without folder trust.

use tackle_agent::{DescriptionsSetting, WatchdogMode, WatchdogSettings};

use crate::bail;
use crate::settings::Settings;

/// Who declares a task boundary (seed 003, mark_task_done).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CheckpointMode {
    /// The model may call mark_task_done (the default).
    #[default]
    Model,
    /// Only the user (`/done`): mark_task_done is withheld from the catalog.
    Operator,
}

impl CheckpointMode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Model => "model",
            Self::Operator => "operator",
        }
    }
}

/// The loop's settings, checked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoopSettings {
    pub checkpoint: CheckpointMode,
    pub watchdog: WatchdogSettings,
    /// `[tools] descriptions`.
    pub descriptions: DescriptionsSetting,
    /// `[posture] mode`: standard or sealed (gated is the standard catalog with every mutating
    /// call asked, set by `[permissions] mode`, not here).
    pub posture: tackle_runtime::Posture,
}

pub fn loop_settings(settings: &Settings) -> crate::Result<LoopSettings> {
    let mode = &settings.checkpoint_mode;
    let checkpoint = match mode.value.as_str() {
        "model" => CheckpointMode::Model,
        "operator" => CheckpointMode::Operator,
        other => bail!(
            "checkpoint mode \"{other}\" ({}): use \"model\" (the model may call mark_task_done) \
             or \"operator\" (only the user's /done declares a task boundary)",
            mode.origin
        ),
    };
    let named_posture = &settings.posture_mode;
    let posture = match named_posture.value.as_str() {
        "standard" => tackle_runtime::Posture::Standard,
        "sealed" => tackle_runtime::Posture::Sealed,
        other => bail!(
            "posture mode \"{other}\" ({}): use \"standard\" (the configured tools behind the \
             gate) or \"sealed\" (seed 004's eleven tools; content nobody vouched for reaches \
             the model only as references)",
            named_posture.origin
        ),
    };
    let watchdog = &settings.watchdog_mode;
    let mode: WatchdogMode = watchdog
        .value
        .parse()
        .map_err(|e| crate::config_error!("watchdog mode ({}): {e}", watchdog.origin))?;
    let named = &settings.tool_descriptions;
    let Some(descriptions) = DescriptionsSetting::parse(&named.value) else {
        bail!(
            "[tools] descriptions = \"{}\" ({}): use \"auto\" (one sentence per tool when the \
             model's window is under 16k tokens), \"full\" or \"compact\"",
            named.value,
            named.origin
        );
    };
    Ok(LoopSettings {
        descriptions,
        checkpoint,
        posture,
        watchdog: WatchdogSettings {
            mode,
            repeat_limit: settings.watchdog_repeat_limit.value,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::{Flags, Origin, Sourced};

    #[test]
    fn defaults_flags_and_bad_values() {
        let mut s = Settings::defaults(10, 100);
        assert_eq!(loop_settings(&s).unwrap(), LoopSettings::default());
        s.apply_flags(&Flags {
            checkpoint: Some("operator".into()),
            watchdog: Some("enforce".into()),
            ..Flags::default()
        });
        let l = loop_settings(&s).unwrap();
        assert_eq!(l.checkpoint, CheckpointMode::Operator);
        assert_eq!(l.watchdog.mode, WatchdogMode::Enforce);
        s.tool_descriptions = Sourced::new("short".into(), Origin::BuiltIn);
        let e = loop_settings(&s).unwrap_err().to_string();
        assert!(e.contains("\"short\"") && e.contains("\"compact\""), "{e}");
        s.tool_descriptions = Sourced::new("compact".into(), Origin::BuiltIn);
        assert_eq!(
            loop_settings(&s).unwrap().descriptions,
            DescriptionsSetting::Compact
        );
        s.checkpoint_mode = Sourced::new("agent".into(), Origin::BuiltIn);
        let e = loop_settings(&s).unwrap_err().to_string();
        assert!(e.contains("\"model\"") && e.contains("\"operator\""), "{e}");
        s.checkpoint_mode = Sourced::new("model".into(), Origin::BuiltIn);
        s.watchdog_mode = Sourced::new("loud".into(), Origin::Flag { flag: "--watchdog" });
        let e = loop_settings(&s).unwrap_err().to_string();
        assert!(
            e.contains("--watchdog") && e.contains("off, warn or enforce"),
            "{e}"
        );
    }
}
