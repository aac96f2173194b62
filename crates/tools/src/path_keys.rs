//! The permission resources of a path a model names: the name, and the in-root file it
//! resolves to once every symlink on it is followed (DESIGN.md §4a, "rules see the file").
//!
//! Key decision: the real path rides as a second key on the call (`read:alias.txt` and
//! `read:secrets/key.pem`) rather than as a field of one resource. Every rule, the path scope
//! and the protected paths then apply to either with no special case, and the gate stays pure:
//! it sees keys, never files. A deny or ask on either name holds; an allow must cover both.
//! The cost is one `lstat` per path component in `prepare`; the open in `execute` is still
//! confined beneath the root handle, so a symlink swapped in between can at worst select
//! another file inside the root (and a staged mutation refuses even that: see
//! [`tackle_fs::StagedWrite::real`]).

use tackle_fs::{RelPath, Root};
use tackle_tool::{Action, PermissionResource, ToolError};

use crate::fs_error;

/// A model's path resolved twice: lexically (the name), and with its symlinks followed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvedPath {
    /// The name as given, normalized (what results show).
    pub rel: RelPath,
    /// The file it is now (what rules must also see).
    pub real: RelPath,
}

impl ResolvedPath {
    /// Resolves `input` beneath `root`; a symlink on the way that leads out of the root is
    /// `path_outside_root` here, before the gate is even asked.
    pub fn new(tool: &str, root: &Root, input: &str) -> Result<ResolvedPath, ToolError> {
        let rel = root.resolve(input).map_err(|e| fs_error(tool, e))?;
        ResolvedPath::of(tool, root, rel)
    }

    /// Follows the symlinks of an already normalized path.
    pub fn of(tool: &str, root: &Root, rel: RelPath) -> Result<ResolvedPath, ToolError> {
        let real = root.real_path(&rel).map_err(|e| fs_error(tool, e))?;
        Ok(ResolvedPath { rel, real })
    }

    /// `<action>:<name>`, then `<action>:<real path>` when it differs.
    pub fn resources(&self, action: Action) -> Vec<PermissionResource> {
        resources(action, &self.rel, &self.real)
    }
}

/// `<action>:<rel>`, then `<action>:<real>` when it differs.
pub fn resources(action: Action, rel: &RelPath, real: &RelPath) -> Vec<PermissionResource> {
    let mut out = vec![PermissionResource {
        action: action.clone(),
        target: rel.as_str().to_owned(),
    }];
    if real != rel {
        out.push(PermissionResource {
            action,
            target: real.as_str().to_owned(),
        });
    }
    out
}
