//! list_files: files under a directory, recursively. A name is content of its directory: the
//! names in a directory nobody vouched for come back as one reference each.

use std::borrow::Cow;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use tackle_fs::RelPath;
use tackle_protocol::Concurrency;
use tackle_protocol::{Quarantined, Trust};
use tackle_tool::{
    ExecuteContext, PermissionResource, PrepareContext, Prepared, Routing, Tool, ToolCompletion,
    ToolError,
};

use crate::errors;
use crate::glob::Glob;
use crate::tools::Shared;
use crate::tools::read_file::record_failed;
use crate::walk::walk;

/// The most entries one listing returns.
pub const MAX_SHOWN: usize = 1_000;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Workspace-relative directory; `.` for the root.
    pub directory: String,
    /// Optional glob: `*`, `?` and `**` are supported, brace groups are not. Without a `/`
    /// it matches file names wherever they are.
    #[serde(default)]
    pub pattern: Option<String>,
}

pub struct ListFiles(pub Arc<Shared>);

pub struct Plan {
    dir: RelPath,
    shown: String,
    glob: Option<Glob>,
}

impl Tool for ListFiles {
    type Args = Args;
    type Plan = Plan;

    fn name(&self) -> &str {
        "list_files"
    }

    fn description(&self) -> Cow<'static, str> {
        "Lists the files under a directory, recursively, optionally filtered by a glob (`*`, `?`, \
         `**`; no brace groups). A file in a directory nobody vouched for is listed as a \
         reference (ref:N), not by name: pass it to read_file's path_ref, spawn_processor or \
         write_file's path_ref."
            .into()
    }

    fn read_only(&self) -> bool {
        true
    }

    fn truncation(&self) -> tackle_protocol::Truncation {
        // Bounded here (at most MAX_SHOWN entries), with notes the runtime's preview could cut off and a
        // hint naming an artifact this surface cannot open.
        tackle_protocol::Truncation::OptOut
    }

    fn concurrency(&self) -> Concurrency {
        Concurrency::Exclusive
    }

    fn permission_actions(&self) -> &'static [&'static str] {
        &["read"]
    }

    fn prepare(&self, args: Args, _cx: &PrepareContext<'_>) -> Result<Prepared<Plan>, ToolError> {
        let glob = args
            .pattern
            .as_deref()
            .map(Glob::new)
            .transpose()
            .map_err(|e| errors::invalid(format!("pattern: {e}")))?;
        let dir = self
            .0
            .root
            .resolve(&args.directory)
            .map_err(|e| errors::fs(&e, &args.directory))?;
        let routing = Routing {
            resources: vec![PermissionResource::read(dir.as_str())],
        };
        Ok(Prepared::new(
            routing,
            Plan {
                dir,
                shown: args.directory,
                glob,
            },
        ))
    }

    async fn execute(&self, plan: Plan, cx: ExecuteContext) -> Result<ToolCompletion, ToolError> {
        let shared = &self.0;
        let walked = walk(&shared.root, &plan.dir).map_err(|e| errors::fs(&e, &plan.shown))?;
        let mut lines = Vec::new();
        let mut quarantined = 0usize;
        let mut truncated = walked.truncated;
        for path in walked.selected(&plan.dir, plan.glob.as_ref(), &*cx.read_scope) {
            if lines.len() == MAX_SHOWN {
                truncated = true;
                break;
            }
            if shared.trust.name(&path) == Trust::Trusted {
                lines.push(path);
                continue;
            }
            let label = shared.trust.file_label(&path);
            let id = shared
                .state
                .add(&cx.call_id, Quarantined::File { path }, label)
                .await
                .map_err(record_failed)?;
            quarantined += 1;
            lines.push(id.to_string());
        }
        // Notes come first, so that a preview cut short by the runtime still carries them.
        let mut text = String::new();
        if truncated {
            text.push_str(&format!(
                "[truncated: the listing stopped after {} entries; list a narrower directory or pattern]\n",
                lines.len()
            ));
        }
        if quarantined > 0 {
            text.push_str(&format!(
                "[{quarantined} of these are in directories nobody vouched for: each is listed as a reference, its name not shown]\n"
            ));
        }
        if lines.is_empty() {
            text.push_str("(no files)\n");
        } else {
            text.push_str(&(lines.join("\n") + "\n"));
        }
        Ok(ToolCompletion::single(text))
    }
}
