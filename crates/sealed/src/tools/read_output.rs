//! read_output: the user is shown what a command printed and decides whether the planner sees
//! it. An assertion about bytes rather than a relabelling: it works only for run's output, and
//! once the planner has been shown untrusted text it may no longer ask the user anything.

use std::borrow::Cow;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use tackle_protocol::{Quarantined, Trust};
use tackle_tool::{
    Action, ExecuteContext, PermissionResource, PrepareContext, Prepared, Routing, Tool,
    ToolCompletion, ToolError,
};

use crate::errors;
use crate::reference::RefId;
use crate::tools::Shared;
use crate::tools::read_file::record_failed;

/// The streams run hands back references to.
const RUN_STREAMS: [&str; 2] = ["stdout", "stderr"];

/// The most lines of output shown to the person.
const SHOWN_LINES: usize = 2_000;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The reference run handed back for stdout or stderr.
    #[serde(rename = "ref")]
    pub reference: String,
}

pub struct ReadOutput(pub Arc<Shared>);

pub struct Plan {
    text: String,
    untrusted: bool,
}

impl Tool for ReadOutput {
    type Args = Args;
    type Plan = Plan;

    fn name(&self) -> &str {
        "read_output"
    }

    fn description(&self) -> Cow<'static, str> {
        "Asks the user to show you what a command printed: they see the output and decide; if they \
         agree it comes back as text. Only for references run handed back, not for files. After \
         you have seen untrusted output you can no longer use ask_user."
            .into()
    }

    fn read_only(&self) -> bool {
        true
    }

    fn prepare(&self, args: Args, _cx: &PrepareContext<'_>) -> Result<Prepared<Plan>, ToolError> {
        let id = RefId::parse_arg("ref", &args.reference).map_err(errors::invalid)?;
        let held = self
            .0
            .state
            .get(id)
            .ok_or_else(|| errors::unknown_reference(&args.reference))?;
        // run's streams only: a quarantined search result holds lines of files, and a file
        // is not readable this way.
        let Quarantined::Output {
            stream,
            text,
            total_bytes,
            truncated,
        } = held.held
        else {
            return Err(not_output(id));
        };
        if !RUN_STREAMS.contains(&stream.as_str()) {
            return Err(not_output(id));
        }
        let mut effect = format!(
            "show the planner this {stream} ({total_bytes} bytes{}):\n",
            if truncated {
                ", the first part kept"
            } else {
                ""
            }
        );
        let lines: Vec<&str> = text.lines().collect();
        for line in lines.iter().take(SHOWN_LINES) {
            effect.push_str(line);
            effect.push('\n');
        }
        if lines.len() > SHOWN_LINES {
            effect.push_str(&format!(
                "… {} more lines, which the planner would see too\n",
                lines.len() - SHOWN_LINES
            ));
        }
        let routing = Routing {
            resources: vec![PermissionResource {
                action: Action::Custom("sealed.show"),
                target: id.to_string(),
            }],
        };
        Ok(Prepared::new(
            routing,
            Plan {
                text,
                untrusted: held.label.trust == Trust::Untrusted,
            },
        )
        .with_effect(effect.trim_end().to_owned()))
    }

    async fn execute(&self, plan: Plan, cx: ExecuteContext) -> Result<ToolCompletion, ToolError> {
        if plan.untrusted {
            self.0
                .state
                .mark_met_untrusted(&cx.call_id)
                .await
                .map_err(record_failed)?;
        }
        Ok(ToolCompletion::single(if plan.text.is_empty() {
            "(empty)".to_owned()
        } else {
            plan.text
        }))
    }
}

fn not_output(id: RefId) -> ToolError {
    ToolError::new(
        errors::QUARANTINED,
        format!(
            "read_output shows only what run printed, and {id} is not a command's output; pass it to spawn_processor instead"
        ),
    )
}
