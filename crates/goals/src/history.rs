//! The goal's rules as pure data: the events a book records, and what each does to the state.
//!
//! Pure: no I/O, no clocks (the time of an event is part of the event), so replaying a log
//! and deciding a change are tested as tables.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::GoalError;

/// Where a goal is in its life. `Complete` and `Canceled` are terminal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GoalStatus {
    Active,
    Paused,
    Complete,
    Canceled,
}

impl GoalStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Active => "active",
            Self::Paused => "paused",
            Self::Complete => "complete",
            Self::Canceled => "canceled",
        }
    }

    /// Whether nothing can change the goal any more.
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Complete | Self::Canceled)
    }

    /// Whether the goal tools are offered to a run admitted now (seed 000: active or paused).
    pub fn offers_tools(self) -> bool {
        matches!(self, Self::Active | Self::Paused)
    }
}

/// One checklist item: what is to be done and whether it is. No id: the checklist is replaced
/// whole, in order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChecklistItem {
    /// What this step is, as a short sentence.
    pub description: String,
    /// Whether the step is done (verified, not assumed).
    pub finished: bool,
}

/// The current goal, whole.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Goal {
    pub goal_id: String,
    pub objective: String,
    pub status: GoalStatus,
    /// Counts every accepted change of this goal, starting at 1 when it is set.
    pub revision: u64,
    pub checklist: Vec<ChecklistItem>,
}

/// A lifecycle control only the user may apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    Pause,
    Resume,
    Cancel,
}

impl Control {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pause => "pause",
            Self::Resume => "resume",
            Self::Cancel => "cancel",
        }
    }

    /// The status this control leads to from `from`, or `None` when it does not apply.
    pub fn apply(self, from: GoalStatus) -> Option<GoalStatus> {
        match (self, from) {
            (Self::Pause, GoalStatus::Active) => Some(GoalStatus::Paused),
            (Self::Resume, GoalStatus::Paused) => Some(GoalStatus::Active),
            (Self::Cancel, GoalStatus::Active | GoalStatus::Paused) => Some(GoalStatus::Canceled),
            _ => None,
        }
    }
}

/// One record of a goal book.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum GoalEvent {
    /// The user set a new objective; it replaces whatever goal was current.
    GoalSet {
        goal_id: String,
        objective: String,
        at_ms: u64,
    },
    /// The user paused, resumed or canceled the current goal.
    GoalStatusChanged {
        goal_id: String,
        status: GoalStatus,
        revision: u64,
        at_ms: u64,
    },
    /// The model replaced the checklist; `status` is the goal's status after it (a non-empty,
    /// all-finished checklist completes the goal).
    ChecklistReplaced {
        goal_id: String,
        items: Vec<ChecklistItem>,
        status: GoalStatus,
        revision: u64,
        at_ms: u64,
    },
}

/// The state a sequence of events leaves: the current goal, if any, and how many goals were
/// ever set (the next goal's id follows from it).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Replay {
    pub current: Option<Goal>,
    pub goals_set: u64,
}

impl Replay {
    /// Apply one recorded event. Events about a goal that is not current (left by a writer
    /// that lost a race it could not lose under the book's lock) change nothing.
    pub fn apply(&mut self, event: &GoalEvent) {
        match event {
            GoalEvent::GoalSet {
                goal_id, objective, ..
            } => {
                self.goals_set += 1;
                self.current = Some(Goal {
                    goal_id: goal_id.clone(),
                    objective: objective.clone(),
                    status: GoalStatus::Active,
                    revision: 1,
                    checklist: Vec::new(),
                });
            }
            GoalEvent::GoalStatusChanged {
                goal_id,
                status,
                revision,
                ..
            } => {
                if let Some(g) = self.current.as_mut().filter(|g| &g.goal_id == goal_id) {
                    g.status = *status;
                    g.revision = *revision;
                }
            }
            GoalEvent::ChecklistReplaced {
                goal_id,
                items,
                status,
                revision,
                ..
            } => {
                if let Some(g) = self.current.as_mut().filter(|g| &g.goal_id == goal_id) {
                    g.checklist = items.clone();
                    g.status = *status;
                    g.revision = *revision;
                }
            }
        }
    }

    /// The id the next goal set gets.
    pub fn next_goal_id(&self) -> String {
        format!("goal-{}", self.goals_set + 1)
    }
}

/// Decide a user control against the current goal: the event to record, or why not.
pub fn decide_control(
    current: Option<&Goal>,
    control: Control,
    goal_id: &str,
    expected_revision: u64,
    at_ms: u64,
) -> Result<GoalEvent, GoalError> {
    let goal = current.ok_or(GoalError::NoGoal)?;
    if goal.goal_id != goal_id {
        return Err(GoalError::NotCurrent {
            given: goal_id.to_owned(),
            current: goal.goal_id.clone(),
        });
    }
    if goal.revision != expected_revision {
        return Err(GoalError::StaleRevision {
            goal_id: goal.goal_id.clone(),
            expected: expected_revision,
            current: goal.revision,
        });
    }
    let status = control
        .apply(goal.status)
        .ok_or(GoalError::ControlDoesNotApply {
            control,
            status: goal.status,
        })?;
    Ok(GoalEvent::GoalStatusChanged {
        goal_id: goal.goal_id.clone(),
        status,
        revision: goal.revision + 1,
        at_ms,
    })
}

/// Decide a checklist replacement: it targets whatever goal is current when it is accepted
/// (no goal id, no expected revision: the last accepted update wins), and is refused only
/// when there is no goal or the goal is terminal. An empty checklist keeps the lifecycle; a
/// non-empty one with every item finished completes the goal, even a paused one.
pub fn decide_checklist(
    current: Option<&Goal>,
    items: Vec<ChecklistItem>,
    at_ms: u64,
) -> Result<GoalEvent, GoalError> {
    let goal = current.ok_or(GoalError::NoGoal)?;
    if goal.status.is_terminal() {
        return Err(GoalError::Closed {
            goal_id: goal.goal_id.clone(),
            status: goal.status,
        });
    }
    let done = !items.is_empty() && items.iter().all(|i| i.finished);
    let status = if done {
        GoalStatus::Complete
    } else {
        goal.status
    };
    Ok(GoalEvent::ChecklistReplaced {
        goal_id: goal.goal_id.clone(),
        items,
        status,
        revision: goal.revision + 1,
        at_ms,
    })
}

#[cfg(test)]
mod tests;
