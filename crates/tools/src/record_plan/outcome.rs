//! What a `record_plan` call does, decided from what its author already has on file (seed 003,
//! "record_plan repeats don't mint plan files"). Pure: the table is tested as data.
//!
//! "Same author" is the (agent, session) pair a plan's header records. "Same turn" is the
//! [`tackle_tool::protocol::TurnId`] the call carries: the agent loop sets one per model turn;
//! without one, each batch (a `tackle call`, an MCP `tools/call`) is a turn of its own.

use serde::Serialize;

/// The three-value vocabulary the result reports (`outcome`), for the model and the operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanOutcome {
    /// A new `plan-<seq>.md`.
    Recorded,
    /// The author's plan of this turn, overwritten in place with the revised text.
    Updated,
    /// Identical to the author's plan on file: nothing was written.
    Unchanged,
}

/// The author's newest plan that is still on file (revoked plans are not: they were archived).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuthorsPlan<'a> {
    pub seq: u64,
    pub turn: Option<&'a str>,
    pub body: &'a str,
}

/// What to do on disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlanWrite {
    /// Allocate the next sequence and write a new file.
    New,
    /// Overwrite `plan-<seq>.md`.
    Overwrite(u64),
    /// Write nothing; the plan on file is `plan-<seq>.md`.
    Nothing(u64),
}

impl PlanWrite {
    pub fn outcome(self) -> PlanOutcome {
        match self {
            Self::New => PlanOutcome::Recorded,
            Self::Overwrite(_) => PlanOutcome::Updated,
            Self::Nothing(_) => PlanOutcome::Unchanged,
        }
    }
}

/// Identical text is unchanged in any turn; revised text replaces the plan of the same turn;
/// anything else is a new plan.
pub fn decide(on_file: Option<&AuthorsPlan<'_>>, turn: &str, body: &str) -> PlanWrite {
    match on_file {
        Some(p) if p.body == body => PlanWrite::Nothing(p.seq),
        Some(p) if p.turn == Some(turn) => PlanWrite::Overwrite(p.seq),
        _ => PlanWrite::New,
    }
}
