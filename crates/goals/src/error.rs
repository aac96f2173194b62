//! Why a goal operation was refused or could not be recorded.

use crate::history::{Control, GoalStatus};

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GoalError {
    #[error("no goal is set; the user sets one with `tackle goal set \"<objective>\"`")]
    NoGoal,
    #[error(
        "goal {given} is not the current goal ({current}); run `tackle goal show` and name the current one"
    )]
    NotCurrent { given: String, current: String },
    #[error(
        "goal {goal_id} is at revision {current}, not {expected}: it changed since it was read; \
         run `tackle goal show` and retry with --expected-revision {current}"
    )]
    StaleRevision {
        goal_id: String,
        expected: u64,
        current: u64,
    },
    #[error("goal is {}; it cannot be {}d", status.as_str(), control.as_str())]
    ControlDoesNotApply {
        control: Control,
        status: GoalStatus,
    },
    #[error(
        "goal {goal_id} is {}, and its checklist can no longer change; the user sets a new goal \
         with `tackle goal set`",
        status.as_str()
    )]
    Closed { goal_id: String, status: GoalStatus },
    #[error("the objective is empty; describe what the goal is")]
    EmptyObjective,
    #[error("goal book: {0}")]
    Log(#[from] tackle_store::EventLogError),
    #[error("goal book {path}: {action}: {source}")]
    Io {
        action: &'static str,
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error(
        "goal book: record {seq} is not a goal event ({source}); the log was not written by this version of tackle"
    )]
    Unreadable { seq: u64, source: serde_json::Error },
}

impl GoalError {
    /// A stable code for a tool result or `--json` output.
    pub fn code(&self) -> &'static str {
        match self {
            Self::NoGoal => "no_goal",
            Self::NotCurrent { .. } => "not_current_goal",
            Self::StaleRevision { .. } => "stale_revision",
            Self::ControlDoesNotApply { .. } => "control_does_not_apply",
            Self::Closed { .. } => "goal_closed",
            Self::EmptyObjective => "invalid_arguments",
            Self::Log(_) | Self::Io { .. } | Self::Unreadable { .. } => "goal_store",
        }
    }
}
