//! spawn_processor: an isolated model call, no tools and no memory, given only the named
//! references. Its answer is a new quarantined reference, writable only to the file the call
//! was about; what it says before the document marker is a remark for the user alone.

use std::borrow::Cow;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use tackle_protocol::{Label, Privacy, Quarantined, Trust};
use tackle_tool::{
    ExecuteContext, PrepareContext, Prepared, Routing, Tool, ToolCompletion, ToolError,
};

use crate::errors;
use crate::processor::{ProcessorInput, split_reply};
use crate::reference::RefId;
use crate::tools::read_file::record_failed;
use crate::tools::{Shared, content};

/// The most references one processor call reads.
pub const MAX_READS: usize = 8;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The references to give it, e.g. ["ref:0", "ref:1"]: at least one.
    pub reads: Vec<String>,
    /// Which of those references this call is about: required when reads names more than one.
    /// The answer may be written only to that file.
    #[serde(default)]
    pub about: Option<String>,
    /// What to do with them and what to produce.
    pub instruction: String,
}

pub struct SpawnProcessor(pub Arc<Shared>);

pub struct Plan {
    inputs: Vec<ProcessorInput>,
    label: Label,
    about: Option<String>,
    about_ref: Option<RefId>,
    instruction: String,
}

impl Tool for SpawnProcessor {
    type Args = Args;
    type Plan = Plan;

    fn name(&self) -> &str {
        "spawn_processor"
    }

    fn description(&self) -> Cow<'static, str> {
        "Transforms quarantined content you were not shown: an isolated model with no tools reads \
         only the references you name and follows your instruction. Its answer is a new reference \
         (ref:N) you do not see either; write it back with write_file (contents_ref) to the file \
         the call was about. With several reads, say which one it is `about`."
            .into()
    }

    fn read_only(&self) -> bool {
        true
    }

    fn prepare(&self, args: Args, _cx: &PrepareContext<'_>) -> Result<Prepared<Plan>, ToolError> {
        let shared = &self.0;
        if args.reads.is_empty() {
            return Err(errors::invalid(
                "reads is empty; name at least one reference",
            ));
        }
        if args.reads.len() > MAX_READS {
            return Err(errors::invalid(format!(
                "reads names {}; the most is {MAX_READS}",
                args.reads.len()
            )));
        }
        if args.instruction.trim().is_empty() {
            return Err(errors::invalid("instruction is empty; say what to produce"));
        }
        let mut ids = Vec::new();
        for text in &args.reads {
            let id = RefId::parse_arg("reads", text).map_err(errors::invalid)?;
            if ids.contains(&id) {
                return Err(errors::invalid(format!("reads names {id} twice")));
            }
            ids.push(id);
        }
        let about_ref = match (&args.about, ids.len()) {
            (Some(text), _) => {
                let id = RefId::parse_arg("about", text).map_err(errors::invalid)?;
                if !ids.contains(&id) {
                    return Err(errors::invalid(format!("about: {id} is not one of reads")));
                }
                Some(id)
            }
            (None, 1) => Some(ids[0]),
            (None, _) => {
                return Err(errors::invalid(
                    "about is required when reads names more than one reference: say which one the answer is for",
                ));
            }
        };
        let mut inputs = Vec::new();
        let mut label = Label {
            trust: Trust::Trusted,
            privacy: Privacy::Public,
        };
        let mut about = None;
        for id in &ids {
            let (id, content) = content::of(shared, "reads", &id.to_string())?;
            label = label.combine(content.label);
            if Some(id) == about_ref {
                about = match (shared.state.get(id).map(|h| h.held), content.answer_about) {
                    (Some(Quarantined::File { path }), _) => Some(path),
                    // An answer processed again still belongs to the file it was about.
                    (_, Some(previous)) => previous,
                    _ => None,
                };
            }
            inputs.push(ProcessorInput {
                reference: id.to_string(),
                text: content.text,
            });
        }
        Ok(Prepared::new(
            Routing::default(),
            Plan {
                inputs,
                label,
                about,
                about_ref,
                instruction: args.instruction,
            },
        ))
    }

    async fn execute(&self, plan: Plan, cx: ExecuteContext) -> Result<ToolCompletion, ToolError> {
        let shared = &self.0;
        let Some(processor) = &shared.processor else {
            return Err(ToolError::new(
                errors::PROCESSOR_FAILED,
                "no processor model is configured; the user sets one with [model] small (or --agentic-small-model)",
            ));
        };
        let reply = processor
            .process(&plan.instruction, &plan.inputs, &cx.cancel)
            .await
            .map_err(|e| {
                ToolError::new(
                    errors::PROCESSOR_FAILED,
                    format!("the processor failed: {e}"),
                )
            })?;
        let (remark, document) = split_reply(&reply);
        let has_document = document.is_some();
        let id = shared
            .state
            .add(
                &cx.call_id,
                Quarantined::Answer {
                    about: plan.about.clone(),
                    document,
                },
                // A model's answer carries what it read, and is never more trusted than that.
                plan.label.combine(Label {
                    trust: Trust::Untrusted,
                    privacy: Privacy::Private,
                }),
            )
            .await
            .map_err(record_failed)?;
        let about = match (plan.about_ref, &plan.about) {
            (Some(r), Some(_)) => format!(
                " about {r}; it may be written to that file with write_file (path_ref or path, contents_ref {id})"
            ),
            (Some(r), None) => {
                format!(" about {r}, which is not a file: it can be passed on, not written")
            }
            (None, _) => String::new(),
        };
        let mut completion = ToolCompletion::single(format!("{id}: the processor's answer{about}"));
        // The remark reaches the user's screen and stops there.
        let mut display = String::new();
        if !remark.is_empty() {
            display.push_str(&format!("processor's remark for {id}: {remark}"));
        }
        if !has_document {
            display.push_str(&format!(
                "\n{id} has no document marker: it can be written nowhere"
            ));
        }
        if !display.is_empty() {
            completion.display = Some(display.trim().to_owned());
        }
        Ok(completion)
    }
}
