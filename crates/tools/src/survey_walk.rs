//! The set-up every survey walk shares (`glob`, `grep`, `read_many_files` with a pattern), in
//! its two halves: [`SurveyWalk::prepare`] resolves the start the model named (default `.`)
//! against the session root, follows its links and checks it exists, and gives the `read:` keys
//! the gate decides on; [`SurveyWalk::run`] opens the root again at execute time and walks from
//! that start under the call's [`tackle_tool::ReadScope`], one visitor per walker thread.
//!
//! The walk itself (skipping rules, ignore files, confinement, threads) is [`crate::walk`];
//! this module only wires a tool's call to it, so the three tools cannot drift apart on what
//! they resolve, key or filter.

use std::path::Path;
use std::sync::Arc;

use tackle_fs::Root;
use tackle_tool::{Action, ExecuteContext, Routing, ToolError};

use crate::walk::{FileVisitor, WalkCounts, WalkStart, check_start, walk_files};
use crate::{fs_error, open_root, path_keys};

/// A walk planned in `prepare`: where it starts, as named and as resolved.
pub struct SurveyWalk {
    pub start: WalkStart,
}

/// What a walk found: each walker thread's output, what it left out, and the root it walked
/// (files found are opened through it).
pub struct Surveyed<O> {
    pub root: Arc<Root>,
    pub parts: Vec<O>,
    pub counts: WalkCounts,
}

impl SurveyWalk {
    /// Resolves `path` (default `.`) beneath `session_root` for `tool` and checks that it is a
    /// file or directory there.
    pub fn prepare(
        tool: &str,
        session_root: &Path,
        path: Option<&str>,
    ) -> Result<SurveyWalk, ToolError> {
        let root = open_root(tool, session_root)?;
        let rel = root
            .resolve(path.unwrap_or("."))
            .map_err(|e| fs_error(tool, e))?;
        let start = check_start(tool, &root, &rel)?;
        Ok(SurveyWalk { start })
    }

    /// What the gate decides on: `read:` the start as named and as resolved.
    pub fn routing(&self) -> Routing {
        Routing {
            resources: path_keys::resources(Action::Read, &self.start.rel, &self.start.real),
        }
    }

    /// The start as the model named it, normalized (what results show).
    pub fn start_rel(&self) -> &str {
        self.start.rel.as_str()
    }

    /// Walks from the start under `cx`'s read scope; `make` builds one visitor per walker
    /// thread and is handed the root being walked. Blocking: call it inside
    /// [`tackle_tool::run_tool_blocking`].
    pub fn run<V: FileVisitor>(
        &self,
        tool: &str,
        cx: &ExecuteContext,
        make: impl Fn(&Arc<Root>) -> V + Sync,
    ) -> Result<Surveyed<V::Output>, ToolError> {
        let root = open_root(tool, &cx.root)?;
        let (parts, counts) = walk_files(&root, &self.start, &*cx.read_scope, || make(&root));
        Ok(Surveyed {
            root,
            parts,
            counts,
        })
    }
}
