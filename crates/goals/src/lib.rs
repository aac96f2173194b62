//! tackle-goals: the project's root goal — an objective the user sets, its lifecycle, and the
//! ordered checklist the model keeps (seed 000, "Goal checklist tools").
//!
//! **Owns** the goal's rules ([`history`]: what each event does, which user controls apply in
//! which state, when a checklist completes the goal), its durable home ([`GoalBook`]: an event
//! log under `.agents/store/goals/`, CRC-checked like a session's, replayed on every open so a
//! restart loses nothing), and the two model tools over it, [`GoalGet`] and [`GoalUpdate`].
//!
//! **Refuses** to own the lifecycle on the model's behalf: the model reads the goal and replaces
//! its checklist; only the user sets an objective, pauses, resumes or cancels (`tackle goal`).
//! It does not decide when the tools are offered either: the front end asks
//! [`GoalBook::current`] at run admission and registers them only for an active or paused goal.
//!
//! **Key decision:** every change is a read–decide–append under one exclusive `flock` on the
//! book's lock file, across processes, so `tackle goal pause` and a running server's
//! `goal_update` serialize: the last accepted update wins, and a user control carrying a stale
//! `expected_revision` is refused. Rejected: a state file rewritten in place, which a crash can
//! tear and which keeps no record of who changed what.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

mod book;
mod error;
mod goal_get;
mod goal_update;
pub mod history;

pub use book::{GOALS_DIR, GoalBook};
pub use error::GoalError;
pub use goal_get::GoalGet;
pub use goal_update::{GoalUpdate, MAX_DESCRIPTION_CHARS, MAX_ITEMS};
pub use history::{ChecklistItem, Control, Goal, GoalEvent, GoalStatus};

/// The names of the goal tools, as registered.
pub const GOAL_TOOL_NAMES: &[&str] = &["goal_get", "goal_update"];
