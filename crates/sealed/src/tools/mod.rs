//! The eleven tools of the sealed surface (seed 004), one file each, and what they share:
//! the session's state, its trust map, and how a file named by path or by reference is found.

pub mod ask_user;
pub mod edit_file;
pub mod list_files;
pub mod load_skill;
pub mod read_file;
pub mod read_output;
pub mod run;
pub mod search;
pub mod spawn_processor;
pub mod todo_write;
pub mod write_file;

mod content;
mod diff;
mod target;

use std::ffi::OsString;
use std::sync::Arc;
use std::time::Duration;

use tackle_fs::Root;
use tackle_process::EnvPolicy;
use tackle_runtime::Approver;

use crate::processor::Processor;
use crate::questions::Questions;
use crate::state::SealedState;
use crate::trust_map::TrustMap;

/// A skill the planner may load: listed before the turn, never a path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SealedSkill {
    pub name: String,
    pub description: String,
    pub body: String,
}

/// What the eleven tools of one session share.
pub struct Shared {
    pub root: Arc<Root>,
    pub state: Arc<SealedState>,
    pub trust: TrustMap,
    /// spawn_processor's model; `None`: the tool says which setting gives it one.
    pub processor: Option<Arc<dyn Processor>>,
    /// ask_user's person; `None` in a one-shot run, where every question is declined.
    pub questions: Option<Arc<dyn Questions>>,
    /// Who is offered to vouch for a quarantined file at the moment it is read; `None`: nobody,
    /// and the read hands back a reference.
    pub voucher: Option<Arc<dyn Approver>>,
    pub skills: Vec<SealedSkill>,
    /// run's environment (the filtered one every command gets) and its `PATH`.
    pub env: EnvPolicy,
    pub path_var: Option<OsString>,
    pub run_timeout: Duration,
}

/// The most bytes of a file the tools read whole.
pub const FILE_CAP: u64 = 16 * 1024 * 1024;
