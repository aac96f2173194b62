//! An analysed line → the permission resources of a `bash` call: a `tool.bash.cmd:` key per
//! command, and a second one when its path words lead elsewhere than they read
//! ([`super::command_paths`]), then a `write:`/`read:` key for each file a redirection opens,
//! under the name given and the path it resolves to ([`super::paths`]).

use std::path::{Path, PathBuf};

use tackle_tool::{Action, PermissionResource};

use super::analyze::Analysis;
use super::command_paths::resolved_targets;
use super::keys::{BASH_CMD_ACTION, UNRESOLVED, command_targets};
use super::paths::file_keys;

/// What the keys depend on in the environment the line will run with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineEnvironment {
    /// `$HOME`, which `~` in a redirection names.
    pub home: Option<PathBuf>,
    /// `CDPATH` is set and not empty: `cd name` may go elsewhere than `./name`.
    pub cdpath_set: bool,
}

impl LineEnvironment {
    /// This process's environment, which the command inherits.
    pub fn inherited() -> Self {
        LineEnvironment {
            home: std::env::var_os("HOME").map(PathBuf::from),
            cdpath_set: std::env::var_os("CDPATH").is_some_and(|v| !v.is_empty()),
        }
    }
}

/// The permission resources of `analysis` for a line run in `root`. A file or a command's path
/// word that cannot be named (`~` without `$HOME`, a loop of links, a directory the analysis
/// lost) and a `cd` to a bare name under a `CDPATH` add `tool.bash.cmd:?`, which no allow rule
/// matches.
pub fn routing_keys(
    analysis: &Analysis,
    root: &Path,
    env: &LineEnvironment,
) -> Vec<PermissionResource> {
    let mut unresolved = analysis.cd_by_name && env.cdpath_set;
    let mut files: Vec<PermissionResource> = Vec::new();
    for (action, list) in [
        (Action::Write, &analysis.writes),
        (Action::Read, &analysis.reads),
    ] {
        for location in list {
            match file_keys(root, env.home.as_deref(), location) {
                Some(keys) => {
                    for target in keys {
                        let r = PermissionResource {
                            action: action.clone(),
                            target,
                        };
                        if !files.contains(&r) {
                            files.push(r);
                        }
                    }
                }
                None => unresolved = true,
            }
        }
    }
    let mut targets = command_targets(analysis);
    let resolved = resolved_targets(analysis, root, env.home.as_deref());
    unresolved |= resolved.unresolved;
    for target in resolved.targets {
        if !targets.contains(&target) {
            targets.push(target);
        }
    }
    if unresolved && !targets.iter().any(|t| t == UNRESOLVED) {
        targets.push(UNRESOLVED.to_owned());
    }
    let mut resources: Vec<PermissionResource> = targets
        .into_iter()
        .map(|target| PermissionResource {
            action: Action::Custom(BASH_CMD_ACTION),
            target,
        })
        .collect();
    resources.extend(files);
    resources
}
