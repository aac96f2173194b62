//! `[tools.sciontool_status] command` checked and looked up: the hub's binary on `PATH`,
//! outside the project (`tackle_tools::sciontool_status::discover`), or no tool.

use std::path::Path;

use crate::bail;
use crate::settings::Settings;

/// `[tools.sciontool_status] command`, looked up on `PATH` (outside the project).
pub fn command(
    settings: &Settings,
    root: &Path,
) -> crate::Result<Option<tackle_tools::SciontoolCommand>> {
    let command = &settings.sciontool_command;
    let Some((program, args)) = command.value.split_first() else {
        bail!(
            "[tools.sciontool_status] command ({}) is empty; name the program, e.g. [\"sciontool\", \"status\"]",
            command.origin
        );
    };
    Ok(tackle_tools::sciontool_status::discover(
        program,
        args.to_vec(),
        std::env::var_os("PATH").as_deref(),
        root,
    ))
}
