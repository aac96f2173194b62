//! What a `record_plan` result tells the model (seed 003, "The result names the tools this
//! build actually gates"). Pure, so each of the seed's situations is a row of a table test.

use tackle_tool::PlanMode;

use super::outcome::PlanOutcome;

/// Which tools `plan_mode = "required"` holds back, as reported by whoever registered them.
/// Unknown is not the same as none: a library caller that wires tools by hand reports nothing,
/// and is told nothing is enumerated rather than that nothing was gated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GatedSet {
    Unknown,
    Known(Vec<String>),
}

/// The result text of one call.
pub fn result_text(
    mode: PlanMode,
    gated: &GatedSet,
    outcome: PlanOutcome,
    path: &str,
    opened: bool,
) -> String {
    let what = match outcome {
        PlanOutcome::Recorded => format!("Plan recorded as {path}."),
        PlanOutcome::Updated => format!(
            "Plan revised in place: {path} now holds this turn's revised text (no new plan file)."
        ),
        PlanOutcome::Unchanged => format!(
            "Plan unchanged: it is identical to {path}, so nothing was written. Repeating it \
             does nothing; carry it out."
        ),
    };
    format!("{what}\n{}\n", gate_text(mode, gated, opened))
}

/// The sentence about the gate: the seed's four situations when this call opened it, and
/// "already satisfied" on every later call (the unblock report is a state change, said once).
pub fn gate_text(mode: PlanMode, gated: &GatedSet, opened: bool) -> String {
    match (mode, gated) {
        (PlanMode::Advisory | PlanMode::Off, _) => "Plan mode is advisory: no tool call was ever \
             blocked on this plan and none becomes callable because of it — carry the plan out \
             in this turn rather than waiting for approval."
            .to_owned(),
        (PlanMode::Required, GatedSet::Known(names)) if names.is_empty() => "Plan mode is \
             required, but this build registered no plan-gated tools — nothing was blocked and \
             nothing is unblocked; the artifact is the only effect."
            .to_owned(),
        (PlanMode::Required, _) if !opened => "The plan gate was already satisfied for this \
             session: nothing more is unblocked by this call."
            .to_owned(),
        (PlanMode::Required, GatedSet::Known(names)) => {
            format!("Now unblocked for this session: {}.", names.join(", "))
        }
        (PlanMode::Required, GatedSet::Unknown) => "Plan on file: the tool calls it was denying \
             are now unblocked for this session."
            .to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known(names: &[&str]) -> GatedSet {
        GatedSet::Known(names.iter().map(|n| (*n).to_owned()).collect())
    }

    /// Seed 003, "record_plan — what the result says": one row per situation of its table,
    /// each on the call that opens the gate; then the repeat, told it was already satisfied.
    #[test]
    fn the_seeds_four_situations() {
        let rows: &[(PlanMode, GatedSet, bool, &str)] = &[
            (
                PlanMode::Required,
                known(&["mcp__gke__*", "fetch_url"]),
                true,
                "Now unblocked for this session: mcp__gke__*, fetch_url.",
            ),
            (
                PlanMode::Required,
                known(&[]),
                true,
                "this build registered no plan-gated tools — nothing was blocked and nothing is \
                 unblocked; the artifact is the only effect.",
            ),
            (
                PlanMode::Required,
                GatedSet::Unknown,
                true,
                "the tool calls it was denying are now unblocked for this session.",
            ),
            (
                PlanMode::Advisory,
                known(&["write_file"]),
                true,
                "no tool call was ever blocked on this plan and none becomes callable because \
                 of it — carry the plan out in this turn rather than waiting for approval.",
            ),
            (
                PlanMode::Required,
                known(&["write_file"]),
                false,
                "already satisfied",
            ),
            (
                PlanMode::Required,
                GatedSet::Unknown,
                false,
                "already satisfied",
            ),
        ];
        for (mode, gated, opened, want) in rows {
            let text = gate_text(*mode, gated, *opened);
            assert!(text.contains(want), "{mode:?} {gated:?} {opened}: {text}");
            let enumerates = text.contains("Now unblocked");
            assert_eq!(
                enumerates,
                *opened
                    && *mode == PlanMode::Required
                    && matches!(gated, GatedSet::Known(n) if !n.is_empty()),
                "{text}"
            );
        }
    }
}
