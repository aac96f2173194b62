//! read_output: the user is shown what a command printed and decides whether the planner sees
//! it. An assertion about bytes rather than a relabelling: it works only for run's output, and
//! once the planner has been shown untrusted text it may no longer ask the user anything.

use std::borrow::Cow;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use tackle_protocol::{Quarantined, Truncation, Trust};
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

/// The most lines of output shown to the person, and passed on if they agree.
const SHOWN_LINES: usize = 2_000;
/// The most bytes of output shown and passed on.
const SHOWN_BYTES: usize = 256 * 1024;

/// The first [`SHOWN_LINES`] lines of `text` within [`SHOWN_BYTES`], and how many lines are
/// left out.
fn head(text: &str) -> (String, usize) {
    let lines: Vec<&str> = text.lines().collect();
    let mut shown = String::new();
    let mut taken = 0;
    for line in lines.iter().take(SHOWN_LINES) {
        if shown.len() + line.len() + 1 > SHOWN_BYTES && taken > 0 {
            break;
        }
        shown.push_str(line);
        shown.push('\n');
        taken += 1;
    }
    (shown, lines.len() - taken)
}

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

    fn truncation(&self) -> Truncation {
        // What the planner gets is exactly what the person saw: cut here, never by the
        // runtime's preview (whose hint names an artifact this surface cannot open).
        Truncation::OptOut
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
        let (shown, left_out) = head(&text);
        effect.push_str(&shown);
        if left_out > 0 {
            effect.push_str(&format!(
                "… {left_out} more lines, neither shown here nor passed to the planner\n"
            ));
        }
        let mut text = shown;
        if left_out > 0 {
            text.push_str(&format!(
                "[{left_out} more lines of this output are not shown]\n"
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_head_is_what_the_person_sees_and_says_what_it_left_out() {
        let text: String = (0..SHOWN_LINES + 5).map(|i| format!("{i}\n")).collect();
        let (shown, left_out) = head(&text);
        assert_eq!(left_out, 5);
        assert_eq!(shown.lines().count(), SHOWN_LINES);
        let long = "x".repeat(SHOWN_BYTES / 2);
        let text = format!("{long}\n{long}\n{long}\n");
        let (shown, left_out) = head(&text);
        assert_eq!((shown.lines().count(), left_out), (1, 2));
        assert_eq!(head("a\nb\n"), ("a\nb\n".to_owned(), 0));
    }
}
