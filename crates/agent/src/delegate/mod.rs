//! Delegation (seed 000, "Delegation and skills"): agent types, the tree of child sessions a
//! parent starts, reads and cancels, the notices its model reads about them, and the three
//! tools.

pub mod agent_type;
pub mod handle;
pub mod limits;
pub mod notice;
pub mod prompt;
pub mod rebuild;
pub mod tools;
pub mod tree;

pub use agent_type::{AgentType, ModelChoice, Origin, Overlay};
pub use limits::Limits;
pub use tools::{CancelSubagent, DelegateSubagent, GetSubagentResult};
pub use tree::{Node, RestoredNode, Spawn, StartRequest, Status, Tree};
