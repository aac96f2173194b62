//! The eleven tools, built over one session's shared state. Nothing else joins them: no shell,
//! no MCP tool, no tool from a configuration file.

use std::sync::Arc;

use tackle_tool::DynTool;

use crate::tools::{
    Shared, ask_user::AskUser, edit_file::EditFile, list_files::ListFiles, load_skill::LoadSkill,
    read_file::ReadFile, read_output::ReadOutput, run::Run, search::Search,
    spawn_processor::SpawnProcessor, todo_write::TodoWrite, write_file::WriteFile,
};

/// What the front end gives the sealed surface.
pub type SealedSetup = Shared;

/// The names of the eleven tools, in the seed's order.
pub const NAMES: [&str; 11] = [
    "read_file",
    "list_files",
    "search",
    "write_file",
    "edit_file",
    "run",
    "read_output",
    "spawn_processor",
    "load_skill",
    "ask_user",
    "todo_write",
];

/// The eleven tools of `setup`'s session.
pub fn tools(setup: SealedSetup) -> Vec<Arc<dyn DynTool>> {
    let shared = Arc::new(setup);
    vec![
        Arc::new(ReadFile(shared.clone())),
        Arc::new(ListFiles(shared.clone())),
        Arc::new(Search(shared.clone())),
        Arc::new(WriteFile(shared.clone())),
        Arc::new(EditFile(shared.clone())),
        Arc::new(Run(shared.clone())),
        Arc::new(ReadOutput(shared.clone())),
        Arc::new(SpawnProcessor(shared.clone())),
        Arc::new(LoadSkill(shared.clone())),
        Arc::new(AskUser(shared)),
        Arc::new(TodoWrite::default()),
    ]
}
