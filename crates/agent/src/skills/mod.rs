//! Skills: instruction packages in the open Agent Skills format (a folder holding `SKILL.md`
//! and what it bundles), which the model loads when a task calls for them (seed 000
//! "Delegation and skills"; seed 004 `load_skill`).
//!
//! Progressive disclosure: the system prompt lists each skill's name and description only
//! ([`listing`], within a budget); the `skill` tool ([`tool`]) returns one skill's
//! instructions and the list of files it bundles, and reads one of those files on request.
//! The set is fixed when the run starts ([`SkillSet`]): a name selects from it and never
//! becomes a path, so `../x`, `a/b` or a near miss is refused with the nearest names.
//!
//! Reading the files (scopes, the format's rules, folder trust) is `tackle_config::skills`;
//! this module holds what was read and offers it to the model.

pub mod listing;
mod set;
pub mod tool;

pub use set::{Skill, SkillOrigin, SkillSet};
pub use tool::{SKILL_TOOL, SkillTool};
