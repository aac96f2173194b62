//! Delegation (seed 000, "Delegation and skills"): agent types, and the tree of child sessions
//! a parent starts, reads and cancels.

pub mod agent_type;

pub use agent_type::{AgentType, ModelChoice, Origin, Overlay};
pub mod limits;

pub use limits::Limits;
