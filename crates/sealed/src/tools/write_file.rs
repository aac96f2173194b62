//! write_file: a whole file from the planner's own text or from a reference's content. Asked
//! every time; a write through a reference is shown with the file's real name, since only the
//! person sees which file it is. Quarantined content written taints the file.

use std::borrow::Cow;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use tackle_fs::StagedWrite;
use tackle_protocol::{Label, Privacy, Trust};
use tackle_tool::{
    Action, ExecuteContext, PermissionResource, PrepareContext, Prepared, Routing,
    SerializationKey, Tool, ToolCompletion, ToolError,
};

use crate::errors;
use crate::reference::RefId;
use crate::tools::read_file::record_failed;
use crate::tools::target::Target;
use crate::tools::{Shared, content, diff};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Workspace-relative destination.
    #[serde(default)]
    pub path: Option<String>,
    /// A reference to the file to write, for a file whose name you were never shown.
    #[serde(default)]
    pub path_ref: Option<String>,
    /// The complete new contents.
    #[serde(default)]
    pub contents: Option<String>,
    /// A reference whose quarantined content becomes the whole file.
    #[serde(default)]
    pub contents_ref: Option<String>,
}

pub struct WriteFile(pub Arc<Shared>);

pub struct Plan {
    target: Target,
    staged: StagedWrite,
    /// The reference the content came from, if any.
    from: Option<RefId>,
    label: Label,
}

impl Tool for WriteFile {
    type Args = Args;
    type Plan = Plan;

    fn name(&self) -> &str {
        "write_file"
    }

    fn description(&self) -> Cow<'static, str> {
        "Writes a whole UTF-8 text file; the user approves every write. Give the destination as \
         `path`, or `path_ref` for a file you hold as a reference, and the content as `contents` \
         or `contents_ref` (a reference whose content becomes the whole file), never both. A \
         processor's answer may be written only to the file its spawn_processor call was about. \
         Prefer edit_file for a change to part of a trusted file."
            .into()
    }

    fn read_only(&self) -> bool {
        false
    }

    fn permission_actions(&self) -> &'static [&'static str] {
        &["write"]
    }

    fn prepare(&self, args: Args, _cx: &PrepareContext<'_>) -> Result<Prepared<Plan>, ToolError> {
        let shared = &self.0;
        let target = Target::of(shared, args.path.as_deref(), args.path_ref.as_deref(), true)?;
        let (text, from, label) = match (args.contents, args.contents_ref.as_deref()) {
            (Some(_), Some(_)) => {
                return Err(errors::invalid("give contents or contents_ref, not both"));
            }
            (None, None) => return Err(errors::invalid("give contents (or contents_ref)")),
            (Some(text), None) => (
                text,
                None,
                Label {
                    trust: Trust::Trusted,
                    privacy: Privacy::Private,
                },
            ),
            (None, Some(reference)) => {
                let (id, content) = content::of(shared, "contents_ref", reference)?;
                if let Some(about) = &content.answer_about {
                    check_answer_destination(shared, id, about.as_deref(), &target)?;
                }
                (content.text, Some(id), content.label)
            }
        };
        let staged = shared
            .root
            .stage_write(&target.rel, text.into_bytes())
            .map_err(|e| errors::fs(&e, &target.shown))?;
        let old = match &staged.base {
            Some(_) => shared
                .root
                .read_capped(&target.rel, crate::tools::FILE_CAP)
                .ok()
                .map(|b| String::from_utf8_lossy(&b).into_owned()),
            None => None,
        };
        let new = String::from_utf8_lossy(&staged.bytes).into_owned();
        let mut effect = format!("write {}", target.real.as_str());
        match (target.reference, from) {
            (Some(dest), _) => {
                effect.push_str(&format!(" (the planner knows this file only as {dest})"))
            }
            (None, _) if target.real != target.rel => {
                effect.push_str(&format!(" (named {})", target.rel.as_str()))
            }
            _ => {}
        }
        if let Some(from) = from {
            effect.push_str(&format!(
                ", its whole content from {from}, which the planner has not seen"
            ));
        }
        effect.push('\n');
        effect.push_str(&diff::unified(target.real.as_str(), old.as_deref(), &new));
        let mut resources = target.keys(Action::Write);
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
                from,
                label,
            },
        )
        .serialized_by(key)
        .with_effect(effect))
    }

    async fn execute(&self, plan: Plan, cx: ExecuteContext) -> Result<ToolCompletion, ToolError> {
        let shared = &self.0;
        let committed = shared
            .root
            .commit(plan.staged)
            .map_err(|e| errors::fs(&e, &plan.target.shown))?;
        // The file now holds what was written, and carries its label: in this session's log
        // (so a resume agrees) and beside the user's vouches (so later sessions do).
        let real = plan.target.real.as_str();
        let trusted = plan.label.trust == Trust::Trusted;
        shared
            .state
            .set_file_trust(&cx.call_id, real, trusted)
            .await
            .map_err(record_failed)?;
        shared.trust.wrote(real, plan.label.trust).map_err(|e| {
            ToolError::new(
                tackle_protocol::ErrorCode::IO,
                format!("the file was written, but its taint could not be kept: {e}"),
            )
        })?;
        let verb = if committed.created {
            "created"
        } else {
            "wrote"
        };
        Ok(ToolCompletion::single(match plan.from {
            // The length of quarantined content is content too.
            Some(from) => format!(
                "{verb} {} with the content of {from}; the file now holds quarantined content",
                plan.target.shown
            ),
            None => format!("{verb} {} ({} bytes)", plan.target.shown, committed.bytes),
        }))
    }
}

/// A processor's answer goes only to the file its call was about.
fn check_answer_destination(
    shared: &Shared,
    id: RefId,
    about: Option<&str>,
    target: &Target,
) -> Result<(), ToolError> {
    let Some(about) = about else {
        return Err(ToolError::new(
            errors::NOT_A_DESTINATION,
            format!(
                "{id} answers a processor call over several inputs that named no `about`: it belongs to no file and can be written nowhere; call spawn_processor again with `about`"
            ),
        ));
    };
    let about_real = shared
        .root
        .resolve(about)
        .and_then(|rel| shared.root.real_path(&rel).or(Ok(rel)))
        .map_err(|e| errors::fs(&e, &id.to_string()))?;
    if about_real != target.real {
        return Err(ToolError::new(
            errors::NOT_A_DESTINATION,
            format!(
                "{id} may be written only to the file its spawn_processor call was about, not to {}",
                target.shown
            ),
        ));
    }
    Ok(())
}
