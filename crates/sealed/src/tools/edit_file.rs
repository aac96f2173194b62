//! edit_file: an exact passage of a trusted file replaced. Locating a passage is a comparison,
//! and a comparison is a decision, taken only from trusted content: an untrusted file is
//! refused, with the route that works (spawn_processor, then write_file).

use std::borrow::Cow;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use tackle_fs::StagedWrite;
use tackle_protocol::Trust;
use tackle_tool::{
    Action, ExecuteContext, PermissionResource, PrepareContext, Prepared, Routing,
    SerializationKey, Tool, ToolCompletion, ToolError,
};

use crate::errors;
use crate::tools::target::Target;
use crate::tools::{FILE_CAP, Shared, diff};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Workspace-relative path of the file.
    #[serde(default)]
    pub path: Option<String>,
    /// A reference to the file, when you hold it as one.
    #[serde(default)]
    pub path_ref: Option<String>,
    /// The exact text to replace, matched byte for byte.
    pub old_text: String,
    /// What goes in its place.
    pub new_text: String,
    /// Replace every occurrence instead of requiring exactly one.
    #[serde(default)]
    pub replace_all: bool,
}

pub struct EditFile(pub Arc<Shared>);

pub struct Plan {
    target: Target,
    staged: StagedWrite,
    replaced: usize,
}

impl Tool for EditFile {
    type Args = Args;
    type Plan = Plan;

    fn name(&self) -> &str {
        "edit_file"
    }

    fn description(&self) -> Cow<'static, str> {
        "Replaces an exact passage in an existing trusted file; the user approves every edit as a \
         diff. old_text must occur exactly once unless replace_all is set. A file nobody vouched \
         for cannot be edited: pass its reference to spawn_processor, then write the answer back \
         with write_file (path_ref and contents_ref)."
            .into()
    }

    fn read_only(&self) -> bool {
        false
    }

    fn permission_actions(&self) -> &'static [&'static str] {
        &["read", "write"]
    }

    fn prepare(&self, args: Args, _cx: &PrepareContext<'_>) -> Result<Prepared<Plan>, ToolError> {
        let shared = &self.0;
        let target = Target::of(
            shared,
            args.path.as_deref(),
            args.path_ref.as_deref(),
            false,
        )?;
        if shared.trust.file(target.real.as_str()) != Trust::Trusted {
            let via = target
                .reference
                .map(|r| r.to_string())
                .unwrap_or_else(|| "its reference (read_file hands you one)".into());
            return Err(ToolError::new(
                errors::UNTRUSTED_FILE,
                format!(
                    "edit_file needs a trusted file, and nobody vouched for {}; to change it, call spawn_processor with reads [{via}] and an instruction, then write_file with path_ref {via} and contents_ref set to the processor's answer",
                    target.shown
                ),
            ));
        }
        if args.old_text.is_empty() {
            return Err(errors::invalid(
                "old_text is empty; give the exact passage to replace",
            ));
        }
        let bytes = shared
            .root
            .read_capped(&target.rel, FILE_CAP)
            .map_err(|e| errors::fs(&e, &target.shown))?;
        let old = String::from_utf8(bytes).map_err(|_| {
            ToolError::new(
                errors::BINARY,
                format!("{} is not UTF-8 text", target.shown),
            )
        })?;
        let count = old.matches(&args.old_text).count();
        let new = match count {
            0 => {
                return Err(ToolError::new(
                    errors::NO_MATCH,
                    format!(
                        "old_text does not occur in {}; read the file again and copy the passage exactly, whitespace included",
                        target.shown
                    ),
                ));
            }
            1 => old.replacen(&args.old_text, &args.new_text, 1),
            n if args.replace_all => {
                let _ = n;
                old.replace(&args.old_text, &args.new_text)
            }
            n => {
                return Err(ToolError::new(
                    errors::MULTIPLE_MATCHES,
                    format!(
                        "old_text occurs {n} times in {}; include more of the surrounding text to pick one, or set replace_all",
                        target.shown
                    ),
                ));
            }
        };
        let effect = format!(
            "edit {}\n{}",
            target.real.as_str(),
            diff::unified(target.real.as_str(), Some(&old), &new)
        );
        let staged = shared
            .root
            .stage_write(&target.rel, new.into_bytes())
            .map_err(|e| errors::fs(&e, &target.shown))?;
        let mut resources = target.keys(Action::Read);
        resources.extend(target.keys(Action::Write));
        resources.push(PermissionResource {
            action: Action::Custom("sealed.write"),
            target: target.real.as_str().to_owned(),
        });
        let key = SerializationKey(format!("file:{}", target.real.as_str()));
        Ok(Prepared::new(
            Routing { resources },
            Plan {
                target,
                staged,
                replaced: count,
            },
        )
        .serialized_by(key)
        .with_effect(effect))
    }

    async fn execute(&self, plan: Plan, _cx: ExecuteContext) -> Result<ToolCompletion, ToolError> {
        self.0
            .root
            .commit(plan.staged)
            .map_err(|e| errors::fs(&e, &plan.target.shown))?;
        let times = if plan.replaced == 1 {
            "once".to_owned()
        } else {
            format!("{} times", plan.replaced)
        };
        Ok(ToolCompletion::single(format!(
            "edited {} (replaced {times})",
            plan.target.shown
        )))
    }
}
